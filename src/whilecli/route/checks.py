"""The six routing checks of DESIGN section 2, one pure function each.

Each takes the student's :class:`Pool` and the :class:`RouteOptions` and returns a
:class:`CheckResult` with its status, what it measured (every rate with its interval and
n) and a why sentence. None of them decides the route alone: :mod:`decide` runs them in
order and stops at the first whose ``decides`` is set.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from whilecli.io.locate import UNIT_TOLERANCE
from whilecli.io.modelid import (
    _FAMILY,
    _family,
    model_identity,
    tuned_from,
    unsure_reason,
    without_step,
)
from whilecli.io.versions import newer, version_id
from whilecli.io.versions import version_order as version_order
from whilecli.knobs import PASS_TOLERANCE
from whilecli.route import quality, stats
from whilecli.route.identity import (
    closest,
    same_model,
    same_weights,
    shown,
    step_from_name,
    unsure_weights,
)
from whilecli.route.model import CheckResult, Pool, Rate, Status, against
from whilecli.route.options import RouteOptions
from whilecli.route.shared import datasets, share_tasks
from whilecli.route.stats import TOL
from whilecli.route.tokenizer import Vocab, embedding_size, padded_apart, vocabulary

KEYS = ("truncated_passes", "rollouts_per_task", "band", "teacher", "tokenizer", "on_policy")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def grouped(pool: Pool) -> pl.DataFrame:
    """Tasks with two or more rows: the only ones a grouped method learns from."""
    tasks = pool.tasks
    # every task grouped: no query
    if tasks.height == 0 or int(tasks["n"].min()) >= 2:  # type: ignore[arg-type]
        return tasks
    return tasks.filter(pl.col("n") >= 2)


def common_k(tasks: pl.DataFrame) -> int:
    """The most common group size (ties: the smaller); 0 with no task."""
    if tasks.height == 0:
        return 0
    if "passes" in tasks.columns and tasks["n"].null_count() == 0:
        # the pool's cells (kept for every statistic) count the tasks of each size
        _, ns, counts = stats.cell_lists(tasks)
        per_size: dict[int, int] = {}
        for size, count in zip(ns, counts, strict=True):
            per_size[size] = per_size.get(size, 0) + count
        return min(per_size, key=lambda size: (-per_size[size], size))  # ties: the smaller
    sizes = tasks.group_by("n").len().sort(["len", "n"], descending=[True, False])
    return int(sizes["n"][0])  # the first of the most common sizes: ties go to the smaller


def truncated_passes(pool: Pool, options: RouteOptions) -> CheckResult:
    """1. Can a cut-off reply pass? Any truncated row that passed → ``fix-reward``."""
    t = pool.tasks
    known = int(t["truncated_known"].sum())
    cut = int(t["truncated"].sum())
    cut_passes = int(t["truncated_passes"].sum())
    known_tasks = int((t["truncated_known"] > 0).sum())
    measured = {
        "truncated_passes": cut_passes,
        "truncated_rows": cut,
        "rows_with_truncation_recorded": known,
        "rows": pool.rows,
        "truncated_share": stats.wilson(cut, known, n_tasks=known_tasks, n_rows=known, unit="rows"),
    }
    title = "Can a cut-off reply pass?"
    if cut_passes > 0:
        why = (
            f"{_plural(cut_passes, 'truncated row')} passed: a cut-off reply passes. Score "
            "truncated replies as failures or raise max_tokens, then route again"
        )
        return CheckResult("truncated_passes", title, Status.FAIL, why, measured, "fix-reward")
    unread = pool.source.facts.cut_unread
    if known == 0 and unread is not None:
        measured["truncation_unread"] = unread
        why = f"truncation is not read: {unread} may record it in a form the reader does not follow"
        warn = (
            f"truncation is unknown: {unread} was not read, so a cut-off reply could pass"
            f" unseen; pass --map truncated={unread} if it records the cut"
        )
        return CheckResult("truncated_passes", title, Status.UNKNOWN, why, measured, None, [warn])
    if known == 0:
        why = "the rows record no truncation (no truncated or finish_reason field)"
        warn = "truncation is unknown: a cut-off reply could pass unseen; record finish_reason"
        return CheckResult("truncated_passes", title, Status.UNKNOWN, why, measured, None, [warn])
    if known < pool.rows:
        why = (
            f"truncation is recorded on {known} of {pool.rows} rows and none of those passes "
            "truncated; the rest are unknown"
        )
        warn = f"{pool.rows - known} rows record no truncation"
        return CheckResult("truncated_passes", title, Status.UNKNOWN, why, measured, None, [warn])
    why = (
        f"no truncated row passes ({_plural(cut, 'truncated row')}, all failed)"
        if cut
        else "no row is truncated"
    )
    return CheckResult("truncated_passes", title, Status.PASS, why, measured)


def rollouts_per_task(pool: Pool, options: RouteOptions) -> CheckResult:
    """2. How many rollouts per task? No task with two or more rows → ``single-rollout``."""
    groups = grouped(pool)
    singles = pool.n_tasks - groups.height
    measured: dict[str, object] = {
        "tasks": pool.n_tasks,
        "grouped_tasks": groups.height,
        "single_tasks": singles,
        "k": common_k(groups) if groups.height else (1 if singles else 0),
        "min_rows_per_group": int(groups.select(pl.min("n")).item()) if groups.height else None,
        "max_rows_per_group": int(groups.select(pl.max("n")).item()) if groups.height else None,
        "sampler_logprobs": pool.source.has_logprobs,
        "critic_values": pool.source.has_values,
    }
    title = "How many rollouts per task?"
    have = quality.coverage(pool, "logprobs")
    if have is not None and 0 < have < pool.rows:
        measured["sampler_logprobs_rows"] = have
    if groups.height == 0:
        lp = {
            True: "present",
            False: "absent (needed to correct staleness)",
            None: "unknown (a summary without a whilecli header does not say)",
        }[pool.source.has_logprobs]
        if "sampler_logprobs_rows" in measured:  # a field on some rows is not "present"
            lp = f"on {have} of {pool.rows} rows only (needed on every row to correct staleness)"
        why = (
            f"every task has one row ({_plural(singles, 'task')}): a group of one has no "
            f"baseline. Sampler log-probs are {lp}; re-running at k >= 4 is usually cheaper"
        )
        return CheckResult("rollouts_per_task", title, Status.FAIL, why, measured, "single-rollout")
    why = f"{_plural(groups.height, 'grouped task')}, most at k={measured['k']}"
    warnings = []
    if singles:
        why += f"; {_plural(singles, 'single')} left out of the band"
        warnings.append(f"{_plural(singles, 'task')} with one row are left out of the band")
    return CheckResult("rollouts_per_task", title, Status.PASS, why, measured, None, warnings)


def band_outlook(
    groups: pl.DataFrame, split: int, options: RouteOptions
) -> stats.SplitOutlook | None:
    """What more draws would split (:func:`whilecli.route.stats.split_outlook`), where the
    band is thin and a need is asked of it; elsewhere the pool's one Beta prior."""
    total = groups.height
    thin = split < options.min_split_tasks or split / max(total, 1) < options.min_split_share - TOL
    if thin:
        return stats.split_outlook(groups, options.max_k)
    prior = stats.pool_prior(groups)
    return None if prior is None else stats.SplitOutlook(prior)


