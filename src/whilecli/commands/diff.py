"""``whilecli diff BEFORE AFTER``: a paired, per-task comparison of two dumps of the same tasks.

Prints pass@1 of each on the shared tasks with its bootstrap interval, the paired difference
(after − before) with its bootstrap interval over tasks, the number of paired tasks and the
tasks that flipped (all-fail ↔ some-pass). ``--fail-on regression`` exits 1 when the
difference's upper bound is below 0. Formats: text, json, markdown, github.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import typer

from whilecli import jsonout, textstyle
from whilecli.commands import route as route_cmd
from whilecli.commands._common import (
    DRAWS,
    SEED,
    STEP,
    check_draws,
    check_seed,
    existing_paths,
    user_errors,
)
from whilecli.errors import InputError, UsageError

if TYPE_CHECKING:
    import polars as pl

    from whilecli.route.model import Pool, Rate
    from whilecli.route.paired import PairedDiff
    from whilecli.route.shared import Tally

#: The conditions ``whilecli diff --fail-on`` knows.
DIFF_POLICIES = ("regression",)
#: Task ids printed per flip list in text and Markdown (JSON lists them all).
SHOWN = 10


@dataclass
class Dump:
    """One dump as ``diff`` and ``size`` compare it: its per-task counts (``Pool.tasks``) and
    what reading found that changes what the numbers mean (the row facts' warnings)."""

    pool: Pool
    warnings: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    pairing: Tally | None = None  # the second dump's: where both dumps' tasks fall
    #: What makes its pass@1 unsure however the counts fall (:meth:`Facts.doubts`).
    doubts: list[str] = field(default_factory=list)

    @property
    def tasks(self) -> pl.DataFrame:
        return self.pool.tasks


def read_tasks(
    path: str,
    *,
    mapping: list[str] | None,
    pass_threshold: float | None,
    input_format: str | None,
    pool: bool = False,
    missing: str = "skip",
) -> pl.DataFrame:
    """One dump's per-task counts (``Pool.tasks``), read like ``whilecli route`` reads rows."""
    return read_dump(
        path,
        mapping=mapping,
        pass_threshold=pass_threshold,
        input_format=input_format,
        pool=pool,
        missing=missing,
    ).tasks


def read_dump(
    path: str,
    *,
    mapping: list[str] | None,
    pass_threshold: float | None,
    input_format: str | None,
    pool: bool = False,
    missing: str = "skip",
    key_envs: bool = False,
) -> Dump:
    """One dump's per-task counts (``Pool.tasks``) and row facts, read like ``whilecli
    route`` reads rows (``missing``: ungraded rows left out, or counted as failures;
    ``key_envs``: keyed ``dataset:id`` as the dump it is paired with)."""
    from whilecli.io.read import parse_map, read_rows
    from whilecli.route.pool import Counts, summarize
    from whilecli.route.summary import is_summary, pool_from_summary

    if pass_threshold is not None and not math.isfinite(pass_threshold):
        raise UsageError(f"--pass-threshold must be a finite number, got {pass_threshold}")
    if path != "-" and is_summary(path):  # per-task counts: the pool route builds from them
        if mapping:
            raise UsageError(
                f"--map: {path} is a summary (per-task counts of rows already read), not rows:"
                " give --map when summarising the rows"
            )
        summed = pool_from_summary([path], pass_threshold=pass_threshold, missing=missing)
        known = summed.source.facts
        return Dump(summed, known.warnings(), known.to_dict(), doubts=known.doubts())
    rows = read_rows(
        [path],
        mapping=parse_map(mapping or []),
        pass_threshold=pass_threshold,
        input_format=input_format,
        stdin=sys.stdin.buffer if path == "-" else None,
        pool=pool,
        aggregate=Counts(),
        missing=missing,
        key_envs=key_envs,
    )
    found = rows.facts
    return Dump(summarize(rows), found.warnings(), found.to_dict(), doubts=found.doubts())


def paired_dumps(before: str, after: str, **read: Any) -> tuple[Dump, Dump]:
    """The two dumps, the second keyed as the first's tasks
    (:func:`whilecli.route.shared.share_tasks`: ids, then prompts; an id whose prompts differ
    between the two is left out), with what pairing found among the second's warnings."""
    from whilecli.route.checks import graders, reward_scales
    from whilecli.route.quality import crossed_conditions, kept_by_grade, several_models
    from whilecli.route.shared import keyed_as, pairing_notes, share_tasks

    first, second = read_dump(before, **read), read_dump(after, **read)
    if keyed_as(first.pool, second.pool) and before != "-":  # ids keyed alike on both sides
        first = read_dump(before, **read, key_envs=True)
    if keyed_as(second.pool, first.pool) and after != "-":
        second = read_dump(after, **read, key_envs=True)
    shared = share_tasks(first.pool, second.pool)
    if shared.tally.paired == 0:
        apart = shared.tally.other_prompt
        why = (
            f"share no task: the {apart} ids both hold carry other prompts in {after}, so they"
            " are not the same tasks"
            if apart
            else "share no task id"
        )
        raise InputError(f"{before} and {after} {why}: a paired comparison needs the same tasks")
    notes = shared.notes("before") + pairing_notes(first.pool, shared.other, ("before", "after"))
    scales = reward_scales(first.pool, second.pool)  # as route --teacher finds it
    if scales is not None:
        (b_lo, b_hi), (a_lo, a_hi) = scales["student"], scales["teacher"]
        notes.append(
            f"the rewards run from {b_lo:g} to {b_hi:g} before and from {a_lo:g} to {a_hi:g}"
            " after: one pass threshold may not grade both, so the difference may compare"
            " two scales"
        )
    doubts = list(second.doubts)
    for side, pool, lacking, other in (
        ("the before rows: ", first.pool, shared.tally.only_other, "after's"),
        ("", shared.other, shared.tally.only_mine, "before's"),
    ):  # a rejection-sampled dump reads every kept task at 1, as route --teacher finds it
        mixed = several_models(pool)
        if mixed is not None:  # as route finds it (several_models)
            doubts.append(
                f"{side}{mixed[0]} models wrote these rows ({mixed[1]}): the pass rates are a"
                " mixture of models, not one model's; compare one model's rows"
            )
            notes.append(doubts[-1])
        kept = kept_by_grade(pool, lacking=lacking, other=other)
        if kept is not None:
            doubts.append(f"{side}{kept}: the rows look kept by their grade")
            notes.append(doubts[-1])
        for column, rates in crossed_conditions(pool):  # as route finds it (crossed_factor)
            notes.append(
                f"{side}each task's rows come in the same parts under {column}, whose values"
                f" pass at different rates within the same tasks ({rates}): the difference"
                " compares mixtures of those conditions; compare one condition's rows"
            )
    if (who := graders(first.pool, second.pool)) is not None:  # as route --teacher finds it
        doubts.append(
            f"a {who[0]} graded the before rows, a {who[1]} the after rows: the difference"
            " compares two graders' pass rates"
        )
        notes.append(doubts[-1])
    k_before, k_after = _typical_k(first.pool.tasks), _typical_k(shared.other.tasks)
    if k_before and k_after and max(k_before, k_after) >= 2 * min(k_before, k_after):
        notes.append(
            f"k = {k_before} draws per task before and {k_after} after: which tasks are"
            " gained (all-fail → some-pass) or lost depends on k, a task of more draws showing"
            " a pass where fewer show none; pass@1 and its difference do not"
        )
    facts = dict(second.facts, other_prompt_tasks=shared.other_prompts)
    facts["tasks_paired_by_prompt"] = shared.by_prompt
    return first, Dump(shared.other, second.warnings + notes, facts, shared.tally, doubts)


def _typical_k(tasks: Any) -> int | None:
    """The rollouts a dump drew per task: its most rows of one task (an ungraded row left out
    of some task does not make another k; the note asks for twice the draws or more, where a
    task's pass shows that much more often), None for no task."""
    if tasks.height == 0:
        return None
    return int(tasks["n"].max() or 0) or None


def dump_warnings(dumps: tuple[Dump, Dump]) -> list[str]:
    """The two dumps' row-fact warnings, each said of the dump it is about."""
    return [
        f"{side}: {w}"
        for side, d in zip(("before", "after"), dumps, strict=True)
        for w in d.warnings
    ]


def parse_diff_policies(values: list[str] | None) -> tuple[str, ...]:
    """``--fail-on regression`` (comma-separated, repeatable; ``none`` names nothing)."""
    from whilecli.failon import parse_conditions

    return parse_conditions(values, DIFF_POLICIES, kind="condition", command="diff")


def signed(rate: Rate, digits: int = 2) -> str:
    """A difference as every rate prints (``Rate.format``, signed for paired tasks):
    ``+0.12 [+0.05, +0.19] n=64 paired tasks (512 rows)``; without an interval, why after it."""
    why = f": {rate.why_no_interval}" if rate.low is None and rate.why_no_interval else ""
    return rate.format(digits) + why


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN])
    more = f", … (+{len(ids) - SHOWN})" if len(ids) > SHOWN else ""
    return f"{len(ids)}" + (f": {shown}{more}" if ids else "")


