"""The CI policies of ``whilecli check`` and ``whilecli route --fail-on``: named conditions on a route.

Each policy is a pure function of a :class:`~whilecli.route.model.Route` (plus, for
``judge-unaudited``, the :class:`Evidence` gathered from the inputs) that returns ``None``
when its condition does not hold and a one-line reason when it does:

=====================  ====================================================================
``truncated-passes``   a truncated row passed (check 1 fails: route ``fix-reward``)
``unknown-truncation`` some rows record no truncation (check 1 is unknown)
``floor``              every grouped task fails (the band is a floor)
``saturated``          every grouped task passes (the band is saturated)
``off-policy``         a row names a model other than ``--model`` or an older copy of it
                       (check 6 fails); needs ``--model``
``few-split``          too few split tasks for a grouped update: no grouped task, a floor, a
                       saturated band, a thin mixed band (the band check's ``need``), or
                       draws that repeat one completion (no split is measured)
``judge-unaudited``    rows graded by a judge (see :mod:`whilecli.route.judges`) and no audit
                       whose verdict is ok
=====================  ====================================================================

Policies can be set once per repository: ``fail-on = [...]`` (and ``judge-audit = PATH``)
under ``[tool.while]`` of a ``pyproject.toml``, or at the top level of a ``while.toml``. The
nearest directory from the current one upward that holds either wins (``while.toml`` first
in one directory); the search stops at the repository root (a directory holding ``.git``).
Values given on the command line win over the file. The file sets only those two keys: any
other key (``fail_on`` for ``fail-on``, say) is refused naming the file, the key and the
closest known one, since a silently ignored key is a silently dropped CI gate. ``fail-on``
names at least one policy: ``fail-on = []`` is refused (an empty list reads as a slip, as
``--fail-on ''`` does); ``fail-on = ["none"]`` says "fail on nothing" on purpose, and ``check``
then enforces no policy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whilecli import jsonout
from whilecli.errors import InputError, UsageError, shown_path
from whilecli.failon import parse_conditions
from whilecli.route.judges import Audit, JudgeScan
from whilecli.route.model import CheckResult, Rate, Route, Status

#: Every policy name, in the order reports list them.
POLICIES: tuple[str, ...] = (
    "truncated-passes",
    "unknown-truncation",
    "floor",
    "saturated",
    "off-policy",
    "few-split",
    "judge-unaudited",
)
#: What ``whilecli check`` enforces when neither the command line nor a config file names any:
#: the stops of the reference SDK that void every method (a cut-off reply passes; a judge
#: grades and no audit clears it).
DEFAULT_CHECK_POLICIES: tuple[str, ...] = ("truncated-passes", "judge-unaudited")
CONFIG_KEYS = ("fail-on", "judge-audit")


@dataclass(frozen=True)
class Evidence:
    """What some policies read besides the route: the judge scan and the audit, if any."""

    judge: JudgeScan | None = None
    audit: Audit | None = None


@dataclass(frozen=True)
class PolicyResult:
    """One policy evaluated: whether its condition holds (``failed``) and why."""

    name: str
    failed: bool
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "failed": self.failed, "reason": self.reason}


def _check(route: Route, key: str) -> CheckResult:
    for check in route.checks:
        if check.key == key:
            return check
    raise ValueError(f"the route has no {key!r} check")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def truncated_passes(route: Route, evidence: Evidence) -> str | None:
    """Check 1 fails: a truncated row passed (a cut-off reply is scored as a pass)."""
    check = _check(route, "truncated_passes")
    if check.status is not Status.FAIL:
        return None
    n = int(check.measured.get("truncated_passes", 0))
    return (
        f"{_plural(n, 'truncated row')} passed: score cut-off replies as failures "
        "or raise max_tokens"
    )


def unknown_truncation(route: Route, evidence: Evidence) -> str | None:
    """Check 1 is unknown: some rows (or all) record no truncation."""
    check = _check(route, "truncated_passes")
    if check.status is not Status.UNKNOWN:
        return None
    rows = int(check.measured.get("rows", 0))
    known = int(check.measured.get("rows_with_truncation_recorded", 0))
    return (
        f"{rows - known} of {rows} rows record no truncation: record finish_reason "
        "(or truncated) so a cut-off pass can be seen"
    )


def floor(route: Route, evidence: Evidence) -> str | None:
    """The band is a floor: every grouped task fails."""
    measured = _check(route, "band").measured
    if measured.get("band") != "floor":
        return None
    return f"every grouped task fails ({measured.get('tasks_at_0')} at 0): no gradient to keep"


def saturated(route: Route, evidence: Evidence) -> str | None:
    """The band is saturated: every grouped task passes."""
    measured = _check(route, "band").measured
    if measured.get("band") != "saturated":
        return None
    return f"every grouped task passes ({measured.get('tasks_at_1')} at 1): no gradient to keep"


def asks_model(route: Route) -> bool:
    """Whether the route was given ``--model`` (the on-policy check measured a share)."""
    return "on_policy_share" in _check(route, "on_policy").measured


def off_policy(route: Route, evidence: Evidence) -> str | None:
    """Check 6 fails: rows written by another model, or by an older copy of the model."""
    check = _check(route, "on_policy")
    if check.status is not Status.FAIL:
        return None
    return check.why


def few_split(route: Route, evidence: Evidence) -> str | None:
    """Too few split tasks (a pass and a fail) for a grouped update.

    Holds with no grouped task, on a floor or a saturated band (no task splits), and on a
    thin mixed band: fewer than ``min_split_tasks`` split tasks or a split share under
    ``min_split_share`` (the band check's ``need``, DESIGN section 2, check 3).
    """
    check = _check(route, "band")
    m = check.measured
    if check.status is Status.NOT_REACHED or not m:
        return "no grouped task (every task has one row): no task can split"
    grouped = int(m.get("grouped_tasks", 0))
    split = int(m.get("split_tasks", 0))
    if m.get("repeated_tasks"):  # the draws are one: whatever splits was not measured
        return (
            f"{m['repeated_tasks']} of {grouped} grouped tasks repeat one draw (identical"
            " completions): no split is measured; sample at temperature > 0"
        )
    if m.get("band") in ("floor", "saturated"):
        return f"0 split tasks of {grouped} grouped ({m.get('band')})"
    need = m.get("need")
    if not isinstance(need, dict):
        return None
    from whilecli.route.checks import need_words

    share = m.get("split_share")  # the band's Rate, printed as every rate is
    shown = f"split share {share.format()}" if isinstance(share, Rate) else f"{split / grouped:.2f}"
    want = f"; {m['want']}" if m.get("want") else ""  # the minimums it misses, 0.299 under 0.3
    return f"{_plural(split, 'split task')} of {grouped} grouped ({shown}{want}): " + need_words(
        need
    )


def judge_unaudited(route: Route, evidence: Evidence) -> str | None:
    """Rows graded by a judge and no audit whose verdict is ok (reference SDK, route stop)."""
    scan = evidence.judge
    if scan is None or scan.judged == 0:
        return None
    audit = evidence.audit
    if audit is not None and audit.ok is True:
        return None
    what = f"{scan.judged} of {scan.rows} rows are graded by a judge ({scan.describe()})"
    if audit is None:
        return f"{what} and no audit is given: pass --judge-audit FILE"
    return f"{what} and the audit does not clear it: {audit.why}"


#: Each policy's function.
CHECKS: dict[str, Callable[[Route, Evidence], str | None]] = {
    "truncated-passes": truncated_passes,
    "unknown-truncation": unknown_truncation,
    "floor": floor,
    "saturated": saturated,
    "off-policy": off_policy,
    "few-split": few_split,
    "judge-unaudited": judge_unaudited,
}


def parse_policies(values: Sequence[str] | str) -> tuple[str, ...]:
    """Policy names of ``route`` and ``check`` (:func:`parse_conditions`)."""
    return parse_conditions(values, POLICIES)


def evaluate(
    route: Route, names: Sequence[str], evidence: Evidence | None = None
) -> list[PolicyResult]:
    """Evaluate the named policies on a route, in the order given."""
    evidence = evidence or Evidence()
    if "off-policy" in names and not asks_model(route):
        raise UsageError("--fail-on off-policy needs --model M (the model you will train)")
    if "judge-unaudited" in names and evidence.judge is None:
        raise ValueError("judge-unaudited needs the judge scan of the inputs")
    out = []
    for name in names:
        reason = CHECKS[name](route, evidence)
        out.append(PolicyResult(name, reason is not None, reason))
    return out


# ------------------------------------------------------------------ repository settings


@dataclass(frozen=True)
class PolicyConfig:
    """The ``while`` settings of a repository: where they came from and what they set."""

    path: Path
    fail_on: tuple[str, ...] | None = None
    judge_audit: Path | None = None
    keys: tuple[str, ...] = field(default=())


def _load_toml(path: Path) -> dict[str, Any]:
    from whilecli.fileio import UnreadableFile, read_regular

    try:  # a regular file only: a folder, a FIFO or a loop of links is refused, never skipped
        data = read_regular(path)
        if data is None:
            raise UsageError(f"{shown_path(path)}: cannot read: a link to nothing")
        text = data.decode("utf-8")
    except UnreadableFile as err:
        raise UsageError(str(err)) from None
    except UnicodeDecodeError as err:  # TOML is UTF-8
        raise UsageError(
            f"{shown_path(path)}: not UTF-8 (byte {err.start}): TOML files are UTF-8"
        ) from None
    try:
        return jsonout.loads_toml(text, file=str(path))
    except InputError as err:  # a policy file is an option file: a usage error
        raise UsageError(str(err)) from None


def _settings(path: Path) -> dict[str, Any] | None:
    """The ``while`` table of a config file, or None when it has none."""
    data = _load_toml(path)
    if path.name == "pyproject.toml":
        tool = data.get("tool")
        if not isinstance(tool, dict) or "while" not in tool:
            return None
        table = tool["while"]
        if not isinstance(table, dict):
            raise UsageError(
                f"{shown_path(path)}: tool.while must be a table ([tool.while]),"
                f" got {type(table).__name__}"
            )
        return table
    return data


def _unknown_keys(where: str, table: dict[str, Any]) -> None:
    """Refuse a key the settings do not know, naming it and the closest known key."""
    import difflib

    for key in table:
        if key in CONFIG_KEYS:
            continue
        spelled = str(key).lower().replace("_", "-").replace(" ", "-")
        close = difflib.get_close_matches(spelled, CONFIG_KEYS, n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(
            f"{where}: unknown key {str(key)!r}{hint} (known keys: {', '.join(CONFIG_KEYS)})"
        )


def find_config(start: Path | None = None) -> Path | None:
    """The nearest ``while.toml`` or ``pyproject.toml`` with ``[tool.while]``, upward."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name in ("while.toml", "pyproject.toml"):
            candidate = folder / name
            # there in any form (a folder, a FIFO, a loop of links): read, so refused, never
            # skipped as absent
            if os.path.lexists(candidate) and _settings(candidate) is not None:
                return candidate
        if (folder / ".git").exists():
            return None
    return None


def load_config(start: Path | None = None) -> PolicyConfig | None:
    """Read the repository's ``while`` settings (None when no file sets any)."""
    path = find_config(start)
    if path is None:
        return None
    table = _settings(path) or {}
    where = (
        f"{shown_path(path)} [tool.while]" if path.name == "pyproject.toml" else shown_path(path)
    )
    _unknown_keys(where, table)
    fail_on = None
    if "fail-on" in table:
        raw = table["fail-on"]
        if not isinstance(raw, (list, str)):
            raise UsageError(f"{where}: fail-on must be a list of policy names")
        if isinstance(raw, list) and not raw:  # a slip, as --fail-on '' is: not "no gate"
            raise UsageError(
                f"{where}: fail-on = [] names no policy; policies: {', '.join(POLICIES)}"
                ' (or fail-on = ["none"] to fail on nothing)'
            )
        try:
            fail_on = parse_policies(raw)
        except UsageError as err:
            raise UsageError(f"{where}: {err}") from None
    audit = None
    if "judge-audit" in table:
        if not isinstance(table["judge-audit"], str):
            raise UsageError(f"{where}: judge-audit must be a path (a string)")
        audit = (path.parent / table["judge-audit"]).resolve()
    keys = tuple(k for k in table if k in CONFIG_KEYS)
    return PolicyConfig(path=path, fail_on=fail_on, judge_audit=audit, keys=keys)


def resolve_fail_on(
    cli: Sequence[str] | None,
    config: PolicyConfig | None,
    default: tuple[str, ...] = (),
) -> tuple[tuple[str, ...], str]:
    """The policies to enforce and where they came from: the command line, then the
    config file, then ``default``."""
    if cli:
        return parse_policies(cli), "--fail-on"
    if config is not None and config.fail_on is not None:
        return config.fail_on, str(config.path)
    return tuple(default), "default"


# ------------------------------------------------------------------ the gate


@dataclass
class Gate:
    """The policies enforced on one route, where they came from, and what they found."""

    names: tuple[str, ...]
    source: str  # "--fail-on", a config file's path, or "default"
    results: list[PolicyResult]
    evidence: Evidence

    @property
    def failed(self) -> list[PolicyResult]:
        return [r for r in self.results if r.failed]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fail_on": list(self.names),
            "from": self.source,
            "results": [r.to_dict() for r in self.results],
            "failed": [r.name for r in self.failed],
            "exit_code": self.exit_code,
        }
        if self.evidence.judge is not None:
            out["judge"] = self.evidence.judge.to_dict()
            out["audit"] = None if self.evidence.audit is None else self.evidence.audit.to_dict()
        return out