def band_need(
    groups: pl.DataFrame,
    split: int,
    options: RouteOptions,
    outlook: stats.SplitOutlook | None = None,
) -> dict[str, object]:
    """What a thin band needs: the smallest k ≤ max_k whose expected split share reaches
    ``min_split_share`` under the pool's outlook (``outlook``, else :func:`band_outlook`;
    where it holds tasks that never split, no k past their share), or the task count that
    gives ``min_split_tasks`` split tasks."""
    total = groups.height
    share = split / total
    k_now = common_k(groups)
    need: dict[str, object] = {}
    if outlook is None:
        outlook = band_outlook(groups, split, options)
    if share < options.min_split_share - TOL:
        for k in range(max(2, k_now + 1), options.max_k + 1):
            expected = stats.outlook_split_share(groups, k, outlook)
            if expected is not None and expected >= options.min_split_share - TOL:
                need["k"] = k
                if expected * total < options.min_split_tasks:
                    need["tasks"] = math.ceil(options.min_split_tasks / expected)
                return need
        why = f"no k up to {options.max_k} reaches a split share of {options.min_split_share}"
        if outlook is not None and outlook.edge:
            edge = outlook.never + outlook.always
            why += (
                f": the counts fit as well with about {edge:.2f} of the tasks passing or"
                " failing on every draw, which no number of draws splits"
            )
        need["k"], need["why"] = None, why
        return need
    need["tasks"] = math.ceil(options.min_split_tasks / max(share, 1e-12))
    return need


def band(pool: Pool, options: RouteOptions) -> CheckResult:
    """3. What is the per-task band? floor, saturated, or mixed (split and in-band shares)."""
    title = "What is the per-task band?"
    groups = grouped(pool)
    total = groups.height
    if total == 0:
        return CheckResult("band", title, Status.NOT_REACHED, "no grouped task to measure")
    low, high = options.band
    rate = groups["passes"] / groups["n"]
    at0 = int((groups["passes"] == 0).sum())
    at1 = int((groups["passes"] == groups["n"]).sum())
    across = _split_across(pool, groups)
    split = split_tasks(pool, groups)
    in_band = int(((rate >= low - TOL) & (rate <= high + TOL) & (rate > 0) & (rate < 1)).sum())
    rows = int(groups["n"].sum())
    measured: dict[str, object] = {
        "grouped_tasks": total,
        "pass_at_1": stats.pass_at_1(groups, draws=options.bootstrap_draws, seed=options.seed),
        "tasks_at_0": at0,
        "tasks_at_1": at1,
        "split_tasks": split,
        **({"split_across_writers": across} if across else {}),
        "floor_share": stats.wilson(at0, total, n_rows=rows),
        "split_share": stats.wilson(split, total, n_rows=rows),
        "in_band_share": stats.wilson(in_band, total, n_rows=rows),
    }
    outlook = band_outlook(groups, split, options)
    for k in options.split_ks:
        measured[f"expected_split_share_k{k}"] = stats.outlook_split_share(groups, k, outlook)
    if at0 == total:
        measured["band"] = "floor"
        why = f"every grouped task fails ({total} at 0): more rollouts keep nothing"
        return CheckResult("band", title, Status.FAIL, why, measured, "floor")
    if at1 == total:
        measured["band"] = "saturated"
        why = f"every grouped task passes ({total} at 1): binary reward makes every pass equal"
        return CheckResult("band", title, Status.FAIL, why, measured, "saturated")
    measured["band"] = "mixed"
    share = split / total
    if split == 0:
        across_words = f", {across} split only across writers" if across else ""
        why = (
            f"no group splits: no gradient ({at0} grouped tasks at 0, {at1} at 1"
            f"{across_words}); more draws per task, or what the tasks at 0 and at 1 need"
        )
        need = band_need(groups, split, options, outlook)
        measured["need"] = need
        return CheckResult("band", title, Status.FAIL, why, measured, "no-split")
    why = (
        f"mixed: {split} of {_plural(total, 'grouped task')} split ({share:.2f}), "
        f"{in_band} in band [{low}, {high}]"
    )
    thin = split < options.min_split_tasks or share < options.min_split_share - TOL
    warnings = []
    if thin:
        need = band_need(groups, split, options, outlook)
        measured["need"] = need
        measured["want"] = few_split_terms(split, total, options)
        warnings.append(few_split_warning(split, total, need, options))
    return CheckResult("band", title, Status.PASS, why, measured, None, warnings)


def split_tasks(pool: Pool, groups: pl.DataFrame) -> int:
    """Grouped tasks (``groups``, :func:`grouped`) with a pass and a fail among one writer's
    rows: what check 3 and ``watch`` count as split."""
    split = (groups["passes"] > 0) & (groups["passes"] < groups["n"])
    return int(split.sum()) - _split_across(pool, groups)


def _split_across(pool: Pool, groups: pl.DataFrame) -> int:
    """Grouped tasks that split only across writers (:attr:`Pool.split_across`): no group
    of one policy's draws splits in them, so they are not split tasks."""
    across = pool.split_across
    if across is None or across.len() == 0:
        return 0
    return groups.filter(pl.col("task_id").is_in(across.implode())).height