def doubted(dumps: tuple[Dump, Dump] | None) -> bool:
    """Whether either dump's pass@1 is unsure however the counts fall (:attr:`Dump.doubts`):
    the verdict read from the two is provisional."""
    return dumps is not None and any(d.doubts for d in dumps)


def headline(diff: PairedDiff, provisional: bool = False) -> str:
    said = ", provisional" if provisional else ""
    return f"{diff.verdict()}{said} (after − before on {diff.shared_tasks} paired tasks)"


def diff_lines(diff: PairedDiff) -> list[tuple[str, str]]:
    """``(label, value)`` lines every format prints."""
    lines = [
        ("before pass@1", diff.before.format()),
        ("after pass@1", diff.after.format()),
        ("difference", signed(diff.difference)),
        ("tasks", diff.pairing.words("before", "after")),
        ("gained (all-fail → some-pass)", _ids(diff.gained)),
        ("lost (some-pass → all-fail)", _ids(diff.lost)),
    ]
    return lines


def failed_conditions(diff: PairedDiff, names: tuple[str, ...]) -> list[str]:
    """Reasons of the named conditions that hold."""
    out = []
    if "regression" in names and diff.regression:
        from whilecli.route.model import against

        assert diff.difference.high is not None
        high, zero = against(diff.difference.high, 0.0, signed=True)  # never "-0.00 < 0"
        fell = textstyle.fraction(-(diff.difference.value or 0.0))
        out.append(
            f"regression: pass@1 fell by {fell}; the interval's upper bound {high} is below {zero}"
        )
    return out


