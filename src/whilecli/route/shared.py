"""Which task of one pool is which task of another: the one rule for every comparison of two
pools (``route --teacher``'s check 4, ``diff`` and ``size --before --after``).

DESIGN section 1, "Task ids are checked against prompts", and section 2, check 4 ("same
prompts"): a task is its prompt. Where both pools' rows carry prompts,

- an id both pools carry is one task when its prompt is the same on both sides; an id
  carrying one prompt in one pool and another prompt in the other is not the same task: it
  is left out of the shared tasks, counted, and said (coverage falls, the report says why);
- a task of the other pool whose id this pool lacks, but whose prompt is exactly one of this
  pool's tasks (and one of the other pool's), is that task, under this pool's id: rows keyed
  by the prompt (a harness that writes a uuid per row, which the reader keys by the prompt)
  and rows keyed by a task id share no id, but they share their tasks.

Every task of each pool falls in one place (:class:`Tally`): paired, on its side only, or
left out because its id carries another prompt in the other pool; the counts add up to the
pool's tasks on each side, and every command prints them from that one tally.

Where either pool carries no prompt, ids alone pair tasks. Within one pool, one id with two
prompts is refused by the reader (:mod:`whilecli.io.read`) before any pairing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import polars as pl

from whilecli.io.read import ENV_OF
from whilecli.route.model import Pool, Rate
from whilecli.route.stats import TOL


def keyed_as(pool: Pool, other: Pool) -> bool:
    """Whether ``pool``'s rows are to be read again keyed ``dataset:id``, as ``other``'s are
    or are to be: its rows name a dataset but no id of theirs stood under two, where
    ``other``'s did (a teacher's rows of one of the student's datasets; a run's dump of one
    dataset beside one of two), or where an id stands under one dataset in ``pool`` and
    under another in ``other`` (:func:`ids_across_envs`: a teacher's rows of math500 beside
    the student's of gsm8k, both numbered from 0). The rule one pool's reading keeps
    (:func:`whilecli.io.read._keyed_across_envs`: an id under two datasets is two tasks),
    kept across the two pools of every comparison (``route --teacher``, ``diff``, ``size``).
    Two pools pair by ids keyed alike (:func:`whilecli.io.read.read_rows`'s ``key_envs``)."""
    source, theirs = pool.source, other.source
    keyed = bool(getattr(source, "env_keyed", False))
    names = bool(getattr(source, "names_env", False))
    if not names or keyed:
        return False
    return bool(getattr(theirs, "env_keyed", False)) or ids_across_envs(pool, other) > 0


def datasets(pool: Pool) -> set[str]:
    """The datasets a pool's rows name (:attr:`whilecli.io.read.StreamedRows.task_envs`);
    empty where none does, or the pool is a summary."""
    envs = getattr(pool.source, "task_envs", None)
    if envs is None or ENV_OF not in envs.columns:
        return set()
    return {str(v) for v in envs[ENV_OF].unique().to_list() if v is not None}


def ids_across_envs(pool: Pool, other: Pool) -> int:
    """Task ids both pools hold whose rows name one dataset in ``pool`` and another in
    ``other`` (each pool's :attr:`~whilecli.io.read.StreamedRows.task_envs`): two tasks
    under one id, as an id under two datasets within one pool is."""
    mine = getattr(pool.source, "task_envs", None)
    theirs = getattr(other.source, "task_envs", None)
    if mine is None or theirs is None or mine.height == 0 or theirs.height == 0:
        return 0
    both = mine.join(theirs, on="task_id", how="inner", suffix="_o")
    return both.filter(pl.col(ENV_OF) != pl.col(f"{ENV_OF}_o"))["task_id"].n_unique()


@dataclass(frozen=True)
class Tally:
    """Where each pool's tasks fall: ``mine = paired + only_mine + other_prompt`` and
    ``other = paired + only_other + other_prompt``."""

    mine: int  # this pool's tasks
    other: int  # the other pool's tasks (before any is left out)
    paired: int  # tasks both pools hold (by id, or by prompt under another id)
    other_prompt: int  # ids both pools hold as tasks with different prompts: left out of both

    @property
    def only_mine(self) -> int:
        return self.mine - self.paired - self.other_prompt

    @property
    def only_other(self) -> int:
        return self.other - self.paired - self.other_prompt

    def words(self, mine: str, other: str) -> str:
        """``33 paired, 5 only before, 5 only after, 2 left out (one id, another prompt in
        after); of 40 before and 40 after``: every task of both pools, once."""
        parts = [f"{self.paired} paired"]
        if self.only_mine:
            parts.append(f"{self.only_mine} only {mine}")
        if self.only_other:
            parts.append(f"{self.only_other} only {other}")
        if self.other_prompt:
            parts.append(f"{self.other_prompt} left out (one id, another prompt in {other})")
        return f"{', '.join(parts)}; of {self.mine} {mine} and {self.other} {other}"

    def to_dict(self, mine: str, other: str) -> dict[str, int]:
        return {
            f"{mine}_tasks": self.mine,
            f"{other}_tasks": self.other,
            "paired_tasks": self.paired,
            f"only_{mine}": self.only_mine,
            f"only_{other}": self.only_other,
            "other_prompt_tasks": self.other_prompt,
        }


def tally(mine: pl.DataFrame, other: pl.DataFrame, other_prompt: int = 0) -> Tally:
    """The :class:`Tally` of two per-task frames (``other`` without its left-out ids)."""
    paired = mine.join(other, on="task_id", how="semi").height
    return Tally(mine.height, other.height + other_prompt, paired, other_prompt)


@dataclass(frozen=True)
class Shared:
    """The other pool keyed as this pool's tasks, and what pairing found."""

    other: Pool  # its tasks under this pool's ids, without ids whose prompts differ
    other_prompts: int  # ids both pools carry with different prompts: left out
    by_prompt: int  # tasks of the other pool paired by their prompt under another id
    tally: Tally  # where each pool's tasks fall

    def notes(self, mine: str) -> list[str]:
        """Data-quality lines about the other pool, one per finding (``mine``: how the
        report names this pool)."""
        out = []
        if self.other_prompts:
            ids = "task id carries" if self.other_prompts == 1 else "task ids carry"
            out.append(
                f"{self.other_prompts} {ids} another prompt than in {mine}: not the same "
                "task, left out of the shared tasks"
            )
        if self.by_prompt:
            tasks = "task" if self.by_prompt == 1 else "tasks"
            out.append(
                f"{self.by_prompt} {tasks} paired with {mine}'s by the prompt (the ids differ)"
            )
        return out


def graded_alike(mine: Pool, other: Pool) -> None:
    """Refuse two pools whose passes were counted at different pass thresholds, naming both
    thresholds and files (the check ``summarize --merge`` and ``route`` make on summaries
    read together, :func:`whilecli.route.summary_header.one_pass_threshold`): a summary made
    at 0.1 against one made at 0.7, or against rows graded at 1.0, compares two rules, not
    two models. Rows read in one command share its ``--pass-threshold``; a summary keeps
    the threshold it was made at."""
    from whilecli.route.summary_header import one_pass_threshold

    one_pass_threshold(
        [(", ".join(p.source.paths), p.source.pass_threshold) for p in (mine, other)],
        "two pools graded at different pass thresholds cannot be compared",
    )


def share_tasks(mine: Pool, other: Pool) -> Shared:
    """``other`` keyed as ``mine``'s tasks (see the module doc): a task of ``other`` keyed
    apart whose prompt is one task of ``mine`` takes that task's id; ids whose prompts differ
    between the two are left out of ``other``'s tasks and counted. Two pools graded at
    different pass thresholds are refused first (:func:`graded_alike`)."""
    graded_alike(mine, other)
    these, those = mine.source.prompts, other.source.prompts
    if these is None or those is None or these.height == 0 or those.height == 0:
        return Shared(other, 0, 0, tally(mine.tasks, other.tasks))
    moved = _keyed_apart(these, those)
    if moved.height:

        def relabel(frame: pl.DataFrame) -> pl.DataFrame:
            joined = frame.join(moved, on="task_id", how="left")
            return joined.with_columns(pl.coalesce("to", "task_id").alias("task_id")).drop("to")

        those = relabel(those)
        source = dataclasses.replace(other.source, prompts=those)
        other = dataclasses.replace(other, tasks=relabel(other.tasks), source=source)
    differ = (
        these.join(those, on="task_id", how="inner", suffix="_t")
        .filter(pl.col("prompt") != pl.col("prompt_t"))
        .select("task_id")
        .join(mine.tasks.select("task_id"), on="task_id", how="semi")
        .join(other.tasks.select("task_id"), on="task_id", how="semi")
    )  # an id is left out where both pools hold it as a task: every task is counted once
    if differ.height:
        kept = other.tasks.join(differ, on="task_id", how="anti")
        other = dataclasses.replace(other, tasks=kept)
    return Shared(other, differ.height, moved.height, tally(mine.tasks, other.tasks, differ.height))


def _keyed_apart(mine: pl.DataFrame, theirs: pl.DataFrame) -> pl.DataFrame:
    """(``task_id``, ``to``): the other pool's task ids this pool lacks whose prompt key is
    one task's of this pool and one task's of the other, with this pool's id; never onto an
    id the other pool already uses, so no two of its tasks become one."""
    single = (
        mine.group_by("prompt")
        .agg(pl.col("task_id").first().alias("to"), pl.len().alias("ids"))
        .filter(pl.col("ids") == 1)
        .drop("ids")
    )
    loose = theirs.filter(~pl.col("task_id").is_in(mine.get_column("task_id").implode()))
    once = loose.group_by("prompt").agg(pl.len().alias("ids")).filter(pl.col("ids") == 1)
    loose = loose.join(once.select("prompt"), on="prompt", how="semi")
    moved = loose.join(single, on="prompt", how="inner")
    used = theirs.get_column("task_id").implode()
    return moved.filter(~pl.col("to").is_in(used)).select("task_id", "to")


def pairing_notes(mine: Pool, other: Pool, names: tuple[str, str]) -> list[str]:
    """What makes a paired difference of two pools (``mine`` first; ``other`` keyed as its
    tasks, :func:`share_tasks`) mean something else than the change between them: a
    truncated share that differs (intervals apart: the difference may be the token cap's),
    writers that name different models, and counts equal on every task (one dump twice, or
    a deterministic rerun: 0 by construction). ``names``: how the report names each."""
    from whilecli.io.modelid import same_model

    out: list[str] = []
    cut = [_cut_share(p) for p in (mine, other)]
    if cut[0] is not None and cut[1] is not None and _cut_apart(cut[0], cut[1]):
        out.append(
            f"the truncated share is {cut[0].format()} {names[0]} and {cut[1].format()}"
            f" {names[1]}: the difference may be the token cap's, not the model's (compare"
            " at one max_tokens)"
        )
    models = [sorted(m for m in p.models if m is not None) for p in (mine, other)]
    if models[0] and models[1] and not any(same_model(a, b) for a in models[0] for b in models[1]):
        out.append(
            f"the rows name other models {names[0]} ({', '.join(models[0])}) and {names[1]}"
            f" ({', '.join(models[1])}): the difference compares two models"
        )
    columns = ["task_id", "n", "passes"]
    a, b = (p.tasks.select(columns).sort("task_id") for p in (mine, other))
    if a.height and a.equals(b):
        out.append(
            f"the two dumps hold the same rows and passes on every task ({a.height} tasks):"
            " one dump given twice, or a deterministic rerun; the difference is 0 by"
            " construction"
        )
    return out


#: The least difference of two truncated shares that reads as a cap's (with intervals apart):
#: a share that moves less moves pass@1 by less, and two runs at one cap print shares a
#: point apart with intervals apart once in a few hundred pairs.
CUT_GAP = 0.02


def _cut_apart(a: Rate, b: Rate) -> bool:
    """Two truncated shares whose intervals do not overlap, :data:`CUT_GAP` apart or more."""
    if a.value is None or b.value is None:
        return False
    return _apart(a, b) and abs(a.value - b.value) >= CUT_GAP - TOL


def _apart(a: Rate, b: Rate) -> bool:
    """Two rates whose intervals do not overlap."""
    if None in (a.low, a.high, b.low, b.high):
        return False
    return bool(a.high < b.low or b.high < a.low)  # type: ignore[operator]


def _cut_share(pool: Pool) -> Rate | None:
    """The share of ``pool``'s rows known cut off at the token cap, over the rows whose
    truncation is recorded (Wilson over rows); None where none is recorded."""
    from whilecli.route import stats

    known = int(pool.tasks["truncated_known"].sum() or 0)
    if not known:
        return None
    cut = int(pool.tasks["truncated"].sum() or 0)
    return stats.wilson(cut, known, n_tasks=pool.n_tasks, unit="rows")