def need_words(need: Mapping[str, object]) -> str:
    """What a thin band needs, in words: ``need k=6 rollouts per task and 98 tasks``, or why
    no k reaches it. The one phrase the band's warning and ``check``'s few-split line say."""
    asks = []
    if need.get("k") is not None:
        asks.append(f"k={need['k']} rollouts per task")
    if "tasks" in need:
        asks.append(f"{need['tasks']} tasks")
    return f"need {' and '.join(asks)}" if asks else str(need.get("why", "need more tasks"))


#: The opening of the thin band's warning (what ``few_split_warning`` says first).
FEW_SPLIT = "few split tasks"


def few_split_terms(split: int, total: int, options: RouteOptions) -> str:
    """A thin band's split share against the minimums, as every report prints them
    (:func:`~whilecli.route.model.against`: 0.299 under 0.3, never 0.30)."""
    share, limit = against(split / total, options.min_split_share)
    return f"share {share}; want >= {options.min_split_tasks} and >= {limit}"


def few_split_warning(
    split: int, total: int, need: Mapping[str, object], options: RouteOptions
) -> str:
    """The thin band's warning: its split tasks against the minimums, and what it needs."""
    ask = need_words(need)
    return (
        f"{FEW_SPLIT} ({split}, {few_split_terms(split, total, options)}): most groups give no"
        f" gradient. {ask[:1].upper()}{ask[1:]}; ReinforceAda samples until a task has both a"
        " pass and a fail"
    )


def teacher(pool: Pool, options: RouteOptions) -> CheckResult:
    """4. Does the teacher clear? Coverage, gap ≥ effect with intervals apart, and a low
    truncated share, all on the tasks both pools share."""
    title = "Does the teacher clear?"
    if options.teacher is None:
        return CheckResult("teacher", title, Status.NOT_ASKED, "no --teacher rows given")
    found = share_tasks(pool, options.teacher)  # a task is its prompt (route/shared.py)
    tpool, other_prompts = found.other, found.other_prompts
    shared = pool.tasks.join(tpool.tasks, on="task_id", how="inner", suffix="_t")
    covered = shared.height
    draws, seed = options.bootstrap_draws, options.seed
    student_side = shared.select("task_id", "n", "passes")
    teacher_side = shared.select(
        "task_id", pl.col("n_t").alias("n"), pl.col("passes_t").alias("passes")
    )
    s_rate = stats.pass_at_1(student_side, draws=draws, seed=seed)
    t_rate = stats.pass_at_1(teacher_side, draws=draws, seed=seed)
    t_known = int(tpool.tasks["truncated_known"].sum())
    t_cut = int(tpool.tasks["truncated"].sum())
    t_known_tasks = int((tpool.tasks["truncated_known"] > 0).sum())
    gap = None if s_rate.value is None or t_rate.value is None else t_rate.value - s_rate.value
    measured: dict[str, object] = {
        "coverage": stats.wilson(covered, pool.n_tasks, n_rows=pool.rows),
        "shared_tasks": covered,
        "teacher_pass_at_1": t_rate,
        "student_pass_at_1": s_rate,
        "gap": gap,
        "teacher_truncated_share": stats.wilson(t_cut, t_known, n_tasks=t_known_tasks, unit="rows"),
    }
    if other_prompts:
        measured["other_prompt_tasks"] = other_prompts
    caps = (tpool.source.facts.token_cap, pool.source.facts.token_cap)
    if None not in caps and caps[0] > caps[1] + TOL:  # type: ignore[operator]
        measured["teacher_token_cap"], measured["student_token_cap"] = caps
    doubts = tpool.source.facts.doubts("--teacher-map")  # the teacher's pass@1 itself unsure
    kept = quality.kept_by_grade(tpool, lacking=found.tally.only_mine)
    if kept is not None:
        doubts.append(
            f"{kept}: they look kept by their grade (a rejection-sampled set keeps the"
            " passes), so its pass@1 reads every kept task at 1 whatever its rate; give every"
            " draw of the teacher's, graded"
        )
    for column, rates in quality.crossed_conditions(tpool):
        doubts.append(
            f"its rows come in the same parts under {column}, whose values pass at different"
            f" rates within the same tasks ({rates}): draws of several conditions, so its"
            " pass@1 is their mixture's, not one teacher's; give one condition's rows"
        )
    if (who := graders(pool, tpool)) is not None:
        measured["student_grader"], measured["teacher_grader"] = who
    if doubts:
        measured["teacher_doubts"] = doubts
    if found.tally.only_mine:  # shared + other prompt + student's only = the student's tasks
        measured["student_only_tasks"] = found.tally.only_mine
    if found.by_prompt:
        measured["tasks_paired_by_prompt"] = found.by_prompt
    scales = (
        reward_scales(pool, tpool)
        or teacher_under_threshold(pool, tpool)
        or reward_tops(pool, tpool)
    )
    if scales is not None:
        measured["reward_scales"] = scales
        measured["pass_threshold"] = pool.source.pass_threshold
    paired = _paired(pool, tpool, draws, seed)
    if paired is not None:
        measured["paired_difference"] = paired
    measured["decided_by"] = "intervals apart"
    fails = []
    student = _student_model(pool, options)
    named = {m: n for m, n in tpool.models.items() if m is not None}
    mine = [m for m in named if student is not None and _its_weights(m, student)]
    own = sum(named[m] for m in mine)
    maybe = [m for m in named if student is not None and unsure_weights(m, student)]
    if maybe:  # a build that may serve the student's weights: the teacher may be the student
        assert student is not None
        measured["teacher_unsure_builds"] = sorted(maybe)
        measured["teacher_unsure_why"] = unsure_reason(maybe, student)
        measured["teacher_unsure_rows"] = sum(named[m] for m in maybe)
        measured["student_model"] = student
    if own:  # the student's rows among the teacher's: a few stray, or the teacher is it
        measured["teacher_student_rows"] = own
        measured["teacher_named_rows"] = sum(named.values())
        measured["student_model"] = student
    if own and 2 * own > sum(named.values()):
        assert student is not None
        why = (
            f"that is the student: the teacher's rows name {_named_as(mine, student)}. "
            "OPD needs a stronger model; OPSD distils a model from itself with a hint"
        )
        measured["teacher_is_student"] = True
        return CheckResult("teacher", title, Status.FAIL, why, measured)
    if covered == 0 and pool.n_tasks and tpool.n_tasks:
        return _cannot_compare(pool, tpool, measured, other_prompts)
    t_cut_passes = int(tpool.tasks["truncated_passes"].sum())
    measured["teacher_truncated_passes"] = t_cut_passes
    measured["teacher_truncated_rows"] = t_cut
    if t_cut_passes:
        fails.append(
            f"{_plural(t_cut_passes, 'teacher pass')} {'is a' if t_cut_passes == 1 else 'are'} "
            "cut-off repl" + ("y" if t_cut_passes == 1 else "ies") + ": its truncated replies "
            "would teach the student to run to the cap"
        )
    coverage = covered / pool.n_tasks if pool.n_tasks else 0.0
    if coverage < options.teacher_min_coverage - TOL:
        differ = f"; {other_prompts} shared ids carry other prompts" if other_prompts else ""
        shown, limit = against(coverage, options.teacher_min_coverage)
        fails.append(
            f"covers {covered} of the student's {pool.n_tasks} tasks ({shown} < {limit}){differ}"
        )
    if t_rate.low is None or s_rate.low is None:
        fails.append(f"{covered} shared tasks give no interval")
    else:
        assert gap is not None and s_rate.high is not None
        if gap < options.effect - TOL:
            lead, effect = against(gap, options.effect, signed=True)
            fails.append(f"gap {lead} < {effect}")
        if not t_rate.low > s_rate.high - TOL:
            low, high = against(t_rate.low, s_rate.high)
            fails.append(f"intervals overlap ({low} <= {high})")
    if t_known and t_cut / t_known > options.teacher_max_truncated + TOL:
        shown, limit = against(t_cut / t_known, options.teacher_max_truncated)
        fails.append(
            f"{shown} of its rows are cut off (> {limit}); score it at the student's max_tokens"
        )
    if fails:
        why = "the teacher does not clear: " + "; ".join(fails) + _paired_note(paired)
        return CheckResult("teacher", title, Status.FAIL, why, measured)
    if t_known < tpool.rows:
        why = (
            f"the teacher leads by {gap:+.2f} with intervals apart{_paired_note(paired)}, but "
            f"{tpool.rows - t_known} of its rows record no truncation"
        )
        warn = "record truncation in the teacher's rows, scored at the student's max_tokens"
        return CheckResult("teacher", title, Status.UNKNOWN, why, measured, None, [warn])
    why = (
        f"the teacher leads by {gap:+.2f} on {_plural(covered, 'shared task')} with intervals "
        f"apart{_paired_note(paired)}"
    )
    return CheckResult("teacher", title, Status.PASS, why, measured)