def to_markdown(
    diff: PairedDiff,
    failed: list[str],
    before: str,
    after: str,
    warnings: list[str] | None = None,
    provisional: bool = False,
) -> str:
    from whilecli.route.render_markdown import md_cell

    out = [f"## whilecli diff: {headline(diff, provisional)}", "", f"`{before}` → `{after}`", ""]
    out += ["| measure | value |", "|---|---|"]
    out += [f"| {md_cell(k)} | {md_cell(v)} |" for k, v in diff_lines(diff)]
    out += [""] + [f"- **failed** {md_cell(f)}" for f in failed]
    if warnings:  # as the route's Markdown says them
        out += [""] * bool(failed) + ["### Warnings", ""] + [f"- {md_cell(w)}" for w in warnings]
    return "\n".join(out).rstrip("\n") + "\n"


def render_diff(
    diff: PairedDiff,
    names: tuple[str, ...],
    fmt: str,
    before: str,
    after: str,
    dumps: tuple[Dump, Dump] | None = None,
) -> str:
    """The report in one of text, json, markdown, github (``dumps``: the two dumps read,
    whose row facts the report carries)."""
    failed = failed_conditions(diff, names)
    warnings = dump_warnings(dumps) if dumps else []
    provisional = doubted(dumps)
    if fmt == "json":
        report: dict[str, Any] = {
            "schema_version": jsonout.SCHEMA_VERSION,
            "before_path": before,
            "after_path": after,
        }
        report.update(diff.to_dict())
        report["provisional"] = provisional
        if dumps:
            report["facts"] = {"before": dumps[0].facts, "after": dumps[1].facts}
        report["warnings"] = warnings
        report["fail_on"] = list(names)
        report["failed"] = failed
        report["exit_code"] = 1 if failed else 0
        return jsonout.dumps(report, indent=2) + "\n"
    if fmt == "markdown":
        return to_markdown(diff, failed, before, after, warnings, provisional)
    if fmt == "github":
        from whilecli.route.render_markdown import annotation

        lines = [annotation("error", f, file=after, title="whilecli diff") for f in failed]
        lines += [annotation("warning", w, title="whilecli diff") for w in warnings]
        if diff.regression and not failed:
            lines.append(annotation("warning", "pass@1 fell", file=after, title="whilecli diff"))
        lines.append(
            annotation(
                "notice", f"{headline(diff, provisional)}: {signed(diff.difference)}", file=after
            )
        )
        return "\n".join(lines) + "\n"
    columns = textstyle.width(sys.stdout)
    out = textstyle.wrap(f"whilecli diff: {headline(diff, provisional)}", columns)
    out += textstyle.pairs(diff_lines(diff), columns)
    for f in failed:
        out += textstyle.wrap(f"failed {f}", columns)
    out += textstyle.said("warning", warnings, columns)
    return "\n".join(out) + "\n"


