"""The route's data contract: what the checks produce and the report prints.

Every stage of ``whilecli route`` speaks these types:

``read`` → :class:`Rows` (a lazy frame in the canonical schema) → ``pool.summarize`` →
:class:`Pool` (per-task counts) → ``checks`` → :class:`CheckResult` ×6 → ``decide`` →
:class:`Route` → ``report`` (text, JSON, Markdown, GitHub annotations).

The JSON report is ``Route.to_dict()``; its schema is documented in the README and is
versioned by :data:`SCHEMA_VERSION`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

import polars as pl

from whilecli.io.rows import CANONICAL_SCHEMA as CANONICAL_SCHEMA
from whilecli.io.rows import Rows as Rows

SCHEMA_VERSION = 1
#: Two numbers a report compares are one within this (DESIGN section 2: 1e-9 at every
#: documented boundary; :data:`whilecli.route.stats.TOL`).
NUMBER_TOLERANCE = 1e-9


class Status(str, Enum):
    """The status of one routing check."""

    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"
    NOT_REACHED = "not reached"
    NOT_ASKED = "not asked"  # an optional check whose input was not given (no --teacher)


def against(
    value: float, limit: float, *, signed: bool = False, digits: int = 2
) -> tuple[str, str]:
    """``value`` and the ``limit`` it is compared with, as a report prints them: ``value``
    at ``digits`` decimals (the one number style), or at the fewest more (up to 6) at which
    it differs from ``limit`` when rounding would print them equal (``0.045`` past ``0.04``
    reads ``0.045 is past 0.04``, never ``0.04 is past 0.04``; -0.004 below 0 reads
    ``-0.004``, never ``-0.00``); ``limit`` as written
    (``:g``), at the value's decimals where it needs more."""
    d = digits
    # within the pass rule's tolerance they are one number (value − limit rounds: 0.3 + 1e-9
    # minus 0.3 is 1.00000000272e-9)
    near = NUMBER_TOLERANCE * (1 + 1e-6)
    while d < 6 and abs(value - limit) > near and round(value, d) == round(limit, d):
        d += 1
    shown = f"{value:{'+' if signed else ''}.{d}f}"
    plain = f"{limit:g}"
    decimals = len(plain.partition(".")[2]) if "e" not in plain else d + 1
    return shown, plain if decimals <= d else f"{limit:.{d}f}"


def requirements(needs: dict[str, Any] | Any, route: str | None = None) -> list[str]:
    """The route's one requirement (``Route.needs``) as separate plain requirements, each a
    phrase a person can act on: ``k=4 rollouts per task``, ``30 tasks``, ``temperature > 0
    (the draws must differ)``; a k no count reaches says why instead. A single-rollout
    verdict's tasks are single tasks, and its k is the re-run that makes another route:
    ``30 single tasks (one row each); or k=4 rollouts per task, for a grouped method``. The
    brief's ``Needs:`` line, the ``-v`` section and Markdown print these; JSON keeps
    ``needs``."""
    single = route == "single-rollout"
    out: list[str] = []
    for key, value in needs.items():
        if key == "k":
            if value is not None and not single:
                out.append(f"k={value} rollouts per task")
        elif key == "why":
            if needs.get("k", 0) is None:
                out.append(str(value))
        elif key == "tasks":
            out.append(f"{value} single tasks (one row each)" if single else f"{value} tasks")
        elif key == "temperature":
            out.append(f"temperature {value}")
        elif key == "stronger_model_completions":
            out.append(f"a stronger model's completions on the {value} tasks at 0")
        elif key == "tokenizer":
            out.append(f"one tokenizer: pass {value}")
        else:
            out.append(f"{key.replace('_', ' ')}: {value}")
    if single and needs.get("k") is not None:
        regroup = f"k={needs['k']} rollouts per task, for a grouped method"
        out.append(f"or {regroup}" if out else regroup)
    return out