def _cannot_compare(
    pool: Pool, tpool: Pool, measured: dict[str, object], other_prompts: int
) -> CheckResult:
    """Check 4 where the teacher shares no task with the student (DESIGN section 2, check 4:
    the lead is measured "on the tasks both pools share"): no shared task is no evidence of
    either side's lead, so the check is unknown, not failed, and no route rests on it. Two
    pools of one benchmark share none when their tasks are keyed apart (``"0007"`` beside
    ``7``, a prompt with a system turn or a chat template beside the bare question, ids of
    two datasets): the hint names what would pair them (:func:`_keyed_apart_hint`)."""
    measured["cannot_compare"] = True
    hint = _other_datasets(pool, tpool) or _keyed_apart_hint(
        pool.tasks["task_id"], tpool.tasks["task_id"], other_prompts
    )
    measured["unpaired_hint"] = hint
    why = (
        f"cannot compare: the teacher shares none of the student's {pool.n_tasks} tasks"
        f" ({tpool.n_tasks} teacher tasks), and no shared task is no evidence; {hint}"
    )
    warn = f"check 4 unknown: the teacher shares no task with the student; {hint}"
    return CheckResult(
        "teacher", "Does the teacher clear?", Status.UNKNOWN, why, measured, None, [warn]
    )


def _other_datasets(pool: Pool, tpool: Pool) -> str | None:
    """Where the two pools' rows name datasets and none is both's, so says (their tasks
    are other questions under the same ids, :func:`whilecli.route.shared.keyed_as`)."""
    mine, theirs = datasets(pool), datasets(tpool)
    if not mine or not theirs or mine & theirs:
        return None
    return (
        f"the teacher's rows are of {', '.join(sorted(theirs)[:3])}, the student's of"
        f" {', '.join(sorted(mine)[:3])}: other questions, whatever their ids; score the"
        " teacher on the student's dataset"
    )


#: A whole number written as text, with leading zeros or none.
_DIGITS = r"^[0-9]+$"


def _keyed_apart_hint(mine: pl.Series, theirs: pl.Series, other_prompts: int) -> str:
    """What would pair two pools that share no task key (:func:`_cannot_compare`): the ids
    of one side zero-padded text of the other's numbers (``"0007"`` beside ``7``; kept two
    tasks within one pool, as documented), ids that carry other prompts, tasks keyed by
    their prompts on both sides (a system message or a chat template apart), or else ids
    spelled apart (``--map task_id=FIELD`` on one side)."""
    if other_prompts:
        return (
            f"{other_prompts} ids both hold carry other prompts: if they are one question in two"
            " wrappings, write both pools with one prompt"
        )
    padded = _as_numbers(mine).is_in(_as_numbers(theirs).implode())
    if int(padded.sum()):
        return (
            f"{int(padded.sum())} of the student's ids name the same number as a teacher id"
            " written another way (zero-padded text beside whole numbers, '0007' beside 7):"
            " write both pools' ids one way, or key both by another field (--map task_id=FIELD)"
        )
    hashed = mine.str.starts_with("p:").all() and theirs.str.starts_with("p:").all()
    if hashed:
        return (
            "both pools key tasks by their prompts, and no prompt is the same: a system message"
            " or a chat template on one side only makes every prompt another; write both with"
            " one prompt, or pass the task ids (--map task_id=FIELD)"
        )
    return (
        "the two pools key tasks apart (another id field, other datasets, or other prompts):"
        " --map task_id=FIELD on the side whose ids differ, if both hold one benchmark"
    )


