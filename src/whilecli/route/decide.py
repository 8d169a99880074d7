"""The decision of ``while route``: run the six checks in order, stop at the first that
decides, score every method, and gather the summary and what to do before the GPU.

DESIGN section 2: truncated passes → rollouts per task → band → teacher → tokenizer →
on-policy → grpo. Checks below the one that decided are still measured and shown as
context (``reached`` False).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whilecli.route import checks, stats
from whilecli.route.model import CheckResult, MethodScore, Pool, Rate, Route, Status
from whilecli.route.options import RouteOptions

#: Every method the route table knows, in the order the report lists them.
METHODS = (
    "grpo", "opd", "opsd", "groupwise", "dpo", "flash_reinforce", "sao", "bpco", "rae",
    "sft", "rm", "async", "reinforce_ada",
)  # fmt: skip
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
    tokenizer: Status
    tokenizer_mismatch: bool
    policy: str  # on | other | stale | unknown
    logprobs: bool
    values: bool
    size_b: float | None


def _mismatch(tok: CheckResult) -> bool:
    """Both vocabulary sizes known and different: OPD is refused."""
    t, s = tok.measured.get("teacher_vocab"), tok.measured.get("student_vocab")
    return t is not None and s is not None and t != s


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
        tokenizer=tok.status,
        tokenizer_mismatch=_mismatch(tok),
        policy=policy,
        logprobs=pool.source.has_logprobs,
        values=pool.source.has_values,
        size_b=options.size_b,
    )


def _single_family(f: Facts, name: str) -> MethodScore:
    if f.grouped and not f.singles:
        return MethodScore(name, False, "groups exist: a grouped method uses them")
    if name in ("sao", "bpco") and not f.values:
        return MethodScore(name, False, "needs critic values on the rows")
    lp = "present" if f.logprobs else "absent: staleness cannot be corrected"
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
    small = f.size_b is not None and f.size_b < options.opsd_min_size_b
    if name == "grpo":
        if not f.grouped:
            return MethodScore(name, False, "no grouped task: a group of one has no baseline")
        if f.band in ("floor", "saturated"):
            return MethodScore(name, False, f"{f.band}: every group is unanimous, no gradient")
        if f.policy == "other":
            return MethodScore(name, False, "another model wrote the rows: uncorrected off-policy")
        why = f"{f.split} split tasks give group-relative advantages"
        if f.thin:
            why += "; thin band: see needs"
        if f.policy == "stale":
            why += "; wrap in Async with a correction"
        return MethodScore(name, True, why)
    if name == "opd":
        if f.teacher is Status.NOT_ASKED:
            return MethodScore(name, False, "no --teacher given")
        if f.teacher not in _CLEARED:
            return MethodScore(name, False, f.teacher_why)
        if f.tokenizer_mismatch:
            return MethodScore(name, False, "the teacher's tokenizer differs from the student's")
        if f.tokenizer is Status.PASS:
            return MethodScore(name, True, "a stronger teacher with one tokenizer")
        return MethodScore(name, True, "a stronger teacher; tokenizer not checked")
    if name == "opsd":
        floor = f.band == "floor" or f.floor_share >= options.floor_share
        if not floor:
            return MethodScore(name, False, f"no floor: {f.floor_share:.2f} of groups at 0")
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
            f.pass_at_1 is not None and f.pass_at_1 >= options.ceiling_pass
        )
        if not top:
            return MethodScore(name, False, "passes are not the bottleneck")
        return MethodScore(name, True, "GroupwiseGrading ranks the passes; audit its grader")
    if name == "dpo":
        if f.split >= options.min_split_tasks:
            return MethodScore(name, True, f"{f.split} tasks with a pass and a fail: natural pairs")
        return MethodScore(
            name, False, f"{f.split} tasks with a pass and a fail (< {options.min_split_tasks})"
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
            return MethodScore(name, True, "an older copy wrote rows: Async with ipo or icepop")
        return MethodScore(name, False, f"on-policy status: {f.policy}")
    if name == "reinforce_ada":
        if f.band == "mixed" and f.thin:
            return MethodScore(name, True, "samples until each task splits (an experiment)")
        return MethodScore(name, False, "no thin mixed band")
    raise ValueError(f"unknown method {name}")


def _summary(pool: Pool, options: RouteOptions, found: dict[str, CheckResult]) -> dict[str, Any]:
    draws, seed = options.bootstrap_draws, options.seed
    tasks = pool.tasks
    groups = checks.grouped(pool)
    max_n = int(tasks["n"].max()) if tasks.height else 0
    k_mode = checks.common_k(groups)
    ks = {k for k in (4, 8, 16, 32) if k <= min(max_n, options.max_k)}
    if 4 <= k_mode <= max_n:
        ks.add(k_mode)
    at_k: dict[int, Rate] = {}
    hat_k: dict[int, Rate] = {}
    for k in sorted(ks):
        at_k[k], hat_k[k] = stats.pass_k_rates(tasks, k, draws=draws, seed=seed)
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


def _before_gpu(options: RouteOptions) -> dict[str, Any]:
    held = stats.holdout_size(options.effect)
    advice = [
        f"Hold out {held.n} tasks (k={held.k}) to see a gain of {held.effect} at power "
        f"{held.power} (half-width {held.half_width:.3f}).",
        "Train a random selection of the same size beside the real one: if the method does "
        "not beat its own random control, the selection or the reward was the problem.",
    ]
    if options.model and "qwen" in options.model.lower():
        advice.append(
            "On a Qwen base, add a random-reward arm: gains under it signal contamination."
        )
    return {"holdout": held.to_dict(), "random_control": advice}


def _inputs(pool: Pool, options: RouteOptions) -> dict[str, Any]:
    src = pool.source
    out: dict[str, Any] = {"paths": list(src.paths), "format": src.format, "sources": src.sources}
    if options.teacher is not None:
        t = options.teacher.source
        out["teacher"] = {"paths": list(t.paths), "format": t.format, "sources": t.sources}
    return out


#: Teacher statuses that let OPD through: a clear pass, or a lead with intervals apart whose
#: truncated share cannot be measured (unknown, warned; ``--strict`` turns it into exit 1).
_CLEARED = (Status.PASS, Status.UNKNOWN)


def _route(found: dict[str, CheckResult], pool: Pool, options: RouteOptions) -> tuple[str, int]:
    """The deciding route and the index of the check that decided (len(KEYS) for grpo)."""
    if found["truncated_passes"].decides:
        return "fix-reward", ORDER["truncated_passes"]
    if found["rollouts_per_task"].decides:
        return "single-rollout", ORDER["rollouts_per_task"]
    if found["band"].decides:
        return str(found["band"].decides), ORDER["band"]
    tok = found["tokenizer"]
    if found["teacher"].status in _CLEARED and not _mismatch(tok):
        tok.decides = "teacher"
        return "teacher", ORDER["tokenizer"]
    if found["on_policy"].decides:
        return "off-policy", ORDER["on_policy"]
    return "grpo", _GRPO


def _method_and_plan(
    route: str, f: Facts, scores: dict[str, MethodScore], options: RouteOptions
) -> tuple[str | None, list[str]]:
    small = f.size_b is not None and f.size_b < options.opsd_min_size_b
    if route == "fix-reward":
        return None, []
    if route == "single-rollout":
        plan = ["sao", "bpco", "flash_reinforce", "rae"] if f.values else ["flash_reinforce", "rae"]
        return plan[0], plan
    if route == "floor":
        return ("sft", ["sft"]) if small else ("opsd", ["opsd"])
    if route == "saturated":
        return "groupwise", ["groupwise"]
    method = {"teacher": "opd", "off-policy": "sft", "grpo": "grpo"}[route]
    plan = [method] + (["opd"] if route == "off-policy" else [])
    plan += [m for m in ("opsd", "groupwise", "async", "reinforce_ada") if scores[m].ok]
    return method, plan


def _why(route: str, method: str | None, found: dict[str, CheckResult], f: Facts) -> str:
    """One sentence: what decided, and what to train with."""
    if route == "floor":
        how = (
            "SFT on a stronger model's completions (under 7B)"
            if method == "sft"
            else 'OPSD with privileged context (privileged="reference")'
        )
        return f"{found['band'].why}: {how}"
    if route == "saturated":
        return f"{found['band'].why}: GroupwiseGrading ranks the passes, or harden the eval"
    if route == "teacher":
        return f"{found['teacher'].why}; {found['tokenizer'].why}: OPD"
    if route == "grpo":
        policy = {"on": "from the model you train", "stale": "from an older copy (Async)"}.get(
            f.policy, "on-policy unchecked"
        )
        return f"{f.split} split tasks of {f.grouped}, rows {policy}: GRPO"
    key = {"fix-reward": "truncated_passes", "single-rollout": "rollouts_per_task"}.get(
        route, "on_policy"
    )
    return found[key].why


def decide(pool: Pool, options: RouteOptions) -> Route:
    """Route a pool: run the checks, pick the method, score every method, and explain."""
    found = {
        "truncated_passes": checks.truncated_passes(pool, options),
        "rollouts_per_task": checks.rollouts_per_task(pool, options),
        "band": checks.band(pool, options),
        "teacher": checks.teacher(pool, options),
    }
    found["tokenizer"] = checks.tokenizer(
        pool, options, teacher_cleared=found["teacher"].status in _CLEARED
    )
    found["on_policy"] = checks.on_policy(pool, options)
    route, at = _route(found, pool, options)
    ordered = [found[k] for k in checks.KEYS]
    for i, check in enumerate(ordered):
        check.reached = i <= at
        if i > at:
            check.decides = None
    if found["teacher"].status not in _CLEARED:
        found["tokenizer"].reached = False
    facts = _facts(pool, options, found)
    scores = {name: _score(name, facts, options) for name in METHODS}
    method, plan = _method_and_plan(route, facts, scores, options)
    why = _why(route, method, found, facts)
    needs: dict[str, Any] = dict(found["band"].measured.get("need", {}))
    if route == "single-rollout":
        needs.setdefault("k", 4)
    if route == "floor" and method == "sft":
        needs["stronger_model_completions"] = found["band"].measured["tasks_at_0"]
    tok = found["tokenizer"]
    if tok.reached and None in (
        tok.measured.get("teacher_vocab"),
        tok.measured.get("student_vocab"),
    ):
        needs["tokenizer"] = "--teacher-vocab/--student-vocab or the two tokenizer paths"
    warnings: list[str] = []
    for check in ordered:
        warnings.extend(w for w in check.warnings if w not in warnings)
    notes = list(pool.source.notes)
    if pool.source.partial_rows:
        notes.append(
            f"{pool.source.partial_rows} rows have a reward strictly between 0 and 1; they pass "
            f"at reward >= {pool.source.pass_threshold}"
        )
    strict_fail = options.strict and any(
        c.reached and c.status in (Status.UNKNOWN, Status.FAIL) for c in ordered
    )
    return Route(
        route=route,
        method=method,
        why=why,
        plan=plan,
        checks=ordered,
        methods=[scores[name] for name in METHODS],
        needs=needs,
        summary=_summary(pool, options, found),
        before_gpu=_before_gpu(options),
        inputs=_inputs(pool, options),
        notes=notes,
        warnings=warnings,
        exit_code=1 if route == "fix-reward" or strict_fail else 0,
    )