@dataclass(frozen=True)
class Policies:
    """The policies a command enforces, read once before any route is judged: the names, where
    they came from, and the judge audit (``--judge-audit``, else the config file's when
    ``judge-unaudited`` is named). :meth:`on` judges one route; ``--by`` judges every slice
    with the same policies (DESIGN section 2: no option skips the gate)."""

    names: tuple[str, ...]
    source: str
    audit: Audit | None

    def on(self, route: Route) -> Gate:
        """The gate on ``route``: every named policy evaluated on it."""
        judge = audit = None
        if "judge-unaudited" in self.names:
            judge = route.judge or JudgeScan(rows=0, judged=0, by_kind={})  # the read's answer
            audit = self.audit
        evidence = Evidence(judge=judge, audit=audit)
        return Gate(self.names, self.source, evaluate(route, self.names, evidence), evidence)


def named_policies(
    *,
    fail_on: Sequence[str] | None,
    judge_audit: str | None,
    default: tuple[str, ...] = (),
) -> Policies | None:
    """The policies the command line or the repository names (None: none named and no
    ``default``; a ``none`` from the command line or the config file is a gate on nothing).
    A ``--judge-audit`` file is read here, named policies or not, so a bad one is refused."""
    from whilecli.route.judges import load_audit

    given = load_audit(judge_audit) if judge_audit else None  # read whatever is named
    config = load_config()
    names, source = resolve_fail_on(fail_on, config, default)
    if not names and source != "--fail-on" and not default:
        return None  # route with no policy named anywhere: no gate (check always has one)
    audit = given
    if "judge-unaudited" in names and given is None and config and config.judge_audit:
        audit = load_audit(config.judge_audit)
    return Policies(names, source, audit)


def gated_exit_code(route: Route, gate: Gate | None, *, route_counts: bool = True) -> int:
    """The exit code of a route under its gate, the one value the process exits with and its
    JSON report states (``exit_code``): the gate's, and the route's own too where
    ``route_counts`` (``route``; ``check`` exits on its policies alone)."""
    own = route.exit_code if route_counts else 0
    return max(own, gate.exit_code if gate is not None else 0)


def gated_report(route: Route, gate: Gate | None, *, route_counts: bool = True) -> dict[str, Any]:
    """A route's JSON report under its gate: ``policies`` added, ``exit_code`` the process's
    (:func:`gated_exit_code`) and ``exit_reasons`` naming each failed policy too."""
    report = route.to_dict()
    reasons = list(report["exit_reasons"]) if route_counts else []
    if gate is not None:
        report["policies"] = gate.to_dict()
        reasons += [f"failed {r.name}: {r.reason}" for r in gate.failed]
    report["exit_reasons"] = reasons
    report["exit_code"] = gated_exit_code(route, gate, route_counts=route_counts)
    return report