def _as_numbers(ids: pl.Series) -> pl.Series:
    """Ids that are whole numbers written as text, without their leading zeros; null else."""
    text = pl.col("id").cast(pl.String)
    stripped = text.str.strip_chars_start("0")
    bare = pl.when(stripped == "").then(pl.lit("0")).otherwise(stripped)
    numbers = pl.when(text.str.contains(_DIGITS)).then(bare)
    return pl.DataFrame({"id": ids}).select(numbers.alias("id")).to_series()


def _on_unit_scale(bounds: tuple[float, float]) -> bool:
    return bounds[0] >= -UNIT_TOLERANCE and bounds[1] <= 1.0 + UNIT_TOLERANCE


def reward_scales(pool: Pool, tpool: Pool) -> dict[str, list[float]] | None:
    """The student's and the teacher's reward ranges where one lies in [0, 1] and the other
    runs outside it (a judge's 0-10 beside a 0-1 rubric), else None: one ``--pass-threshold``
    grades both, so a pass may not be one event on both sides, and check 4's lead compares
    two scales. A teacher scored 0 to 10 at threshold 0.5 passes nearly every draw (one
    scored 0 to 0.1 fails every draw: :func:`teacher_under_threshold`). Ranges
    are read from the rewards (:attr:`whilecli.io.rows.Rows.reward_range`); a summary, or a
    pass given by a column, carries none. A range outside [0, 1] is not always another scale
    (a sum of reward functions reaching 1.5 beside runs that never passed 1), so this moves
    the verdict to provisional (:mod:`whilecli.route.quality`) rather than failing check 4."""
    mine, theirs = pool.source.reward_range, tpool.source.reward_range
    if mine is None or theirs is None:
        return None
    if _on_unit_scale(mine) != _on_unit_scale(theirs):
        return {"student": list(mine), "teacher": list(theirs)}
    return None


def graders(pool: Pool, tpool: Pool) -> tuple[str, str] | None:
    """Who graded each side, ``judge`` or ``program`` (:mod:`whilecli.io.judge`), where the
    two differ: a judge on one side, a program on the other measure two pass rates, not one
    (the seed scores both on the same rows with one grader). None where they agree, or a
    side does not tell (a summary that recorded none)."""
    mine, theirs = pool.source.judge, tpool.source.judge
    if mine is None or theirs is None or bool(mine.judged) == bool(theirs.judged):
        return None
    return ("judge", "program") if mine.judged else ("program", "judge")


def teacher_under_threshold(pool: Pool, tpool: Pool) -> dict[str, list[float]] | None:
    """The two reward ranges where the teacher's rewards are graded above 0 yet never reach
    the pass threshold that the student's reach, else None: a teacher scored 0 to 0.1 beside
    a student's 0 to 1, under one threshold of 0.5, fails every draw, and check 4 would call
    it far behind. A teacher that only ever scores 0 is no scale; a student under the
    threshold beside a teacher over it is a floor (a format reward of 0.1 on every reply)."""
    mine, theirs = pool.source.reward_range, tpool.source.reward_range
    if mine is None or theirs is None:
        return None
    threshold = pool.source.pass_threshold - PASS_TOLERANCE
    if 0.0 < theirs[1] < threshold <= mine[1]:
        return {"student": list(mine), "teacher": list(theirs)}
    return None


#: How far apart the two sides' highest rewards may lie (as a ratio, less one) before they
#: read as two scales: a tenth.
TOP_MARGIN = 0.1


def reward_tops(pool: Pool, tpool: Pool) -> dict[str, list[float]] | None:
    """The two reward ranges where both sides are graded above 0 yet their highest rewards
    lie more than :data:`TOP_MARGIN` apart (a teacher's rubric scored 0 to 0.8 beside the
    student's 0 to 1; one scored 0 to 0.1 beside a student's rewards under the threshold),
    else None. One threshold then cuts the two sides at different points of their scales: a
    continuous reward at 0.75 passes at 0.7 on one side and, written as 0.6, fails on the
    other, so check 4's lead compares two events. Binary rewards top out at 1 on any side
    that passes and at 0 on one that never does, so this never moves them; a student under
    the threshold beside a teacher over it is a floor, not a scale
    (:func:`teacher_under_threshold`)."""
    mine, theirs = pool.source.reward_range, tpool.source.reward_range
    if mine is None or theirs is None:
        return None
    threshold = pool.source.pass_threshold - PASS_TOLERANCE
    low, high = sorted((mine[1], theirs[1]))
    if low <= 0.0 or mine[1] < threshold <= theirs[1]:
        return None
    if high > low * (1.0 + TOP_MARGIN):
        return {"student": list(mine), "teacher": list(theirs)}
    return None


def _student_model(pool: Pool, options: RouteOptions) -> str | None:
    """The model you train: ``--model`` without its version, else the model the student's
    own rows name (the one naming the most rows); None when neither says."""
    if options.model:
        return shown(options.model.partition("@")[0])
    named = [(c, m) for m, c in pool.models.items() if m is not None]
    return max(named)[1] if named else None


def _paired(pool: Pool, tpool: Pool, draws: int, seed: int) -> Rate | None:
    """The paired per-task difference (teacher − student) as ``whilecli diff`` computes it."""
    from whilecli.route.paired import pair_tasks, paired_diff

    if pair_tasks(pool.tasks, tpool.tasks).height == 0:
        return None
    return paired_diff(pool.tasks, tpool.tasks, draws=draws, seed=seed).difference


def _paired_note(paired: Rate | None) -> str:
    """The paired difference as context, as every rate prints (``Rate.format``): the rule
    that decides is "intervals apart"."""
    if paired is None or paired.value is None:
        return ""
    return f" (paired per-task difference {paired.format()}, as whilecli diff: context)"


@dataclass(frozen=True)
class _Side:
    """One side's vocabulary as given: its size (a tokenizer's length, or a bare number),
    where it came from, the tokens with their ids where a file gave them, and the model
    config's ``vocab_size`` beside that file (the embedding's rows, padded)."""

    size: int | None
    source: str | None
    tokens: Vocab | None = None
    embedding: int | None = None


