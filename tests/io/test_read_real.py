"""The reader on the real dumps in tests/data/real (see its README for origin and license).

Two sources of truth, neither the reader itself: the numbers the collection's README
documents for each file (rows, tasks x rollouts, passes, truncation, model), and a plain
Python reading of the same files that applies DESIGN section 1 by hand (``reference``).
The formats with no real dump here (verifiers v1 traces, the reference SDK's rows, TRL
completion tables) are read from small synthetic fixtures built in the tests.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

from read_helpers import frame_of, jsonl
from whilecli.errors import InputError, UsageError
from whilecli.io.read import read_rows
from whilecli.route.model import CANONICAL_SCHEMA

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
WIKI_FT = REAL / "verifiers/wiki_search/willcb--qwen3-4b-wiki-search__094df25d/results.jsonl"
WIKI_BASE = REAL / "verifiers/wiki_search/qwen--qwen3-4b-instruct-2507__e762fd98/results.jsonl"
WORDLE_41 = REAL / "verifiers/wordle/gpt-4.1-mini__816ec3b0/results.jsonl"
WORDLE_5 = REAL / "verifiers/wordle/gpt-5-mini__019a631c/results.jsonl"
SWERL = REAL / "nemo-gym/swerl_gen/example_rollouts.jsonl"
ANYSWE = REAL / "nemo-gym/anyswe_agent/example_rollouts_opencode.jsonl"
PRIME = REAL / "prime-rft/security-verifiers/j1i1ys9rpdcluvtqneql2o4l/results.jsonl"
LMEVAL = next((REAL / "lm-eval/negotiationtom/Qwen__Qwen3-8B").glob("samples_*.jsonl"))


def load(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def canonical(value: Any) -> str:
    """The prompt text a hash is taken of: text with LF line ends and no whitespace around
    it; JSON re-encoded sorted, compact, nulls dropped, each message's text so; one user
    message alone is its text."""

    def drop(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: drop(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [drop(x) for x in v]
        return v

    def text(v: str) -> str:
        return v.replace("\r\n", "\n").replace("\r", "\n").strip()

    if isinstance(value, str):
        return text(value)
    value = drop(value)
    if isinstance(value, list):
        value = [
            {**m, "content": text(m["content"])}
            if isinstance(m, dict) and isinstance(m.get("content"), str)
            else m
            for m in value
        ]
        one = value[0] if len(value) == 1 and isinstance(value[0], dict) else {}
        user = set(one) == {"role", "content"} and one["role"] == "user"
        if user and isinstance(one["content"], str):
            return one["content"]
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def reference(path: Path, threshold: float = 1.0) -> dict[str, Any]:
    """DESIGN section 1 applied by hand to one real file: per-task (rows, passes) and more."""
    rows = load(path)
    tasks: dict[str, list[int]] = {}
    truncated: list[bool | None] = []
    for row in rows:
        if "step" in row and "problem_id" in row:  # Prime RFT: (step, problem_id)
            task = f"{row['step']}:{row['problem_id']}"
        elif "doc_id" in row:
            task = str(row["doc_id"])
        elif "example_id" in row:
            task = str(row["example_id"])
        elif "_ng_task_index" in row:
            task = str(row["_ng_task_index"])
        else:  # no task id: a hash of the prompt the model was given
            text = canonical(row["responses_create_params"]["input"])
            task = "p:" + hashlib.sha256(text.encode()).hexdigest()[:16]
        reward = float(row["exact_match"] if "exact_match" in row else row["reward"])
        entry = tasks.setdefault(task, [0, 0])
        entry[0] += 1
        entry[1] += reward >= threshold
        if isinstance(row.get("response"), dict):
            details = row["response"].get("incomplete_details") or {}
            truncated.append(details.get("reason") == "max_output_tokens")
        else:
            truncated.append(None)
    return {"tasks": {k: tuple(v) for k, v in tasks.items()}, "truncated": truncated}


def summary(path: Path | str, **kwargs: Any) -> dict[str, Any]:
    rows = read_rows([str(path)], **kwargs)
    frame = rows.frame.collect()
    assert frame.schema == pl.Schema(CANONICAL_SCHEMA)
    per_task = frame.group_by("task_id").agg(
        n=pl.len(), passes=pl.col("passed").sum().cast(pl.Int64)
    )
    return {
        "rows": rows,
        "frame": frame,
        "tasks": {r["task_id"]: (r["n"], r["passes"]) for r in per_task.iter_rows(named=True)},
        "k": Counter(per_task["n"].to_list()),
        "passes": int(frame["passed"].sum()),
        "truncated": frame["truncated"].to_list(),
        "models": set(frame["model"].to_list()),
    }


@pytest.mark.parametrize(
    ("path", "n_rows", "n_tasks", "per_task", "passes", "model"),
    [
        (WIKI_FT, 100, 100, 1, 89, "willcb/qwen3-4b-wiki-search"),
        (WIKI_BASE, 100, 100, 1, 55, "qwen/qwen3-4b-instruct-2507"),
    ],
)
def test_vf_eval_wiki_search(
    path: Path, n_rows: int, n_tasks: int, per_task: int, passes: int, model: str
) -> None:
    got = summary(path)
    rows = got["rows"]
    assert rows.format == "vf-eval"
    assert got["frame"].height == n_rows
    assert len(got["tasks"]) == n_tasks
    assert all(n == per_task for n, _ in got["tasks"].values())
    assert got["passes"] == passes
    assert got["models"] == {model}
    assert got["truncated"] == [None] * n_rows  # vf-eval of that date records no truncation
    assert rows.sources["task_id"] == "example_id"
    assert rows.sources["reward"] == "reward"
    assert rows.sources["model"] == "metadata.json: model"
    assert rows.sources["truncated"] == "not recorded (unknown)"
    assert rows.partial_rows == 0 and not rows.threshold_explicit
    assert got["tasks"] == reference(path)["tasks"]


def test_wiki_search_pair_shares_task_ids() -> None:
    a = set(summary(WIKI_FT)["tasks"])
    b = set(summary(WIKI_BASE)["tasks"])
    assert a == b and len(a) == 100


@pytest.mark.parametrize("path", [WORDLE_41, WORDLE_5])
def test_wordle_float_reward_is_refused_without_threshold(path: Path) -> None:
    with pytest.raises(InputError) as err:
        read_rows([str(path)])
    message = str(err.value)
    assert str(path) in message
    assert "field 'reward'" in message
    assert "--pass-threshold" in message
    # check_answer_reward_func is the wordle rubric's 0/1 outcome, named in the --map to pass
    assert "--map reward=check_answer_reward_func" in message
    assert err.value.exit_code == 2
    assert "\n" not in message


@pytest.mark.parametrize("path", [WORDLE_41, WORDLE_5])
def test_wordle_reads_with_threshold(path: Path) -> None:
    got = summary(path, pass_threshold=1.0)
    rows = got["rows"]
    assert rows.threshold_explicit and rows.pass_threshold == 1.0
    assert got["frame"].height == 15
    assert len(got["tasks"]) == 5 and all(n == 3 for n, _ in got["tasks"].values())
    assert got["tasks"] == reference(path, threshold=1.0)["tasks"]
    assert got["models"] == {"gpt-4.1-mini" if path == WORDLE_41 else "gpt-5-mini"}
    raw = [r["reward"] for r in load(path)]
    assert rows.partial_rows == sum(0 < r < 1 for r in raw)


def test_wordle_reads_with_binary_column_as_reward() -> None:
    got = summary(WORDLE_41, mapping={"reward": "check_answer_reward_func"})
    raw = load(WORDLE_41)
    assert got["passes"] == sum(r["check_answer_reward_func"] == 1.0 for r in raw)
    assert got["rows"].sources["reward"] == "check_answer_reward_func (--map)"


def test_nemo_gym_swerl_gen() -> None:
    got = summary(SWERL)
    rows, frame = got["rows"], got["frame"]
    assert rows.format == "nemo-gym"
    assert frame.height == 5 and len(got["tasks"]) == 5  # 5 distinct prompts, no task id
    assert rows.sources["task_id"] == "hash of prompt text (responses_create_params.input)"
    assert got["passes"] == 1
    assert got["truncated"].count(True) == 3 and got["truncated"].count(False) == 2
    assert rows.sources["truncated"] == "response.incomplete_details.reason == 'max_output_tokens'"
    # every truncated row scored 0, so no truncated pass
    assert frame.filter(pl.col("truncated") & pl.col("passed")).height == 0
    assert got["models"] == {"qwen3-32b"} and rows.sources["model"] == "response.model"
    ref = reference(SWERL)
    assert got["tasks"] == ref["tasks"] and got["truncated"] == ref["truncated"]


def test_nemo_gym_anyswe() -> None:
    got = summary(ANYSWE)
    rows = got["rows"]
    assert rows.format == "nemo-gym"
    assert got["tasks"] == {"0": (5, 4)}  # 1 task x 5 rollouts, 4 pass
    assert rows.sources["task_id"] == "_ng_task_index"
    assert got["truncated"] == [False] * 5  # incomplete_details recorded, none cut off
    assert got["models"] == {"Qwen/Qwen3-Coder-30B-A3B-Instruct"}


def test_prime_rft_security_verifiers() -> None:
    got = summary(PRIME)
    rows = got["rows"]
    assert rows.format == "prime-rft"
    assert rows.sources["task_id"] == "(step, problem_id)"
    counts = {t: n for t, (n, _) in got["tasks"].items()}
    assert counts == {"40:3": 8, "40:16": 8, "40:41": 8, "40:14": 1}
    assert got["passes"] == 14  # mean reward 0.56 over 25 binary rows
    assert got["models"] == {"Qwen/Qwen3.5-2B"}
    assert rows.sources["model"] == "metadata.json: run.base_model"
    assert got["truncated"] == [None] * 25
    assert got["tasks"] == reference(PRIME)["tasks"]


def test_lm_eval_samples() -> None:
    got = summary(LMEVAL)
    rows = got["rows"]
    assert rows.format == "lm-eval"
    assert got["frame"].height == 20 and len(got["tasks"]) == 20
    assert got["passes"] == 4  # exact_match mean 0.20
    assert rows.sources["reward"] == "exact_match (the row's metrics list)"
    assert rows.sources["task_id"].startswith("doc_id")
    assert got["models"] == {"Qwen/Qwen3-8B"}
    assert rows.sources["model"].endswith(": model_name")
    assert got["truncated"] == [None] * 20
    assert got["tasks"] == reference(LMEVAL)["tasks"]


def test_directory_reads_every_shard(tmp_path: Path) -> None:
    rows = read_rows([str(REAL / "verifiers/wiki_search")])
    frame = rows.frame.collect()
    assert frame.height == 200
    assert frame.group_by("task_id").len()["len"].to_list() == [2] * 100
    assert set(frame["model"]) == {"willcb/qwen3-4b-wiki-search", "qwen/qwen3-4b-instruct-2507"}
    assert int(frame["passed"].sum()) == 89 + 55


def test_compressed_copies_read_the_same(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(PRIME.parent / "metadata.json", folder / "metadata.json")
    data = PRIME.read_bytes()
    (folder / "results.jsonl.gz").write_bytes(gzip.compress(data))
    with pa.CompressedOutputStream(str(folder / "more.jsonl.zst"), "zstd") as out:
        out.write(data)
    plain = summary(PRIME)
    for name in ("results.jsonl.gz", "more.jsonl.zst"):
        got = summary(folder / name)
        assert got["tasks"] == plain["tasks"]
        assert got["models"] == {"Qwen/Qwen3.5-2B"}


def test_parquet_copy_reads_the_same(tmp_path: Path) -> None:
    out = tmp_path / "swerl.parquet"
    pl.read_ndjson(SWERL).write_parquet(out)
    got, plain = summary(out), summary(SWERL)
    assert got["rows"].format == "nemo-gym"
    assert got["tasks"] == plain["tasks"]  # same prompt hashes from either file type
    assert got["truncated"] == plain["truncated"]


def test_stdin_reads_jsonl_and_parquet(tmp_path: Path) -> None:
    rows = read_rows(["-"], stdin=io.BytesIO(ANYSWE.read_bytes()))
    assert rows.frame.collect().height == 5 and rows.paths == ["<stdin>"]
    out = tmp_path / "x.parquet"
    pl.read_ndjson(SWERL).write_parquet(out)
    rows = read_rows(["-"], stdin=io.BytesIO(out.read_bytes()))
    assert rows.format == "nemo-gym" and rows.frame.collect().height == 5
    assert rows.frame.collect()["truncated"].to_list() == reference(SWERL)["truncated"]


# --- formats with no real dump here: small synthetic fixtures -----------------------------


def test_verifiers_v1_traces(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('model = "run-model"\n')

    def trace(key: str, score: float, stop: str | None, finish: list[str]) -> dict[str, Any]:
        return {
            "version": 1,
            "task": {"type": "T", "data": {"q": key}, "key": key},
            "agent": {"config": {"model": None}},
            "rewards": {
                "correct": {"score": score, "weight": 1.0},
                "fmt": {"score": 1.0, "weight": 0.0},
            },
            "stop_condition": stop,
            "calls": [{"finish_reason": f} for f in finish],
        }

    rows = [
        trace("a", 1.0, None, ["stop"]),
        trace("a", 0.0, "max_turns", ["stop"]),
        trace("b", 1.0, None, ["tool_calls", "length"]),
        trace("b", 0.0, None, ["length", "stop"]),
    ]
    frame, meta = frame_of(jsonl(tmp_path / "traces.jsonl", rows))
    assert meta.format == "verifiers-traces"
    assert frame["task_id"].to_list() == ["a", "a", "b", "b"]
    assert frame["reward"].to_list() == [1.0, 0.0, 1.0, 0.0]
    assert frame["truncated"].to_list() == [False, True, True, False]
    assert frame["model"].to_list() == ["run-model"] * 4


def test_reference_sdk_rows(tmp_path: Path) -> None:
    rows = [
        {
            "scenario_id": "s",
            "task_id": f"t{i}",
            "reward": i % 2,
            "model_version": "pol@2",
            "finish_reason": "length" if i == 0 else "stop",
            "token_logprobs": [-0.1] * i,
        }
        for i in range(3)
    ]
    frame, meta = frame_of(jsonl(tmp_path / "rows.jsonl", rows))
    assert meta.format == "whileai" and meta.has_logprobs and not meta.has_values
    assert frame["task_id"].to_list() == ["s"] * 3
    assert frame["truncated"].to_list() == [True, False, False]
    assert frame["model"].to_list() == ["pol"] * 3
    assert frame["policy_version"].to_list() == ["pol@2"] * 3


def test_trl_completion_table_groups_by_prompt_within_step(tmp_path: Path) -> None:
    import hashlib

    table = pl.DataFrame(
        {
            "step": [5, 5, 5, 6],
            "prompt": ["p", "p", "q", "p"],
            "completion": ["a", "b", "c", "d"],
            "accuracy": [1.0, 0.0, 1.0, 0.5],
            "format": [0.0, 0.0, None, 0.5],
            "advantage": [0.5, -0.5, 0.0, 0.0],
        }
    )
    path = tmp_path / "completions_00005.parquet"
    table.write_parquet(path)
    frame, meta = frame_of(path, pass_threshold=1.0)
    h = {t: hashlib.sha256(t.encode()).hexdigest()[:16] for t in "pq"}
    assert meta.format == "trl"
    # a reward function that returned None (format on the third row) leaves its row ungraded
    assert frame["task_id"].to_list() == [f"5:p:{h['p']}", f"5:p:{h['p']}", f"6:p:{h['p']}"]
    assert frame["reward"].to_list() == [1.0, 0.0, 1.0]
    assert frame["passed"].to_list() == [True, False, True]
    assert meta.facts.ungraded == 1


def test_input_format_forces_rules(tmp_path: Path) -> None:
    rows = [{"step": 1, "problem_id": 2, "reward": 1}, {"step": 2, "problem_id": 2, "reward": 0}]
    frame, meta = frame_of(jsonl(tmp_path / "rows.jsonl", rows))
    assert frame["task_id"].to_list() == ["2", "2"]  # no run_id/env_name: plain problem_id
    frame, meta = frame_of(jsonl(tmp_path / "rows.jsonl", rows), input_format="prime-rft")
    assert frame["task_id"].to_list() == ["1:2", "2:2"] and meta.format == "prime-rft"
    with pytest.raises(UsageError):
        frame_of(jsonl(tmp_path / "rows.jsonl", rows), input_format="xlsx")
    with pytest.raises(InputError, match="--input-format csv: the file holds JSON, not CSV"):
        frame_of(jsonl(tmp_path / "rows.jsonl", rows), input_format="csv")
    with pytest.raises(InputError, match="--input-format trl: the rows have no prompt"):
        frame_of(jsonl(tmp_path / "rows.jsonl", rows), input_format="trl")
