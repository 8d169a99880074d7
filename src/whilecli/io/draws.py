"""What a row that sums up n draws of one task means, decided in one place (DESIGN section 1:
a row is a rollout; a row that holds several is read as them).

A per-document metric that is the *mean* correctness of n sampled replies (lighteval's
``math_pass@1:4_samples`` = ``PassAtK(k=1, n=4)``, ``pass@k:k=1&n=4``, ``avg@n:n=4``,
``codegen_pass@1:16``; lm-eval's ``pass@1`` over ``repeats``) is a pass count of n draws,
never a 0/1 grade of one: such a row reads as n rollouts, round(metric × n) of them passes
(:func:`passes_of`, :func:`passes_expr`; the writer does not say which reply passed). A
metric over several samples that is not their mean (``pass@10:64_samples``, ``maj@4``,
``pass@k:k=4&n=8``) is an aggregate: no rollout's grade (:func:`aggregate`). lighteval
names its metrics so (``huggingface/lighteval``, ``src/lighteval/metrics/metrics.py``;
its ``extract_num_samples`` reads ``pass@1:32_samples`` as 32 and ``codegen_pass@1:16``
as 16).
"""

from __future__ import annotations

import re

import polars as pl

#: How far ``metric × n`` may lie from a whole number and still be a count of passes (a mean
#: of 4 written as 0.7500000000000001), relative to n.
COUNT_TOLERANCE = 1e-6

#: ``pass@1:4_samples``, ``math_pass@1:4_samples``, ``codegen_pass@1:16``: k = 1 of n.
_PASS1_OF_N = re.compile(r"(?:^|[_\W])pass@1:(\d+)(?:_samples)?$")
#: ``pass@k:k=1&n=4``, ``gpqa_pass@k:k=1``: the newer names, k and n as parameters.
_PASS_K_PARAMS = re.compile(r"(?:^|[_\W])pass@k:k=(\d+)(?:&n=(\d+))?")
#: ``avg@n:n=4``, ``avg@n``: the mean score of n samples.
_AVG_AT_N = re.compile(r"(?:^|[_\W])avg@n(?::n=(\d+))?")
#: ``pass@1`` alone (lm-eval's per-doc pass@1 over ``repeats``): k = 1, n not in the name.
_PASS1 = re.compile(r"(?:^|[_\W])pass@1$")
#: A metric over k > 1 samples (``pass@10:64_samples``, ``maj@4``, ``pass@k:k=4&n=8``).
_OVER_K = re.compile(r"@(\d+)\b|@k:k=(\d+)")


def sample_mean(name: str) -> tuple[bool, int | None]:
    """Whether metric ``name`` is the mean correctness of n samples, and n where the name
    says it (``math_pass@1:4_samples``: (True, 4); ``pass@k:k=1``: (True, None);
    ``extractive_match``, ``pass@10:64_samples``: (False, None))."""
    if (found := _PASS1_OF_N.search(name)) is not None:
        return True, int(found.group(1))
    if (found := _PASS_K_PARAMS.search(name)) is not None:
        if int(found.group(1)) != 1:
            return False, None
        return True, int(found.group(2)) if found.group(2) else None
    if (found := _AVG_AT_N.search(name)) is not None:
        return True, int(found.group(1)) if found.group(1) else None
    return _PASS1.search(name) is not None, None


def n_unsaid(name: str) -> bool:
    """Whether metric ``name`` is a mean over n samples by its own parameters yet leaves n out
    (``pass@k:k=1``, ``avg@n``): a 0/1 value of it may be one draw of several."""
    mean, n = sample_mean(name)
    return mean and n is None and _PASS1.search(name) is None


def aggregate(name: str) -> bool:
    """Whether metric ``name`` sums up k > 1 samples other than by their mean (pass@k of k >
    1, maj@k): a score of the document, no rollout's grade."""
    if sample_mean(name)[0]:
        return False
    return any(int(g) > 1 for found in _OVER_K.finditer(name) for g in found.groups() if g)


def passes_of(fraction: float, n: int) -> int | None:
    """The passes a mean of ``n`` 0/1 grades counts: round(fraction × n), or None where
    fraction × n is no whole number from 0 to n (the row is not n draws)."""
    passes = fraction * n
    if abs(passes - round(passes)) > COUNT_TOLERANCE * n or not 0 <= passes <= n:
        return None
    return round(passes)


def passes_expr(fraction: pl.Expr, n: pl.Expr) -> pl.Expr:
    """:func:`passes_of` over a column: round(fraction × n) as an integer, null where it is no
    whole number from 0 to n (or n is not at least 1)."""
    scaled = fraction.cast(pl.Float64) * n.cast(pl.Float64)
    whole = (scaled - scaled.round()).abs() <= pl.lit(COUNT_TOLERANCE) * n.cast(pl.Float64)
    fits = whole & (scaled >= 0) & (scaled <= n.cast(pl.Float64)) & (n >= 1)
    return pl.when(fits).then(scaled.round().cast(pl.Int64))


def as_draws(passes: pl.Expr, n: pl.Expr) -> pl.Expr:
    """``passes`` of ``n`` draws as a list of n grades, the passes first (1.0, then 0.0):
    one rollout per element once exploded; null where the count is none or outside 0..n."""
    sensible = (passes >= 0) & (passes <= n)
    return pl.when(sensible).then(
        pl.concat_list([pl.lit(1.0).repeat_by(passes), pl.lit(0.0).repeat_by(n - passes)])
    )
