"""The route over the last steps, and the alerts it raises when what it would act on changes.

After each step the per-task counts of the last ``window`` steps are added into one
:class:`~whilecli.route.model.Pool` (a task seen in several steps pools its rollouts, as
``while route`` pools files) and routed by :func:`whilecli.route.decide.decide`, the route's
own checks in the route's own order. An alert fires at the step where its condition starts to
hold, and again only after it stopped holding:

- ``truncated-passes``: the route is ``fix-reward`` (a cut-off reply passed in the window);
- ``floor``: the route is ``floor`` (every grouped task failed over a full window);
- ``saturated``: the route is ``saturated`` (every grouped task passed over a full window);
- ``errors``: more than ``--max-errors`` of the window's replies are harness errors.

Each alert names the method the route now picks.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

from whilecli.route.model import Pool, Route, against
from whilecli.route.options import RouteOptions
from whilecli.route.pool import POSITIONS, add_counts
from whilecli.watch.history import steps_text, within
from whilecli.watch.options import ALERTS, WatchOptions
from whilecli.watch.steps import StepStats

#: The route rows that raise an alert, by alert kind.
ROUTE_ALERTS = {"fix-reward": "truncated-passes", "floor": "floor", "saturated": "saturated"}
#: Alerts that need a full window (the band "over the last few steps").
NEEDS_FULL_WINDOW = frozenset({"floor", "saturated"})


@dataclass(frozen=True)
class Alert:
    """One alert: its kind, the step it fired at, and the method the route now picks."""

    kind: str
    step: int
    method: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class WindowRoute:
    """The route of the last steps' rows."""

    first: int
    last: int
    steps: int
    route: str
    method: str | None
    provisional: bool
    why: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Step:
    step: int
    pool: Pool | None  # None: the step was refused for its error replies
    errors: int
    replies: int


def pooled(pools: list[Pool]) -> Pool:
    """One pool of several steps' pools: per-task counts added, writers added; the reading
    facts (threshold, format, notes) are the latest step's."""
    tables = [p.tasks.drop([c for c in POSITIONS if c in p.tasks.columns]) for p in pools]
    tasks = add_counts(tables, "task_id", sort=True) if len(tables) > 1 else tables[0]
    models: dict[str | None, int] = {}
    versions: dict[str | None, int] = {}
    for p in pools:
        for key, count in p.models.items():
            models[key] = models.get(key, 0) + count
        for key, count in p.versions.items():
            versions[key] = versions.get(key, 0) + count
    rows = int(tasks["n"].sum()) if tasks.height else 0
    return Pool(tasks=tasks, rows=rows, models=models, versions=versions, source=pools[-1].source)


class Alerts:
    """The window of the last steps, its route, and which alerts hold."""

    def __init__(self, options: WatchOptions) -> None:
        self.options = options
        self.window: deque[_Step] = deque(maxlen=options.window)
        self.active: set[str] = set()
        self.fired: list[Alert] = []
        self.route_options = RouteOptions(
            seed=options.seed, bootstrap_draws=options.bootstrap_draws
        )

    def add(self, stats: StepStats, pool: Pool | None) -> tuple[WindowRoute | None, list[Alert]]:
        """Add a finished step; the window's route and the alerts that fire at this step.

        A step with no pool (nothing read) leaves the window as it was, unless the reading
        layer refused it for its error replies: then its errors count in the window."""
        errors = stats.error_replies or 0
        if pool is None or pool.rows == 0:
            if not errors:
                return None, []
            total = stats.error_share.n_rows if stats.error_share is not None else errors
            self.window.append(_Step(stats.step, None, errors, max(total, errors)))
        else:
            replies = pool.rows + errors
            self.window.append(_Step(stats.step, pool, errors, replies))
        pools = [s.pool for s in self.window if s.pool is not None]
        route = self._route(pools)
        window = None
        if route is not None:
            window = WindowRoute(
                first=self.window[0].step,
                last=stats.step,
                steps=len(self.window),
                route=route.route,
                method=route.method,
                provisional=route.provisional,
                why=route.why,
            )
        holding = self._holding(route)
        fired = [
            Alert(
                kind,
                stats.step,
                route.method if route is not None else None,
                self._message(kind, route, stats),
            )
            for kind in sorted(holding - self.active, key=_order)
        ]
        self.active = holding
        self.fired += fired
        return window, fired

    def _route(self, pools: list[Pool]) -> Route | None:
        if not pools:
            return None
        from whilecli.route.decide import decide

        return decide(pooled(pools), self.route_options)

    def _holding(self, route: Route | None) -> set[str]:
        holding = set()
        kind = ROUTE_ALERTS.get(route.route) if route is not None else None
        full = len(self.window) == self.options.window and all(s.pool for s in self.window)
        if kind is not None and (full or kind not in NEEDS_FULL_WINDOW):
            holding.add(kind)
        errors = sum(s.errors for s in self.window)
        replies = sum(s.replies for s in self.window)
        if replies and errors / replies > self.options.max_errors:
            holding.add("errors")
        return holding

    def forget(self, first: int, last: int | None) -> None:
        """Drop the window's steps from ``first`` to ``last`` (None: every later one): they
        are reported again (the run restarted from ``first``, or the step was read again)."""
        kept = [s for s in self.window if not within(s.step, first, last)]
        self.window.clear()
        self.window.extend(kept)

    def _span(self) -> str:
        """The steps the window holds (``steps 5-7``; ``steps 1, 2, 5`` across a gap)."""
        return steps_text(s.step for s in self.window)

    def _message(self, kind: str, route: Route | None, stats: StepStats) -> str:
        span = self._span()
        picks = _picks(route)
        if kind == "truncated-passes":
            cut = stats.truncated_passes or 0
            at = (
                f"{cut} truncated {'reply' if cut == 1 else 'replies'} passed at step {stats.step}"
                if cut
                else f"truncated replies passed over {span}"
            )
            return (
                f"{at}: a cut-off reply earns the reward → {picks}: score truncated replies as"
                " failures or raise max_tokens"
            )
        if kind == "floor":
            return f"the band collapsed to the floor over {span} (every group fails) → {picks}"
        if kind == "saturated":
            return f"the band saturated over {span} (every group passes) → {picks}"
        errors = sum(s.errors for s in self.window)
        replies = sum(s.replies for s in self.window)
        share, limit = against(errors / replies, self.options.max_errors)
        return (
            f"error replies climb: {errors} of {replies} replies over {span} are errors"
            f" ({share} > {limit}): the harness fails, not the"
            f" model; fix the endpoint. On the other replies → {picks}"
        )


def _order(kind: str) -> int:
    return ALERTS.index(kind)


def _picks(route: Route | None) -> str:
    """The method the route picks, as an alert names it."""
    if route is None:
        return "nothing to route (no reply in the window was read)"
    if route.method is None:
        return route.route
    return f"{route.method}{' (provisional)' if route.provisional else ''}"