def _side_vocab(vocab: int | None, path: object) -> _Side:
    """A side of check 5: ``--X-vocab N`` as given, else ``--X-tokenizer PATH`` read
    (:func:`~whilecli.route.tokenizer.vocabulary`, with the config's ``vocab_size`` beside
    it: :func:`~whilecli.route.tokenizer.embedding_size`)."""
    if vocab is not None:
        return _Side(vocab, "given")
    if path is not None:
        tokens = vocabulary(str(path))
        return _Side(len(tokens), str(path), tokens, embedding_size(str(path)))
    return _Side(None, None)


def _like_with_like(t: _Side, s: _Side) -> tuple[int, int, str]:
    """The two sizes check 5 compares where the tokens of both are not both read, as like
    with like (DESIGN section 2, check 5): a bare number (usually a config's
    ``vocab_size``, padded) beside a tokenizer read from a model folder is compared with
    that folder's ``config.json`` ``vocab_size`` where it holds one, else with the
    tokenizer's length; and the words naming what was compared."""
    assert t.size is not None and s.size is not None
    apart = t.size != s.size
    if apart and t.tokens is None and s.tokens is not None and s.embedding is not None:
        return t.size, s.embedding, "the student's config.json vocab_size"
    if apart and s.tokens is None and t.tokens is not None and t.embedding is not None:
        return t.embedding, s.size, "the teacher's config.json vocab_size"
    return t.size, s.size, ""


def _differing_tokens(teacher: Vocab, student: Vocab) -> int:
    """Tokens one vocabulary holds that the other lacks or holds under another id (an id
    a file does not give agrees with any)."""
    both = teacher.keys() & student.keys()
    moved = sum(
        1
        for t in both
        if teacher[t] is not None and student[t] is not None and teacher[t] != student[t]
    )
    return len(teacher.keys() ^ student.keys()) + moved


def tokenizer(pool: Pool, options: RouteOptions, *, teacher_cleared: bool) -> CheckResult:
    """5. One tokenizer? Teacher and student vocabulary sizes must be equal for OPD."""
    title = "One tokenizer?"
    if options.teacher is None:
        return CheckResult("tokenizer", title, Status.NOT_ASKED, "no --teacher rows given")
    t_side = _side_vocab(options.teacher_vocab, options.teacher_tokenizer)
    s_side = _side_vocab(options.student_vocab, options.student_tokenizer)
    t_vocab, s_vocab, t_tokens, s_tokens = t_side.size, s_side.size, t_side.tokens, s_side.tokens
    measured: dict[str, object] = {
        "teacher_vocab": t_vocab,
        "student_vocab": s_vocab,
        "teacher_vocab_from": t_side.source,
        "student_vocab_from": s_side.source,
    }
    if t_vocab is None or s_vocab is None:
        if not teacher_cleared:
            why = "the teacher check did not pass, and no vocabulary size was given"
            return CheckResult("tokenizer", title, Status.NOT_REACHED, why, measured)
        why = (
            "not checked: OPD needs one tokenizer; pass --teacher-vocab N --student-vocab N "
            "or --teacher-tokenizer PATH --student-tokenizer PATH"
        )
        _families(pool, options, measured)
        return CheckResult("tokenizer", title, Status.UNKNOWN, why, measured, None, [why])
    differing = (
        None if t_tokens is None or s_tokens is None else _differing_tokens(t_tokens, s_tokens)
    )
    if differing is not None:
        measured["differing_tokens"] = differing
    if differing is None:
        return _sizes_compared(t_side, s_side, measured, pool, options)
    if t_vocab == s_vocab and not differing:
        why = f"one vocabulary of {t_vocab} tokens (every token under the same id)"
        return CheckResult("tokenizer", title, Status.PASS, why, measured)
    if t_vocab == s_vocab:
        why = (
            f"OPD refused: teacher and student both hold {t_vocab} tokens, but {differing} of"
            " them differ (absent from one, or under another id); per-token supervision needs"
            " one tokenizer (pick a same-family teacher)"
        )
        return CheckResult("tokenizer", title, Status.FAIL, why, measured)
    why = (
        f"OPD refused: teacher vocab {t_vocab} != student vocab {s_vocab}; per-token "
        "supervision needs one tokenizer (pick a same-family teacher)"
    )
    return CheckResult("tokenizer", title, Status.FAIL, why, measured)


#: Families whose models share one tokenizer though their names differ (QwQ is a Qwen).
_ONE_TOKENIZER = ({"qwen", "qwq"},)


def _families_of(name: str) -> set[str]:
    """Every model family a name names (:data:`whilecli.io.modelid._FAMILY`), one tokenizer's
    families as one: ``DeepSeek-R1-Distill-Qwen-7B`` names deepseek and qwen."""
    found = {m.group(1).lower() for m in _FAMILY.finditer(name)}
    for same in _ONE_TOKENIZER:
        if found & same:
            found |= same
    return found


def _families(pool: Pool, options: RouteOptions, measured: dict[str, object]) -> None:
    """Where check 5 cannot tell, whether the teacher's rows name a model of another family
    than the model you train (Llama beside Qwen): two families are, as a rule, two
    tokenizers, and a tokenizer mismatch drops OPD's per-token signal silently (the skill).
    Names are no tokenizer, so this leaves the verdict provisional
    (:mod:`whilecli.route.quality`, ``teacher_other_family``), never fails the check. A
    name of no known family, or one that names the student's family too (a distill of it),
    says nothing."""
    student = _student_model(pool, options)
    if student is None or options.teacher is None:
        return
    mine = _family(student)
    if mine is None:
        return
    named = {m: n for m, n in options.teacher.models.items() if m is not None}
    others = sorted(
        m for m in named if _families_of(m) and not _families_of(m) & _families_of(student)
    )
    if others and 2 * sum(named[m] for m in others) > sum(named.values()):
        measured["teacher_other_family"] = others
        measured["student_model"] = student