@user_errors
def diff_command(
    before: str = typer.Argument(
        ...,
        metavar="BEFORE",
        help="The earlier dump (rows: a file, directory or glob; - for stdin).",
        callback=existing_paths,
    ),
    after: str = typer.Argument(
        ...,
        metavar="AFTER",
        help="The later dump of the same tasks (as BEFORE).",
        callback=existing_paths,
    ),
    fail_on: list[str] | None = typer.Option(
        None,
        "--fail-on",
        metavar="CONDITIONS",
        help="Exit 1 when a named condition holds: regression (the difference's upper bound < 0).",
        rich_help_panel="Checks",
    ),
    pass_threshold: float | None = route_cmd.PASS_THRESHOLD,
    mapping: list[str] | None = route_cmd.MAPPING,
    step: int | None = STEP,
    input_format: str | None = route_cmd.INPUT_FORMAT,
    output: route_cmd.OutputFormat = route_cmd.FORMAT,
    seed: int = SEED,
    draws: int = DRAWS,
    pool: bool = route_cmd.POOL,
    missing: str = route_cmd.MISSING,
) -> None:
    """Compare two dumps of the same tasks, task by task: pass@1 each, the paired difference."""
    names = parse_diff_policies(fail_on)
    if before == "-" and after == "-":
        raise UsageError("stdin (-) can feed BEFORE or AFTER, not both")
    check_seed(seed)
    check_draws(draws)
    from whilecli.route.paired import paired_diff  # polars and numpy: after the checks

    read: dict[str, Any] = {
        "mapping": mapping,
        "pass_threshold": pass_threshold,
        "input_format": input_format,
        "pool": pool,
        "missing": missing,
    }
    dumps = paired_dumps(before, after, **read)
    diff = paired_diff(
        dumps[0].tasks, dumps[1].tasks, draws=draws, seed=seed, pairing=dumps[1].pairing
    )
    fmt = output.value
    sys.stdout.write(render_diff(diff, names, fmt, before, after, dumps))
    sys.stdout.flush()
    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        failed = failed_conditions(diff, names)
        warnings = dump_warnings(dumps)
        route_cmd.append_summary(
            os.environ["GITHUB_STEP_SUMMARY"],
            to_markdown(diff, failed, before, after, warnings, doubted(dumps)),
            inputs=[before, after],
        )
    raise typer.Exit(1 if failed_conditions(diff, names) else 0)
