"""The decision of ``whilecli route``: run the six checks in order, stop at the first that
decides, score every method, and gather the summary and what to do before the GPU.

DESIGN section 2: truncated passes → rollouts per task → band → teacher → tokenizer →
on-policy → grpo. Checks below the one that decided are still measured and shown as
context (``reached`` False).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import polars as pl

from whilecli.route import checks, quality, stats
from whilecli.route.identity import size_from_name
from whilecli.route.model import (
    CheckResult,
    Finding,
    MethodScore,
    Pool,
    Rate,
    Route,
    Status,
    against,
)
from whilecli.route.options import RouteOptions
from whilecli.route.pool import counted_as, credited, without_empties
from whilecli.route.quality import Counted
from whilecli.textstyle import fraction

#: Every method the route table knows, in the order the report lists them.
METHODS = (
    "grpo", "opd", "opsd", "groupwise", "dpo", "flash_reinforce", "sao", "bpco", "rae",
    "sft", "rm", "async", "reinforce_ada",
)  # fmt: skip
#: How exit reasons name each check.
CHECK_NAMES = {
    "truncated_passes": "truncated passes",
    "rollouts_per_task": "rollouts per task",
    "band": "band",
    "teacher": "teacher",
    "tokenizer": "tokenizer",
    "on_policy": "on-policy",
}
#: The index of each check in the route's order.
ORDER = {key: i for i, key in enumerate(checks.KEYS)}
_GRPO = len(checks.KEYS)


@dataclass(frozen=True)
class Facts:
    """What method scoring reads from the checks."""

    blocked: bool
    grouped: int
    singles: int
    band: str | None  # floor | saturated | mixed | None (no grouped task)
    split: int
    thin: bool
    floor_share: float
    pass_at_1: float | None  # over grouped tasks
    passes: int
    teacher: Status
    teacher_why: str
    teacher_clears: bool
    tokenizer: Status
    tokenizer_mismatch: bool
    policy: str  # on | other | stale | unknown
    logprobs: bool | None  # None: unknown
    values: bool | None  # on every row; None: unknown
    size_b: float | None
    repeated: bool = False  # most grouped tasks repeat one draw: the draws are one
    logprob_rows: int | None = None  # rows carrying sampler log-probs (None: unknown)
    values_rows: int | None = None  # rows carrying critic values (None: unknown)
    rows: int = 0
    copy: str = "an older copy"  # which copy of the model wrote rows (policy "stale")


def _mismatch(tok: CheckResult) -> bool:
    """Check 5 refused OPD: two vocabulary sizes apart by more than padding, or both
    vocabularies read and some token differs (sizes apart only as padding can be are
    unknown, not a mismatch: :func:`whilecli.route.checks.tokenizer`)."""
    return tok.status is Status.FAIL


def _facts(pool: Pool, options: RouteOptions, found: dict[str, CheckResult]) -> Facts:
    band = found["band"].measured
    grouped = int(band.get("grouped_tasks", 0))
    p1 = band.get("pass_at_1")
    tok = found["tokenizer"]
    policy = {Status.PASS: "on", Status.UNKNOWN: "unknown"}.get(found["on_policy"].status)
    if policy is None:
        policy = "other" if found["on_policy"].decides == "off-policy" else "stale"
    split = int(band.get("split_tasks", 0))
    return Facts(
        blocked=found["truncated_passes"].status is Status.FAIL,
        grouped=grouped,
        singles=pool.n_tasks - grouped,
        band=band.get("band"),
        split=split,
        thin="need" in band,
        floor_share=(int(band.get("tasks_at_0", 0)) / grouped) if grouped else 0.0,
        pass_at_1=p1.value if isinstance(p1, Rate) else None,
        passes=int(pool.tasks["passes"].sum()) if pool.n_tasks else 0,
        teacher=found["teacher"].status,
        teacher_why=found["teacher"].why,
        teacher_clears=_clears(found["teacher"]),
        tokenizer=tok.status,
        tokenizer_mismatch=_mismatch(tok),
        policy=policy,
        logprobs=pool.source.has_logprobs,
        values=quality.full(pool, "values"),
        size_b=options.size_b if options.size_b is not None else _size_from_names(pool, options),
        repeated=found["band"].decides == REPEATED,
        logprob_rows=quality.coverage(pool, "logprobs"),
        values_rows=quality.coverage(pool, "values"),
        rows=pool.rows,
        copy=checks.sampler_copy(found["on_policy"]),
    )


def _size_from_names(pool: Pool, options: RouteOptions) -> float | None:
    """The size of the model you train where its name says it (``Qwen3-0.6B`` → 0.6): the
    name ``--model`` gives, else the one the rows name (when every row that names a model
    names that one). It stands in for ``--size-b``, as in ``config``."""
    if options.model:
        return size_from_name(options.model.partition("@")[0])
    named = {m for m in pool.models if m is not None}
    sizes = {size_from_name(m) for m in named}
    return sizes.pop() if len(sizes) == 1 else None


def _size_disagreement(pool: Pool, options: RouteOptions) -> str | None:
    """``--size-b`` against the size the model's name states, where they differ by more
    than a quarter (a typo of a unit, or the wrong model's size): the flag decides, and the
    report says so."""
    if options.size_b is None:
        return None
    named = _size_from_names(pool, options)
    if named is None or abs(named - options.size_b) <= 0.25 * max(named, options.size_b):
        return None
    return (
        f"--size-b {options.size_b:g} decides, though the model's name states {named:g}B:"
        " check that the flag and the name are the same model"
    )


def _single_family(f: Facts, name: str) -> MethodScore:
    if f.grouped and not f.singles and not f.repeated:
        return MethodScore(name, False, "groups exist: a grouped method uses them")
    if name in ("sao", "bpco") and not f.values:
        if f.values is None:
            why = " (a summary without a whilecli header does not say whether they are)"
        elif f.values_rows:
            why = f": values on {f.values_rows} of {f.rows} rows"
        else:
            why = ""
        return MethodScore(name, False, "needs critic values on every row" + why)
    lp = {
        True: "present",
        False: "absent: staleness cannot be corrected",
        None: "unknown: a summary without a whilecli header does not say",
    }[f.logprobs]
    if f.logprobs and f.logprob_rows is not None and f.logprob_rows < f.rows:
        lp = f"on {f.logprob_rows} of {f.rows} rows"
    whys = {
        "flash_reinforce": f"one rollout per prompt, baseline from the batch; sampler log-probs {lp}",
        "sao": "one rollout per prompt with a critic and a token band",
        "bpco": "one rollout per prompt with a bounded critic",
        "rae": "prime-rl's one-rollout option (an EMA baseline per agent)",
    }
    return MethodScore(name, True, whys[name])


def _score(name: str, f: Facts, options: RouteOptions) -> MethodScore:
    """Whether ``name`` fits these rows, and why."""
    if name == "rm":
        return MethodScore(name, False, "rarely the answer where a program grades")
    if f.blocked:
        return MethodScore(name, False, "blocked: a cut-off reply passes; fix the reward first")
    small = f.size_b is not None and f.size_b < options.opsd_min_size_b - stats.TOL
    if name == "grpo":
        if not f.grouped:
            return MethodScore(name, False, "no grouped task: a group of one has no baseline")
        if f.repeated:
            return MethodScore(name, False, "one draw repeated per task: no split is measured")
        if f.band in ("floor", "saturated"):
            return MethodScore(name, False, f"{f.band}: every group is unanimous, no gradient")
        if f.split == 0:
            return MethodScore(name, False, "no group splits: no gradient")
        if f.policy == "other":
            return MethodScore(name, False, "another model wrote the rows: uncorrected off-policy")
        verb = "gives" if f.split == 1 else "give"
        why = f"{checks._plural(f.split, 'split task')} {verb} group-relative advantages"
        if f.thin:
            why += "; thin band: see needs"
        if f.policy == "stale":
            why += "; wrap in Async with a correction"
        return MethodScore(name, True, why)
    if name == "opd":
        if f.teacher is Status.NOT_ASKED:
            return MethodScore(name, False, "no --teacher given")
        if not f.teacher_clears:
            return MethodScore(name, False, f.teacher_why)
        if f.tokenizer_mismatch:
            return MethodScore(name, False, "the teacher's tokenizer differs from the student's")
        if f.tokenizer is Status.PASS:
            return MethodScore(name, True, "a stronger teacher with one tokenizer")
        return MethodScore(name, True, "a stronger teacher; tokenizer not checked")
    if name == "opsd":
        floor = f.band == "floor" or f.floor_share >= options.floor_share - stats.TOL
        if not floor:
            shown, limit = against(f.floor_share, options.floor_share)
            return MethodScore(name, False, f"no floor: {shown} of groups at 0 (< {limit})")
        if small:
            return MethodScore(
                name, False, f"needs about {options.opsd_min_size_b:g}B; student is {f.size_b:g}B"
            )
        why = "privileged context (reference) where the model fails alone"
        if f.size_b is None:
            why += "; size not given (needs about 7B)"
        return MethodScore(name, True, why)
    if name == "groupwise":
        top = f.band == "saturated" or (
            f.pass_at_1 is not None and f.pass_at_1 >= options.ceiling_pass - stats.TOL
        )
        if not top:
            return MethodScore(name, False, "passes are not the bottleneck")
        return MethodScore(name, True, "GroupwiseGrading ranks the passes; audit its grader")
    if name == "dpo":
        if f.split >= options.min_split_tasks:
            return MethodScore(name, True, f"{f.split} tasks with a pass and a fail: natural pairs")
        pairs = checks._plural(f.split, "task")
        return MethodScore(
            name, False, f"{pairs} with a pass and a fail (< {options.min_split_tasks})"
        )
    if name in ("flash_reinforce", "sao", "bpco", "rae"):
        return _single_family(f, name)
    if name == "sft":
        if f.policy == "other":
            return MethodScore(name, True, "SFT on another model's rows")
        if f.band == "floor":
            if small:
                return MethodScore(name, True, "SFT on a stronger model's completions")
            return MethodScore(name, False, "no pass to keep: needs a stronger model's completions")
        if f.band == "saturated":
            return MethodScore(name, False, "every task passes: its own passes teach nothing new")
        if f.passes:
            return MethodScore(name, True, "a pass filter over these rows")
        return MethodScore(name, False, "no passing row")
    if name == "async":
        if f.policy == "stale":
            return MethodScore(name, True, f"{f.copy} wrote rows: Async with ipo or icepop")
        return MethodScore(name, False, f"on-policy status: {f.policy}")
    if name == "reinforce_ada":
        if f.band == "mixed" and (f.thin or f.split == 0):
            return MethodScore(name, True, "samples until each task splits (an experiment)")
        return MethodScore(name, False, "no thin mixed band")
    raise ValueError(f"unknown method {name}")


def _summary(pool: Pool, options: RouteOptions, found: dict[str, CheckResult]) -> dict[str, Any]:
    draws, seed = options.bootstrap_draws, options.seed
    tasks = pool.tasks
    groups = checks.grouped(pool)
    max_n = int(tasks.select(pl.max("n")).item()) if tasks.height else 0
    k_mode = checks.common_k(groups)
    ks = {k for k in (4, 8, 16, 32) if k <= min(max_n, options.max_k)}
    if 4 <= k_mode <= max_n:
        ks.add(k_mode)
    at_k: dict[int, Rate] = {}
    hat_k: dict[int, Rate] = {}
    prior = stats.pool_prior(tasks)
    for k in sorted(ks):
        at_k[k], hat_k[k] = stats.pass_k_rates(tasks, k, draws=draws, seed=seed, prior=prior)
    hist_tasks = groups if groups.height else tasks
    histogram = stats.histogram(hist_tasks)
    histogram["population"] = "grouped tasks" if groups.height else "all tasks"
    return {
        "pass_at_1": stats.pass_at_1(tasks, draws=draws, seed=seed),
        "pass_at_k": at_k,
        "pass_hat_k": hat_k,
        "tasks": pool.n_tasks,
        "rows": pool.rows,
        "grouped_tasks": groups.height,
        "single_tasks": pool.n_tasks - groups.height,
        "k": found["rollouts_per_task"].measured["k"],
        "partial_rows": pool.source.partial_rows,
        "histogram": histogram,
    }


def _before_gpu(pool: Pool, options: RouteOptions, summary: dict[str, Any]) -> dict[str, Any]:
    """The held-out size, from this pool's own pass@1 and k where they leave room for a gain."""
    p1 = summary["pass_at_1"]
    k = int(summary["k"]) or 1
    base = p1.value if isinstance(p1, Rate) else None
    if base is not None and stats.leaves_room(base, options.effect):
        held = stats.holdout_size(options.effect, base=base, k=k)
        sized = f"sized from this pool: pass@1 {base:.2f}, k = {k}"
        sized_from = "pool"
    else:
        held = stats.holdout_size(options.effect)
        seen = "no pass@1" if base is None else f"pass@1 {base:.2f}"
        sized = (
            f"sized at the defaults p = {held.base:g}, k = {held.k}: this pool's {seen} "
            f"leaves no room to measure a gain of {options.effect:g}"
        )
        sized_from = "defaults"
    holdout = {**held.to_dict(), "sized_from": sized_from, "sized": sized}
    advice = [
        f"Hold out {held.n} tasks (k={held.k}) to see a gain of {held.effect} at power "
        f"{held.power} (half-width {fraction(held.half_width)}); {sized}."
        + ("" if held.caveat is None else f" But {held.caveat}."),
        "Train a random selection of the same size beside the real one: if the method does "
        "not beat its own random control, the selection or the reward was the problem.",
    ]
    if options.model and "qwen" in options.model.lower():
        advice.append(
            "On a Qwen base, add a random-reward arm: gains under it signal contamination."
        )
    return {"holdout": holdout, "random_control": advice}


@dataclass(frozen=True)
class Evidence:
    """What one check that decided (or that the headline claims) rests on."""

    check: int  # 1-based position of the check in the route
    what: str  # e.g. "1 split task of 1"
    tasks: int
    interval: Rate | None  # the deciding interval, when the check has one
    label: str  # what the interval measures, e.g. "split share"
    threshold: float | None = None  # the value the interval is compared with, when one
    crossing_only: bool = False  # only the threshold counts (not the task count or width)
    below: bool = False  # firm only when the interval lies below the threshold
    firm_tasks: int | None = None  # the tasks that would make it firm, where known
    per_task: float = 1.0  # evidence units per task (split tasks: the split share)
    unit: str = "tasks"  # what ``tasks`` counts (``truncated rows`` for check 1)
    short: str | None = None  # why the evidence is too little, where no count or width says
    margin: float = 0.0  # a zone past the threshold too close to call (the teacher's lead)
    unread: str | None = None  # a fact the verdict turns on that no row states (and how to)
    unstated: str | None = None  # why no task count settles ``unread`` (default: the size's)


def _width(rate: Rate | None) -> float | None:
    if rate is None or rate.low is None or rate.high is None:
        return None
    return rate.high - rate.low


def _wider(a: Rate, b: Rate) -> Rate:
    wa, wb = _width(a), _width(b)
    if wa is None:
        return a
    if wb is None:
        return b
    return a if wa >= wb else b


def _unseen_split(band: dict[str, Any], grouped: int, options: RouteOptions) -> Evidence:
    """A floor or a saturated band claims that no task splits: firm once the split share's
    upper bound is under ``options.unseen_split``."""
    what = f"no split task of {grouped}"
    share = band.get("split_share")
    interval = share if isinstance(share, Rate) else None
    bound = options.unseen_split
    # none of N split: Wilson's one-sided upper bound z²/(N + z²) at the firm error falls
    # under the bound from here on
    z = NormalDist().inv_cdf(1.0 - options.firm_error)
    firm = math.floor(z**2 * (1 - bound) / bound) + 1
    return Evidence(
        3, what, grouped, interval, "split share", bound, True, below=True, firm_tasks=firm,
        unit="grouped tasks",
    )  # fmt: skip


def _cut_off_evidence(
    pool: Pool, rows: int, options: RouteOptions, check: int = 1, whose: str = ""
) -> Evidence:
    """Check 1 passed (or check 4, on the teacher's rows, ``whose`` naming them): none of the
    cut-off rows passes. Whether a cut-off reply can pass is measured on the cut-off
    replies, by the passes they would have shown: each at its task's rate over the task's
    other draws (the pool's where a task has none). Had cut-off replies passed
    ``cut_pass_ratio`` as often, none of m expected passes is seen with chance e^(−ratio·m):
    firm once that is at most ``firm_error``. A count of cut-off rows is not enough: thirty
    of them from tasks that seldom pass would show none anyway, and a teacher's four cut-off
    rows none at all one time in three."""
    cut = pl.col("truncated").cast(pl.Float64)
    rest = pl.col("n").cast(pl.Float64) - cut
    passes = (pl.col("passes") - pl.col("truncated_passes")).cast(pl.Float64)
    # the pool's rate, for tasks with no other draw, in the same pass over the tasks
    pooled = pl.when(rest.sum() > 0).then(passes.sum() / rest.sum()).otherwise(pl.lit(0.0))
    rate = pl.when(rest > 0).then(passes / rest).otherwise(pooled)
    expected = float(pool.tasks.select((cut * rate).sum()).item())
    need = -math.log(options.firm_error) / options.cut_pass_ratio
    what = f"{whose}{checks._plural(rows, 'truncated row')}, none passing"
    short = None
    if expected < need - stats.TOL:
        short = (
            f"too few to tell that {whose}cut-off replies fail: passing"
            f" {options.cut_pass_ratio:g} as"
            f" often as their tasks' other draws, they would show {expected:.1f} passes"
            f" ({need:.1f} make missing them all a {options.firm_error:g} chance)"
        )
    per_task = expected / max(pool.n_tasks, 1)
    return Evidence(
        check, what, rows, None, "", crossing_only=True, unit="truncated rows",
        per_task=per_task / need * options.firm_tasks, short=short,
    )  # fmt: skip


def _fails_on_lead(measured: dict[str, Any], options: RouteOptions) -> bool:
    """A teacher that failed check 4 on what is estimated alone (its lead, its truncated
    share): not the student, no cut-off pass, enough coverage. Those are seen, not
    estimated: a teacher failing on them fails firmly."""
    coverage = measured.get("coverage")
    return not (
        measured.get("teacher_is_student")
        or measured.get("teacher_truncated_passes")
        or (
            isinstance(coverage, Rate)
            and (coverage.value or 0.0) < options.teacher_min_coverage - stats.TOL
        )
    )


def _evidence(
    route: str,
    plan: list[str],
    found: dict[str, CheckResult],
    pool: Pool,
    options: RouteOptions,
    size_b: float | None = None,
) -> list[Evidence]:
    """The evidence the verdict rests on: the deciding check's tasks and interval, and the
    teacher's when the headline claims one clears. A truncated pass is seen, not estimated:
    ``fix-reward`` rests on no sample size."""
    band = found["band"].measured
    grouped = int(band.get("grouped_tasks", 0))
    split = int(band.get("split_tasks", 0))
    out: list[Evidence] = []
    if route != "fix-reward":
        cut = found["truncated_passes"].measured
        rows = int(cut.get("truncated_rows", 0))
        if rows > 0 and found["truncated_passes"].status is Status.PASS:
            out.append(_cut_off_evidence(pool, rows, options))
    if route == "single-rollout":
        n = pool.n_tasks
        passes = int(pool.tasks["passes"].sum()) if n else 0
        rows = int(pool.tasks["n"].sum()) if n else 0
        short = None
        if rows and passes in (0, rows):  # one reward on every reply: no advantage to learn
            every = "fails" if passes == 0 else "passes"
            short = (
                f"every reply {every}: a baseline from the batch (or a running mean) leaves every"
                " advantage 0; measure the band at k >= 4 before choosing"
            )
        out.append(
            Evidence(
                2,
                checks._plural(n, "single task"),
                n,
                None,
                "",
                unit="single tasks",
                short=short,
                per_task=0.0 if short else 1.0,
            )  # fmt: skip
        )
    elif route == "floor":
        what = f"{checks._plural(grouped, 'grouped task')} all at 0"
        floor_share = band.get("floor_share")
        out.append(Evidence(3, what, grouped, floor_share, "floor share", unit="grouped tasks"))
        out.append(_unseen_split(band, grouped, options))
        if size_b is None:  # OPSD or SFT turns on the size (check 3), which nothing states
            unread = (
                f"the model's size is unknown (under {options.opsd_min_size_b:g}B a floor"
                " calls for SFT on a stronger model's completions, not OPSD): pass --size-b,"
                " or --model with the size in its name"
            )
            out.append(
                Evidence(
                    3, "the model's size", grouped, None, "size", crossing_only=True, unread=unread
                )
            )
    elif route == "saturated":
        what = f"{checks._plural(grouped, 'grouped task')} all at 1"
        out.append(
            Evidence(
                3, what, grouped, band.get("pass_at_1"), "grouped pass@1", unit="grouped tasks"
            )
        )
        out.append(_unseen_split(band, grouped, options))
    elif route == "no-split":
        share = band.get("split_share")
        no_split = f"no split task of {grouped}"
        out.append(Evidence(3, no_split, 0, share, "split share", unit="split tasks", per_task=0))
    elif route == "grpo":
        # GRPO learns from split tasks only: they are its evidence
        what = f"{checks._plural(split, 'split task')} of {grouped}"
        share = split / grouped if grouped else 0.0
        split_share = band.get("split_share")
        out.append(
            Evidence(3, what, split, split_share, "split share", per_task=share, unit="split tasks")
        )
    elif route == "off-policy":
        out.append(_other_model_evidence(found["on_policy"].measured, pool))
    if route == "teacher" or (route == "single-rollout" and "opd" in plan):
        t = found["teacher"].measured
        shared = int(t.get("shared_tasks", 0))
        paired = t.get("paired_difference")
        rate = paired if isinstance(paired, Rate) else None
        what = f"a teacher on {checks._plural(shared, 'shared task')}"
        out.append(
            Evidence(
                4,
                what,
                shared,
                rate,
                "paired difference",
                options.effect,
                margin=options.effect_margin,
                unit="shared tasks",
            )
        )
        share = _teacher_cut_evidence(found["teacher"].measured, pool, options, clears=True)
        if share is not None:
            out.append(share)
        if found["teacher"].status is Status.UNKNOWN:  # clears on what its rows record only
            out.append(_teacher_unrecorded(found["teacher"].measured, shared, options))
        t_rows = int(found["teacher"].measured.get("teacher_truncated_rows", 0) or 0)
        if t_rows and options.teacher is not None:  # none passes, or it would not clear
            out.append(_cut_off_evidence(options.teacher, t_rows, options, 4, "the teacher's "))
    elif route != "fix-reward" and found["teacher"].status is Status.FAIL:
        out.extend(_teacher_fails(found["teacher"].measured, pool, options))
    if route in _MEASURED_ROUTES and found["on_policy"].measured.get("other_model_rows"):
        another = _band_of_another(found["on_policy"].measured, pool, route)
        if another is not None:
            out.append(another)
    return out


#: Routes that rest on rates measured on the rows (the band, the teacher's lead over them):
#: another model's rows measure that model's, not the one to train.
_MEASURED_ROUTES = frozenset({"floor", "saturated", "no-split", "teacher"})


def _band_of_another(measured: dict[str, Any], pool: Pool, route: str) -> Evidence | None:
    """Where most rows another model wrote (check 6: its share's interval above a half,
    :func:`_other_model_evidence`), a band or a teacher's lead measured on them is that
    model's (pick-a-method: measure p on the model you will train): the verdict turns on a
    band no row states, and stays provisional until the model's own rows measure it."""
    other = _other_model_evidence(measured, pool)
    if other.short is not None:  # a minority: the band is mostly the model's own
        return None
    what = "the teacher's lead" if route == "teacher" else "the band"
    unread = (
        f"{other.what}: they measure {what} of that model, not of the model you will train;"
        " measure it on rows the model you train writes"
    )
    return Evidence(
        6,
        f"{what} on another model's rows",
        pool.n_tasks,
        None,
        what.removeprefix("the "),
        crossing_only=True,
        unread=unread,
        unstated=f"no count of another model's rows states {what} of the model you train",
    )


def _other_model_evidence(measured: dict[str, Any], pool: Pool) -> Evidence:
    """What "another model wrote these rows" rests on: the share of the rows that name a model
    that another model wrote, a Wilson interval over rows. SFT on the rows is the answer for
    rows another model wrote; where that model wrote a minority (its share's 95% interval not
    above a half: one stray row of 1600), the rest are the model's own and the verdict is
    provisional, saying to route each model's rows apart (``--by model``). Rows that name no
    model count in the share's whole: they may be the model's own (DESIGN section 1, a field's
    coverage), so 800 rows of another model beside 2400 that name none are not most."""
    naming = int(measured.get("rows_naming_a_model", 0) or 0)
    unnamed = int(measured.get("rows_naming_none", 0) or 0)
    rows = naming + unnamed
    mine_rate = measured.get("on_policy_share")
    mine = round(mine_rate.value * naming) if isinstance(mine_rate, Rate) and mine_rate.value else 0
    others = naming - mine
    share = stats.wilson(others, rows, n_tasks=pool.n_tasks, unit="rows") if naming else None
    short = None
    if share is None or share.low is None or share.low <= 0.5 + stats.TOL:
        rest = (
            f"{unnamed} name no model, and may be the model's own"
            if unnamed
            else "the rest are the model's own"
        )
        short = (
            f"another model wrote {others} of {rows} rows, not most of them ({rest}): route"
            " each model's rows apart (--by model)"
        )
    what = f"{others} of {rows} rows from another model"
    return Evidence(
        6, what, pool.n_tasks, share, "other model's share", unit="rows", per_task=0.0,
        short=short,
    )  # fmt: skip


def _teacher_cut_evidence(
    t: dict[str, Any], pool: Pool, options: RouteOptions, *, clears: bool
) -> Evidence | None:
    """The teacher's truncated share against ``teacher_max_truncated``, an estimate over its
    rows like any share (DESIGN section 2, check 4): a teacher that clears claims the share is
    at most the limit, one that fails on it claims it is over. Either claim is firm only when
    the share's Wilson bound at the one-sided ``firm_error`` lies past the zone too close to
    call (``truncated_margin``, as ``effect_margin`` for the lead): under limit − margin to
    clear, over limit + margin to fail. A teacher cut off 2% of the time shows 2 of 35 rows
    cut (0.057) one pool in six."""
    cut = t.get("teacher_truncated_share")
    if not isinstance(cut, Rate) or not cut.n_rows or cut.value is None:
        return None
    rows = cut.n_rows
    limit = options.teacher_max_truncated
    side = "at most" if clears else "over"
    shown, stated = against(cut.value, limit)
    what = f"a teacher cut off on {shown} of {rows} rows ({side} {stated})"
    edge = limit - options.truncated_margin if clears else limit + options.truncated_margin
    per_task = rows / max(pool.n_tasks, 1)  # the teacher's rows per student task
    return Evidence(
        4, what, rows, cut, "teacher's truncated share", edge, True, below=clears,
        unit="teacher rows", per_task=per_task,
    )  # fmt: skip


def _teacher_unrecorded(t: dict[str, Any], shared: int, options: RouteOptions) -> Evidence:
    """A teacher that clears check 4 on every condition its rows record, some of whose rows
    record no truncation: the check also asks its truncated share to be at most
    ``teacher_max_truncated`` and none of its passes a cut-off reply, which those rows do not
    say (a teacher a quarter of whose replies run to the cap leads as much). Check 4 is
    unknown, and the verdict that rests on it is provisional: no task count settles it."""
    cut = t.get("teacher_truncated_share")
    known = cut.n_rows if isinstance(cut, Rate) and cut.n_rows else 0
    on = f" (recorded on {known} of its rows)" if known else ""
    unread = (
        f"the teacher's truncation is not recorded{on}: check 4 needs at most"
        f" {options.teacher_max_truncated:g} of its rows cut off and no cut-off pass; record"
        " truncation (truncated, finish_reason) on the teacher's rows, scored at the student's"
        " max_tokens"
    )
    return Evidence(
        4, "the teacher's truncation", shared, None, "truncation", crossing_only=True,
        unread=unread, unstated="the teacher's rows do not record truncation",
    )  # fmt: skip


def _teacher_fails(t: dict[str, Any], pool: Pool, options: RouteOptions) -> list[Evidence]:
    """The teacher was asked and did not clear. What is seen (the student itself, a cut-off
    pass, too little coverage) fails it firmly. Its lead and its truncated share are
    estimates: it fails firmly when one of them is measured past its threshold at the firm
    error, and otherwise the verdict rests on those that failed. The lead is short when its
    paired interval is below the threshold by ``effect_margin`` (a lead past it whose two
    intervals still overlap is a teacher more tasks may clear)."""
    if not _fails_on_lead(t, options):
        return []  # a seen failure
    candidates: list[Evidence] = []
    paired = t.get("paired_difference")
    if isinstance(paired, Rate) and _lead_fails(t, options):
        shared = int(t.get("shared_tasks", 0))
        what = f"a teacher that does not clear on {checks._plural(shared, 'shared task')}"
        candidates.append(
            Evidence(
                4,
                what,
                shared,
                paired,
                "paired difference",
                options.effect,
                True,
                below=True,
                margin=options.effect_margin,
                unit="shared tasks",
            )
        )
    elif not isinstance(paired, Rate) and _lead_fails(t, options):
        return []  # no interval on the shared tasks: failed as measured
    if _cut_over(t, options):
        cut = _teacher_cut_evidence(t, pool, options, clears=False)
        if cut is not None:
            candidates.append(cut)
    if any(not _provisional([ev], options)[0] for ev in candidates):
        return []  # one failure is firm: so is the teacher's
    return candidates


def _cut_over(t: dict[str, Any], options: RouteOptions) -> bool:
    """Whether the teacher's measured truncated share is over ``teacher_max_truncated``."""
    cut = t.get("teacher_truncated_share")
    return isinstance(cut, Rate) and (cut.value or 0.0) > options.teacher_max_truncated + stats.TOL


def _lead_fails(t: dict[str, Any], options: RouteOptions) -> bool:
    """Whether the teacher's lead failed check 4 as measured: a gap under ``effect``, or the
    two pass@1 intervals overlapping (checks.teacher)."""
    gap, t_rate, s_rate = t.get("gap"), t.get("teacher_pass_at_1"), t.get("student_pass_at_1")
    if gap is None or not isinstance(t_rate, Rate) or not isinstance(s_rate, Rate):
        return True
    if t_rate.low is None or s_rate.high is None:
        return True
    return bool(gap < options.effect - stats.TOL or not t_rate.low > s_rate.high - stats.TOL)


def _firm_bounds(rate: Rate | None, options: RouteOptions) -> tuple[float | None, float | None]:
    """The bounds a firm verdict's interval must keep on one side of its threshold.

    A firm verdict claims that the deciding quantity lies on one side of its threshold, a
    one-sided claim: the printed 95% interval leaves 2.5% on each side, more than the
    ``firm_error`` a firm verdict may be wrong. A signed (paired) interval is widened about
    its estimate to the one-sided ``1 − firm_error`` bound (z 2.33 at 1%, over the 1.96 it
    was printed at); a Wilson interval of a share (the split share a floor or a saturated
    band claims is under ``unseen_split``) is recomputed at that z. At 95% a share of
    exactly the bound, none of whose ~400 tasks split, passed as firm 2% of the time."""
    if rate is None or rate.low is None or rate.high is None or rate.value is None:
        return (None, None) if rate is None else (rate.low, rate.high)
    z = NormalDist().inv_cdf(1.0 - options.firm_error)
    if rate.interval == "wilson":
        n = rate.n_rows if rate.unit == "rows" else rate.n_tasks
        wide = stats.wilson(round(rate.value * n), n, z=z)
        return wide.low, wide.high
    if rate.unit != "paired tasks":
        return rate.low, rate.high
    scale = z / stats.Z95
    value = rate.value
    return value - (value - rate.low) * scale, value + (rate.high - value) * scale


@dataclass(frozen=True)
class Thin:
    """Where the evidence is too little: one reason per thin evidence, why no task count
    settles it (where none does), and per thin evidence the tasks that would make it firm
    as ``(check, tasks)``."""

    reasons: list[str]
    uncounted: list[str]
    counts: list[tuple[int, int]]


def _provisional(
    evidence: list[Evidence], options: RouteOptions
) -> tuple[bool, str | None, int | None]:
    """Whether the verdict is provisional, why (one sentence), and the tasks that would make
    it firm: at least ``firm_tasks``, and the count at which the widest deciding interval
    would shrink to ``firm_width`` (width scaled as 1/√n)."""
    thin = _thin(evidence, options)
    firm_at = max((n for _, n in thin.counts), default=None)
    return _provisional_words(thin, {"tasks": firm_at} if firm_at is not None else {})


def firm_words(needs: dict[str, Any], per_k: bool = False) -> str:
    """The sentence saying what would make a provisional verdict firm, from the one
    requirement (``needs``): ``About 98 tasks would make it firm.``, with the draws per task
    first where the requirement raises them for the evidence (``per_k``: split tasks decide;
    the k = 4 a single-rollout pool is advised to re-run at makes another route)."""
    k, tasks = needs.get("k") if per_k else None, needs.get("tasks")
    if k is not None and tasks is not None:
        return f"k={k} rollouts per task and about {tasks} tasks would make it firm."
    if k is not None:
        return f"k={k} rollouts per task would make it firm."
    return f"About {tasks} tasks would make it firm."


def _provisional_words(
    thin: Thin, needs: dict[str, Any], current: int = 0, per_k: bool = False
) -> tuple[bool, str | None, int | None]:
    """(provisional, why, firm_at) from the thin evidence and the requirement that would
    make it firm (:func:`_requirement`): the sentence and ``firm_at`` both read ``needs``
    (``current`` tasks where it raises only the draws per task)."""
    if not thin.reasons:
        return False, None, None
    rests = "provisional: the verdict rests on " + "; and on ".join(thin.reasons)
    if thin.uncounted:  # more of the same tasks would not settle it: say so, not a count
        end = f". No task count alone would make it firm: {'; '.join(thin.uncounted)}."
        return True, rests + end, None
    return True, f"{rests}. {firm_words(needs, per_k)}", needs.get("tasks", current)


def _restate_need(
    band: CheckResult, needs: dict[str, Any], warnings: list[str], options: RouteOptions
) -> None:
    """The band's need and its warning restated as the route's one requirement, in the
    check (``check``'s few-split line reads it) and in the route's warnings."""
    need: dict[str, Any] = {key: needs[key] for key in ("k", "why", "tasks") if key in needs}
    band.measured["need"] = need
    m = band.measured
    split, total = int(m.get("split_tasks", 0)), int(m.get("grouped_tasks", 0))
    for i, old in enumerate(band.warnings):
        if old.startswith(checks.FEW_SPLIT) and total:
            new = checks.few_split_warning(split, total, need, options)
            band.warnings[i] = new
            warnings[:] = [new if w == old else w for w in warnings]


def _requirement(
    thin: Thin, needs: dict[str, Any], grouped: int, band_decides: bool
) -> dict[str, Any]:
    """The one requirement the report states for tasks, as ``needs`` (DESIGN section 2,
    "Enough evidence"): the tasks the band asks for where split tasks decide (at the k it
    asks for), raised to what would make the verdict firm. The "would make it firm"
    sentence, the JSON's ``firm_at``, ``Needs:`` and ``check``'s few-split line all read it.

    Where the band asks for more draws per task, the firm counts measured at this k speak
    of its split share: the band's count at the new k stands for them (it asks for at least
    ``min_split_tasks`` expected split tasks), and the other evidence's counts still hold.
    """
    out = dict(needs)
    if not thin.reasons or thin.uncounted:
        return out
    per_k = band_decides and out.get("k") is not None
    counts = [n for check, n in thin.counts if not (per_k and check == 3)]
    if per_k:
        counts.append(int(out.get("tasks", grouped)))
    tasks = max([*counts, int(out.get("tasks", 0))])
    if tasks > (grouped if per_k else 0):
        out["tasks"] = tasks
    return out


def _thin(evidence: list[Evidence], options: RouteOptions) -> Thin:
    """The thin evidence (see :func:`_provisional`)."""
    reasons: list[str] = []
    counts: list[tuple[int, int]] = []
    uncounted: list[str] = []  # why no task count makes it firm, per evidence
    for ev in evidence:
        thin = []
        need = options.firm_tasks
        if ev.unread is not None:
            thin.append(ev.unread)
            uncounted.append(ev.unstated or f"the model's {ev.label} is not stated")
        elif ev.tasks < options.firm_tasks and ev.per_task <= 0:
            uncounted.append(f"none of the tasks gives {ev.unit} at this k (see needs)")
        low, high = _firm_bounds(ev.interval, options)
        crosses = (
            ev.threshold is not None
            and ev.interval is not None
            and (low is None or high is None or low < ev.threshold - stats.TOL <= high)
        )
        if ev.below and ev.threshold is not None and ev.interval is not None:
            crosses = high is None or high >= ev.threshold - ev.margin - stats.TOL
        elif ev.margin and ev.threshold is not None and ev.interval is not None:
            crosses = low is None or low < ev.threshold + ev.margin - stats.TOL
        widened = ev.interval is not None and (low, high) != (ev.interval.low, ev.interval.high)
        bound = f" (widened to a {options.firm_error:g} one-sided error)" if widened else ""
        near = f" by {ev.margin:g}" if ev.margin else ""
        if crosses and ev.below:
            thin.append(f"its {ev.label} interval{bound} is not below {ev.threshold:g}{near}")
        elif crosses and ev.margin:
            thin.append(f"its {ev.label} interval{bound} is not past {ev.threshold:g}{near}")
        elif crosses:
            thin.append(f"its {ev.label} interval{bound} crosses {ev.threshold:g}")
        if crosses and ev.firm_tasks is None:  # a known count (unseen split) stands as is
            clear = _tasks_to_clear(ev, low, high)
            if isinstance(clear, str):
                uncounted.append(clear)
            else:
                need = max(need, clear)
        if ev.short is not None:
            thin.append(ev.short)
            if ev.per_task <= 0 and ev.tasks >= options.firm_tasks and not crosses:
                uncounted.append(f"more tasks do not change its {ev.label or 'rewards'}")
        if ev.crossing_only:
            pass
        elif ev.tasks < options.firm_tasks:
            thin.append(f"fewer than {options.firm_tasks} {ev.unit}")
        width = _width(ev.interval)
        if ev.crossing_only:
            pass
        elif width is not None and width > options.firm_width + stats.TOL:
            wide, limit = against(width, options.firm_width)
            thin.append(f"its {ev.label} interval is {wide} wide (> {limit})")
            need = max(need, math.ceil(max(ev.tasks, 1) * (width / options.firm_width) ** 2))
        if thin:
            reasons.append(f"{ev.what} (check {ev.check}): {' and '.join(thin)}")
            if ev.per_task > 0:
                counts.append((ev.check, max(math.ceil(need / ev.per_task), ev.firm_tasks or 0)))
    return Thin(reasons, uncounted, counts)


def _tasks_to_clear(ev: Evidence, low: float | None, high: float | None) -> int | str:
    """The tasks at which an interval that crosses its threshold would clear it, its
    half-width shrinking as 1/√n about the same estimate; where no count does, why (the
    estimate sits at the threshold, or on the side the verdict does not claim)."""
    rate, threshold = ev.interval, ev.threshold
    if rate is None or rate.value is None or threshold is None or low is None or high is None:
        return f"its {ev.label} has no interval"
    threshold += -ev.margin if ev.below else ev.margin  # the edge of the zone it must pass
    gap = rate.value - threshold
    at, edge = against(rate.value, threshold, signed=rate.signed)
    if abs(gap) <= stats.TOL:
        return f"its {ev.label} {at} sits at {edge}"
    if (gap > 0) == ev.below:  # the estimate is on the side of the edge the verdict denies
        side = "past" if ev.below else "short of"
        return f"its {ev.label} {at} is {side} {edge}: more tasks may turn the verdict"
    half = high - rate.value if gap < 0 else rate.value - low
    return math.ceil(max(ev.tasks, 1) * (half / abs(gap)) ** 2)


def _claimed(route: str, plan: list[str], ordered: list[CheckResult]) -> list[CheckResult]:
    """The checks the verdict rests on: those reached, and the teacher's two when a teacher
    clears at k = 1 (shown as context, claimed by the headline)."""
    out = [c for c in ordered if c.reached]
    if route == "single-rollout" and "opd" in plan:
        out += [c for c in ordered if c.key in ("teacher", "tokenizer") and not c.reached]
    return out


def _exit_reasons(
    route: str,
    claimed: list[CheckResult],
    provisional: bool,
    options: RouteOptions,
) -> list[str]:
    """Why the exit code is 1: fix-reward, and under ``--strict`` every claimed check that is
    unknown or failed, and a provisional verdict."""
    out: list[str] = []
    if route == "fix-reward":
        out.append("check 1 (truncated passes) fails: a cut-off reply passes")
    if not options.strict:
        return out
    for check in claimed:
        if check.status in (Status.UNKNOWN, Status.FAIL) and check.decides != "fix-reward":
            i = ORDER[check.key] + 1
            out.append(f"--strict: check {i} ({CHECK_NAMES[check.key]}) is {check.status.value}")
    if provisional:
        out.append("--strict: the verdict is provisional")
    return out


def _judge(pool: Pool, options: RouteOptions) -> Any:
    """Who grades the rows: the scan given in the options, else the one the read made
    (:mod:`whilecli.io.judge`); None where nothing told (a summary that recorded none)."""
    return options.judges if options.judges is not None else pool.source.judge


def _grader(scan: Any) -> str:
    """``judge`` when a judge graded some row, ``program`` when none did, ``unknown`` when
    nothing told."""
    if scan is None:
        return "unknown"
    return "judge" if scan.judged else "program"


#: The route of rows whose grouped tasks mostly repeat one draw.
REPEATED = "repeated-draws"


def _band_measured(band: CheckResult, pool: Pool) -> CheckResult:
    """Most grouped tasks repeating one draw (greedy decoding, a cache): the band is not
    measured, whatever the counts say, and the k draws count as one: the rows route as one
    draw per prompt (``repeated-draws``), provisional."""
    found = pool.source.facts
    if not found.repeated or band.status == Status.NOT_REACHED:
        return band
    band.status, band.decides = Status.UNKNOWN, REPEATED
    band.why = (
        f"{found.repeated_tasks} of {found.compared_tasks} grouped tasks repeat one draw"
        f" ({found.repeat_cause()}): the band is not measured; sample at temperature > 0"
    )
    band.measured["repeated_tasks"] = found.repeated_tasks
    band.measured.pop("need", None)  # k more copies of one draw split nothing
    band.warnings = []
    return band


def _inputs(pool: Pool, options: RouteOptions) -> dict[str, Any]:
    src = pool.source
    out: dict[str, Any] = {"paths": list(src.paths), "format": src.format, "sources": src.sources}
    if src.facts.found():
        out["facts"] = src.facts.to_dict()
    if options.teacher is not None:
        t = options.teacher.source
        out["teacher"] = {"paths": list(t.paths), "format": t.format, "sources": t.sources}
    return out


#: Teacher statuses that let OPD through: a clear pass, or a lead with intervals apart whose
#: truncated share cannot be measured (unknown, warned; ``--strict`` turns it into exit 1).
_CLEARED = (Status.PASS, Status.UNKNOWN)


def _clears(teacher: CheckResult) -> bool:
    """Whether check 4 lets OPD through (:data:`_CLEARED`): never where it is unknown because
    the teacher shares no task with the student (nothing was compared)."""
    return teacher.status in _CLEARED and not teacher.measured.get("cannot_compare")


def _route(found: dict[str, CheckResult], pool: Pool, options: RouteOptions) -> tuple[str, int]:
    """The deciding route and the index of the check that decided (len(KEYS) for grpo)."""
    if found["truncated_passes"].decides:
        return "fix-reward", ORDER["truncated_passes"]
    if found["rollouts_per_task"].decides:
        return "single-rollout", ORDER["rollouts_per_task"]
    if found["band"].decides:
        return str(found["band"].decides), ORDER["band"]
    tok = found["tokenizer"]
    if _clears(found["teacher"]) and not _mismatch(tok):
        tok.decides = "teacher"
        return "teacher", ORDER["tokenizer"]
    if found["on_policy"].decides:
        return "off-policy", ORDER["on_policy"]
    return "grpo", _GRPO


def _method_and_plan(
    route: str, f: Facts, scores: dict[str, MethodScore], options: RouteOptions
) -> tuple[str | None, list[str]]:
    small = f.size_b is not None and f.size_b < options.opsd_min_size_b - stats.TOL
    if route == "fix-reward":
        return None, []
    if route in ("single-rollout", REPEATED):
        plan = ["sao", "bpco", "flash_reinforce", "rae"] if f.values else ["flash_reinforce", "rae"]
        if scores["opd"].ok:  # OPD needs no group: a teacher that clears teaches at k = 1
            plan.append("opd")
        return plan[0], plan
    if route == "floor":
        return ("sft", ["sft"]) if small else ("opsd", ["opsd"])
    if route == "saturated":
        return "groupwise", ["groupwise"]
    if route == "no-split":
        low = ["sft" if small else "opsd"] if f.floor_share > 0 else []
        high = ["groupwise"] if f.floor_share < 1 else []
        sides = low + high if f.floor_share >= 0.5 else high + low
        plan = sides + ["reinforce_ada"]
        return plan[0], plan
    method = {"teacher": "opd", "off-policy": "sft", "grpo": "grpo"}[route]
    plan = [method] + (["opd"] if route == "off-policy" else [])
    plan += [m for m in ("opsd", "groupwise", "async", "reinforce_ada") if scores[m].ok]
    return method, plan


def _why(route: str, plan: list[str], found: dict[str, CheckResult], f: Facts) -> str:
    """One sentence: what decided, and what to train with."""
    if route == "floor":
        how = (
            "SFT on a stronger model's completions (under 7B)"
            if plan[:1] == ["sft"]
            else 'OPSD with privileged context (privileged="reference")'
        )
        return f"{found['band'].why}: {how}"
    if route == "saturated":
        return f"{found['band'].why}: GroupwiseGrading ranks the passes, or harden the eval"
    if route == "no-split":
        return found["band"].why
    if route == REPEATED:
        return (
            f"{found['band'].why}. Until then the rows are one draw per prompt: {_label(plan[0])}"
        )
    if route == "teacher":
        return f"{found['teacher'].why}; {found['tokenizer'].why}: OPD"
    if route == "grpo":
        policy = {"on": "from the model you train", "stale": f"from {f.copy} (Async)"}.get(
            f.policy, "on-policy unchecked"
        )
        return f"{checks._plural(f.split, 'split task')} of {f.grouped}, rows {policy}: GRPO"
    key = {"fix-reward": "truncated_passes", "single-rollout": "rollouts_per_task"}.get(
        route, "on_policy"
    )
    if route == "single-rollout" and "opd" in plan:
        return f"{found[key].why}. A teacher clears at k = 1 ({found['teacher'].why}): OPD"
    return found[key].why


def _evidence_dict(ev: Evidence) -> dict[str, Any]:
    return {
        "check": ev.check,
        "what": ev.what,
        "tasks": ev.tasks,
        "label": ev.label,
        "interval": ev.interval,
        "threshold": ev.threshold,
    }


def _label(method: str) -> str:
    from whilecli.names import METHOD_LABELS

    return METHOD_LABELS.get(method, method)


def _forced(findings: list[Finding], provisional: bool, why: str | None) -> tuple[bool, str | None]:
    """A finding that leaves the verdict provisional whatever the task count (one draw
    repeated, partial credit on cut-off replies), added to the evidence's reasons."""
    forced = quality.forces_provisional(findings)
    if not forced:
        return provisional, why
    rows = "provisional: the rows show " + "; and ".join(forced) + "."
    said = rows[len("provisional: ") :]  # a file or model named in it keeps its case
    if why is None:  # more tasks like these would show the same: no count settles it
        return True, f"{rows} No task count alone would make it firm."
    return True, f"{why} {said[:1].upper()}{said[1:]}"


#: Routes that split tasks decide: the band's need and its warning about few of them are
#: the verdict's own there, and context (under the band's check) elsewhere.
_SPLIT_ROUTES = ("grpo", "no-split")


@dataclass(frozen=True)
class _Decision:
    """The checks run on a pool, the route they give, and the method and plan."""

    found: dict[str, CheckResult]
    ordered: list[CheckResult]
    route: str
    facts: Facts
    scores: dict[str, MethodScore]
    method: str | None
    plan: list[str]


def _decision(pool: Pool, options: RouteOptions) -> _Decision:
    """Run the six checks in order, stop at the first that decides, score every method."""
    found = {
        "truncated_passes": checks.truncated_passes(pool, options),
        "rollouts_per_task": checks.rollouts_per_task(pool, options),
        "band": _band_measured(checks.band(pool, options), pool),
        "teacher": checks.teacher(pool, options),
    }
    found["tokenizer"] = checks.tokenizer(pool, options, teacher_cleared=_clears(found["teacher"]))
    found["on_policy"] = checks.on_policy(pool, options)
    route, at = _route(found, pool, options)
    ordered = [found[k] for k in checks.KEYS]
    for i, check in enumerate(ordered):
        check.reached = i <= at
        if i > at:
            check.decides = None
    if not _clears(found["teacher"]):
        found["tokenizer"].reached = False
    facts = _facts(pool, options, found)
    scores = {name: _score(name, facts, options) for name in METHODS}
    method, plan = _method_and_plan(route, facts, scores, options)
    return _Decision(found, ordered, route, facts, scores, method, plan)


def _counted_otherwise(pool: Pool, options: RouteOptions, method: str | None) -> list[Counted]:
    """What the rows left out of every rate would route to, counted (DESIGN section 2, "Data
    quality first"): as failures (harness errors and ungraded rows: a timeout, a context
    overflow, an answer the grader found none in can be the model's failure; a request that
    failed at the API, a rate limit or a server's failure, never is), and the
    ungraded rows as passes. Each count that routes firmly to another method than
    ``method`` is one the verdict rests on leaving them out (80% of the rows ungraded, each
    where a failure would be, read as a saturated band)."""
    out: list[Counted] = []
    for passes in (False, True):
        other = counted_as(pool, passes)
        if other is None:
            continue
        then = _decision(other, options)
        if then.method == method or then.method is None:
            continue
        evidence = _evidence(then.route, then.plan, then.found, other, options, then.facts.size_b)
        if _thin(evidence, options).reasons:  # no firm verdict either way: more rows decide
            continue
        rows = other.rows - pool.rows
        out.append(Counted(passes, rows, then.route, _label(then.method)))
    return out


def _emptied_otherwise(pool: Pool, options: RouteOptions, method: str | None) -> Counted | None:
    """What the rows route to without their counted empty replies that fail
    (:func:`whilecli.route.pool.without_empties`), where that is another method than
    ``method``, firm or not: the verdict rests on reading an empty reply as the model's
    failure (a harness that timed out, a provider's filter and a reasoning model whose answer
    never came all write one), as :func:`_counted_otherwise` tells for the rows left out."""
    other = without_empties(pool)
    if other is None or other.n_tasks == 0:
        return None
    then = _decision(other, options)
    if then.method == method or then.method is None:
        return None
    # firm or not: the rows that are the model's replies by either reading route elsewhere
    return Counted(False, pool.rows - other.rows, then.route, _label(then.method))


def _credited_otherwise(pool: Pool, options: RouteOptions, method: str | None) -> Counted | None:
    """What the rows route to with their failures that earned partial credit counted as
    passes (:func:`whilecli.route.pool.credited`), where that is another method than
    ``method`` (firm or not) or the same one on thin evidence (a saturated pool's few real
    failures): the verdict rests on where the pass threshold cuts the credit
    (1.0 against a 0.99, a judge's probability or a length penalty on a correct reply), as
    :func:`_emptied_otherwise` tells for empty replies."""
    other = credited(pool)
    if other is None:
        return None
    then = _decision(other, options)
    if then.method is None:
        return None
    label = _label(then.method)
    if then.method == method:  # the same method: firm by either reading, or it rests on it
        evidence = _evidence(then.route, then.plan, then.found, other, options, then.facts.size_b)
        if not _thin(evidence, options).reasons:
            return None
        label += ", provisional"
    rows = int(other.tasks["passes"].sum()) - int(pool.tasks["passes"].sum())
    return Counted(True, rows, then.route, label)


def decide(pool: Pool, options: RouteOptions) -> Route:
    """Route a pool: run the checks, pick the method, score every method, and explain."""
    made = _decision(pool, options)
    found, ordered, route, facts = made.found, made.ordered, made.route, made.facts
    scores, method, plan = made.scores, made.method, made.plan
    why = _why(route, plan, found, facts)
    # the band's need (split tasks) is the verdict's only where split tasks decide it
    band_decides = route in _SPLIT_ROUTES
    needs: dict[str, Any] = dict(found["band"].measured.get("need", {})) if band_decides else {}
    if route == "single-rollout":
        needs.setdefault("k", 4)
    if route == REPEATED:
        needs.update({"k": 4, "temperature": "> 0 (the draws must differ)"})
    if route == "floor" and method == "sft":
        needs["stronger_model_completions"] = found["band"].measured["tasks_at_0"]
    tok = found["tokenizer"]
    if tok.reached and tok.measured.get("padded_apart"):
        needs["tokenizer"] = "the two tokenizer paths: the sizes given differ only by padding"
    elif tok.reached and None in (
        tok.measured.get("teacher_vocab"),
        tok.measured.get("student_vocab"),
    ):
        needs["tokenizer"] = "--teacher-vocab/--student-vocab or the two tokenizer paths"
    counted = _counted_otherwise(pool, options, method) if route != "fix-reward" else []
    emptied = _emptied_otherwise(pool, options, method) if route != "fix-reward" else None
    credit = _credited_otherwise(pool, options, method) if route != "fix-reward" else None
    findings = quality.findings(
        pool, found, options.model, options.teacher_min_coverage, counted, emptied, credit
    )
    warnings: list[str] = []
    claimed = _claimed(route, plan, ordered)
    for check in ordered:  # a check below the decision, or one the verdict does not rest
        # on, keeps its warnings under it (-v): they speak of a route not taken
        if check in claimed and (check is not found["band"] or band_decides):
            warnings.extend(w for w in check.warnings if w not in warnings)
    notes = list(pool.source.notes)
    if (said := _size_disagreement(pool, options)) is not None:
        warnings.append(said)
    partial = pool.source.partial_rows
    if partial and not any("strictly between 0 and 1" in n for n in notes):  # said once
        notes.append(
            f"{partial} of {pool.rows} rows have a reward strictly between 0 and 1: a row passes"
            f" at reward ≥ {pool.source.pass_threshold:g}"
        )
    summary = _summary(pool, options, found)
    evidence = _evidence(route, plan, found, pool, options, facts.size_b)
    thin = _thin(evidence, options)
    grouped = int(found["band"].measured.get("grouped_tasks", 0))
    needs = _requirement(thin, needs, grouped, band_decides)
    band_need = found["band"].measured.get("need")
    if band_decides and band_need is not None and needs.get("tasks") != band_need.get("tasks"):
        _restate_need(found["band"], needs, warnings, options)
    per_k = band_decides and needs.get("k") is not None
    provisional, provisional_why, firm_at = _provisional_words(thin, needs, grouped, per_k)
    if route != "fix-reward":  # a cut-off pass is seen: what the rows hold leaves it firm
        provisional, provisional_why = _forced(findings, provisional, provisional_why)
    reasons = _exit_reasons(route, _claimed(route, plan, ordered), provisional, options)
    judge = _judge(pool, options)
    grader = _grader(judge)
    if grader == "judge":  # the headline says a judge grades; the methods table must agree
        scores["rm"] = MethodScore("rm", False, "rarely the answer: the rows already carry a grade")
    result = Route(
        route=route,
        method=method,
        why=why,
        plan=plan,
        checks=ordered,
        methods=[scores[name] for name in METHODS],
        needs=needs,
        summary=summary,
        before_gpu=_before_gpu(pool, options, summary),
        inputs=_inputs(pool, options),
        notes=notes,
        warnings=warnings,
        exit_code=1 if reasons else 0,
        provisional=provisional,
        provisional_why=provisional_why,
        firm_at=firm_at,
        exit_reasons=reasons,
        grader=grader,
        judge=judge,
        data_quality=findings,
        evidence=[_evidence_dict(ev) for ev in evidence],
    )
    from whilecli.route.report import headline

    result.headline = headline(result)
    if options.show:
        from whilecli.route.drill import drill_down

        result.show = drill_down(pool, options.show, options.limit)
    return result


def population_route(
    options: RouteOptions,
    *,
    blocked: bool,
    grouped: bool,
    floor_share: float,
    saturated_share: float,
    split_share: float,
    pass_at_1: float,
    teacher_gap: float | None,
    policy: str,
    size_b: float | None,
    teacher_coverage: float = 1.0,
    teacher_truncated: float = 0.0,
    teacher_cut_passes: bool = False,
) -> tuple[str, str | None, list[str]]:
    """(route, method, plan) the route's table gives a population's exact values: every task
    of it, each at its exact rate (shares of tasks at 0, at 1 and split at the pool's k; the
    teacher's lead, whose intervals are apart as soon as it is positive). What the route
    would say with unlimited tasks: the truth :mod:`whilecli.route.simulate` holds it to."""
    teacher = Status.NOT_ASKED
    if teacher_gap is not None:
        clears = teacher_gap >= options.effect - stats.TOL and teacher_gap > 0
        clears = clears and teacher_coverage >= options.teacher_min_coverage - stats.TOL
        clears = clears and teacher_truncated <= options.teacher_max_truncated + stats.TOL
        clears = clears and not teacher_cut_passes
        teacher = Status.PASS if clears else Status.FAIL
    band = "mixed"
    if floor_share >= 1.0 - 1e-12:
        band = "floor"
    elif saturated_share >= 1.0 - 1e-12:
        band = "saturated"
    many = 10**9  # a population's task count: any share of it is a count past every minimum
    split = round(split_share * many)
    facts = Facts(
        blocked=blocked,
        grouped=many if grouped else 0,
        singles=0 if grouped else many,
        band=band if grouped else None,
        split=split if grouped else 0,
        thin=grouped and split_share < options.min_split_share - stats.TOL,
        floor_share=floor_share if grouped else 0.0,
        pass_at_1=pass_at_1,
        passes=1 if pass_at_1 > 0 else 0,
        teacher=teacher,
        teacher_why="",
        teacher_clears=teacher in _CLEARED,
        tokenizer=Status.PASS,
        tokenizer_mismatch=False,
        policy=policy,
        logprobs=False,
        values=False,
        size_b=size_b,
    )
    if blocked:
        route = "fix-reward"
    elif not grouped:
        route = "single-rollout"
    elif band != "mixed":
        route = band
    elif split == 0:
        route = "no-split"
    elif teacher is Status.PASS:
        route = "teacher"
    elif policy == "other":
        route = "off-policy"
    else:
        route = "grpo"
    scores = {name: _score(name, facts, options) for name in METHODS}
    method, plan = _method_and_plan(route, facts, scores, options)
    return route, method, plan
