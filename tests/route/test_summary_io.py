"""Summaries: refusals, detection from the schema, the header and the command line (the
engine queries of ``docs/scale.md`` are run by ``test_scale_recipes.py``)."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from test_summary import STUDENT, report, summarise
from typer.testing import CliRunner

from conftest import EXAMPLES
from whilecli.cli import app as while_app
from whilecli.commands.summarize import summarize_command
from whilecli.errors import InputError, UsageError
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.summary import (
    HEADER_KEY,
    SUMMARY_SCHEMA,
    is_summary,
    merge_summaries,
    pool_from_summary,
    read_header,
    write_merged,
    write_summary,
)

# --- refusals, detection, the header -------------------------------------------------------


def test_merge_refuses_different_pass_thresholds(tmp_path: Path) -> None:
    rows = str(EXAMPLES / "mixed.parquet")
    a = summarise([rows], tmp_path / "a.parquet")
    b = summarise([rows], tmp_path / "b.parquet", pass_threshold=0.5)
    with pytest.raises(UsageError, match="different pass thresholds") as err:
        merge_summaries([a, b])
    assert a in str(err.value) and b in str(err.value)
    with pytest.raises(UsageError, match="different pass thresholds"):
        run_route([a, b])
    with pytest.raises(UsageError, match="made at 1"):
        run_route([a], pass_threshold=0.5)


def test_merged_header_adds_up(tmp_path: Path) -> None:
    names = ("mixed.parquet", "single.jsonl")
    sums = [
        summarise([str(EXAMPLES / n)], tmp_path / f"{i}.parquet", pass_threshold=1.0)
        for i, n in enumerate(names)
    ]
    implicit = summarise([str(EXAMPLES / "floor.parquet")], tmp_path / "f.parquet")
    merged = write_merged([*sums, implicit], tmp_path / "m.parquet")
    header = read_header(merged)
    assert header is not None and header.pass_threshold == 1.0 and header.threshold_explicit
    assert header.has_logprobs  # single.jsonl carries token_logprobs
    assert [e.paths for e in header.inputs] == [[str(EXAMPLES / n)] for n in names] + [
        [str(EXAMPLES / "floor.parquet")]
    ]
    raw = json.loads(pq.read_schema(merged).metadata[HEADER_KEY.encode()])
    assert (raw["rows"], raw["tasks"]) == (512 + 100 + 128, 64 + 100 + 32)
    assert raw["format"] == "parquet + whileai"
    alone = read_header(implicit)
    assert alone is not None and not alone.threshold_explicit and not alone.has_logprobs


def test_write_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    rows = read_rows([str(EXAMPLES / "mixed.parquet")])
    out = tmp_path / "tasks.parquet"
    write_summary(rows, out)
    before = out.read_bytes()
    with pytest.raises(UsageError, match="--force"):
        write_summary(read_rows([str(EXAMPLES / "floor.parquet")]), out)
    assert out.read_bytes() == before
    write_summary(read_rows([str(EXAMPLES / "floor.parquet")]), out, force=True)
    assert merge_summaries([out])["task_id"][0].startswith("floor")
    with pytest.raises(UsageError, match="--force"):
        write_merged([out], out)


def test_detection_reads_only_the_schema(tmp_path: Path) -> None:
    summary = summarise([str(EXAMPLES / "mixed.parquet")], tmp_path / "s.parquet")
    assert is_summary(summary)
    assert not is_summary(EXAMPLES / "mixed.parquet")
    assert not is_summary(EXAMPLES / "mixed.jsonl")
    assert not is_summary(tmp_path / "missing.parquet")
    bare = tmp_path / "bare.parquet"
    pl.read_parquet(summary).write_parquet(bare)  # the columns without the header
    assert is_summary(bare) and read_header(bare) is None
    header = json.loads(pq.read_schema(summary).metadata[HEADER_KEY.encode()])
    assert header["rows"] == 512 and header["tasks"] == 64 and header["pass_threshold"] == 1.0
    assert header["sources"]["task_id"] == "task_id" and header["format"] == "parquet"
    # a directory of summaries is detected too
    assert report([str(tmp_path)], model=STUDENT)["route"] == "grpo"


#: What a header-less summary cannot know: whether the rows carried log-probs or values.
UNKNOWN_WITHOUT_HEADER = ("sampler_logprobs", "critic_values")


def assert_same_but_unknown_flags(got: dict, want: dict) -> None:
    """The same route, numbers and checks, except the two flags a header-less summary reads
    as unknown (null), never as absent."""
    for key in ("route", "method", "methods", "summary", "needs", "exit_code"):
        assert got[key] == want[key]
    for g, w in zip(got["checks"], want["checks"], strict=True):
        g_measured, w_measured = dict(g["measured"]), dict(w["measured"])
        for flag in UNKNOWN_WITHOUT_HEADER:
            if flag in w_measured:
                assert g_measured.pop(flag) is None
                w_measured.pop(flag)
        assert {**g, "measured": g_measured} == {**w, "measured": w_measured}


def test_headerless_summary_routes_with_the_same_numbers(tmp_path: Path) -> None:
    rows = str(EXAMPLES / "mixed.parquet")
    bare = tmp_path / "bare.parquet"
    pl.read_parquet(summarise([rows], tmp_path / "s.parquet")).write_parquet(bare)
    want, got = report([rows], model=STUDENT), report([str(bare)], model=STUDENT)
    assert got["inputs"]["format"] == "summary" and "without a whilecli header" in got["notes"][0]
    assert_same_but_unknown_flags(got, want)


def test_headerless_summary_in_pieces_and_any_order(tmp_path: Path) -> None:
    """An engine may write a task on several lines, in any order, models unsorted."""
    rows = str(EXAMPLES / "other_model.parquet")
    whole = pl.read_parquet(summarise([rows], tmp_path / "s.parquet"))
    first = whole.with_columns(
        pl.col(c) // 2 for c in ("n", "passes", "truncated", "truncated_known")
    ).with_columns(
        truncated_passes=pl.lit(0, pl.Int64),
        partial_rows=pl.lit(0, pl.Int64),
        models=pl.col("models").list.eval(
            pl.struct(
                pl.element().struct.field("model"),
                pl.element().struct.field("policy_version"),
                (pl.element().struct.field("rows") // 2).alias("rows"),
            )
        ),
    )
    rest = whole.select(
        "task_id",
        *(pl.col(c) - first[c] for c in SUMMARY_SCHEMA if c not in ("task_id", "models")),
        models=pl.col("models")
        .list.eval(
            pl.struct(
                pl.element().struct.field("model"),
                pl.element().struct.field("policy_version"),
                (pl.element().struct.field("rows") - pl.element().struct.field("rows") // 2).alias(
                    "rows"
                ),
            )
        )
        .list.reverse(),
    )
    pieces = pl.concat([rest, first]).sample(fraction=1.0, shuffle=True, seed=1)
    pieces = pieces.filter(pl.col("n") > 0)
    pieces.write_parquet(tmp_path / "pieces.parquet")
    got = report([str(tmp_path / "pieces.parquet")], model=STUDENT)
    want = report([rows], model=STUDENT)
    assert_same_but_unknown_flags(got, want)
    rest.write_parquet(tmp_path / "part-0.parquet")
    first.filter(pl.col("n") > 0).write_parquet(tmp_path / "part-1.parquet")
    parts = [str(tmp_path / f"part-{i}.parquet") for i in range(2)]
    got = report(parts, model=STUDENT)
    assert [n for n in got["notes"] if "without a whilecli header (2 files" in n] == got["notes"]
    assert_same_but_unknown_flags(got, want)
    empty = tmp_path / "empty.parquet"
    whole.head(0).write_parquet(empty)
    with pytest.raises(InputError, match="empty"):
        run_route([str(empty)])


def test_mixing_rows_and_summaries_is_refused(tmp_path: Path) -> None:
    rows = str(EXAMPLES / "mixed.parquet")
    summary = summarise([rows], tmp_path / "s.parquet")
    with pytest.raises(UsageError, match="holds rows"):
        run_route([summary, rows])
    with pytest.raises(UsageError, match="is not a summary"):
        run_route([rows], summary=True)
    with pytest.raises(UsageError, match="--map"):
        run_route([summary], mapping={"task_id": "x"})
    with pytest.raises(InputError, match="not a summary"):
        merge_summaries([summary, rows])
    assert run_route([rows], summary=False).route == "grpo"


def test_corrupt_counts_are_located(tmp_path: Path) -> None:
    summary = summarise([str(EXAMPLES / "mixed.parquet")], tmp_path / "s.parquet")
    table = pq.read_table(summary)
    frame = pl.from_arrow(table).with_columns(
        passes=pl.when(pl.int_range(pl.len()) == 3).then(99).otherwise(pl.col("passes"))
    )
    bad = tmp_path / "bad.parquet"
    pq.write_table(frame.to_arrow().replace_schema_metadata(table.schema.metadata), bad)
    with pytest.raises(InputError, match=r"row 3: field 'passes'"):
        pool_from_summary([bad])


def _with_header(src: str, dest: Path, header: object) -> Path:
    table = pq.read_table(src)
    text = header if isinstance(header, str) else json.dumps(header)
    pq.write_table(table.replace_schema_metadata({HEADER_KEY: text}), dest)
    return dest


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"format_version": "1"}, "format_version"),
        ({"format_version": True}, "format_version"),
        ({"pass_threshold": "1.0"}, "pass_threshold"),
        ({"pass_threshold": float("inf")}, "pass_threshold"),
        ({"threshold_explicit": "false"}, "threshold_explicit"),
        ({"has_values": 1}, "has_values"),
        ({"inputs": {"paths": []}}, "inputs"),
        ({"inputs": ["x"]}, "inputs[0]"),
        ({"inputs": [{"paths": "a", "format": "jsonl", "sources": {}}]}, "inputs[0].paths"),
        ({"inputs": [{"paths": ["a"], "format": 3, "sources": {}}]}, "inputs[0].format"),
        ({"inputs": [{"paths": ["a"], "format": "j", "sources": {"a": 1}}]}, "inputs[0].sources"),
        (
            {"inputs": [{"paths": ["a"], "format": "j", "sources": {}, "notes": "n"}]},
            "inputs[0].notes",
        ),  # fmt: skip
    ],
)
def test_a_malformed_header_is_one_located_line(tmp_path: Path, change, field) -> None:
    summary = summarise([str(EXAMPLES / "mixed.parquet")], tmp_path / "s.parquet")
    header = json.loads(pq.read_schema(summary).metadata[HEADER_KEY.encode()])
    bad = _with_header(summary, tmp_path / "bad.parquet", {**header, **change})
    with pytest.raises(InputError, match=re.escape(f"field '{field}'")) as err:
        read_header(bad)
    assert str(bad) in str(err.value) and "\n" not in str(err.value)
    for text in ("{oops", "[1]", '"s"', b"\xff".decode("latin-1")):
        with pytest.raises(InputError, match="unreadable summary header"):
            read_header(_with_header(summary, tmp_path / "bad2.parquet", text))


def test_a_task_on_two_lines_of_a_whilecli_summary_is_refused(tmp_path: Path) -> None:
    summary = summarise([str(EXAMPLES / "mixed.parquet")], tmp_path / "s.parquet")
    table = pq.read_table(summary)
    frame = pl.from_arrow(table)
    dup = tmp_path / "dup.parquet"
    twice = pl.concat([frame, frame.slice(5, 1)]).to_arrow()
    pq.write_table(twice.replace_schema_metadata(table.schema.metadata), dup)
    task = frame["task_id"][5]
    for paths in ([dup], [summary, dup]):
        with pytest.raises(InputError, match=f"task '{task}' is on more than one line"):
            pool_from_summary(paths)
        with pytest.raises(InputError, match="more than one line"):
            write_merged(paths, tmp_path / "m.parquet", force=True)


def test_a_fraction_or_a_non_finite_sum_is_refused(tmp_path: Path) -> None:
    frame = pl.read_parquet(summarise([str(EXAMPLES / "mixed.parquet")], tmp_path / "s.parquet"))
    bad = tmp_path / "bad.parquet"
    half = pl.when(pl.int_range(pl.len()) == 2).then(pl.col("passes") + 0.5)
    frame.with_columns(passes=half.otherwise(pl.col("passes")).cast(pl.Float64)).write_parquet(bad)
    with pytest.raises(InputError, match=r"row 2: field 'passes': a count must be a whole number"):
        pool_from_summary([bad])
    whole = frame.with_columns(pl.col("passes").cast(pl.Float64))  # 3.0 is a count
    whole.write_parquet(bad)
    assert pool_from_summary([bad]).rows == int(frame["n"].sum())
    models = frame.with_columns(
        models=pl.col("models").list.eval(
            pl.struct(
                pl.element().struct.field("model"),
                pl.element().struct.field("policy_version"),
                (pl.element().struct.field("rows").cast(pl.Float64) - 0.25).alias("rows"),
            )
        )
    )
    models.write_parquet(bad)
    with pytest.raises(InputError, match=r"row 0: field 'models': a count must be a whole"):
        pool_from_summary([bad])
    frame.with_columns(reward_sum=pl.lit(float("nan"))).write_parquet(bad)
    with pytest.raises(InputError, match="field 'reward_sum': not a finite number"):
        pool_from_summary([bad])


def test_the_same_summary_twice_is_added_once(tmp_path: Path) -> None:
    """A path given twice, a link, a copy: read once, with a note (never doubled counts)."""
    summary = summarise([str(EXAMPLES / "mixed.parquet")], tmp_path / "s.parquet")
    copy = tmp_path / "copy.parquet"
    copy.write_bytes(Path(summary).read_bytes())
    link = tmp_path / "link.parquet"
    link.symlink_to(summary)
    once = pool_from_summary([summary])
    pool = pool_from_summary([summary, summary, copy, link])
    assert pool.rows == once.rows and pool.tasks.equals(once.tasks)
    assert any("read once" in n and "copy.parquet" in n for n in pool.source.notes)
    merged = write_merged([summary, copy], tmp_path / "m.parquet")
    assert pq.read_metadata(merged).num_rows == once.tasks.height
    assert pool_from_summary([merged]).rows == once.rows


# --- the CLI ------------------------------------------------------------------------------

_app = typer.Typer()
_app.command("summarize")(summarize_command)
_app.command("noop")(lambda: None)


def test_cli_summarize_merge_and_route(tmp_path: Path) -> None:
    runner = CliRunner()
    rows = str(EXAMPLES / "mixed.parquet")
    halves = [tmp_path / "h0.parquet", tmp_path / "h1.parquet"]
    frame = pl.read_parquet(rows)
    frame.head(200).write_parquet(halves[0])
    frame.tail(frame.height - 200).write_parquet(halves[1])
    for i, half in enumerate(halves):
        res = runner.invoke(_app, ["summarize", str(half), "-o", str(tmp_path / f"s{i}.parquet")])
        assert res.exit_code == 0, res.output
    out = str(tmp_path / "m.parquet")
    args = ["summarize", "--merge", str(tmp_path / "s0.parquet"), str(tmp_path / "s1.parquet")]
    assert runner.invoke(_app, [*args, "-o", out]).exit_code == 0
    res = runner.invoke(_app, [*args, "-o", out])
    assert res.exit_code == 2 and "--force" in res.output
    assert runner.invoke(_app, [*args, "-o", out, "--force"]).exit_code == 0
    res = runner.invoke(_app, [*args, "-o", out, "--force", "--pass-threshold", "0.5"])
    assert res.exit_code == 2 and "applies to rows" in res.output
    routed = runner.invoke(while_app, ["route", out, "--format", "json", "--model", STUDENT])
    direct = runner.invoke(while_app, ["route", *map(str, halves), "--format", "json",
                                       "--model", STUDENT])  # fmt: skip
    assert routed.exit_code == direct.exit_code == 0
    got, want = json.loads(routed.stdout), json.loads(direct.stdout)
    got["inputs"].pop("paths"), want["inputs"].pop("paths")
    assert got == want


def test_cli_summarize_output_names(tmp_path: Path, monkeypatch) -> None:
    """-o takes .parquet (a summary is Parquet, never under a .jsonl name) or - (a pipe)."""
    runner = CliRunner()
    rows = str(EXAMPLES / "mixed.jsonl")
    for name in ("tasks.jsonl", "tasks.csv", "tasks"):
        res = runner.invoke(while_app, ["summarize", rows, "-o", str(tmp_path / name)])
        assert res.exit_code == 2 and ".parquet" in res.stderr
        assert not (tmp_path / name).exists()
    res = runner.invoke(while_app, ["summarize", rows, "-o", "-"])
    assert res.exit_code == 0, res.stderr
    piped = tmp_path / "piped.parquet"
    piped.write_bytes(res.stdout_bytes)
    direct = summarise([rows], tmp_path / "direct.parquet")
    assert pl.read_parquet(piped).equals(pl.read_parquet(direct))
    assert is_summary(piped) and read_header(piped) is not None

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdout", Terminal())
    from whilecli.commands.summarize import _check_output

    with pytest.raises(UsageError, match="redirect stdout"):
        _check_output("-", force=False)


@pytest.mark.parametrize("made", ["skip", "fail"])
def test_missing_fail_on_summaries_made_skipping_is_refused(tmp_path: Path, made: str) -> None:
    """Summaries made with ``--missing skip`` left ungraded rows out of their counts: read with
    ``--missing fail`` they would print the skip numbers under the fail words. Refused, naming
    what to do; summaries made with ``fail`` read with it as they were made."""
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"task_id": f"t{t}", "completion": f"a{j}"} | {"reward": reward}) + "\n"
            for t in range(40)
            for j, reward in enumerate([1.0, 0.0, None, 0.0])
        ),
        encoding="utf-8",
    )
    out = tmp_path / "s.parquet"
    runner = CliRunner()
    made_it = runner.invoke(while_app, ["summarize", str(rows), "--missing", made, "-o", str(out)])
    assert made_it.exit_code == 0, made_it.output
    got = runner.invoke(while_app, ["route", "--summary", str(out), "--missing", "fail", "-q"])
    direct = runner.invoke(while_app, ["route", str(rows), "--missing", "fail", "--format", "json"])
    if made == "skip":
        assert got.exit_code == 2 and "summarise the rows again with --missing fail" in got.output
    else:
        assert got.exit_code == 0, got.output
        summary = runner.invoke(
            while_app, ["route", "--summary", str(out), "--missing", "fail", "--format", "json"]
        )
        p1 = json.loads(summary.stdout)["summary"]["pass_at_1"]
        assert p1 == json.loads(direct.stdout)["summary"]["pass_at_1"]


@settings(max_examples=40, deadline=None)
@given(
    rewards=st.lists(
        st.lists(
            st.floats(min_value=-5, max_value=5, allow_nan=False) | st.sampled_from([0.0, 1.0]),
            min_size=1,
            max_size=6,
        ),
        min_size=1,
        max_size=5,
    ),
    row=st.integers(min_value=0, max_value=4),
    under=st.floats(min_value=1e-6, max_value=1e6) | st.just(0.5),
)
def test_a_negative_sum_of_squares_is_refused_at_its_line(
    rewards: list[list[float]], row: int, under: float
) -> None:
    import tempfile

    rows = [
        {"task_id": f"t{t}", "reward": r, "truncated": False, "model": STUDENT}
        for t, task in enumerate(rewards)
        for r in task
    ]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        frame = pl.DataFrame(rows)
        frame.write_parquet(tmp / "rows.parquet")
        made = pl.read_parquet(
            summarise([str(tmp / "rows.parquet")], tmp / "s.parquet", pass_threshold=0.5)
        )
        assert pool_from_summary([str(tmp / "s.parquet")]).rows == len(rows)  # as written
        row = row % made.height
        bad_value = -under * (1 + pl.col("reward_sumsq"))
        at = pl.int_range(pl.len()) == row
        bad = tmp / "bad.parquet"
        made.with_columns(
            reward_sumsq=pl.when(at).then(bad_value).otherwise(pl.col("reward_sumsq"))
        ).write_parquet(bad)
        with pytest.raises(InputError, match=rf"row {row}: field 'reward_sumsq': Σ reward²"):
            pool_from_summary([str(bad)])
