"""Row facts written many ways read as one (DESIGN section 1; section 2, checks 1 and 6).

Generated pools, routed through the CLI in process:

- truncation: every alias a harness writes (``truncated``, ``is_truncated``, ``finish_reason``,
  ``stop_reason``), mixed row by row in one pool, a flag beside a null one, reasons in any
  case and with blanks around them: first match wins row by row, and one cut-off pass fails
  check 1 (``fix-reward``), in JSON Lines and in Parquet;
- model names: a blank or placeholder name (``""``, ``None``, ``N/A``, ``@4``) names no model,
  so rows of the trained model with a few such names stay on-policy;
- versions: ``5``, ``5.0``, ``"5"`` and ``" 5 "`` are one version and NaN none, in any mix;
  the version columns trainers write (``weight_version``, ``global_step``, ...) are read, row
  by row beside ``policy_version``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.read import read_rows

M = "Qwen/Qwen3-0.6B"
TASKS, K = 36, 4
SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _pool() -> list[dict[str, Any]]:
    """A pool GRPO would take: every task split (two passes of four), the trained model."""
    return [
        {
            "task_id": f"t{t:02d}",
            "prompt": f"question {t}",
            "completion": f"answer {t}.{j}",
            "reward": 1.0 if j < 2 else 0.0,
            "model": M,
        }
        for t in range(TASKS)
        for j in range(K)
    ]


def _write(folder: Path, rows: list[dict[str, Any]], fmt: str) -> Path:
    if fmt == "parquet":
        path = folder / "rows.parquet"
        pl.DataFrame(rows, infer_schema_length=None).write_parquet(path)
    else:
        path = folder / "rows.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _route(path: Path, *extra: str) -> dict[str, Any]:
    done = CliRunner().invoke(app, ["route", str(path), "--model", M, "--format", "json", *extra])
    assert done.exit_code in (0, 1), done.output
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["exit_code"] == done.exit_code
    return report


def _check(report: dict[str, Any], key: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in report["checks"] if c["key"] == key)
    return found


# --- truncation -----------------------------------------------------------------------------

#: Ways of writing a reason word: as it is, in other case, with blanks around it.
SPELLINGS = (
    lambda w: w,
    str.upper,
    str.title,
    lambda w: w + " ",
    lambda w: " " + w,
    lambda w: w + "\n",
    lambda w: "\t" + w.upper() + "\r\n",
)

#: Per encoding: (fields of a cut-off row, fields of a finished row), each given a spelling.
#: In JSON Lines a column may mix kinds row by row; in Parquet each alias is one type.
ENCODINGS = {
    "truncated": (lambda s: {"truncated": True}, lambda s: {"truncated": False}),
    "truncated_text": (lambda s: {"truncated": s("true")}, lambda s: {"truncated": s("no")}),
    "is_truncated": (lambda s: {"is_truncated": 1}, lambda s: {"is_truncated": 0}),
    "finish_reason": (
        lambda s: {"finish_reason": s("length")},
        lambda s: {"finish_reason": s("stop")},
    ),
    "stop_reason": (
        lambda s: {"stop_reason": s("max_tokens")},
        lambda s: {"stop_reason": s("end_turn")},
    ),
    "null_flag_then_reason": (
        lambda s: {"truncated": None, "finish_reason": s("length")},
        lambda s: {"truncated": None, "finish_reason": s("stop")},
    ),
}
TYPED = ("truncated", "is_truncated", "finish_reason", "stop_reason", "null_flag_then_reason")


@st.composite
def cut_pools(draw: st.DrawFn, fmt: str) -> tuple[list[dict[str, Any]], int]:
    """A pool whose rows record truncation under aliases drawn row by row, one passing row
    cut off (its encoding drawn too); the number of cut-off passes."""
    names = sorted(ENCODINGS) if fmt == "jsonl" else list(TYPED)
    encoding = st.sampled_from(names)
    spelling = st.sampled_from(SPELLINGS)
    rows = _pool()
    cut = draw(st.sampled_from([i for i, r in enumerate(rows) if r["reward"] == 1.0]))
    for i, row in enumerate(rows):
        cut_off, finished = ENCODINGS[draw(encoding)]
        row.update((cut_off if i == cut else finished)(draw(spelling)))
    return rows, 1


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_truncation_is_read_row_by_row_across_aliases(tmp_path_factory: Any, fmt: str) -> None:
    @SETTINGS
    @given(cut_pools(fmt))
    def one(pool: tuple[list[dict[str, Any]], int]) -> None:
        rows, passes = pool
        report = _route(_write(tmp_path_factory.mktemp("t"), rows, fmt))
        check = _check(report, "truncated_passes")
        assert check["measured"]["rows_with_truncation_recorded"] == len(rows), check
        assert check["measured"]["truncated_passes"] == passes, check
        assert report["route"] == "fix-reward" and report["exit_code"] == 1

    one()


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize("alias", ["finish_reason", "stop_reason"])
@pytest.mark.parametrize(
    "reason", ["length ", "length\n", " Length", "\tLENGTH\r\n", "max_tokens ", " Max_Tokens"]
)
def test_a_reason_in_any_case_with_blanks_is_a_cut(
    tmp_path: Path, fmt: str, alias: str, reason: str
) -> None:
    rows = _pool()
    for i, row in enumerate(rows):
        row[alias] = reason if i == 0 else " stop "
    report = _route(_write(tmp_path, rows, fmt))
    assert _check(report, "truncated_passes")["measured"]["truncated_passes"] == 1
    assert report["route"] == "fix-reward"


@pytest.mark.parametrize("reason", [" length", "MAX_TOKENS\n", "Max_Turns "])
def test_a_mapped_reason_column_reads_the_same_words(tmp_path: Path, reason: str) -> None:
    rows = _pool()
    for i, row in enumerate(rows):
        row["why_stopped"] = reason if i == 0 else "stop"
    report = _route(_write(tmp_path, rows, "jsonl"), "--map", "truncated=why_stopped")
    assert _check(report, "truncated_passes")["measured"]["truncated_passes"] == 1


def test_the_sources_name_every_alias_read(tmp_path: Path) -> None:
    rows = _pool()
    for i, row in enumerate(rows):
        row.update({"truncated": False} if i % 2 else {"finish_reason": "stop"})
    sources = read_rows([str(_write(tmp_path, rows, "jsonl"))]).sources
    # in the order they are weighed: a recorded finish reason first, then the flag
    assert sources["truncated"].startswith("finish_reason in {'length'")
    assert sources["truncated"].endswith("; else truncated")


# --- model names ----------------------------------------------------------------------------

PLACEHOLDERS = ["", "   ", "None", "none", "null", "NULL", "N/A", " n/a ", "unknown", "@4", "nan"]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize("name", PLACEHOLDERS)
def test_a_placeholder_name_names_no_model(tmp_path: Path, fmt: str, name: str) -> None:
    rows = _pool()
    for i, row in enumerate(rows):
        if i % 10 == 0:
            row["model"] = name
    path = _write(tmp_path, rows, fmt)
    report = _route(path)
    check = _check(report, "on_policy")
    assert check["status"] == "pass", check
    assert check["measured"]["models"] == {M: len(rows) - len(rows[::10])}
    assert check["measured"]["rows_naming_none"] == len(rows[::10])
    assert report["route"] == "grpo"
    frame = read_rows([str(path)]).frame.collect()
    assert frame["model"].null_count() == len(rows[::10])


@pytest.mark.parametrize("name", PLACEHOLDERS)
def test_a_placeholder_name_falls_to_the_next_alias(tmp_path: Path, name: str) -> None:
    rows = _pool()
    for row in rows:
        row.update(model=name, model_name=M)
    check = _check(_route(_write(tmp_path, rows, "jsonl")), "on_policy")
    assert check["status"] == "pass" and check["measured"]["models"] == {M: len(rows)}


def test_rows_that_all_name_no_model_leave_check_6_unknown(tmp_path: Path) -> None:
    rows = _pool()
    for row in rows:
        row["model"] = "None"
    report = _route(_write(tmp_path, rows, "jsonl"))
    assert _check(report, "on_policy")["status"] == "unknown"
    assert report["route"] == "grpo"


def test_a_sidecar_placeholder_names_no_model(tmp_path: Path) -> None:
    (tmp_path / "metadata.json").write_text(json.dumps({"env_id": "e", "model": "unknown"}))
    rows = [{"example_id": i // K, "reward": float(i % K < 2)} for i in range(TASKS * K)]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    read = read_rows([str(path)])
    assert read.sources["model"] == "not recorded"
    assert read.frame.collect()["model"].null_count() == len(rows)


# --- versions -------------------------------------------------------------------------------


def _spelled(version: int) -> st.SearchStrategy[Any]:
    """One version as writers spell it: an integer, a float, text, text with blanks."""
    return st.sampled_from([version, float(version), str(version), f" {version} "])


MISSING = st.sampled_from([None, math.nan, "NaN", "nan", "", "null", math.inf])


@st.composite
def versioned_pools(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int]:
    """A pool whose rows carry ``policy_version`` in any spelling, some none (NaN, null),
    some an older version; the rows the older version wrote."""
    rows = _pool()
    older = 0
    for row in rows:
        kind = draw(st.sampled_from(["current", "current", "current", "missing", "older"]))
        if kind == "missing":
            row["policy_version"] = draw(MISSING)
        else:
            row["policy_version"] = draw(_spelled(5 if kind == "current" else 4))
            older += kind == "older"
    return rows, older


@SETTINGS
@given(versioned_pools())
def test_a_version_is_its_text_whatever_its_type(
    tmp_path_factory: Any, pool: tuple[list[dict[str, Any]], int]
) -> None:
    rows, older = pool
    path = tmp_path_factory.mktemp("v") / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    check = _check(_route(path), "on_policy")
    assert set(check["measured"]["versions"]) <= {"4", "5"}, check
    if older:
        assert check["status"] == "fail" and check["measured"]["stale_rows"] == older, check
    else:
        assert check["status"] == "pass", check


@pytest.mark.parametrize("column", ["policy_version", "step"])
def test_nan_in_a_parquet_version_column_is_no_version(tmp_path: Path, column: str) -> None:
    """pandas writes an integer column with missing values as floats with NaN."""
    rows = _pool()
    for i, row in enumerate(rows):
        row[column] = math.nan if i % 8 == 0 else 5.0
    check = _check(_route(_write(tmp_path, rows, "parquet")), "on_policy")
    assert check["status"] == "pass" and check["measured"]["versions"] == {
        "5": len(rows) - len(rows[::8])
    }


def _nested(dotted: str, value: Any) -> dict[str, Any]:
    head, _, rest = dotted.partition(".")
    return {head: _nested(rest, value) if rest else value}


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize(
    "column",
    ["weight_version", "meta_info.weight_version", "metadata.policy_version", "global_step"],
)
def test_the_version_columns_trainers_write_are_read(tmp_path: Path, fmt: str, column: str) -> None:
    rows = _pool()
    for i, row in enumerate(rows):
        row.update(_nested(column, 4 if i % 6 == 0 else 5))
    check = _check(_route(_write(tmp_path, rows, fmt)), "on_policy")
    assert check["status"] == "fail" and check["measured"]["stale_rows"] == len(rows[::6])
    assert read_rows([str(tmp_path / f"rows.{fmt}")]).sources["policy_version"].startswith(column)


def test_versions_are_read_row_by_row_across_aliases(tmp_path: Path) -> None:
    """Two harnesses pooled: one writes ``policy_version``, the other ``weight_version``."""
    rows = _pool()
    for i, row in enumerate(rows):
        version = 4 if i % 5 == 0 else 5
        row.update({"policy_version": version} if i % 2 else {"weight_version": str(version)})
    check = _check(_route(_write(tmp_path, rows, "jsonl")), "on_policy")
    assert check["measured"]["versions"] == {"4": len(rows[::5]), "5": len(rows) - len(rows[::5])}
    assert check["measured"]["stale_rows"] == len(rows[::5])


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    flag=st.sampled_from([False, "false", 0, None]),
    reason=st.sampled_from([("finish_reason", "length"), ("stop_reason", "max_tokens")]),
    spelled=st.sampled_from(SPELLINGS),
    fmt=st.sampled_from(["jsonl", "parquet"]),
)
def test_a_cut_any_record_states_is_a_cut(
    tmp_path_factory: pytest.TempPathFactory,
    flag: Any,
    reason: tuple[str, str],
    spelled: Any,
    fmt: str,
) -> None:
    """A row whose flag says not cut while its finish reason says ``length`` was cut: the API
    saw the token cap (a harness's own flag may track only the context or the turns). A pass
    among such rows is check 1's truncated pass, as with the reason alone."""
    if fmt == "parquet" and flag in ("false",):
        return  # one type per Parquet column: the text flag is the JSON Lines case
    rows = _pool()
    for i, row in enumerate(rows):
        row["truncated"] = flag
        row[reason[0]] = spelled(reason[1] if i % 7 == 0 else "stop")
    report = _route(_write(tmp_path_factory.mktemp("cut"), rows, fmt))
    assert report["route"] == "fix-reward", (flag, reason, report["headline"])


@pytest.mark.parametrize("code", [2, "2", 1, "3"])
def test_a_finish_reason_written_as_a_number_is_unknown(tmp_path: Path, code: Any) -> None:
    """Gemini's ``FinishReason`` as its code (2 is ``MAX_TOKENS``) names no word: truncation is
    unknown on those rows, never "recorded, not cut"."""
    rows = [dict(r, finish_reason=code) for r in _pool()]
    report = _route(_write(tmp_path, rows, "jsonl"))
    assert _check(report, "truncated_passes")["status"] == "unknown", report["headline"]


@settings(SETTINGS, max_examples=12)
@given(
    flags=st.lists(st.sampled_from([0, 1, None, 2, -1, 0.5, 3.0]), min_size=1, max_size=12),
    floats=st.booleans(),
)
def test_a_numeric_flag_reads_alike_in_every_encoding(
    tmp_path_factory: Any, flags: list[Any], floats: bool
) -> None:
    """A truncation flag of numbers: 0 and 1 as false and true, null unknown, any other
    number refused at its row naming the field, in a Parquet column of integers or floats
    (read as true where nonzero before) as in JSON Lines."""
    tmp = tmp_path_factory.mktemp("flags")
    rows = _pool()
    if not floats:  # a column of integers holds none of the fractions
        flags = [f if f is None or float(f).is_integer() else 1 for f in flags]
    for i, flag in enumerate(flags):
        rows[i]["truncated"] = float(flag) if floats and flag is not None else flag
    bad = next((i for i, f in enumerate(flags) if f not in (0, 1, None)), None)
    frame = pl.DataFrame(rows, schema_overrides={"truncated": pl.Float64 if floats else pl.Int64})
    said = {}
    for fmt in ("jsonl", "parquet"):
        path = tmp / f"rows.{fmt}"
        if fmt == "parquet":
            frame.write_parquet(path)
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out = CliRunner().invoke(app, ["route", str(path), "--format", "json"])
        if bad is not None:
            assert out.exit_code == 2 and "field 'truncated'" in out.output, out.output
            where = f"jsonl:{bad + 1}:" if fmt == "jsonl" else f"row {bad}"
            assert where in out.output and "Traceback" not in out.output, out.output
            continue
        assert out.exit_code in (0, 1), out.output
        doc = json.loads(out.output)
        said[fmt] = doc["checks"][0]["measured"]
    if bad is None:
        assert said["jsonl"] == said["parquet"]
        known = sum(f is not None for f in flags)  # the rows after them carry no flag
        assert said["jsonl"]["rows_with_truncation_recorded"] == known


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_an_empty_flag_is_unknown_not_false(tmp_path: Path, fmt: str) -> None:
    """``"truncated": ""`` on every row records nothing: check 1 is unknown, not "no row is
    truncated" (DESIGN section 1: unknown is never false)."""
    rows = [dict(r, truncated="") for r in _pool()]
    path = tmp_path / f"rows.{fmt}"
    if fmt == "parquet":
        pl.DataFrame(rows).write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    doc = json.loads(CliRunner().invoke(app, ["route", str(path), "--format", "json"]).output)
    check = doc["checks"][0]
    assert check["status"] == "unknown" and check["measured"]["rows_with_truncation_recorded"] == 0