def _sizes_compared(
    t: _Side, s: _Side, measured: dict[str, object], pool: Pool, options: RouteOptions
) -> CheckResult:
    """Check 5 on sizes alone (the tokens of one side or both not read), like with like
    (:func:`_like_with_like`): equal → one vocabulary size; apart only as an embedding's
    padding can be (:func:`~whilecli.route.tokenizer.padded_apart`: a tokenizer's length
    beside a padded ``vocab_size``, or two paddings of one tokenizer) → unknown, sizes
    cannot tell; else → OPD refused."""
    title = "One tokenizer?"
    t_size, s_size, compared = _like_with_like(t, s)
    if compared:
        measured["compared_with"] = compared
        measured["compared_sizes"] = {"teacher": t_size, "student": s_size}
    said = f" ({compared} against the number given)" if compared else ""
    if t_size == s_size:
        sizes = f"{compared} and the number given" if compared else "sizes"
        why = f"one vocabulary size, {t_size} tokens ({sizes} compared: the tokens were not given)"
        return CheckResult("tokenizer", title, Status.PASS, why, measured)
    if padded_apart(t_size, s_size):
        measured["padded_apart"] = True
        _families(pool, options, measured)
        why = (
            f"teacher vocab {t_size}, student vocab {s_size}{said}: sizes this close can be"
            " one tokenizer's length beside an embedding padded past it (a config's"
            " vocab_size), or two paddings of one tokenizer, so sizes alone cannot tell; pass"
            " --teacher-tokenizer PATH --student-tokenizer PATH to compare the tokens"
        )
        return CheckResult("tokenizer", title, Status.UNKNOWN, why, measured, None, [why])
    why = (
        f"OPD refused: teacher vocab {t_size} != student vocab {s_size}{said}; per-token "
        "supervision needs one tokenizer (pick a same-family teacher)"
    )
    return CheckResult("tokenizer", title, Status.FAIL, why, measured)


def _unnamed(others: list[str], model: str) -> tuple[list[str], list[str]]:
    """The names among ``others`` that name no model (:attr:`whilecli.io.modelid.ModelId.
    anonymous`), as local paths and as bare labels (``my-finetune``, a server's served name).
    A label is read as naming no model only beside a ``model`` that names one: where
    ``--model`` is a label too, the two are the user's own names and are compared as written."""
    own = model_identity(model)
    found = {m: model_identity(m) for m in others}
    paths = [m for m, f in found.items() if f.anonymous and f.path]
    labels = [m for m, f in found.items() if f.anonymous and not f.path and not own.anonymous]
    return paths, labels


def _runs_of(named: dict[str, int]) -> dict[str, int]:
    """Rows per model, each training checkpoint read as the run it is a step of
    (:func:`whilecli.io.modelid.without_step`): where ``--model`` states the step or version
    it trains, the rows' steps are their versions, compared as versions."""
    runs: dict[str, int] = {}
    for name, rows in named.items():
        run = without_step(name)
        runs[run] = runs.get(run, 0) + rows
    return runs


