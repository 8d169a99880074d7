"""Data quality first (DESIGN section 2): what reading found that changes what the numbers
mean, each with what it does to the verdict.

The reading layer decides what every row means (:mod:`whilecli.io.facts`); this module
turns its counts, the coverage of the optional fields and check 4's teacher facts into
:class:`~whilecli.route.model.Finding` lines, listed before the checks. Each finding moves
the verdict it touches (:func:`forces_provisional`, and the rules in
:mod:`whilecli.route.decide` and :mod:`whilecli.route.checks`), never only a warning line:

- error replies and ungraded rows are left out of every rate (an error scored 0 never
  makes a split task); where, counted as failures (or the ungraded ones as passes), they
  would route firmly to another method, the verdict is provisional (a request that failed
  at the API, a rate limit or a server's failure, is never counted as the model's failure);
- most grouped tasks repeating one draw: the k draws are one, the band is not measured
  (check 3 unknown), the rows route as one draw per prompt, provisional;
- a reply graded both pass and fail (in one task's repeats, or across two files of the
  pool): the grader splits its task, not the draws, provisional;
- rows that repeat another row of their task (one draw written twice): counted twice in k
  and every rate, provisional from :data:`REPEATED_ROWS_SHARE` of the rows;
- no grouped task unanimous where the pool's own fitted prior expects many: the rows were
  selected (a dynamic-sampling filter), provisional;
- pass counts more even than independent draws can make them (every task 4 of 8): a grade
  built from the group (a rank within it), provisional;
- ids one per row while prompts repeat: tasks are keyed by the prompt;
- a field on some rows only: a method that needs it on every row is not ok (critic values
  for SAO/BPCO), truncation unknown on the rest (check 1 unknown);
- cut-off replies with partial credit: the reward scores cut-off text, provisional;
- a flag saying not cut beside a token count at its cap, in files that flag no cut: where
  such rows pass, check 1 rests on the flag, provisional;
- one row per task whose partial rewards all lie on one grid of 1/k: per-task means of k
  draws, not rollouts, provisional;
- a teacher that is the student, or that shares ids but not prompts: check 4 fails, or the
  ids are not shared.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from whilecli.errors import shown_path
from whilecli.io.draw_parts import PART, SEP, masked
from whilecli.io.modelid import names_other_model, writer_named, writers_in
from whilecli.route import factors, stats
from whilecli.route.model import CheckResult, Finding, Pool, Rate, Status
from whilecli.route.stats import TOL

#: Empty replies listed from this share of the rows (fewer are counted in the sources).
EMPTY_SHARE = 0.05
#: Empty replies that pass leave the verdict provisional from this many, and this share of
#: the counted rows: a grader that credits no text may credit other replies wrongly.
EMPTY_PASSES_MIN, EMPTY_PASSES_SHARE = 3, 0.005
#: Rows that repeat another row (one draw written twice) from this share of the counted
#: rows leave the verdict provisional; fewer are listed and move nothing.
REPEATED_ROWS_SHARE = 0.05
#: Findings that leave the verdict provisional, whatever the task count.
PROVISIONAL_KINDS = (
    *("repeated_draws", "graded_apart", "several_models", "cut_partial", "teacher_scale"),
    "repeated_rows",
    "lost_retries",
    "teacher_prompts_decide",
    "teacher_mixes_student",
    "credit_beside_the_band",
    "split_across_writers",
    "singles_beside_the_band",
    "selected_rows",
    "empty_passes",
    "left_out_decides",
    "empty_decides",
    "no_unanimous_groups",
    "even_counts",
    "kept_by_grade",
    "grade_beside",
    "grade_disagrees",
    "mean_rewards",
    "cut_disputed",
    "cut_at_longest",
    "ids_per_sample",
    "model_unsure",
    "model_tuned",
    "model_in_path",
    "unsure_build",
    "teacher_may_be_student",
    "teacher_budget",
    "teacher_doubts",
    "teacher_grader",
    "threshold_above_rewards",
    "teacher_unpaired",
    "teacher_other_family",
    "prompt_end_guessed",
    "prompt_ids_masked",
    "greedy_band",
    "mapped_prompts",
    "prompt_reordered",
    "crossed_factor",
    "coarse_ids",
)
#: Pass counts read as more even than independent draws give once their chance is at most
#: this (:func:`_even_counts`).
EVEN_CHANCE = stats.EVEN_CHANCE
#: A pool none of whose grouped tasks is unanimous reads as selected rows once seeing none
#: is at most this chance under the pool's own fitted prior.
SELECTED_CHANCE = 1e-3


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def coverage(pool: Pool, name: str) -> int | None:
    """Rows counted that carry the per-token field ``name`` (``logprobs``, ``values``);
    None where the read does not say (a summary)."""
    value = pool.source.facts.coverage.get(name)
    if value is None:
        flag = pool.source.has_logprobs if name == "logprobs" else pool.source.has_values
        if flag is None:
            return None
        return pool.rows if flag else 0
    return min(int(value), pool.rows)


def full(pool: Pool, name: str) -> bool | None:
    """Every counted row carries ``name``: True; some or none: False; unknown: None."""
    have = coverage(pool, name)
    if have is None:
        return None
    return pool.rows > 0 and have >= pool.rows


def findings(
    pool: Pool,
    found: dict[str, CheckResult],
    model: str | None = None,
    min_coverage: float = 0.5,
    counted: Sequence[Counted] = (),
    emptied: Counted | None = None,
    credit: Counted | None = None,
) -> list[Finding]:
    """What reading found, in the order the report lists it (``model``: ``--model``, where
    given, so check 6 says whose rows are whose; ``min_coverage``: check 4's
    ``teacher_min_coverage``; ``counted``: the firm routes of the rows left out, counted;
    ``emptied``: the route of the rows without their empty failing replies, where another;
    ``credit``: the route with the failures that earned partial credit counted as passes,
    where another)."""
    facts = pool.source.facts
    model_given = model is not None
    out: list[Finding] = []
    if not model_given:
        out += _several_models(pool)
    if facts.errors:
        out.append(
            Finding(
                "errors",
                facts.errors,
                f"{facts.errors} of {facts.rows} rows are harness errors, not replies"
                f" (first: {facts.first_error}){_failed_requests(facts)}",
                "left out of every rate: an error scored 0 is not the model's failure",
            )
        )
    if facts.empty and facts.empty >= EMPTY_SHARE * facts.rows:
        out.append(
            Finding(
                "empty",
                facts.empty,
                f"{facts.empty} of {facts.rows} replies are empty, no text generated"
                f" (first: {facts.first_empty})",
                "counted as the model's replies, graded as they were: a stop at once or a"
                " reply cut before its text is the model's; if the harness dropped them, they"
                " are its failures: leave them out",
            )
        )
    if (
        facts.empty_passes >= EMPTY_PASSES_MIN
        and facts.empty_passes >= EMPTY_PASSES_SHARE * facts.counted
    ):
        out.append(
            Finding(
                "empty_passes",
                facts.empty_passes,
                f"{facts.empty_passes} of {facts.empty} empty replies pass: the grader credits"
                " a reply with no text",
                "a grader that credits an empty reply may credit other replies wrongly, as one"
                " that passes cut-off replies does: the verdict is provisional; fix the reward and"
                " grade again",
            )
        )
    if facts.ungraded:
        moves = (
            "counted as failures (--missing fail)"
            if facts.missing == "fail"
            else "left out of every rate (--missing fail counts them as failures)"
        )
        out.append(
            Finding(
                "ungraded",
                facts.ungraded,
                f"{facts.ungraded} of {facts.rows} rows have no grade"
                f" (first: {facts.first_ungraded}{facts.spelled_words()})",
                moves,
            )
        )
    if facts.repeated_tasks:
        what = f"{facts.repeated_tasks} of {facts.compared_tasks} grouped tasks repeat one draw" + (
            " (identical completions: greedy decoding or a cache)"
            if not facts.greedy_rows
            else f" ({facts.repeat_cause()})"
        )
        if facts.repeated:
            moves = (
                "their k draws are one: the band is not measured (check 3 unknown), the rows"
                " route as one draw per prompt, provisional; sample at temperature > 0"
            )
            out.append(Finding("repeated_draws", facts.repeated_tasks, what, moves))
        else:
            moves = "a minority: the band counts the other tasks' draws as measured"
            if not facts.graded_apart:  # one reply, one grade: each at 0 or 1, never split
                out.append(Finding("some_repeated_draws", facts.repeated_tasks, what, moves))
    out += _written_twice(facts)
    out += _attempts(facts)
    rekey = facts.rekey_words()
    if rekey is not None:
        out.append(Finding("per_row_ids", pool.n_tasks, *rekey))
    out += _coverage(pool)
    out += _mean_rewards(pool)
    out += _credit_beside_the_band(pool, found.get("band"), credit)
    if credit is None:
        out += _credit_moves_pass_at_1(pool)
    out += _threshold_above_rewards(pool)
    if facts.selected:
        what, fix = facts.selection
        out.append(
            Finding(
                "selected_rows",
                facts.selected,
                f"{_rows(facts.selected)} of {facts.rows} are {what}",
                "the band sees the groups that split only, so no floor or saturation can show"
                f" and the rates lean to the middle: the verdict is provisional; {fix}",
            )
        )
    if not facts.selected:
        unanimous = _no_unanimous_groups(pool, found.get("band"))
        out += unanimous or _even_counts(pool, found.get("band"))
    out += _kept_by_grade(pool, found.get("band"))
    out += _grade_beside(pool, found.get("band"))
    out += _grade_disagrees(pool)
    out += _split_across_writers(found.get("band"))
    out += _singles_beside_the_band(pool, found.get("band"))
    out += _ids_per_sample(pool)
    out += _prompt_end_guessed(pool)
    out += _prompt_ids_masked(pool)
    out += _coarse_ids(pool)
    out += _mapped_prompts(pool)
    out += _prompt_reordered(pool)
    out += _crossed_factor(pool)
    out += _greedy_band(pool, found.get("band"), found.get("on_policy"))
    out += _model_unsure(pool, found.get("on_policy"), model_given)
    out += _model_tuned(found.get("on_policy"))
    out += _model_in_path(pool, found.get("on_policy"), model)
    out += _unsure_build(found.get("on_policy"))
    out += _left_out_decides(pool, counted)
    out += _empty_decides(pool, emptied)
    out += _cut_disputed(pool)
    out += _cut_at_longest(pool)
    if facts.cut_partial:
        out.append(
            Finding(
                "cut_partial",
                facts.cut_partial,
                f"{_rows(facts.cut_partial)} cut off at the token cap earn partial credit"
                f" (first: {facts.first_cut_partial})",
                "the reward scores cut-off text: the verdict is provisional until truncated"
                " replies score 0 or max_tokens is raised",
            )
        )
    out += _teacher(found.get("teacher"), min_coverage)
    out += _teacher_family(found.get("tokenizer"))
    return out


def _teacher_family(check: CheckResult | None) -> list[Finding]:
    """Check 5 could not tell (no vocabulary given, or sizes apart only by padding) and the
    teacher's rows name another model family than the student's (Llama beside Qwen): two
    families are, as a rule, two tokenizers, and OPD on two tokenizers drops its per-token
    signal silently. The names are no proof, so the verdict is provisional."""
    if check is None or not check.reached or check.status is not Status.UNKNOWN:
        return []
    others = check.measured.get("teacher_other_family")
    if not isinstance(others, list) or not others:
        return []
    return [
        Finding(
            "teacher_other_family",
            len(others),
            f"the teacher's rows name {', '.join(others)}, another model family than"
            f" {check.measured.get('student_model')}, and the tokenizers were not compared",
            "two families are, as a rule, two tokenizers, and OPD on two drops its per-token"
            " signal: the verdict is provisional; pass --teacher-tokenizer PATH"
            " --student-tokenizer PATH",
        )
    ]


def _failed_requests(facts: Any) -> str:
    """How many of the errors are requests that failed at the API, and how many recorded
    nothing (:attr:`~whilecli.io.facts.Facts.unrecorded`), as words."""
    failed, unrecorded = facts.request_errors, facts.unrecorded
    nothing = ""
    if unrecorded and unrecorded == facts.errors:
        nothing = "each keeping no reply beside its task's replies, and none passing"
    elif unrecorded:
        nothing = f"{unrecorded} of them keeping no reply beside their task's replies, and none"
        nothing += " passing"
    nothing += " (nothing was recorded)" if unrecorded else ""
    if not failed:
        return f", {nothing}" if nothing else ""
    if nothing:
        return f", {failed} of them requests that failed at the API, {nothing}"
    if failed == facts.errors:
        return ", each a request that failed at the API (a rate limit, a server's failure)"
    return f", {failed} of them requests that failed at the API (a rate limit, a server's failure)"


def _cut_disputed(pool: Pool) -> list[Finding]:
    """Rows whose flag says not cut while their token count reached its recorded cap, in
    files that record no cut anywhere (:attr:`whilecli.io.facts.Facts.cut_disputed`). The flag
    is believed; where some such rows pass, check 1 rests on it: read as cut, they are
    cut-off passes (fix the reward), so the verdict is provisional. Where they all fail,
    check 1 holds either way and they are listed only."""
    facts = pool.source.facts
    n, passing = facts.cut_disputed, facts.cut_disputed_passes
    if not n:
        return []
    what = (
        f"{_rows(n)} reach the recorded token cap yet are flagged not truncated, and no row"
        f" of {'its file' if n == 1 else 'their files'} is flagged truncated (first:"
        f" {facts.first_cut_disputed}): a harness that writes false on every row looks so"
    )
    return _looks_cut("cut_disputed", n, passing, what, "")


def _looks_cut(kind: str, n: int, passing: int, what: str, record: str) -> list[Finding]:
    """Rows that look cut off though not read so (``what``): ``kind`` where ``passing`` of
    them pass (were they cut, a cut-off reply passes: provisional), ``kind_failing`` where
    none does (check 1 holds either way: listed). ``record``: what else to record."""
    if not passing:
        moves = "they all fail: check 1 holds whether or not they were cut"
        return [Finding(f"{kind}_failing", n, what, moves)]
    moves = (
        f"{passing} of them pass: were they cut, a cut-off reply passes (fix the reward), so"
        f" the verdict is provisional; record each reply's finish reason{record}"
    )
    return [Finding(kind, n, what, moves)]


def _cut_at_longest(pool: Pool) -> list[Finding]:
    """Replies piled at their file's longest token count, none read as cut off, in files that
    record no cap and flag no row cut (:attr:`whilecli.io.facts.Facts.cut_at_longest`): a cap
    no field names stacked them there. Where some pass, check 1 rests on whether they were
    cut: read as cut, they are cut-off passes (fix the reward), so the verdict is
    provisional. Where they all fail, check 1 holds either way and they are listed only."""
    facts = pool.source.facts
    n, passing = facts.cut_at_longest, facts.cut_at_longest_passes
    if not n:
        return []
    tokens = f"{facts.longest_tokens:g}" if facts.longest_tokens is not None else "one count"
    field = f" ({facts.longest_field})" if facts.longest_field else ""
    said = pool.source.sources.get("truncated", "")
    read = "flagged not truncated" if not said.startswith("not ") else "not flagged"
    what = (
        f"{_rows(n)} end at the longest reply of {'its' if n == 1 else 'their'} file,"
        f" {tokens} tokens{field}, piled there as replies cut at a cap are, yet are {read}"
        f" and no cap is recorded (first: {facts.first_cut_at_longest})"
    )
    return _looks_cut("cut_at_longest", n, passing, what, ", or the cap (max_tokens)")


def _attempts(facts: Any) -> list[Finding]:
    """Rows left out as the harness's attempts (:mod:`whilecli.io.attempts`): earlier
    attempts of a draw a later attempt of which the rows hold (listed: the last attempt is
    the draw), and attempts whose retry is missing (the draw they stood for is not in the
    rows: provisional)."""
    out: list[Finding] = []
    where = f"the draw is {facts.attempts_field}"
    if facts.retried:
        out.append(
            Finding(
                "earlier_attempts",
                facts.retried,
                f"{_rows(facts.retried)} of {facts.rows} are earlier attempts of a draw the"
                f" harness retried (first: {facts.first_retried}): {where}",
                "left out of every rate, as the harness's, not the model's draws",
            )
        )
    if facts.retry_lost:
        out.append(
            Finding(
                "lost_retries",
                facts.retry_lost,
                f"{_rows(facts.retry_lost)} of {facts.rows} stand alone at an attempt value"
                " that marks only attempts a retry replaced wherever a draw was retried, while"
                f" most single attempts hold a final one: attempts whose retry is missing ({where})",
                "left out of every rate: the draws they stood for are not in the rows, so the"
                " verdict is provisional; write every draw's last attempt",
            )
        )
    return out


def _written_twice(facts: Any) -> list[Finding]:
    """Rows that repeat another row of their task (one draw written twice: a file pooled with
    itself, a resumed run's overlap), and replies graded both pass and fail anywhere in the
    pool (one reply, two grades)."""
    out: list[Finding] = []
    again = max(facts.repeated_rows, facts.repeated_samples)
    if again:
        whats = []
        if facts.repeated_rows:
            whats.append(
                f"{_rows(facts.repeated_rows)} of {facts.counted} repeat another row of their"
                " task (the same reply, the same grade: one draw written twice, as a file"
                " pooled with itself)"
            )
        if facts.repeated_samples:
            whats.append(
                f"{_rows(facts.repeated_samples)} of {facts.counted} repeat another row's"
                f" {facts.attempts_field} (first: {facts.first_repeated_sample}): a draw"
                " written twice, or a failed attempt beside its retry, which no column tells"
                " apart"
            )
        what = "; ".join(whats)
        if again >= REPEATED_ROWS_SHARE * max(facts.counted, 1):
            moves = (
                "each copy counts as a draw, so k and every rate count those draws twice:"
                " the verdict is provisional; write each draw once (or an attempt column,"
                " attempt or is_retry, beside the sample index)"
            )
            out.append(Finding("repeated_rows", again, what, moves))
        else:
            moves = "a few: counted as draws, the rates barely move"
            out.append(Finding("some_repeated_rows", again, what, moves))
    if facts.graded_apart:
        replies = facts.apart_replies or facts.graded_apart
        out.append(
            Finding(
                "graded_apart",
                facts.graded_apart,
                f"{facts.graded_apart} task{'s' if facts.graded_apart != 1 else ''} hold a"
                f" reply graded both pass and fail ({replies} repl"
                f"{'ies' if replies != 1 else 'y'}: one reply, two grades: the grader is not"
                " deterministic, or two gradings were pooled)",
                "what splits them is the grader, not the draws: the band's split count holds"
                " them, so the verdict is provisional; grade each reply once",
            )
        )
    return out


def several_models(pool: Pool) -> tuple[int, str] | None:
    """Where the rows name two or more models (their keys, :func:`whilecli.route.identity.
    model_key`): how many, and the first three named; None where they name one at most."""
    from whilecli.route.identity import model_key

    named = {m: c for m, c in pool.models.items() if m is not None}
    keys = sorted({model_key(m) for m in named})
    if len(keys) < 2:
        return None
    return len(keys), ", ".join(sorted(named)[:3]) + (", ..." if len(named) > 3 else "")


def _several_models(pool: Pool) -> list[Finding]:
    """Rows of two or more models and no ``--model``: a task's rows are then draws of several
    policies, and what splits a task may be one model passing where another fails (two
    evaluations of one benchmark pooled), no group of one policy's draws."""
    found = several_models(pool)
    if found is None:
        return []
    count, shown = found
    return [
        Finding(
            "several_models",
            count,
            f"the rows name {count} models ({shown}) and no --model says which is trained",
            "a task's rows may be draws of several models, whose passes and fails split it:"
            " the verdict is provisional; pass --model M, or route each apart (--by model)",
        )
    ]


def _credit_moves_pass_at_1(pool: Pool) -> list[Finding]:
    """Failures that earned partial credit (0 < reward < 1 under a pass threshold of 1: a
    length penalty on a correct reply, a format bonus missed), fewer than the share that is
    refused, that move pass@1 past its interval when counted as passes
    (:func:`whilecli.route.pool.credited`): the route stands either way, pass@1 and the
    sizes drawn from it rest on where the threshold cuts; listed (``credit_moves_pass``)."""
    from whilecli.route.pool import CREDIT_FAILS, credited

    other = credited(pool)
    if other is None or pool.credit is None:
        return []
    now, then = stats.pass_at_1(pool.tasks), stats.pass_at_1(other.tasks)
    if now.low is None or now.high is None or then.value is None:
        return []
    if now.low - TOL <= then.value <= now.high + TOL:
        return []
    rows = int(pool.credit[CREDIT_FAILS].sum())
    return [
        Finding(
            "credit_moves_pass",
            rows,
            f"{_rows(rows)} fail at the pass threshold {pool.source.pass_threshold:g} with partial"
            f" credit (0 < reward < 1): counted as passes, pass@1 would be {then.value:.2f},"
            f" outside its interval [{now.low:.2f}, {now.high:.2f}]",
            "the route stands either way; pass@1 and the sizes drawn from it rest on the"
            " threshold: pass --pass-threshold T at the reward that means a pass",
        )
    ]


def _credit_beside_the_band(
    pool: Pool, band: CheckResult | None, credit: Counted | None = None
) -> list[Finding]:
    """Partial credit the verdict rests on. In a pool the band reads as a floor (or as
    saturated), every grouped task fails at the pass threshold, yet rows carry rewards
    strictly between 0 and 1 (a length penalty on correct replies, half credit): their
    rewards differ from the zeros beside them, so a group-relative advantage learns there:
    the floor is the threshold's, not the rewards' (a firm OPSD where the pool splits at
    0.9). Elsewhere (``credit``), the failures that earned credit, counted as passes, route
    to another method: a saturated pool whose 0.99s fail at 1.0 reads as split tasks, a
    firm GRPO on the threshold's cut."""
    partial = pool.source.partial_rows
    state = band.measured.get("band") if band is not None else None
    if partial and state in ("floor", "saturated"):
        word = "fails" if state == "floor" else "passes"
        return [
            Finding(
                "credit_beside_the_band",
                partial,
                f"{_rows(partial)} of {pool.rows} have a reward strictly between 0 and 1, yet"
                f" every grouped task {word} at the pass threshold"
                f" {pool.source.pass_threshold:g}",
                f"their rewards differ from the others' in their groups: the {state} rests on"
                " the threshold, so the verdict is provisional; pass --pass-threshold T to say"
                " what passes",
            )
        ]
    if credit is None:
        return []
    return [
        Finding(
            "credit_beside_the_band",
            credit.rows,
            f"{_rows(credit.rows)} of {pool.rows} fail at the pass threshold"
            f" {pool.source.pass_threshold:g} with a reward strictly between 0 and 1; counted"
            f" as passes, the rows route to {credit.method}",
            "the verdict rests on where the threshold cuts the credit (a judge's probability,"
            " a penalty on a correct reply): it is provisional; pass --pass-threshold T to say"
            " what passes",
        )
    ]


def _threshold_above_rewards(pool: Pool) -> list[Finding]:
    """A pass threshold past the unit scale above every graded reward, the rewards differing
    (``--pass-threshold 1.5`` on a shard where no row earned the bonus, or ``1e308``): every
    row fails by the threshold alone, so the band it reads rests on it."""
    span = pool.source.reward_range
    threshold = pool.source.pass_threshold
    if span is None or threshold <= 1.0 + TOL:
        return []
    low, high = span
    if high - low <= TOL or threshold <= high + TOL:
        return []
    return [
        Finding(
            "threshold_above_rewards",
            pool.rows,
            f"--pass-threshold {threshold:g} lies above every reward (they run from {low:g} to"
            f" {high:g}): every row fails at it though the rewards differ",
            "the band is the threshold's, not the rewards': the verdict is provisional; pass"
            " the threshold a passing reply reaches",
        )
    ]


#: Rows read as kept by their grade once this share of the tasks (and 3 at least) hold
#: fewer draws than the most any task holds (:func:`_kept_by_grade`).
KEPT_SHARE, KEPT_MIN = 0.1, 3


def kept_by_grade(pool: Pool, lacking: int = 0, other: str = "the student's") -> str | None:
    """What shows a pool's rows kept by their grade, or None: every counted row of one grade,
    and either more tasks holding fewer draws than the most any task holds than the rows left
    out of every rate (harness errors, ungraded rows) could have shortened, one task each, or
    (every row passing) ``lacking`` tasks of another pool's (``other``, as the report names
    it), :data:`KEPT_MIN` or more, with no row at all (a teacher's rejection-sampled rows: the tasks none of its draws solved left
    out). A rejection-sampled set keeps the passes, a failure dump the fails, so every task
    reads at one end whatever its rate was. Read from the per-task counts and the facts'
    totals alone, so rows and their summary agree."""
    if pool.n_tasks == 0:
        return None
    tasks = pool.tasks.select("n", "passes")
    rows, passes = int(tasks["n"].sum()), int(tasks["passes"].sum())
    if passes not in (0, rows):
        return None
    facts = pool.source.facts
    most, least = tasks.select(pl.col("n").max(), pl.col("n").min().alias("least")).row(0)
    short = int((tasks["n"] < most).sum())
    shortened = short - (facts.errors + facts.left_ungraded) >= max(
        KEPT_MIN, KEPT_SHARE * pool.n_tasks
    )
    dropped = passes == rows and lacking >= KEPT_MIN
    if not (shortened or dropped):
        return None
    grade = "passes" if passes else "fails"
    why = []
    if shortened:
        why.append(
            f"the tasks hold different numbers of draws ({least} to {most}; {short} of"
            f" {pool.n_tasks} tasks fewer than {most}), more than the rows left out as errors"
            " could shorten"
        )
    if dropped:
        why.append(f"{lacking} of {other} tasks have no row")
    return f"every one of the {rows} counted rows {grade}, and {', and '.join(why)}"


def _kept_by_grade(pool: Pool, band: CheckResult | None) -> list[Finding]:
    """A floor or a saturated band whose rows look kept by their grade (:func:`kept_by_grade`):
    the band then reads every task at 1 (or at 0) whatever its rate was: a firm saturated
    verdict on a mixed pool whose fails were cut."""
    m = band.measured if band is not None else {}
    if m.get("band") not in ("floor", "saturated"):
        return []
    found = kept_by_grade(pool)
    if found is None:
        return []
    return [
        Finding(
            "kept_by_grade",
            int(pool.tasks["n"].sum()),
            found,
            "the rows look kept by their grade (a rejection-sampled set keeps the passes, a"
            " failure dump the fails): the dropped draws' tasks read at one end whatever"
            " their rate, so the verdict is provisional; route every draw, graded, before"
            " it was filtered",
        )
    ]


def _grade_disagrees(pool: Pool) -> list[Finding]:
    """A grade beside the reward read that disagrees with the pass on it on a tenth of the
    rows or more (:attr:`whilecli.io.facts.Facts.grade_disagrees`): two readings of which
    row passes, and the rows do not say which is the grade; provisional where the rows
    group draws (a band the grade draws). Where every task has one row the route rests on
    that alone, and only pass@1 on the grade: listed (``other_grade``), moving nothing."""
    said = pool.source.facts.grade_disagrees
    if said is None:
        return []
    column = said.split(" ", 1)[0]
    read = f"--map reward={column} reads the other, and --map reward=COLUMN with the reward"
    if pool.tasks.filter(pl.col("n") >= 2).height == 0:
        return [
            Finding(
                "other_grade",
                0,
                said,
                f"pass@1 rests on the reward read being the grade; one rollout per prompt routes"
                f" whichever grades: {read} you will train on settles it",
            )
        ]
    return [
        Finding(
            "grade_disagrees",
            0,
            said,
            "the verdict rests on the reward read being the grade, which the rows do not say:"
            f" it is provisional; {read} you will train on settles it",
        )
    ]


def _grade_beside(pool: Pool, band: CheckResult | None) -> list[Finding]:
    """A floor or saturated band read from a reward that holds one value on every graded
    row, beside a binary-looking column that holds both (:attr:`whilecli.io.facts.Facts.
    grade_beside`: ``reward`` 0 on every row, ``is_correct`` true on half): the reward may be
    a placeholder the grader never filled, and the band mixed."""
    m = band.measured if band is not None else {}
    beside = pool.source.facts.grade_beside
    if beside is None or m.get("band") not in ("floor", "saturated"):
        return []
    column = beside.split(" (", 1)[0]
    read = pool.source.sources.get("reward", "")
    keep = f", or --map reward={read} to say it is" if re.fullmatch(r"[\w.]+", read) else ""
    return [
        Finding(
            "grade_beside",
            pool.rows,
            f"every graded row's reward is one value, while {beside}, a grade-looking"
            " column beside it, holds both",
            f"if {column} is the grade, the band is not a {m['band']}: the verdict is"
            f" provisional; pass --map reward={column}{keep}",
        )
    ]


def _no_unanimous_groups(pool: Pool, band: CheckResult | None) -> list[Finding]:
    """No grouped task all passing or all failing, where the Beta prior fitted to the pool's
    own counts expects so many that seeing none is at most a :data:`SELECTED_CHANCE` chance:
    the rows were selected, the groups that split kept (a dynamic-sampling filter, as DAPO's
    and verl's dumps; prime-rl's effective traces, read by name as ``selected_rows``). The
    band then sees no floor or saturation and its rates lean to the middle (a firm GRPO whose
    plan lacks OPSD, on a pool 70% of whose tasks never pass)."""
    m = band.measured if band is not None else {}
    if m.get("band") != "mixed" or m.get("tasks_at_0") or m.get("tasks_at_1"):
        return []
    groups = pool.tasks.filter(pl.col("n") >= 2)
    expected, log_none = stats.unanimous_expected(groups)
    if log_none > math.log(SELECTED_CHANCE):
        return []
    return [
        Finding(
            "no_unanimous_groups",
            groups.height,
            f"none of {groups.height} grouped tasks is unanimous (all passing or all failing),"
            f" where the prior fitted to the pool expects about {expected:.0f} (seeing none:"
            f" a {math.exp(log_none):.0e} chance)",
            "the rows look selected (a dynamic-sampling filter keeps the groups that split):"
            " no floor or saturation can show and the rates lean to the middle, so the verdict"
            " is provisional; route the rollouts before the filter (every group drawn)",
        )
    ]


def _even_counts(pool: Pool, band: CheckResult | None) -> list[Finding]:
    """Pass counts more even than independent draws can make them (:func:`whilecli.route.
    stats.even_counts`: every task passing 4 of 8, where at most 28% of split tasks can,
    whatever their pass rates), at most an :data:`EVEN_CHANCE` chance: a grade built from
    the group (a rank within it, the top half passing; a balanced selection) splits every
    group by construction, so the split share measures how the grade was built (a firm
    GRPO on 300 of 300 split tasks)."""
    m = band.measured if band is not None else {}
    if m.get("band") != "mixed":
        return []
    found = stats.even_counts(pool.tasks)
    if found is None or found.log_chance > math.log(EVEN_CHANCE):
        return []
    window = (
        f"{found.low} of {found.n}"
        if found.low == found.high
        else f"{found.low} to {found.high} of {found.n}"
    )
    tasks = "split tasks" if found.among_split else "tasks"
    if found.among_split:
        why = (
            "the grade looks built from the group (a rank within it, the top half passing,"
            " or a balanced selection), which splits groups by construction"
        )
    else:
        planted = "a pass" if found.low <= 1 else "a fail"
        stop = (
            ", draws stopped at the first pass, or rows that are one episode's turns graded on"
            " its last"
            if found.low <= 1
            else ""
        )
        why = (
            f"each group looks to hold {planted} not drawn from the model (a reference or"
            f" demonstration row graded beside its draws), a grade built from the group"
            f" (the best of each group passing){stop}, which splits groups by construction"
        )
    chance = f"{math.exp(found.log_chance):.0e}"
    if found.fitted:
        said = (
            f"{found.held} of {found.split} {tasks} of {found.n} draws pass {window}, where the"
            f" mix of pass rates nearest these counts puts {found.most:.0%} of {tasks}; no mix"
            f" of independent draws at any rates makes counts this far from it (under a"
            f" {chance} chance)"
        )
    else:
        said = (
            f"{found.held} of {found.split} {tasks} of {found.n} draws pass {window},"
            f" where independent draws put at most {found.most:.0%} of {tasks} there,"
            f" whatever each task's pass rate (seeing so many: under a {chance} chance)"
        )
    return [
        Finding(
            "even_counts",
            found.held,
            said,
            f"{why}: the split share measures how the grade was made, not the model, so the"
            " verdict is provisional; route the model's own rollouts, graded one by one",
        )
    ]


def _mean_rewards(pool: Pool) -> list[Finding]:
    """One row per task whose partial rewards all lie on one grid of 1/k (0.125, 0.375, ...:
    :attr:`whilecli.io.facts.Facts.mean_of`): the rows look like per-task pass rates, the
    mean of k draws each, not rollouts. Read as one draw per prompt with partial credit they
    route to the single-rollout family, where k draws per task measure a band (600 tasks at
    c/8, 46% at 0 and 46% at 1, read as a firm FlashReinforce). A pass threshold given
    under 1 (``--pass-threshold 0.75``) says the reward is a score of parts (a rubric, unit
    tests passed) with its pass mark: the finding's own way out."""
    k = pool.source.facts.mean_of
    if k is None or pool.n_tasks == 0 or bool((pool.tasks["n"] > 1).any()):
        return []
    source = pool.source
    if source.threshold_explicit and source.pass_threshold < 1.0:  # a score's pass mark given
        return []
    partial = source.facts.partial
    return [
        Finding(
            "mean_rewards",
            partial,
            f"{_rows(partial)} of {pool.rows} have a reward strictly between 0 and 1, every"
            f" one a multiple of 1/{k}, one row per task: per-task means of {k} draws (pass"
            " rates), not rollouts",
            f"read as one rollout per prompt, the k = {k} draws behind each row are not seen:"
            " the verdict is provisional; write one row per draw with its own grade (or, where"
            f" the reward is a rubric of {k} parts, pass --pass-threshold)",
        )
    ]


def _split_across_writers(band: CheckResult | None) -> list[Finding]:
    """Grouped tasks whose passes and fails come from different writers (an older copy's
    rows all fail, the newer copy's all pass): they split as a pool, no group of one
    policy's draws does, so the band does not count them as split (firm GRPO on 200 such
    tasks of 200 before). Where they are as many as the tasks that split within one writer
    or more, the verdict rests on leaving them out and is provisional; fewer (an async run
    whose groups mix versions now and then, 49 beside 1723 split tasks) are listed only:
    counted as split they would add to a band the other tasks already decide."""
    m = band.measured if band is not None else {}
    across = int(m.get("split_across_writers", 0))
    if not across:
        return []
    what = (
        f"{across} grouped task{'s' if across != 1 else ''} split only across writers:"
        " each model or policy version's rows of the task all pass or all fail"
    )
    split = int(m.get("split_tasks", 0))
    if across < split:
        moves = (
            f"not counted as split tasks (a group compares one policy's draws); the"
            f" {split} tasks that split within one writer decide the band"
        )
        return [Finding("some_split_across_writers", across, what, moves)]
    moves = (
        "a group compares one policy's draws, so they are not counted as split tasks;"
        " the pooled rates mix policies, and the verdict is provisional (--by model or"
        " --by policy_version routes each apart)"
    )
    return [Finding("split_across_writers", across, what, moves)]


def _model_unsure(pool: Pool, on_policy: CheckResult | None, model_given: bool) -> list[Finding]:
    """Rows whose every model field may name another model than the writer's (a judge's
    ``config.model``, a dataset's ``generation_model``, verl's ``extra_info.model``, a role
    word: :func:`whilecli.io.aliases.unsure_model_alias`), where check 6 reads them as
    another model's: the verdict rests on what that field means, and is provisional."""
    field = pool.source.facts.model_unsure
    if field is None or not model_given or on_policy is None:
        return []
    if on_policy.status is not Status.FAIL or on_policy.decides != "off-policy":
        return []
    return [
        Finding(
            "model_unsure",
            pool.rows,
            f"the rows name a model only under {field}, which names a grader's, a"
            " dataset's or a tool's model, or a name a config gave it, as often as the"
            " writer's",
            "check 6 reads it as the writer: the verdict is provisional; pass --map"
            " model=COLUMN to say which field names the writer",
        )
    ]


def _model_tuned(on_policy: CheckResult | None) -> list[Finding]:
    """Rows check 6 reads as another model's whose every other name is ``--model``'s with
    words beside it (:func:`whilecli.io.modelid.tuned_from`: a training run's tags,
    ``/ckpt/Qwen3-8B-grpo/checkpoint-100``, or an alias's words, ``local-qwen3-8b``, beside
    ``--model Qwen/Qwen3-8B``): a model trained from it (another model's rows: SFT), a
    checkpoint of the run you train or the model served under an alias (its own rows), which
    the name cannot tell apart; the SFT verdict is provisional."""
    if on_policy is None or on_policy.status is not Status.FAIL:
        return []
    m = on_policy.measured
    tuned = m.get("tuned_models") or []
    if not tuned or on_policy.decides != "off-policy":
        return []
    rows = sum(int(m["models"].get(k, 0)) for k in tuned)
    return [
        Finding(
            "model_tuned",
            rows,
            f"{', '.join(tuned)}: the model you train with words beside its name (a training"
            " run's tags, an alias)",
            "a model trained from it writes another model's rows (SFT), a checkpoint of the"
            " run you train or the model served under an alias its own: the name cannot tell,"
            " so the verdict is provisional; pass --model with that name if you train from it",
        )
    ]


def _model_in_path(pool: Pool, on_policy: CheckResult | None, model: str | None) -> list[Finding]:
    """Rows that name no model in files whose path names another than ``--model``'s
    (:func:`whilecli.io.modelid.names_other_model`: ``gpt-4o-airline.json`` beside
    ``--model Qwen/Qwen3-8B``): check 6 is unknown, yet if the path is right another model
    wrote them and they are off-policy (SFT, not the method the band picks); provisional."""
    part = pool.source.facts.path_model
    if part is None or model is None or on_policy is None:
        return []
    if on_policy.status is not Status.UNKNOWN or on_policy.measured.get("rows_naming_a_model"):
        return []
    base = model.partition("@")[0]
    others = [w for w in writers_in(part) if names_other_model(writer_named(w), base)]
    if not others:
        return []
    part = "; ".join(others)
    return [
        Finding(
            "model_in_path",
            pool.rows,
            f"no model named in the rows, and a path or a settings file beside them names"
            f" another than {base}: {part}",
            "if that model wrote them, they are off-policy (SFT on them, or OPD from it):"
            " the verdict is provisional; pass --map model=COLUMN where the rows name it,"
            " or --model with the model that wrote them",
        )
    ]


def _unsure_build(on_policy: CheckResult | None) -> list[Finding]:
    """Rows that name a provider's or Ollama's build whose name leaves out whether it holds
    ``--model``'s weights (:func:`whilecli.route.identity.unsure_weights`: ``llama3.1:8b``,
    a chat build, beside ``--model meta-llama/Llama-3.1-8B``): check 6 is unknown, and if
    the build serves another model the rows are off-policy; provisional."""
    if on_policy is None or not on_policy.measured.get("unsure_builds"):
        return []
    builds = on_policy.measured["unsure_builds"]
    return [
        Finding(
            "unsure_build",
            int(on_policy.measured.get("unsure_build_rows", 0)),
            f"{_rows(int(on_policy.measured.get('unsure_build_rows', 0)))} naming"
            f" {', '.join(builds)}, {on_policy.measured.get('unsure_why')}",
            "if it holds another model's weights than --model's, the rows are off-policy (SFT"
            " on them, or OPD from it): the verdict is provisional; pass --model with the"
            " model that wrote them",
        )
    ]


#: A part of a task id that numbers a draw: a number of up to six digits, after a word for
#: a draw or none (``3``, ``s3``, ``sample_3``, ``rollout-2``, ``seed=1003``).
_DRAW = (
    r"(?:(?:s|sample|samp|rollout|roll|r|gen|g|n|k|draw|try|attempt|run|seed)[_\-]?)?"
    r"(?<index>[0-9]{1,6})"
)
#: The parts of an id a draw's number is looked for in, counted from its start and from its
#: end (``s3_t12`` and ``t12_s3`` alike).
SAMPLE_PARTS = 4
#: One-row tasks read as samples of fewer prompts only from this many stems, each of this
#: share of the tasks at least in stems of one size, of at most this many draws.
SAMPLE_STEMS, SAMPLE_SHARE, SAMPLE_MAX_K = 10, 0.8, 128


@dataclass(frozen=True)
class _Stems:
    """One-row task ids read as prompts × samples: ``covered`` ids in stems of ``k``, two of
    one stem's ids to show."""

    covered: int
    k: int
    first: str
    last: str
    spelled: bool = False  # the ids of a stem differ only in case or leading zeros


def _index_stems(ids: pl.Series) -> list[pl.DataFrame]:
    """Each reading of ``ids`` as a stem and a draw's number in one part (:data:`_DRAW`),
    the part counted from the id's start or its end: columns task_id, stem, index."""
    out = []
    frame = ids.to_frame("task_id")
    for j in range(SAMPLE_PARTS):
        for pattern in (
            rf"^(?<head>(?:{PART}+{SEP}+){{{j}}}){_DRAW}(?<tail>(?:{SEP}.*)?)$",
            rf"^(?<head>.*{SEP})?{_DRAW}(?<tail>(?:{SEP}+{PART}+){{{j}}})$",
        ):
            g = frame.with_columns(pl.col("task_id").str.extract_groups(pattern).alias("g"))
            g = g.unnest("g").filter(pl.col("index").is_not_null())
            out.append(
                g.select(
                    "task_id",
                    pl.concat_str(pl.col("head").fill_null(""), pl.lit("#"), "tail").alias("stem"),
                    pl.col("index").cast(pl.Int64),
                )
            )
    return out


def _stems_of(parts: pl.DataFrame, tasks: int, numbered: bool) -> _Stems | None:
    """The ids of ``parts`` (task_id, stem, index) read as prompts × samples: at least
    :data:`SAMPLE_STEMS` stems of k ≥ 2 ids (where ``numbered``, each stem's numbers a run
    of k from 0, from 1, or from the base most stems share: per-draw seeds ``42..49`` or
    ``1000..1007``), stems of one k holding :data:`SAMPLE_SHARE` of the ``tasks`` or more;
    None where not."""
    stems = parts.group_by("stem").agg(
        pl.len().alias("k"), pl.col("index").min().alias("lo"), pl.col("index").max().alias("hi")
    )
    stems = stems.filter((pl.col("k") >= 2) & (pl.col("k") <= SAMPLE_MAX_K))
    if numbered:
        stems = stems.filter(pl.col("hi") - pl.col("lo") + 1 == pl.col("k"))
        base = int(stems["lo"].mode().sort()[0]) if stems.height else 0
        stems = stems.filter(pl.col("lo").is_in([0, 1, base]))
    if stems.height < SAMPLE_STEMS:
        return None
    k = int(stems["k"].mode().sort()[-1])
    covered = int(stems.filter(pl.col("k") == k)["k"].sum())
    if covered < SAMPLE_SHARE * tasks:
        return None
    stem = stems.filter(pl.col("k") == k).sort("stem")["stem"][0]
    ids = parts.filter(pl.col("stem") == stem).sort("index", "task_id")["task_id"]
    return _Stems(covered, k, ids[0], ids[-1])


#: A run of zeros that leads a number in an id (``0001``, ``q007``): a spelling, not a task.
_LEADING_ZEROS = r"(^|[^0-9])0+([0-9])"


def _spelling(ids: pl.Expr) -> pl.Expr:
    """An id as it reads whatever its spelling: trimmed, in lower case, without the zeros
    that lead its numbers (``TASK0001``, ``task0001`` and ``task1`` are one)."""
    return ids.str.strip_chars().str.to_lowercase().str.replace_all(_LEADING_ZEROS, "${1}${2}")


def _sample_stems(ids: pl.Series) -> _Stems | None:
    """One-row task ids read as prompts × samples, the reading that covers most ids: a draw's
    number in one part (``t12_s3``, ``s3_t12``, ``gsm8k/12/sample_3``), a part each id holds
    alone (a uuid, a hash, a timestamp: :func:`whilecli.io.draw_parts.masked`), or one id
    spelled apart (:func:`_spelling`: ``TASK0001`` in one file or writer, ``task0001`` in
    another; ``0001`` beside ``1``)."""
    found = [_stems_of(parts, ids.len(), numbered=True) for parts in _index_stems(ids)]
    parts = ids.to_frame("task_id").with_columns(
        masked(pl.col("task_id")).alias("stem"),
        pl.lit(0).alias("index"),
    )
    if not parts["stem"].equals(ids, check_names=False):
        found.append(_stems_of(parts, ids.len(), numbered=False))
    spelled = ids.to_frame("task_id").with_columns(
        _spelling(pl.col("task_id")).alias("stem"), pl.lit(0).alias("index")
    )
    if not spelled["stem"].equals(ids, check_names=False):
        stems = _stems_of(spelled, ids.len(), numbered=False)
        found.append(None if stems is None else dataclasses.replace(stems, spelled=True))
    got = [s for s in found if s is not None]
    return max(got, key=lambda s: (s.covered, -s.k, s.spelled)) if got else None


def _ids_per_sample(pool: Pool) -> list[Finding]:
    """Every task one row, yet the ids read as prompts × samples (:func:`_sample_stems`): a
    draw's number in one part of each id, or a part of each id its own (a uuid), the rest
    held by k ≥ 2 ids each, at least :data:`SAMPLE_STEMS` stems. The rows are k draws per
    prompt keyed one id per draw (no prompt text to key them by), read as one rollout per
    prompt (a firm FlashReinforce on 2000 prompts at k = 8)."""
    tasks = pool.tasks
    if tasks.height < 2 * SAMPLE_STEMS or tasks.filter(pl.col("n") != 1).height:
        return []
    found = _sample_stems(tasks["task_id"].cast(pl.String))
    if found is None:
        return []
    k = found.k
    how = (
        "one id spelled apart (case, leading zeros)"
        if found.spelled
        else "an id per draw, no prompt text to key them by"
    )
    return [
        Finding(
            "ids_per_sample",
            found.covered,
            f"every task has one row, yet {found.covered} of {tasks.height} ids read as"
            f" {found.covered // k} prompts × {k} samples ({found.first} … {found.last}):"
            f" {how}",
            "the rows may be k draws per prompt read as one rollout per prompt: the verdict"
            " is provisional; key the rows by their prompt (--map task_id=COLUMN, or keep"
            " the prompt text)",
        )
    ]


def _coarse_ids(pool: Pool) -> list[Finding]:
    """Task ids a column parts into groups of draws, where the rows carry no prompt to check
    them against (:mod:`whilecli.io.subtasks`: ``question_idx`` beside ``task_id:
    "aime24"``): the ids may name a dataset or a category, each task a mix of questions that
    splits wherever they differ; k and the split share rest on the reading, provisional."""
    found = pool.source.facts.coarse_ids
    if found is None:
        return []
    column, ids, groups, rows = found
    return [
        Finding(
            "coarse_ids",
            rows,
            f"{column} parts the {ids} task id{'s' if ids != 1 else ''} into {groups} groups of"
            f" draws ({rows / groups:.1f} rows each), and the rows carry no prompt: each id may"
            f" be a dataset or a category, and {column} the task",
            "read by the ids, a task mixes several questions' draws and splits wherever they"
            f" differ: the verdict is provisional; pass --map task_id={column} where each of its"
            " values is a task (or give the prompt text, which keys them)",
        )
    ]


def _prompt_ids_masked(pool: Pool) -> list[Finding]:
    """Rows keyed by a prompt that differs on every row only in a part of its own (a
    request's uuid or hash, a timestamp: :func:`whilecli.io.plan._masked_repeats`), keyed
    without it: the prompt's draws, if that part is a request's, or one task each, if it is
    the task's (a commit to review), and k and every rate rest on which; provisional."""
    field = pool.source.facts.prompt_masked
    if field is None:
        return []
    return [
        Finding(
            "prompt_ids_masked",
            pool.rows,
            f"{field} differs on every row only in a part each row holds alone (a uuid, a"
            " hash, a timestamp): the tasks are keyed without it, as draws of one prompt",
            "if that part is the task's own (a commit, a document), each row is a task: k and"
            " the verdict rest on the reading, so it is provisional; pass --map"
            " task_id=COLUMN where the rows carry an id",
        )
    ]


def _prompt_reordered(pool: Pool) -> list[Finding]:
    """Rows keyed by a prompt whose words come in another order on most rows (a question's
    options shuffled per draw: :func:`whilecli.io.plan._reordered_repeats`), keyed by the
    words in sorted order: the prompt's draws, if the order is a draw's own, or one task
    each, if it is the task's (items to put in order); k and every rate rest on which."""
    field = pool.source.facts.prompt_reordered
    if field is None:
        return []
    return [
        Finding(
            "prompt_reordered",
            pool.rows,
            f"{field} differs on most rows while its words, in another order, repeat (options"
            " shuffled per draw): the tasks are keyed by the words in sorted order, as draws"
            " of one prompt",
            "if the order is the task's own (items to put in order), each row is a task: k"
            " and the verdict rest on the reading, so it is provisional; pass --map"
            " task_id=COLUMN where the rows carry an id",
        )
    ]


def _clipped(value: str, most: int = 40) -> str:
    """A data value as a finding quotes it: escaped as error lines are, cut at ``most``."""
    text = shown_path(value)
    return text if len(text) <= most else f"{text[: most - 1]}…"


def crossed_conditions(pool: Pool) -> list[tuple[str, str]]:
    """Each column whose values every task's draws were made under in the same parts and
    which pass at different rates within the same tasks
    (:func:`whilecli.route.factors.crossed`), as the report names it: the column, and what
    its rows show (its values' pass rates, the statistic and the tasks weighed)."""
    cells: dict[str, pl.DataFrame] = getattr(pool.source, "factor_cells", None) or {}
    out: list[tuple[str, str]] = []
    for column, table in cells.items():
        found = factors.crossed(column, table, len(cells))
        if found is None or not found.moves:
            continue
        shown = ", ".join(f"{_clipped(v)} {rate:.2f}" for v, _, rate in found.values[:4])
        more = f" and {len(found.values) - 4} more" if len(found.values) > 4 else ""
        out.append((_clipped(column), f"{shown}{more}; z = {found.z:.1f} over {found.tasks} tasks"))
    return out


def _crossed_factor(pool: Pool) -> list[Finding]:
    """A column whose values each task's draws were made under, passing at different rates
    within the same tasks (:func:`crossed_conditions`): a task splits where its conditions
    pass apart, so k, the split share and every rate describe a mixture."""
    return [
        Finding(
            "crossed_factor",
            pool.n_tasks,
            f"each task's rows come in the same parts under {column}, whose values pass at"
            f" different rates within the same tasks ({shown}): draws made under different"
            " conditions (a model, a checkpoint, a sampling setting) are read as one task's"
            " group",
            "a task splits where its conditions pass apart, so k, the split share and the"
            " verdict describe the mixture, not one policy's draws: the verdict is"
            f" provisional; route each apart (--by {column})",
        )
        for column, shown in crossed_conditions(pool)
    ]


def _mapped_prompts(pool: Pool) -> list[Finding]:
    """Task ids that carry several prompts, kept as ``--map task_id=`` keys them: the draws
    of one task whose prompt varies per draw (shuffled options), or different tasks under
    one id (two datasets' ids). k and every rate rest on which, and the rows cannot say:
    provisional."""
    said = pool.source.facts.mapped_prompts
    if said is None:
        return []
    return [
        Finding(
            "mapped_prompts",
            pool.rows,
            said,
            "kept as --map task_id says, as draws of one task each: if an id holds"
            " different tasks, k and every rate are wrong, so the verdict is provisional",
        )
    ]


def _greedy_band(
    pool: Pool, band: CheckResult | None, on_policy: CheckResult | None
) -> list[Finding]:
    """Grouped rows that keep a reply and record greedy decoding, nearly all of them
    (:attr:`whilecli.io.facts.Facts.greedy_sampled`: ``temperature: 0``): their k draws
    differ by a server's nondeterminism, not by sampling, so the band is greedy decoding's.
    A task that fails every greedy draw may pass at a training sampler's temperature (a
    floor read as OPSD), and one that splits here splits more there; where check 3 measures
    the band the verdict rests on, it is provisional. Another model's rows (SFT) do not rest
    on it."""
    field = pool.source.facts.greedy_sampled
    m = band.measured if band is not None else {}
    if field is None or not m.get("grouped_tasks") or m.get("repeated_tasks"):
        return []
    if on_policy is not None and on_policy.decides == "off-policy":
        return []
    return [
        Finding(
            "greedy_band",
            int(m.get("grouped_tasks", 0)),
            f"{field} records greedy decoding on nearly every row: the draws differ by the"
            " server's nondeterminism, not by sampling, so the band is greedy decoding's",
            "a training sampler (temperature 1) splits tasks greedy decoding does not, and a"
            " task that fails every greedy draw may pass there: the verdict is provisional;"
            " sample the k draws at the temperature you will train with",
        )
    ]


def _prompt_end_guessed(pool: Pool) -> list[Finding]:
    """Rollouts keyed by a conversation whose messages carry no roles and no chat template's
    generation prompt (NeMo-RL's ``content``): where the prompt ends, so what a task is, was
    guessed from the prefix the rows share (:func:`whilecli.io.formats.nemo_rl.prompt_texts`),
    and k and every rate rest on that guess; provisional."""
    field = pool.source.facts.prompt_unsure
    if field is None:
        return []
    return [
        Finding(
            "prompt_end_guessed",
            pool.rows,
            f"no entry of {field} ends in a chat template's generation prompt or begins with"
            " the assistant's header: where the prompt ends was guessed from the entries the"
            " rows share",
            "the tasks, and k, rest on that guess: the verdict is provisional; pass --map"
            " task_id=COLUMN where the rows carry the prompt or an id",
        )
    ]


def _singles_beside_the_band(pool: Pool, band: CheckResult | None) -> list[Finding]:
    """Tasks of one row, which the band leaves out, that contradict a floor (some pass) or a
    saturated band (some fail): the band is the grouped tasks', not the pool's (a pool of
    2000 one-row tasks passing at 0.5 beside 700 re-drawn tasks that all fail read as a
    firm floor)."""
    state = band.measured.get("band") if band is not None else None
    if state not in ("floor", "saturated"):
        return []
    singles = pool.tasks.filter(pl.col("n") == 1)
    if singles.height == 0:
        return []
    passes = int(singles["passes"].sum())
    against = passes if state == "floor" else singles.height - passes
    if against == 0:
        return []
    word = "pass" if state == "floor" else "fail"
    return [
        Finding(
            "singles_beside_the_band",
            against,
            f"{against} of {singles.height} tasks of one row {word}; the band is {state}"
            " over the grouped tasks only",
            f"the {state} is the grouped tasks', not the pool's: the verdict is provisional;"
            " draw the one-row tasks again (k ≥ 2) to measure them",
        )
    ]


@dataclass(frozen=True)
class Counted:
    """What the rows left out of every rate route to when counted: as failures (``passes``
    False: harness errors and ungraded rows), or the ungraded rows as passes; ``rows``
    counted, the ``route`` and the ``method`` (its label) they give, firmly."""

    passes: bool
    rows: int
    route: str
    method: str


def _left_out_decides(pool: Pool, counted: Sequence[Counted]) -> list[Finding]:
    """Rows left out of every rate (harness errors; ungraded rows, unless ``--missing
    fail``) that, counted, route firmly to another method (:func:`whilecli.route.decide.
    _counted_otherwise`): the verdict rests on leaving them out. One rule for every band: 80%
    of the rows ungraded, each where a failure would be, read as every task passing; 700
    tasks at 0.97 whose failures were written as ``ContextWindowExceededError``; a floor
    whose ungraded rows would split it."""
    if not counted:
        return []
    facts = pool.source.facts
    ungraded = facts.left_ungraded
    parts = [f"{ungraded} ungraded"] if ungraded else []
    errors = facts.errors - facts.request_errors  # a failed request is never the model's
    if errors:
        parts.append(f"{errors} harness error{'s' if errors != 1 else ''}")
    left = ungraded + errors
    ways = []
    for c in counted:
        if c.passes:
            how = "the ungraded ones counted as passes"
        elif errors and ungraded:
            how = "counted as failures (--missing fail fails the ungraded ones)"
        elif ungraded:
            how = "counted as failures (--missing fail)"
        else:
            how = "counted as failures"
        ways.append(f"{how}, they route firmly to {c.method}")
    return [
        Finding(
            "left_out_decides",
            left,
            f"{left} of {facts.rows} rows are left out of every rate ({', '.join(parts)});"
            f" {'; '.join(ways)}",
            "the verdict rests on leaving them out: it is provisional; grade the ungraded rows"
            " (or pass --missing fail where no grade means a failure) and rerun the errored"
            " ones, or read whether they are the model's failures (a context overflow, a"
            " timeout)",
        )
    ]


def _empty_decides(pool: Pool, emptied: Counted | None) -> list[Finding]:
    """Empty replies that fail, counted as the model's, where the rows without them route
    to another method (:func:`whilecli.route.decide._emptied_otherwise`): a harness
    that timed out, a provider's content filter or a reasoning model whose answer never came
    writes an empty reply as often as a model stops at once, and scored 0 beside passing
    draws each makes a split task. The verdict rests on reading them as the model's."""
    if emptied is None:
        return []
    return [
        Finding(
            "empty_decides",
            emptied.rows,
            f"{emptied.rows} of {pool.rows} counted replies are empty and fail; without them"
            f" (a harness that dropped them) the rows route to {emptied.method}",
            "the verdict rests on reading an empty reply as the model's failure: it is"
            " provisional; read why they are empty (a timeout, a filter, an answer after the"
            " reasoning that never came) and rerun them, or keep them where the model stopped"
            " at once",
        )
    ]


def _coverage(pool: Pool) -> list[Finding]:
    """A field on some counted rows only."""
    out: list[Finding] = []
    known = int(pool.tasks["truncated_known"].sum()) if pool.n_tasks else 0
    if 0 < known < pool.rows:
        out.append(
            Finding(
                "coverage",
                pool.rows - known,
                f"truncation is recorded on {known} of {pool.rows} rows",
                "check 1 is unknown on the rest: a cut-off reply there could pass unseen",
            )
        )
    named = sum(c for m, c in pool.models.items() if m is not None)
    if 0 < named < pool.rows:
        out.append(
            Finding(
                "coverage",
                pool.rows - named,
                f"the model is named on {named} of {pool.rows} rows",
                "check 6 judges the rows that name one; the rest are unchecked",
            )
        )
    for name, moves in (
        (
            "values",
            "SAO and BPCO need critic values on every row, one per token (a row whose"
            " per-token lists differ in length carries none): not ok for these rows",
        ),
        ("logprobs", "staleness can be corrected only on the rows that carry them"),
    ):
        have = coverage(pool, name)
        if have is not None and 0 < have < pool.rows:
            what = "critic values" if name == "values" else "sampler log-probs"
            out.append(
                Finding(
                    "coverage", pool.rows - have, f"{what} on {have} of {pool.rows} rows", moves
                )
            )
    return out


def _under(measured: Mapping[str, Any], student_top: float, teacher_top: float) -> str:
    """Where the teacher never reaches the pass threshold the student reaches, so says."""
    threshold = measured.get("pass_threshold")
    if not isinstance(threshold, (int, float)):
        return ""
    if teacher_top < threshold <= student_top:
        return f" (the teacher's never reach the pass threshold {threshold:g})"
    return ""


def _teacher(check: CheckResult | None, min_coverage: float) -> list[Finding]:
    if check is None:
        return []
    m = check.measured
    out: list[Finding] = []
    if m.get("cannot_compare") and check.reached:  # a route decided before it: moves nothing
        out.append(
            Finding(
                "teacher_unpaired",
                int(m.get("shared_tasks", 0) or 0),
                "the teacher shares no task with the student, so check 4 compares nothing"
                f" ({m.get('unpaired_hint')})",
                "check 4 is unknown and OPD is not chosen: the verdict is provisional until"
                " the teacher's rows key the student's tasks",
            )
        )
    if m.get("teacher_doubts") and check.reached:
        out.append(
            Finding(
                "teacher_doubts",
                int(m.get("shared_tasks", 0) or 0),
                f"the teacher's rows: {'; '.join(m['teacher_doubts'])}",
                "check 4 measures the teacher by that pass@1: the verdict is provisional until"
                " the teacher's rows are graded as the student's are",
            )
        )
    if m.get("teacher_grader") and check.reached:
        out.append(
            Finding(
                "teacher_grader",
                int(m.get("shared_tasks", 0) or 0),
                f"a {m['teacher_grader']} graded the teacher's rows, a {m['student_grader']}"
                " the student's",
                "check 4 compares two graders' pass rates, not two models': the verdict is"
                " provisional until one grader scores both sides' rows",
            )
        )
    if m.get("teacher_token_cap") and check.reached:
        out.append(
            Finding(
                "teacher_budget",
                int(m.get("shared_tasks", 0) or 0),
                f"the teacher's replies were sampled under a token cap of"
                f" {m['teacher_token_cap']:g}, the student's under {m['student_token_cap']:g}",
                "a teacher that wins only with replies longer than the student's cap is cut"
                " off inside the OPD run: the verdict is provisional; score the teacher at the"
                " student's max_tokens",
            )
        )
    if m.get("teacher_is_student"):
        out.append(
            Finding(
                "teacher_is_student",
                int(m.get("shared_tasks", 0) or 0),
                f"the teacher's rows name {m.get('student_model')}, the model you train",
                "check 4 fails: that is the student, not a teacher",
            )
        )
    elif m.get("teacher_unsure_builds"):
        builds, rows = m["teacher_unsure_builds"], int(m.get("teacher_unsure_rows", 0) or 0)
        out.append(
            Finding(
                "teacher_may_be_student",
                rows,
                f"{_rows(rows)} of the teacher's name {', '.join(builds)},"
                f" {m.get('teacher_unsure_why')}: whether it holds the weights of"
                f" {m.get('student_model')}, the model you train, is unknown",
                "if it does, the teacher is the student and check 4 fails: the verdict is"
                " provisional; give teacher rows that name the teacher's own model",
            )
        )
    if m.get("teacher_student_rows") and not m.get("teacher_is_student"):
        own, named = int(m["teacher_student_rows"]), int(m.get("teacher_named_rows", 0) or 0)
        out.append(
            Finding(
                "teacher_mixes_student",
                own,
                f"{_rows(own)} of the teacher's {named} name {m.get('student_model')}, the"
                " model you train",
                "check 4 measures the teacher with them, so the verdict is provisional; leave"
                " the student's rows out of the teacher's",
            )
        )
    scales = m.get("reward_scales")
    if isinstance(scales, dict):
        (s_lo, s_hi), (t_lo, t_hi) = scales["student"], scales["teacher"]
        out.append(
            Finding(
                "teacher_scale",
                int(m.get("shared_tasks", 0) or 0),
                f"the teacher's rewards run from {t_lo:g} to {t_hi:g}, the student's from"
                f" {s_lo:g} to {s_hi:g}" + _under(m, s_hi, t_hi),
                "one pass threshold may not grade both: the verdict is provisional until"
                " both are scored on one scale",
            )
        )
    other = int(m.get("other_prompt_tasks", 0) or 0)
    if other:
        found = (
            f"{other} task id{'s' if other != 1 else ''} the teacher shares "
            f"carr{'y' if other != 1 else 'ies'} other prompts"
        )
        if _prompts_decide(m, other, min_coverage):
            out.append(
                Finding(
                    "teacher_prompts_decide",
                    other,
                    found + " (a system prompt or a chat template apart, or other questions)",
                    "without them the teacher covers too little, with them enough: the verdict"
                    " is provisional until both are written with one prompt",
                )
            )
        else:
            moves = "those are not the same tasks: left out of the teacher's coverage"
            out.append(Finding("teacher_prompts", other, found, moves))
    return out


def _prompts_decide(measured: Mapping[str, Any], other: int, min_coverage: float) -> bool:
    """Whether the shared ids whose prompts differ decide check 4's coverage: the teacher
    covers under ``min_coverage`` of the student's tasks without them and at least that with
    them. Whether two prompts are one question in two wrappings is not read from the rows,
    so such a teacher's failure is not firm."""
    coverage = measured.get("coverage")
    if not isinstance(coverage, Rate) or not coverage.n_tasks:
        return False
    covered, n = int(measured.get("shared_tasks", 0) or 0), coverage.n_tasks
    short = covered < min_coverage * n - TOL
    return short and covered + other >= min_coverage * n - TOL


def forces_provisional(found: list[Finding]) -> list[str]:
    """The findings that leave the verdict provisional, one phrase each."""
    return [f"{f.found} ({f.moves.split(':')[0]})" for f in found if f.kind in PROVISIONAL_KINDS]