@dataclass(frozen=True)
class Rate:
    """A rate with its 95% interval and the sample it came from.

    ``low``/``high`` are None when no interval can be given (``why_no_interval`` says why,
    e.g. fewer than 3 tasks). Printed as ``0.42 [0.35, 0.49] n=128 tasks (512 rows)`` (``n=1
    task (1 row)`` for one).
    """

    value: float | None
    low: float | None
    high: float | None
    n_tasks: int
    n_rows: int
    interval: str  # "clustered" | "wilson" | "none"
    why_no_interval: str | None = None
    unit: str = "tasks"  # what ``n=`` counts: "tasks" (rows in brackets) or "rows"

    @property
    def signed(self) -> bool:
        """A paired difference (after − before, teacher − student): printed with its sign
        in every report (``+0.06 [-0.01, +0.13]``), as ``diff`` prints it."""
        return self.unit == "paired tasks"

    def format(self, digits: int = 2) -> str:
        """The one-line form every report uses."""
        sign = "+" if self.signed else ""
        v = "n/a" if self.value is None else f"{self.value:{sign}.{digits}f}"
        if self.low is not None and self.high is not None:
            ci = f" [{self.low:{sign}.{digits}f}, {self.high:{sign}.{digits}f}]"
        else:
            ci = " [no interval]"
        return f"{v}{ci} {self.sample()}"

    def sample(self) -> str:
        """``n=`` with the unit the interval counted: ``n=128 tasks (512 rows)``, or
        ``n=512 rows`` for a share of rows."""
        rows = "row" if self.n_rows == 1 else "rows"
        if self.unit == "rows":
            return f"n={self.n_rows} {rows}"
        unit = self.unit[:-1] if self.n_tasks == 1 and self.unit.endswith("s") else self.unit
        return f"n={self.n_tasks} {unit} ({self.n_rows} {rows})"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Pool:
    """Per-task sufficient statistics of a set of rows: everything the checks read.

    ``tasks`` has one row per task id with integer columns ``n`` (rows), ``passes``,
    ``truncated`` (rows known truncated), ``truncated_known`` (rows whose truncation is
    recorded), ``truncated_passes``. ``models`` counts rows by writer model (key None = rows
    that name none); ``versions`` likewise by full policy version where recorded.
    """

    tasks: pl.DataFrame
    rows: int
    models: dict[str | None, int]
    versions: dict[str | None, int]
    source: Rows
    #: Tasks whose rows come from several writers (models, policy versions) and split only
    #: across them: each writer's rows of the task all pass or all fail, so no group of one
    #: policy's draws splits (:func:`whilecli.route.pool.split_across_writers`). None: one
    #: writer, or not measured (a summary).
    split_across: pl.Series | None = None
    #: Per task, the rows left out of every rate: ``task_id``, ``left_out`` (harness errors,
    #: and ungraded rows under ``--missing skip``) and ``left_ungraded`` (of them, the
    #: ungraded rows), and ``empty_fails`` (counted rows whose reply is empty and fails); only
    #: tasks that have such rows, those with no counted row among them.
    #: None: not counted per task (a summary keeps their number only, in the facts).
    left_out: pl.DataFrame | None = None
    #: Per task, the counted rows that earned partial credit (a reward strictly between 0
    #: and 1): ``task_id`` and ``credit_fails``, read from the rows or from a summary's
    #: ``partial_rows`` alike (:func:`whilecli.route.pool.credited`). None: not counted.
    credit: pl.DataFrame | None = None

    @property
    def n_tasks(self) -> int:
        return self.tasks.height


@dataclass
class CheckResult:
    """One routing check: its status, what it measured (with n), and why."""

    key: str  # truncated_passes | rollouts_per_task | band | teacher | tokenizer | on_policy
    title: str
    status: Status
    why: str
    measured: dict[str, Any] = field(default_factory=dict)  # values: Rate, int, float, str, None
    decides: str | None = None  # the route this check sent the pool to, if it decided
    warnings: list[str] = field(default_factory=list)
    reached: bool = True  # False: below the check that decided, shown as context only

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "status": self.status.value,
            "why": self.why,
            "decides": self.decides,
            "reached": self.reached,
            "measured": {k: _plain(v) for k, v in self.measured.items()},
            "warnings": list(self.warnings),
        }


