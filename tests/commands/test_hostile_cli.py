"""Hostile input across every command: each case exits 2 with one line on stderr that starts
with ``whilecli: error:`` (or 0 where the input is valid), never a traceback, never exit 70.

Cases run in process (typer's CliRunner) against a sandbox of hostile files built once:
summaries with broken headers, a task on two lines, fractional counts; a ``pyproject.toml``
that is not UTF-8; a plain file where a folder should be. "No permission" is simulated by
a path under ``/proc`` (the tests run as root, to whom ``os.access`` says yes everywhere),
where no file can be created.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from conftest import EXAMPLES
from whilecli.cli import app
from whilecli.route.summary import HEADER_KEY

PREFIX = "whilecli: error: "
MIXED = str(EXAMPLES / "mixed.jsonl")
STUDENT = str(EXAMPLES / "student.jsonl")
TEACHER = str(EXAMPLES / "teacher.jsonl")
BATCH = str(EXAMPLES / "batch.jsonl")
GRPO = ["config", "--method", "grpo"]


@dataclass(frozen=True)
class Case:
    """One command line: ``{ws}`` is the sandbox; ``says`` must appear in the error line;
    ``json`` names the stream that must hold strict JSON (no NaN, no Infinity)."""

    id: str
    args: tuple[str, ...]
    code: int = 2
    says: str = ""
    json: str | None = None
    cwd: str | None = None


def c(id: str, *args: str, code: int = 2, says: str = "", json: str | None = None, cwd=None):
    return Case(id, args, code, says, json, cwd)


def _bad_headers() -> dict[str, object]:
    """Header variants (the JSON text, or an object to dump) and the field each breaks."""
    return {
        "notjson": "{not json",
        "list": [1, 2],
        "version": {"format_version": "1"},
        "threshold": {"pass_threshold": "high"},
        "nan_threshold": {"pass_threshold": float("nan")},
        "explicit": {"threshold_explicit": "false"},
        "inputs": {"inputs": "a.jsonl"},
        "paths": {"inputs": [{"paths": "a.jsonl", "format": "jsonl", "sources": {}}]},
        "sources": {"inputs": [{"paths": ["a"], "format": "jsonl", "sources": ["x"]}]},
        "extra": {"inputs": [{"paths": ["a"], "format": "j", "sources": {}, "x": 1}]},
        "missing": {"format_version": None},
    }


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    (root / "afile").write_text("a plain file\n")
    (root / "out.parquet").write_text("mine\n")
    (root / "out.toml").write_text("mine\n")
    (root / "out.jsonl").write_text("mine\n")
    (root / "adir.parquet").mkdir()
    graded = [
        {"task_id": "t", "reward": 1.0, "factor": 1.0},
        {"task_id": "t", "reward": 1.0, "factor": 0.5},
        {"task_id": "t", "reward": 0.0},
        {"task_id": "t", "reward": 0.0},
    ]
    (root / "graded.jsonl").write_text("".join(json.dumps(r) + "\n" for r in graded))
    good = root / "good.parquet"
    r = CliRunner().invoke(app, ["summarize", MIXED, "-o", str(good)])
    assert r.exit_code == 0, r.stderr
    table = pq.read_table(good)
    header = json.loads(table.schema.metadata[HEADER_KEY.encode()])
    frame = pl.from_arrow(table)
    dup = pl.concat([frame, frame.head(1)]).to_arrow()
    pq.write_table(dup.replace_schema_metadata(table.schema.metadata), root / "dup.parquet")
    frac = frame.with_columns(pl.col("n").cast(pl.Float64) + 0.5, pl.col("passes") * 0)
    frac.write_parquet(root / "frac.parquet")  # header-less: another engine's
    inf_sum = frame.with_columns(reward_sum=pl.lit(float("inf")))
    inf_sum.write_parquet(root / "infsum.parquet")
    for name, change in _bad_headers().items():
        if isinstance(change, dict):
            text = json.dumps({k: v for k, v in {**header, **change}.items() if v is not None})
        else:
            text = change if isinstance(change, str) else json.dumps(change)
        bad = table.replace_schema_metadata({HEADER_KEY: text})
        pq.write_table(bad, root / f"header_{name}.parquet")
    for name, text in {
        "nonutf8": b"[tool.while]\nfail-on = ['\xff\xfe']\n",
        "badtoml": b"[tool",
    }.items():
        folder = root / name
        (folder / ".git").mkdir(parents=True)
        (folder / "pyproject.toml").write_bytes(text)
        shutil.copy(MIXED, folder / "mixed.jsonl")
    return root


HEADERS = [
    c(f"route-header-{name}", "route", f"{{ws}}/header_{name}.parquet", says="header")
    for name in _bad_headers()
]

CASES: list[Case] = [
    # the parser's own errors: one line too
    c("usage-unknown-option", "route", MIXED, "--bogus", says="No such option"),
    c("usage-unknown-command", "nope", says="No such command"),
    c("usage-not-an-integer", "size", "--k", "abc", says="--k"),
    c("usage-not-a-number", "config", "--method", "grpo", "--lr", "fast", says="--lr"),
    c("usage-missing-argument", "route", says="PATH"),
    c("usage-top-level-option", "--bogus", says="No such option"),
    # route
    c("route-ok", "route", MIXED, code=0),
    c("route-json-ok", "route", MIXED, "--format", "json", code=0, json="stdout"),
    c("route-seed-negative", "route", MIXED, "--seed", "-1", says="--seed"),
    c("route-seed-huge-ok", "route", MIXED, "--seed", str(2**80), code=0),
    c("route-size-b-nan", "route", MIXED, "--size-b", "nan", says="--size-b"),
    c("route-size-b-negative", "route", MIXED, "--size-b", "-1", says="--size-b"),
    c("route-vocab-zero", "route", MIXED, "--teacher-vocab", "0", says="--teacher-vocab"),
    c("route-summary-ok", "route", "{ws}/good.parquet", code=0),
    c("route-summary-dup", "route", "{ws}/dup.parquet", says="more than one line"),
    c("route-summary-fraction", "route", "{ws}/frac.parquet", says="whole number"),
    c("route-summary-inf-sum", "route", "{ws}/infsum.parquet", says="finite"),
    *HEADERS,
    # check
    c("check-seed-negative", "check", MIXED, "--seed", "-1", says="--seed"),
    c("check-pyproject-not-utf8", "check", "mixed.jsonl", says="not UTF-8", cwd="nonutf8"),
    c("route-pyproject-not-utf8", "route", "mixed.jsonl", says="not UTF-8", cwd="nonutf8"),
    c("check-pyproject-not-toml", "check", "mixed.jsonl", says="not valid TOML", cwd="badtoml"),
    c("check-summary-dup", "check", "{ws}/dup.parquet", says="more than one line"),
    # diff
    c("diff-ok", "diff", STUDENT, TEACHER, code=0),
    c("diff-json-ok", "diff", STUDENT, TEACHER, "--format", "json", code=0, json="stdout"),
    c("diff-seed-negative", "diff", STUDENT, TEACHER, "--seed", "-1", says="--seed"),
    c("diff-draws-zero", "diff", STUDENT, TEACHER, "--draws", "0", says="--draws"),
    c("diff-draws-huge", "diff", STUDENT, TEACHER, "--draws", str(10**12), says="--draws"),
    c("diff-two-stdin", "diff", "-", "-", says="stdin"),
    # size
    c("size-defaults", "size", code=0),
    c("size-json", "size", "--format", "json", code=0, json="stdout"),
    c("size-effect-tiny", "size", "--effect", "1e-300", says="--effect"),
    c("size-effect-zero", "size", "--effect", "0", says="--effect"),
    c("size-effect-nan", "size", "--effect", "nan", says="--effect"),
    c("size-effect-inf", "size", "--effect", "inf", says="--effect"),
    c("size-alpha-tiny", "size", "--alpha", "1e-300", says="--alpha"),
    c("size-alpha-one", "size", "--alpha", "1", says="--alpha"),
    c("size-alpha-nan", "size", "--alpha", "nan", says="--alpha"),
    c("size-power-zero", "size", "--power", "0", says="--power"),
    c("size-power-one", "size", "--power", "1", says="--power"),
    c("size-power-near-one", "size", "--power", "0.99999999999999", says="--power"),
    c("size-base-zero", "size", "--base", "0", says="--base"),
    c("size-base-one", "size", "--base", "1", says="--base"),
    c("size-base-plus-effect", "size", "--base", "0.99", says="--effect"),
    c("size-base-plus-effect-one", "size", "--base", "0.95", "--effect", "0.05", says="(0, 1)"),
    c("size-k-zero", "size", "--k", "0", says="--k"),
    c("size-seed-negative", "size", "--seed", "-1", says="--seed"),
    c("size-draws-zero", "size", "--draws", "0", says="--draws"),
    c("size-format", "size", "--format", "yaml", says="--format"),
    c("size-before-alone", "size", "--before", STUDENT, says="--after"),
    # summarize
    c("summarize-parent-file", "summarize", MIXED, "-o", "{ws}/afile/x.parquet", says="afile"),
    c("summarize-proc", "summarize", MIXED, "-o", "/proc/x.parquet", says="cannot write"),
    c("summarize-jsonl", "summarize", MIXED, "-o", "{ws}/t.jsonl", says=".parquet"),
    c("summarize-no-suffix", "summarize", MIXED, "-o", "{ws}/tasks", says=".parquet"),
    c("summarize-exists", "summarize", MIXED, "-o", "{ws}/out.parquet", says="--force"),
    c("summarize-dir", "summarize", MIXED, "-o", "{ws}/adir.parquet", says="directory"),
    c("summarize-new-dirs-ok", "summarize", MIXED, "-o", "{ws}/new/sub/s.parquet", code=0),
    c("summarize-stdout-ok", "summarize", MIXED, "-o", "-", code=0),
    c(
        "summarize-threshold-inf",
        "summarize",
        MIXED,
        "-o",
        "{ws}/i.parquet",
        "--pass-threshold",
        "inf",
        says="--pass-threshold",
    ),
    c(
        "merge-dup",
        "summarize",
        "--merge",
        "{ws}/dup.parquet",
        "-o",
        "{ws}/m.parquet",
        says="more than one line",
    ),
    c(
        "merge-dup-with-good",
        "summarize",
        "--merge",
        "{ws}/good.parquet",
        "{ws}/dup.parquet",
        "-o",
        "{ws}/m2.parquet",
        says="more than one line",
    ),
    c(
        "merge-bad-header",
        "summarize",
        "--merge",
        "{ws}/good.parquet",
        "{ws}/header_paths.parquet",
        "-o",
        "{ws}/m3.parquet",
        says="inputs[0].paths",
    ),
    c(
        "merge-fraction",
        "summarize",
        "--merge",
        "{ws}/frac.parquet",
        "-o",
        "{ws}/m4.parquet",
        says="whole number",
    ),
    c("merge-stdout-ok", "summarize", "--merge", "{ws}/good.parquet", "-o", "-", code=0),
    # config
    c("config-ok", *GRPO, code=0),
    c("config-json-ok", *GRPO, "--format", "json", code=0, json="stdout"),
    c("config-lr-inf", *GRPO, "--lr", "inf", says="--lr"),
    c("config-lr-nan", *GRPO, "--lr", "nan", says="--lr"),
    c("config-lr-negative", *GRPO, "--lr", "-1", says="--lr"),
    c("config-lr-five", *GRPO, "--lr", "5", says="--lr"),
    c("config-set-lr-nan", *GRPO, "--set", "trainer.optim.lr=nan", says="trainer.optim.lr"),
    c("config-set-lr-inf", *GRPO, "--set", "trainer.optim.lr=inf", says="finite"),
    c("config-set-lr-neg-inf", *GRPO, "--set", "trainer.optim.lr=-inf", says="finite"),
    c("config-size-b-negative", *GRPO, "--size-b", "-1", says="--size-b"),
    c("config-size-b-nan", *GRPO, "--size-b", "nan", says="--size-b"),
    c("config-size-b-inf", *GRPO, "--size-b", "inf", says="--size-b"),
    c("config-set-open-string", *GRPO, "--set", 'model.name="x', says="not a TOML value"),
    c("config-set-open-literal", *GRPO, "--set", "model.name='x", says="not a TOML value"),
    c("config-set-open-array", *GRPO, "--set", "model.name=[1, 2", says="not a TOML value"),
    c("config-set-open-table", *GRPO, "--set", "model.name={a = 1", says="not a TOML value"),
    c("config-set-newline", *GRPO, "--set", "model.name=x\ny = 1", says="spans lines"),
    c("config-set-bare-word-ok", *GRPO, "--set", "model.name=Qwen/Qwen3-8B", code=0),
    c("config-set-unknown", *GRPO, "--set", "a.b=1", says="a.b"),
    c("config-set-no-equals", *GRPO, "--set", "model.name", says="dotted.key=value"),
    c("config-steps-past-int64", *GRPO, "--steps", str(10**23), says="64 bits"),
    c(
        "config-set-port-past-int64",
        *GRPO,
        "--set",
        f"inference.server.port={10**23}",
        says="64 bits",
    ),  # fmt: skip
    c(
        "config-teacher-bad-ipv6",
        "config",
        "--method",
        "opd",
        "--teacher",
        "x@http://[::1",
        says="--teacher",
    ),  # fmt: skip
    c(
        "config-set-url-bad-ipv6",
        *GRPO,
        "--set",
        'orchestrator.model.client.base_url="http://[::1"',
        says="base_url",
    ),  # fmt: skip
    c("config-temperature-nan", *GRPO, "--temperature", "nan", says="--temperature"),
    c("config-parent-file", *GRPO, "-o", "{ws}/afile/x.toml", says="not a directory"),
    c("config-proc", *GRPO, "-o", "/proc/x.toml", says="cannot write"),
    c("config-exists", *GRPO, "-o", "{ws}/out.toml", says="--force"),
    c("config-stdout-ok", *GRPO, "-o", "-", code=0),
    # ada
    c("ada-parent-file", "ada", MIXED, "-o", "{ws}/afile/x.parquet", says="not a directory"),
    c("ada-next-proc", "ada", MIXED, "--next-round", "/proc/n.jsonl", says="cannot write"),
    c("ada-suffix", "ada", MIXED, "-o", "{ws}/x.txt", says="extension"),
    c("ada-exists", "ada", MIXED, "-o", "{ws}/out.jsonl", says="--force"),
    c("ada-both-stdout", "ada", MIXED, "-o", "-", "--next-round", "-", says="both"),
    c("ada-stdout-ok", "ada", MIXED, "-o", "-", code=0),
    c("ada-json-ok", "ada", MIXED, "--format", "json", code=0, json="stdout"),
    # update (token methods and the row methods)
    c(
        "update-parent-file",
        "update",
        BATCH,
        "--method",
        "flash_reinforce",
        "-o",
        "{ws}/afile/u.parquet",
        says="not a directory",
    ),
    c(
        "update-proc",
        "update",
        BATCH,
        "--method",
        "sao",
        "-o",
        "/proc/u.parquet",
        says="cannot write",
    ),
    c(
        "update-exists",
        "update",
        BATCH,
        "--method",
        "sao",
        "-o",
        "{ws}/out.parquet",
        says="--force",
    ),
    c(
        "update-suffix",
        "update",
        BATCH,
        "--method",
        "sao",
        "-o",
        "{ws}/u.txt",
        says="unknown output extension",
    ),
    c("update-empty-output", "update", BATCH, "--method", "sao", "-o", "", says="empty"),
    c("config-empty-output", *GRPO, "-o", "", says="empty"),
    c(
        "update-json-trust-inf",
        "update",
        BATCH,
        "--method",
        "flash_reinforce",
        "--trust",
        "inf",
        "--format",
        "json",
        code=0,
        json="stdout",
    ),
    c(
        "update-stdout",
        "update",
        BATCH,
        "--method",
        "flash_reinforce",
        "-o",
        "-",
        "--format",
        "json",
        code=0,
        json="stderr",
    ),
    c(
        "update-rae-state-parent-file",
        "update",
        BATCH,
        "--method",
        "rae",
        "--state",
        "{ws}/afile/s.json",
        says="not a directory",
    ),
    c(
        "update-rae-state-proc",
        "update",
        BATCH,
        "--method",
        "rae",
        "--state",
        "/proc/s.json",
        says="cannot write",
    ),
    c(
        "update-rae-state-dir",
        "update",
        BATCH,
        "--method",
        "rae",
        "--state",
        "{ws}/adir.parquet",
        says="directory",
    ),
    c(
        "groupwise-parent-file",
        "update",
        MIXED,
        "--method",
        "groupwise",
        "-o",
        "{ws}/afile/g.jsonl",
        says="not a directory",
    ),
    c(
        "groupwise-proc",
        "update",
        MIXED,
        "--method",
        "groupwise",
        "-o",
        "/proc/g.jsonl",
        says="cannot write",
    ),
    c(
        "groupwise-stdout-ok",
        "update",
        "{ws}/graded.jsonl",
        "--method",
        "groupwise",
        "-o",
        "-",
        code=0,
    ),
]


def _strict_json(text: str) -> object:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


def test_case_count() -> None:
    ids = [case.id for case in CASES]
    assert len(set(ids)) == len(ids), "case ids must be unique"
    assert len(CASES) >= 60
    print(f"\n{len(CASES)} hostile CLI cases")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile(case: Case, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.chdir(ws / case.cwd if case.cwd else ws)
    args = [a.replace("{ws}", str(ws)) for a in case.args]
    r = CliRunner().invoke(app, args)
    out, err = r.stdout, r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in out + err
    assert "internal error" not in err, err
    assert r.exit_code == case.code, err
    if case.code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith(PREFIX), err
        assert case.says in lines[0], lines[0]
    if case.json is not None:
        _strict_json(out if case.json == "stdout" else err)


def test_dash_writes_stdout_in_every_writer(ws: Path) -> None:
    """``-o -``: the rows (JSON Lines), the summary (Parquet) or the TOML on stdout, the
    report on stderr, and no file named ``-``."""
    import io
    import tomllib

    runner = CliRunner()
    for args in (
        ["update", BATCH, "--method", "sao", "-o", "-"],
        ["update", str(ws / "graded.jsonl"), "--method", "groupwise", "-o", "-"],
        ["ada", MIXED, "-o", "-"],
        ["ada", MIXED, "--next-round", "-"],
    ):
        r = runner.invoke(app, args)
        assert r.exit_code == 0, r.stderr
        rows = [_strict_json(line) for line in r.stdout.splitlines()]
        assert rows and all(isinstance(row, dict) for row in rows), args
    r = runner.invoke(app, [*GRPO, "-o", "-"])
    assert r.exit_code == 0 and tomllib.loads(r.stdout)["orchestrator"]
    shards = [ws / "shard0.parquet", ws / "shard1.parquet"]
    frame = pl.read_ndjson(MIXED)
    for shard, part in zip(shards, (frame.head(300), frame.tail(frame.height - 300)), strict=True):
        part.write_ndjson(ws / "part.jsonl")
        r = runner.invoke(app, ["summarize", str(ws / "part.jsonl"), "-o", str(shard), "--force"])
        assert r.exit_code == 0, r.stderr
    r = runner.invoke(app, ["summarize", "--merge", *map(str, shards), "-o", "-"])
    assert r.exit_code == 0, r.stderr
    merged = pl.read_parquet(io.BytesIO(r.stdout_bytes))
    assert (
        merged["task_id"].n_unique() == merged.height
    )  # shards split tasks: added, not kept twice
    assert merged["n"].sum() == frame.height
    assert not (ws / "-").exists()


@pytest.mark.parametrize(
    "args",
    [["size"], ["route", MIXED], ["summarize", MIXED, "-o", "-"]],
    ids=["size", "route-text", "summarize-stdout"],
)
def test_a_closed_pipe_ends_quietly_with_141(args: list[str]) -> None:
    """`| head` that has gone: exit 141 and nothing on stderr, never 1, 2 or 70."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "whilecli", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
        )
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert done.stderr == b""
