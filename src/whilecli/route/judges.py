"""Which rows a judge graded, and whether an audit of that judge clears it.

A row is *judge-graded* (the reference SDK's rule, ``spec/reference-sdk.md`` (a), v2):

- its ``judge_meta.scorer_kind`` is ``"judge"`` or ``"reward_model"``; or
- it has no ``judge_meta.scorer_kind`` (absent or null) and a truthy top-level
  ``judge_name`` (present, not null, not empty, not ``false`` and not ``0``).

``scorer_kind: "rule"`` (or any other kind) is not a judge. Only these two columns are read,
with polars (Parquet by its schema, JSONL under a narrow schema; a JSONL file polars cannot
read that way is walked line by line).

The audit verdict follows the reference: an explicit ``ok`` wins; otherwise it needs numeric
``agreement`` and ``kappa`` and an integer ``n`` > 0, and is ok when the Wilson lower bound
(z = 1.96) of ``round(agreement·n)`` agreements in ``n`` (Python's round, half to even) is at
least 0.8 and ``kappa`` at least 0.6 (Cohen's kappa). 0.86 with n = 60 fails (lower bound
0.75); 0.86 with n = 200 passes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TypeGuard

import polars as pl

from whilecli.errors import UsageError
from whilecli.io.sources import Source, expand_paths, iter_lines, lines_frame, parse_line

#: Scorer kinds that are judges.
JUDGE_KINDS = ("judge", "reward_model")
#: Smallest Wilson lower bound of the judge's agreement with people.
MIN_AGREEMENT = 0.8
#: Smallest Cohen's kappa of the judge against people.
MIN_KAPPA = 0.6
_FALSY = ("", "false", "0", "0.0")
_SCHEMA: dict[str, pl.DataType] = {
    "judge_meta": pl.Struct({"scorer_kind": pl.String()}),
    "judge_name": pl.String(),
}


@dataclass(frozen=True)
class JudgeScan:
    """Rows read and rows graded by a judge, by the field that told."""

    rows: int
    judged: int
    by_kind: dict[str, int]  # "judge" | "reward_model" | "judge_name" -> rows

    def describe(self) -> str:
        parts = [
            f"judge_meta.scorer_kind={k}: {n}" if k != "judge_name" else f"judge_name: {n}"
            for k, n in self.by_kind.items()
            if n
        ]
        return ", ".join(parts) or "none"

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "judged": self.judged, "by_kind": dict(self.by_kind)}


def _kind_expr(has_kind: bool, has_name: bool) -> pl.Expr:
    """Per row: the judge kind that makes it judge-graded, else null."""
    kind = pl.col("judge_meta").struct.field("scorer_kind") if has_kind else pl.lit(None)
    kind = kind.cast(pl.String)
    name = pl.col("judge_name").cast(pl.String) if has_name else pl.lit(None, pl.String)
    named = name.is_not_null() & ~name.str.strip_chars().str.to_lowercase().is_in(_FALSY)
    return (
        pl.when(kind.is_in(JUDGE_KINDS))
        .then(kind)
        .when(kind.is_null() & named)
        .then(pl.lit("judge_name"))
        .otherwise(pl.lit(None, pl.String))
    )


def _count(frame: pl.LazyFrame, has_kind: bool, has_name: bool) -> tuple[int, dict[str, int]]:
    got = (
        frame.select(_kind_expr(has_kind, has_name).alias("k"))
        .group_by("k")
        .agg(pl.len().alias("n"))
        .collect()
    )
    counts = {k: int(n) for k, n in got.iter_rows()}
    return sum(counts.values()), {k: v for k, v in counts.items() if k is not None}


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in _FALSY
    return bool(value)


def _row_kind(row: dict[str, Any]) -> str | None:
    meta = row.get("judge_meta")
    kind = meta.get("scorer_kind") if isinstance(meta, dict) else None
    if kind is not None:
        return str(kind) if str(kind) in JUDGE_KINDS else None
    return "judge_name" if _truthy(row.get("judge_name")) else None


def _scan_jsonl(source: Source) -> tuple[int, dict[str, int]]:
    try:  # most files name no judge: one literal search over the raw lines settles it
        found = (
            lines_frame(source)
            .select(
                n=(pl.col("line").str.strip_chars() != "").sum(),
                judged=pl.col("line").str.contains(r'"judge_(meta|name)"\s*:').any(),
            )
            .collect()
        )
        if not found["judged"][0]:
            return int(found["n"][0]), {}
    except (pl.exceptions.PolarsError, OSError, ValueError):
        pass
    try:
        lf = pl.scan_ndjson(source.polars_source(), schema=_SCHEMA)
        return _count(lf, True, True)
    except (pl.exceptions.PolarsError, OSError, ValueError):
        rows, kinds = 0, dict[str, int]()
        for lineno, line in iter_lines(source):
            rows += 1
            kind = _row_kind(parse_line(source, lineno, line))
            if kind is not None:
                kinds[kind] = kinds.get(kind, 0) + 1
        return rows, kinds


def _scan_parquet(source: Source) -> tuple[int, dict[str, int]]:
    lf = pl.scan_parquet(source.polars_source())
    schema = lf.collect_schema()
    meta = schema.get("judge_meta")
    has_kind = isinstance(meta, pl.Struct) and any(f.name == "scorer_kind" for f in meta.fields)
    has_name = "judge_name" in schema
    return _count(lf, has_kind, has_name)


def scan_judges(paths: Sequence[str], stdin: BinaryIO | None = None) -> JudgeScan:
    """Count the judge-graded rows of the inputs (the same paths ``while route`` reads)."""
    rows = 0
    by_kind = {k: 0 for k in (*JUDGE_KINDS, "judge_name")}
    for source in expand_paths(paths, stdin):
        n, kinds = _scan_parquet(source) if source.kind == "parquet" else _scan_jsonl(source)
        rows += n
        for k, v in kinds.items():
            by_kind[k] = by_kind.get(k, 0) + v
    return JudgeScan(rows, sum(by_kind.values()), by_kind)


@dataclass(frozen=True)
class Audit:
    """A judge audit and its verdict: ``ok`` True (clears), False (fails) or None (no verdict)."""

    ok: bool | None
    why: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "why": self.why, "from": self.source}


def _finite_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def audit_verdict(data: dict[str, Any], source: str = "given") -> Audit:
    """The verdict of an audit ``{ok}`` or ``{agreement, kappa, n}`` (reference SDK rule)."""
    from whilecli.route.stats import wilson

    if "ok" in data:
        ok = data["ok"]
        if not isinstance(ok, bool):
            raise UsageError(f"{source}: ok must be true or false, got {ok!r}")
        return Audit(ok, f"the audit says ok = {str(ok).lower()}", source)
    agreement, kappa, n = data.get("agreement"), data.get("kappa"), data.get("n")
    if not (_finite_number(agreement) and _finite_number(kappa)):
        raise UsageError(f"{source}: an audit needs ok, or numeric agreement and kappa with n")
    if not (isinstance(n, int) and not isinstance(n, bool) and n > 0):
        return Audit(None, f"agreement {agreement} without a count n: no verdict", source)
    if not 0 <= agreement <= 1:
        raise UsageError(f"{source}: agreement must lie in [0, 1], got {agreement}")
    low = wilson(round(agreement * n), n).low
    assert low is not None
    ok = low >= MIN_AGREEMENT and kappa >= MIN_KAPPA
    why = (
        f"agreement {agreement} over n={n} has Wilson lower bound {low:.3f} "
        f"(want >= {MIN_AGREEMENT}), kappa {kappa} (want >= {MIN_KAPPA})"
    )
    return Audit(ok, why, source)


def load_audit(path: str | Path) -> Audit:
    """Read an audit file (JSON, or TOML by its ``.toml`` suffix) and give its verdict."""
    p = Path(path)
    try:
        text = p.read_bytes()
    except OSError as err:
        raise UsageError(f"--judge-audit {p}: cannot read: {err.strerror}") from None
    try:
        if p.suffix.lower() == ".toml":
            import tomllib

            data = tomllib.loads(text.decode("utf-8"))
        else:
            data = json.loads(text)
    except (ValueError, ImportError) as err:
        raise UsageError(f"--judge-audit {p}: cannot parse: {err}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--judge-audit {p}: expected an object with ok or agreement/kappa/n")
    return audit_verdict(data, str(p))
