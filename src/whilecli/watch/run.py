"""``watch_run``: follow a run directory and report each finished step once, in order.

Reads only: nothing is written into the run directory. Each poll reads what changed (see
:mod:`whilecli.watch.layout`), and each finished step's rollouts file is read once, through
the reading layer every command uses.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whilecli.errors import InputError, MostlyErrorReplies, UsageError, WhileError, shown_path
from whilecli.watch import render
from whilecli.watch.alerts import Alert, Alerts, WindowRoute
from whilecli.watch.history import Notice, within
from whilecli.watch.layout import FinishedStep, open_run
from whilecli.watch.options import WatchOptions
from whilecli.watch.steps import StepStats, measure, refused_for_errors, skipped


@dataclass
class StepReport:
    """One finished step as reported: its numbers, the window's route, its alerts."""

    stats: StepStats
    route: WindowRoute | None
    alerts: list[Alert]


@dataclass
class Watch:
    """The state of one watch: what was reported so far."""

    root: Path
    options: WatchOptions
    mapping: Mapping[str, str] = field(default_factory=dict)
    pass_threshold: float | None = None
    missing: str = "skip"  # --missing: ungraded rows left out (skip) or failed (fail)
    layout: str | None = None
    count: int = 0  # steps reported
    recent: deque[StepReport] = field(default_factory=deque)  # the last --trend steps
    alerts: Alerts = field(init=False)
    said: list[str] = field(default_factory=list)  # notices said since the last step

    def notice(self, notice: Notice) -> None:
        """Take a notice: steps it says are reported again leave the window and the trend."""
        self.said.append(notice.text)
        if notice.forget is None:
            return
        first, last = notice.forget
        self.alerts.forget(first, last)
        kept = [r for r in self.recent if not within(r.stats.step, first, last)]
        self.recent = deque(kept)

    def __post_init__(self) -> None:
        self.alerts = Alerts(self.options)

    def read(self, finished: FinishedStep) -> StepReport:
        """Read and measure one finished step, and add it to the window."""
        from whilecli.io.formats.prime_rl import read_step
        from whilecli.io.read import read_rows
        from whilecli.route.pool import summarize

        path = finished.path
        if path is None or path.stat().st_size == 0:
            stats = skipped(finished.step, path, finished.note or "the rollouts file is empty")
            stats.source = _relative(path, self.root) if path is not None else None
            return self._add(stats, None, finished.remark)
        try:
            if self.layout == "prime-rl":
                rows = read_step(
                    path,
                    mapping=dict(self.mapping),
                    pass_threshold=self.pass_threshold,
                    missing=self.missing,
                )
            else:
                rows = read_rows(
                    [str(path)],
                    mapping=self.mapping,
                    pass_threshold=self.pass_threshold,
                    missing=self.missing,
                )
        except MostlyErrorReplies as err:
            refused = refused_for_errors(finished.step, _relative(path, self.root), err)
            return self._add(refused, None, finished.remark)
        pool = summarize(rows)
        frame = rows.frame.collect()
        options = self.options
        stats = measure(
            finished.step,
            rows,
            pool,
            frame,
            finished.metrics,
            draws=options.bootstrap_draws,
            seed=options.seed,
        )
        stats.source = _relative(path, self.root)
        return self._add(stats, pool, finished.remark)

    def _add(self, stats: StepStats, pool: Any, remark: str | None) -> StepReport:
        stats.remark = remark
        stats.notices, self.said = self.said, []
        window, fired = self.alerts.add(stats, pool)
        report = StepReport(stats, window, fired)
        self.count += 1
        self.recent.append(report)
        while len(self.recent) > self.options.trend:
            self.recent.popleft()
        return report

    @property
    def fired(self) -> list[Alert]:
        return self.alerts.fired

    def failing(self, alerts: list[Alert]) -> bool:
        return any(a.kind in self.options.fail_on for a in alerts)

    def trend(self) -> list[float | None]:
        return [
            r.stats.pass_at_1.value if r.stats.pass_at_1 is not None else None for r in self.recent
        ]


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def watch_run(
    root: str | Path,
    options: WatchOptions | None = None,
    *,
    mapping: Mapping[str, str] | None = None,
    pass_threshold: float | None = None,
    missing: str = "skip",
    write: Callable[[str], None] | None = None,
    say: Callable[[str], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Report the finished steps of a run directory; the exit code (1: an alert named in
    ``options.fail_on`` fired; under ``follow`` the watch ends at the first such alert).

    ``write`` takes each output line (stdout by default); ``say`` takes the notes that are
    not the report (the "no step yet" line under ``--format json``; stderr by default).
    """
    options = options or WatchOptions()
    run_dir = Path(root)
    if not run_dir.is_dir():
        raise UsageError(
            f"{shown_path(run_dir)}: not a directory (give the run's output directory)"
        )
    out = write or _stdout
    note = say or _stderr
    as_json = options.format == "json"
    state = Watch(run_dir, options, dict(mapping or {}), pass_threshold, missing)
    run = None
    waited = False
    last_new = clock()
    while True:
        if not run_dir.is_dir():  # removed or moved since the last poll
            raise _lost(run_dir, FileNotFoundError(2, "No such file or directory"))
        if run is None:
            run = open_run(run_dir, options.layout, options.split, options.follow)
            if run is not None:
                state.layout = run.layout
                if not as_json:
                    for line in render.header(
                        str(run_dir), run.layout, options.split, options.window
                    ):
                        out(line)
        try:
            finished = run.poll(final=not options.follow) if run is not None else []
        except OSError as err:
            raise _lost(run_dir, err) from None
        for notice in run.take_notices() if run is not None else []:
            state.notice(notice)
            _say(notice.text, out, note, as_json)
        for step in finished:
            try:
                report = state.read(step)
            except OSError as err:
                raise _lost(run_dir, err) from None
            if as_json:
                out(render.step_json(report.stats, report.route, report.alerts, run.layout))  # type: ignore[union-attr]
            else:
                for line in render.step_lines(report.stats, report.alerts, state.trend()):
                    out(line)
            if options.follow and state.failing(report.alerts):
                return 1
        if finished:
            last_new = clock()
        if not state.count and not waited:
            waited = True
            waiting = run.waiting if run is not None else "no finished step yet (no rollouts)"
            text = f"{run_dir}: {waiting}" + ("; waiting" if options.follow else "")
            (note if as_json else out)(text)
        if not options.follow:
            for text in run.left_out() if run is not None else []:
                _say(text, out, note, as_json)
            break
        if options.idle_exit is not None and clock() - last_new >= options.idle_exit:
            break
        sleep(options.interval)
    if not as_json and state.count and not options.follow:
        out(render.closing(state.count, state.fired))
    return 1 if state.failing(state.fired) else 0


def _say(text: str, out: Callable[[str], None], note: Callable[[str], None], as_json: bool) -> None:
    """A notice: ``note: ...`` lines in the text report; one line on stderr under
    ``--format json`` (where stdout holds only steps; the next step's ``notices`` repeat it)."""
    if as_json:
        note(f"note: {text}")
        return
    for line in render.notice(text):
        out(line)


def _lost(run_dir: Path, err: OSError) -> WhileError:
    """A file of the run that went away or could not be read between two looks (the run
    directory removed or moved while watched, a step's file deleted): one line."""
    if not run_dir.is_dir():
        return UsageError(
            f"{shown_path(run_dir)}: the run directory is gone (removed or moved while watched)"
        )
    reason = err.strerror or type(err).__name__
    return InputError(f"cannot read it: {reason}", file=str(err.filename or run_dir))


def _stdout(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)