@dataclass
class Finding:
    """What reading found that changes what the numbers mean (DESIGN section 2, "Data
    quality first"), and what it does to the verdict."""

    kind: str  # errors | ungraded | repeated_draws | per_row_ids | coverage | cut_partial | ...
    count: int  # rows (or tasks, for repeated draws and prompts) it concerns
    found: str  # what was found, one sentence
    moves: str  # what it does to the verdict, one sentence

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class MethodScore:
    """Whether one method of the route table fits these rows, and why (or why not)."""

    name: str
    ok: bool
    why: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Route:
    """The decision with its evidence.

    ``route`` is the row of the route table that decided (``fix-reward``, ``single-rollout``,
    ``floor``, ``saturated``, ``teacher``, ``off-policy``, ``grpo``); ``method`` the method
    to train with (``grpo``, ``opsd``, ``sft``, ``groupwise``, ``opd``, ``flash_reinforce``,
    ...) or None when nothing can train yet. ``exit_code``: 0 routed, 1 nothing can train yet
    (``exit_reasons`` says why). ``provisional``: the check that decided rests on fewer than
    30 tasks or on an interval wider than 0.3; ``firm_at`` tasks would make it firm.
    """

    route: str
    method: str | None
    why: str
    plan: list[str]
    checks: list[CheckResult]
    methods: list[MethodScore]
    needs: dict[str, Any]
    summary: dict[str, Any]  # pass@1 Rate, pass@k / pass^k Rates, tasks, rows, k, histogram
    before_gpu: dict[str, Any]  # holdout size and the random-control advice
    inputs: dict[str, Any]  # paths, format, sources (and the teacher's, when given)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    exit_code: int = 0
    headline: str = ""  # the one-line verdict every format opens with
    provisional: bool = False  # the deciding check rests on little evidence
    provisional_why: str | None = None  # one sentence: which evidence is thin, and how
    firm_at: int | None = None  # tasks that would make it firm (None: firm, or no count would)
    exit_reasons: list[str] = field(default_factory=list)  # what made the exit code 1
    grader: str = "unknown"  # program | judge | unknown: what graded the rows
    #: The judge scan behind ``grader`` (:class:`whilecli.io.judge.JudgeScan`; None: unknown).
    judge: Any = field(default=None, repr=False, compare=False)
    #: ``--show``: the tasks behind each count asked for, bounded by ``--limit`` (see
    #: :func:`whilecli.route.drill.drill_down`); empty when nothing was asked.
    show: dict[str, Any] = field(default_factory=dict)
    #: What reading found that moves the verdict, listed before the checks.
    data_quality: list[Finding] = field(default_factory=list)
    #: What the verdict rests on: per deciding check, ``check`` (1-based), ``what`` (e.g.
    #: "56 split tasks of 64"), ``tasks``, ``label`` and ``interval`` (a Rate, or None).
    evidence: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = self._to_dict()
        if self.show:
            out["show"] = _plain(self.show)
        return out

    def _to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "route": self.route,
            "method": self.method,
            "why": self.why,
            "plan": list(self.plan),
            "exit_code": self.exit_code,
            "headline": self.headline,
            "provisional": self.provisional,
            "provisional_why": self.provisional_why,
            "firm_at": self.firm_at,
            "exit_reasons": list(self.exit_reasons),
            "grader": self.grader,
            "data_quality": [f.to_dict() for f in self.data_quality],
            "evidence": _plain(self.evidence),
            "checks": [c.to_dict() for c in self.checks],
            "methods": [m.to_dict() for m in self.methods],
            "needs": _plain(self.needs),
            "summary": _plain(self.summary),
            "before_gpu": _plain(self.before_gpu),
            "inputs": _plain(self.inputs),
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }


def _plain(value: Any) -> Any:
    """Turn Rates, enums, tuples and nested containers into JSON-ready values."""
    if isinstance(value, Rate):
        return value.to_dict()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value != value:  # NaN never reaches a report
        return None
    return value