def on_policy(pool: Pool, options: RouteOptions) -> CheckResult:
    """6. Did the model you will train write these rows? Another model → ``off-policy``;
    an older copy (several policy versions, or not ``model@version``) → Async."""
    title = "Did the model you will train write these rows?"
    named = {m: c for m, c in pool.models.items() if m is not None}
    naming = sum(named.values())
    unnamed = pool.rows - naming
    versions = {v: c for v, c in pool.versions.items() if v is not None}
    measured: dict[str, object] = {
        "models": dict(named),
        "rows_naming_a_model": naming,
        "rows_naming_none": unnamed,
        "versions": dict(versions),
    }
    if options.model is None:
        why = "no --model given: on-policy is unchecked"
        names = ", ".join(sorted(named)) or "no model"
        warn = f"on-policy unchecked (the rows name {names}); pass --model M"
        return CheckResult("on_policy", title, Status.UNKNOWN, why, measured, None, [warn])
    base, _, version = options.model.partition("@")
    step = step_from_name(base)  # a checkpoint folder's step is its version
    current = version or (str(step) if step is not None else None)
    base = shown(without_step(base) if step is not None else base)
    if current is not None:  # a step of a run: each row's checkpoint is a version of it
        named = _runs_of(named)
        measured["models"] = dict(named)
    mine = sum(c for m, c in named.items() if same_model(m, base))
    measured["on_policy_share"] = stats.wilson(mine, naming, n_tasks=pool.n_tasks, unit="rows")
    if naming == 0:
        ids = {v: version_id(v) for v in versions}
        if len(set(ids.values())) > 1:  # no writer named, yet several copies of one wrote
            top = max(ids.values(), key=version_order)
            older = sum(c for v, c in versions.items() if ids[v] != top)
            measured["stale_rows"] = older
            seen = ", ".join(sorted(versions, key=lambda v: (version_order(ids[v]), v)))
            why = (
                f"no row names the model that wrote it, yet the rows carry {len(set(ids.values()))}"
                f" policy versions ({seen}): copies of one policy older than the newest wrote"
                f" {older} of {pool.rows} rows: wrap the method in Async with a per-token"
                " correction (ipo or icepop), or route the newest version's rows alone"
            )
            warn = "on-policy unknown: the rows carry no model field"
            return CheckResult("on_policy", title, Status.FAIL, why, measured, None, [warn])
        why = "no row names the model that wrote it"
        warn = "on-policy unknown: the rows carry no model field"
        return CheckResult("on_policy", title, Status.UNKNOWN, why, measured, None, [warn])
    warnings = [f"{unnamed} rows name no model"] if unnamed else []
    others = sorted(m for m in named if not same_model(m, base))
    copies = [m for m in others if same_weights(m, base)]  # quantized copies of the model
    unsure = [m for m in others if unsure_weights(m, base)]
    others = [m for m in others if m not in copies and m not in unsure]
    paths, labels = _unnamed(others, base)
    if (paths or labels) and len(paths) + len(labels) == len(others):
        rows = sum(named[m] for m in others)
        kinds = [
            *([f"a local path that names no model ({', '.join(paths)})"] if paths else []),
            *([f"a label that names no model ({', '.join(labels)})"] if labels else []),
        ]
        label = (
            " (a label states no organisation, size or model family, as a server's served"
            " name does)"
            if labels
            else ""
        )
        why = (
            f"{rows} of {naming} rows name {' and '.join(kinds)}: whether {base} wrote them is"
            f" unknown{label}; pass --model with that name if it is the model you train or a"
            " checkpoint of it"
        )
        if paths:
            measured["unnamed_paths"] = paths
        if labels:
            measured["unnamed_labels"] = labels
        warnings.append(f"on-policy unknown: {why}")
        return CheckResult("on_policy", title, Status.UNKNOWN, why, measured, None, warnings)
    if others:
        near = closest(base, others)
        hint = (
            f"; closest to {base}: {', '.join(near)} (a different model: names match without"
            " case and organisation, nothing else)"
            if near and not mine
            else ""
        )
        foreign = sum(named[m] for m in others)
        why = (
            f"{foreign} of {naming} rows come from another model ({', '.join(others)}): "
            f"SFT on these rows, or OPD from their model{hint}"
        )
        measured["closest_models"] = near
        measured["other_model_rows"] = foreign
        tuned = [m for m in others if tuned_from(m, base)]
        if tuned and len(tuned) == len(others):  # else another model wrote rows all the same
            measured["tuned_models"] = tuned
            why += (
                f"; {', '.join(tuned)} name{'s' if len(tuned) == 1 else ''} {base} with words"
                " beside it (a training run's tags, an alias): a model trained from it, a"
                " checkpoint of the run you train, or it served under another name (pass"
                " --model with that name if you train from it)"
            )
        return CheckResult("on_policy", title, Status.FAIL, why, measured, "off-policy", warnings)
    if unsure:
        rows = sum(named[m] for m in unsure)
        reason = unsure_reason(unsure, base)
        why = (
            f"{rows} of {naming} rows name {', '.join(unsure)}, {reason}: whether it holds"
            f" {base}'s weights is unknown; pass --model with the model that wrote them"
        )
        measured["unsure_builds"], measured["unsure_build_rows"] = unsure, rows
        measured["unsure_why"] = reason
        warnings.append(f"on-policy unknown: {why}")
        return CheckResult("on_policy", title, Status.UNKNOWN, why, measured, None, warnings)
    if copies:
        quantized = sum(named[m] for m in copies)
        measured["quantized_rows"], measured["quantized_models"] = quantized, copies
        why = (
            f"{quantized} of {pool.rows} rows come from {base}'s weights at another precision"
            f" ({', '.join(copies)}): their token probabilities are not those of the model the"
            " trainer holds; wrap the method in Async with a per-token correction (ipo or"
            f" icepop), or sample with {base} as the trainer holds it"
        )
        return CheckResult("on_policy", title, Status.FAIL, why, measured, None, warnings)
    ids = {v: version_id(v) for v in versions}
    if current and not versions:
        why = (
            f"you train {base} at version {current}, and the rows carry no version: whether"
            " that copy wrote them or an older one (the base, an earlier checkpoint) is"
            " unknown; record policy_version (or model@version) on the rows"
        )
        measured["unversioned_rows"] = naming
        warnings.append(f"on-policy unknown: {why}")
        return CheckResult("on_policy", title, Status.UNKNOWN, why, measured, None, warnings)
    lag = pool.source.facts.version_lag
    if current:
        mine_id = version_id(current)
    elif lag is not None:  # versions read as steps behind: the policy you train is 0
        mine_id = "0"
    else:
        mine_id = max(ids.values(), key=version_order, default="")
    others_v = [v for v in versions if ids[v] != mine_id]
    if not others_v:
        why = f"every row that names a model names {base}"
        if len(versions) > 1:  # one version in several spellings
            why += f" at one version ({', '.join(sorted(versions))} are one step, {mine_id})"
        return CheckResult("on_policy", title, Status.PASS, why, measured, None, warnings)
    seen = ", ".join(sorted(versions, key=lambda v: (version_order(ids[v]), v)))
    if lag is not None and all(newer(mine_id, ids[v]) is not None for v in versions):
        behind_by = sorted({-int(ids[v]) for v in versions})
        seen = f"{lag} {', '.join(map(str, behind_by))}: steps behind the policy you train"
    ahead = [v for v in others_v if newer(ids[v], mine_id)]
    behind = [v for v in others_v if v not in ahead]
    if behind:
        older = sum(versions[v] for v in behind)
        measured["stale_rows"] = older
        # without --model's version the latest the rows carry stands for the copy you train
        known = not current or all(newer(mine_id, ids[v]) for v in behind)
        said = "an older copy" if known else "another copy"
        why = (
            f"{said} of {base} wrote {older} of {pool.rows} rows (policy versions: {seen}"
            f"{'; you train ' + str(current) if current else ''}): wrap the method in Async"
            " with a per-token correction (ipo or icepop)"
        )
        if ahead:
            measured["newer_rows"] = sum(versions[v] for v in ahead)
            why += f"; {measured['newer_rows']} rows come from a newer copy than the one you train"
        return CheckResult("on_policy", title, Status.FAIL, why, measured, None, warnings)
    measured["newer_rows"] = newest = sum(versions[v] for v in ahead)
    latest = max((ids[v] for v in ahead), key=version_order)
    why = (
        f"a newer copy of {base} than the one you train ({current}) wrote {newest} of"
        f" {pool.rows} rows (policy versions: {seen}): if you train from that copy, pass"
        f" --model {base}@{latest} (then the rows are on-policy); else the trainer holds other"
        " weights than the sampler: wrap the method in Async with a per-token correction"
        " (ipo or icepop)"
    )
    return CheckResult("on_policy", title, Status.FAIL, why, measured, None, warnings)


def _its_weights(name: str, model: str) -> bool:
    """``name`` names ``model``, or a quantized copy of it (its weights, another precision)."""
    return same_model(name, model) or same_weights(name, model)


def _named_as(names: list[str], model: str) -> str:
    """How the teacher's rows name the student: the model you train, or its quantized copy."""
    if any(same_model(m, model) for m in names):
        return f"{model}, the model you train"
    return (
        f"{', '.join(sorted(names))}: {model}'s weights at another precision, the model you train"
    )


def sampler_copy(check: CheckResult) -> str:
    """Which copy of the model you train wrote rows where check 6 sends the method to Async:
    one at another precision (a quantized copy, or the model a quantized name stands for),
    an older one, or a newer one than the copy you train."""
    if "quantized_rows" in check.measured:
        return "a copy at another precision"
    if "newer_rows" in check.measured and "stale_rows" not in check.measured:
        return "a newer copy"
    return "an older copy"
