"""The row reader on small synthetic inputs: aliases, rules, formats and located errors.

Expected values are worked out by hand in each test (DESIGN section 1), or by the plain
Python ``expected`` below for the property tests.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from read_helpers import frame_of, jsonl
from whilecli.errors import InputError, UsageError
from whilecli.io.read import parse_map, read_rows


def read_one(tmp_path: Path, rows: list[dict[str, Any]], **kwargs: Any) -> tuple[pl.DataFrame, Any]:
    return frame_of(jsonl(tmp_path / "rows.jsonl", rows), **kwargs)


# --- task id ------------------------------------------------------------------------------


def test_task_alias_order_first_match_wins(tmp_path: Path) -> None:
    rows = [{"scenario_id": "s1", "task_id": "t1", "id": 9, "task": "default", "reward": 1}]
    frame, meta = read_one(tmp_path, rows)
    assert frame["task_id"].to_list() == ["s1"]
    assert meta.sources["task_id"] == "scenario_id"


def test_task_label_is_never_a_task_id(tmp_path: Path) -> None:
    frame, meta = read_one(tmp_path, [{"task": "default", "id": 3, "reward": 0}])
    assert frame["task_id"].to_list() == ["3"] and meta.sources["task_id"] == "id"


def test_nested_task_key(tmp_path: Path) -> None:
    frame, meta = read_one(tmp_path, [{"task": {"key": "k7", "type": "T"}, "reward": 1}])
    assert frame["task_id"].to_list() == ["k7"] and meta.sources["task_id"] == "task.key"


def test_int_and_string_task_ids_are_the_same_task(tmp_path: Path) -> None:
    frame, _ = read_one(tmp_path, [{"task_id": 1, "reward": 1}, {"task_id": "1", "reward": 0}])
    assert frame["task_id"].to_list() == ["1", "1"]


def test_prompt_hash_when_no_task_id(tmp_path: Path) -> None:
    import hashlib

    rows = [
        {"prompt": "a", "reward": 1},
        {"prompt": "b", "reward": 0},
        {"prompt": "a", "reward": 0},
    ]
    frame, meta = read_one(tmp_path, rows)
    want = ["p:" + hashlib.sha256(t.encode()).hexdigest()[:16] for t in ("a", "b", "a")]
    assert frame["task_id"].to_list() == want
    assert meta.sources["task_id"] == "hash of prompt text (prompt)"


def test_no_task_id_and_no_prompt_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"rows\.jsonl: field 'task_id': no task id column"):
        read_one(tmp_path, [{"answer": "x", "reward": 1}])


def test_missing_task_id_in_a_row_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"rows\.jsonl:3: field 'task_id'"):
        read_one(tmp_path, [{"task_id": 1, "reward": 1}] * 2 + [{"reward": 1}])


# --- reward and passed --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "reward", "source"),
    [
        ({"task_id": 1, "score": 0.0}, 0.0, "score"),
        ({"task_id": 1, "correct": True}, 1.0, "correct"),
        ({"task_id": 1, "correct": False}, 0.0, "correct"),
        ({"task_id": 1, "resolved": True}, 1.0, "resolved"),
        ({"task_id": 1, "reward": 1, "score": 0}, 1.0, "reward"),
    ],
)
def test_reward_aliases(tmp_path: Path, row: dict[str, Any], reward: float, source: str) -> None:
    frame, meta = read_one(tmp_path, [row])
    assert frame["reward"].to_list() == [reward] and meta.sources["reward"] == source


def test_rewards_dict_is_score_times_weight(tmp_path: Path) -> None:
    rows = [
        {"task_id": 1, "rewards": {"a": {"score": 1.0, "weight": 0.5}, "b": {"score": 0.5}}},
        {"task_id": 1, "rewards": {"a": {"score": 0.0, "weight": 0.5}, "b": None}},
    ]
    frame, meta = read_one(tmp_path, rows)
    # 1.0*0.5 + 0.5*1 (weight defaults to 1) = 1.0 ; 0.0*0.5 + (b not scored) = 0.0
    assert frame["reward"].to_list() == [1.0, 0.0]
    assert frame["passed"].to_list() == [True, False]
    assert meta.sources["reward"] == "Σ rewards[].score × weight"


def test_partial_rewards_counted_with_default_threshold(tmp_path: Path) -> None:
    rewards = [0, 0.25, 0.5, 1, 1] + [0, 1] * 10  # 2 of 25 graded rows: under 10%
    rows = [{"task_id": i, "reward": r} for i, r in enumerate(rewards)]
    frame, meta = read_one(tmp_path, rows)
    assert frame["passed"].to_list() == [r == 1 for r in rewards]
    assert meta.partial_rows == 2 and meta.pass_threshold == 1.0
    assert any("2 of 25 rows" in n for n in meta.notes)


def test_partial_rewards_on_a_tenth_of_the_rows_are_refused(tmp_path: Path) -> None:
    rows = [{"task_id": i, "reward": r} for i, r in enumerate([0, 0.25, 0.5, 1, 1])]
    with pytest.raises(InputError, match="2 of 5 graded rows have a reward strictly between"):
        read_one(tmp_path, rows)
    frame, _ = read_one(tmp_path, rows, pass_threshold=0.5)
    assert frame["passed"].to_list() == [False, False, True, True, True]


def test_explicit_threshold(tmp_path: Path) -> None:
    rows = [{"task_id": i, "reward": r} for i, r in enumerate([0.2, 0.5, 0.7, 2.5])]
    frame, meta = read_one(tmp_path, rows, pass_threshold=0.5)
    assert frame["passed"].to_list() == [False, True, True, True]
    assert meta.threshold_explicit and meta.pass_threshold == 0.5


def test_reward_outside_unit_interval_is_refused_naming_binary_columns(tmp_path: Path) -> None:
    rows = [
        {"example_id": i, "reward": 0.3 + i, "ok_func": float(i % 2), "flag": True, "x": 0.4}
        for i in range(3)
    ]
    with pytest.raises(InputError) as err:
        read_one(tmp_path, rows)
    text = str(err.value)
    assert "rows.jsonl: field 'reward'" in text and "outside [0, 1]" in text
    assert "ok_func, flag" in text and "x" not in text.split("carry:")[1].split(".")[0]
    assert "--pass-threshold" in text and err.value.exit_code == 2


def test_map_passed_column(tmp_path: Path) -> None:
    rows = [{"task_id": 1, "ok": True}, {"task_id": 1, "ok": False}]
    frame, meta = read_one(tmp_path, rows, mapping={"passed": "ok"})
    assert frame["passed"].to_list() == [True, False] and frame["reward"].to_list() == [1.0, 0.0]
    # a mapped pass/fail makes an unbounded reward usable without a threshold
    rows = [{"task_id": 1, "ok": True, "reward": 3.5}, {"task_id": 1, "ok": False, "reward": 4}]
    frame, meta = read_one(tmp_path, rows, mapping={"passed": "ok"})
    assert frame["passed"].to_list() == [True, False] and frame["reward"].to_list() == [3.5, 4.0]
    assert meta.sources["passed"] == "ok (--map)"


def test_passed_source_names_the_threshold(tmp_path: Path) -> None:
    _, meta = read_one(tmp_path, [{"task_id": 1, "reward": 1}], pass_threshold=0.75)
    assert meta.sources["passed"] == "reward ≥ 0.75"


# --- truncation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "want"),
    [
        ({"truncated": True}, True),
        ({"is_truncated": False}, False),
        ({"finish_reason": "length"}, True),
        ({"finish_reason": "stop"}, False),
        ({"stop_reason": "max_tokens"}, True),
        ({"stop_reason": "end_turn"}, False),
        ({"response": {"id": "r", "incomplete_details": {"reason": "max_output_tokens"}}}, True),
        ({"response": {"id": "r", "incomplete_details": None}}, False),
        ({"stop_condition": "max_turns"}, True),
        ({"stop_condition": None}, False),
        ({"steps": [{"truncated": False}, {"truncated": True}]}, True),
        ({"steps": [{"truncated": False}]}, False),
        ({}, None),
    ],
)
def test_truncation_aliases(tmp_path: Path, extra: dict[str, Any], want: bool | None) -> None:
    frame, meta = read_one(tmp_path, [{"task_id": 1, "reward": 0, **extra}])
    assert frame["truncated"].to_list() == [want]
    if not extra:
        assert meta.sources["truncated"] == "not recorded (unknown)"


# --- model --------------------------------------------------------------------------------


def test_model_aliases_and_version_split(tmp_path: Path) -> None:
    rows = [
        {"task_id": 1, "reward": 1, "policy_version": "Qwen/Q@12"},
        {"task_id": 1, "reward": 0, "agent_model": "other"},
        {"task_id": 1, "reward": 0, "sampling": {"model": "s"}},
    ]
    frame, meta = read_one(tmp_path, rows)
    assert frame["model"].to_list() == ["Qwen/Q", "other", "s"]
    assert frame["policy_version"].to_list() == ["Qwen/Q@12", None, None]
    assert meta.sources["model"].startswith("agent_model else policy_version")


def test_sidecar_metadata_fills_the_model(tmp_path: Path) -> None:
    (tmp_path / "metadata.json").write_text(json.dumps({"env_id": "e", "model": "M@3"}))
    frame, meta = read_one(tmp_path, [{"example_id": 0, "reward": 1}])
    assert frame["model"].to_list() == ["M"] and frame["policy_version"].to_list() == ["M@3"]
    assert meta.sources["model"] == "metadata.json: model" and meta.format == "vf-eval"


def test_lm_eval_two_filters_keep_the_first(tmp_path: Path) -> None:
    (tmp_path / "results_2026.json").write_text(json.dumps({"model_name": "m"}))
    rows = []
    for doc in range(3):
        for flt, em in (("strict-match", doc % 2), ("flexible-extract", 1)):
            rows.append(
                {
                    "doc_id": doc,
                    "filter": flt,
                    "metrics": ["acc_list", "exact_match"],
                    "acc_list": [1],
                    "exact_match": em,
                    "filtered_resps": ["x"],
                }
            )
    frame, meta = frame_of(jsonl(tmp_path / "samples_t_2026.jsonl", rows))
    assert meta.format == "lm-eval"
    assert frame["task_id"].to_list() == ["0", "1", "2"]
    assert frame["reward"].to_list() == [0.0, 1.0, 0.0]
    assert frame["model"].to_list() == ["m"] * 3


# --- --map --------------------------------------------------------------------------------


def test_map_overrides_aliases(tmp_path: Path) -> None:
    rows = [{"task_id": 1, "q": {"id": "x"}, "reward": 0, "ok": 1.0, "cut": "length"}]
    frame, meta = read_one(
        tmp_path, rows, mapping={"task_id": "q.id", "reward": "ok", "truncated": "cut"}
    )
    assert frame.row(0, named=True)["task_id"] == "x"
    assert frame["reward"].to_list() == [1.0] and frame["truncated"].to_list() == [True]
    assert meta.sources["task_id"] == "q.id (--map)"


def test_map_to_a_missing_column_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no column 'nope'"):
        read_one(tmp_path, [{"task_id": 1, "reward": 1}], mapping={"reward": "nope"})


def test_parse_map() -> None:
    assert parse_map(["task_id=a", "reward = b.c"]) == {"task_id": "a", "reward": "b.c"}
    for bad in (["task_id"], ["=x"], ["colour=x"], ["task_id=a", "task_id=b"]):
        with pytest.raises(UsageError):
            parse_map(bad)


# --- located errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "pattern"),
    [
        ([b'{"task_id":1,"reward":1}', b'{"task_id":2,"reward":'], r":2: not valid JSON"),
        ([b'{"task_id":1,"reward":1}', b"[1, 2]"], r":2: a row must be a JSON object"),
        ([b'{"task_id":1,"reward":"high"}'], r":1: field 'reward': is the text \"high\""),
        ([b'{"task_id":1,"reward":-Infinity}'], r":1: field 'reward': reward is -inf"),
        (
            [b'{"task_id":1,"reward":null}', b"", b'{"task_id":1,"reward":NaN}'],
            r":1: field 'reward': no graded row: all 2 rows have no grade",
        ),
        (
            [b'{"task_id":1,"reward":null,"score":1}', b'{"task_id":1,"reward":null,"score":0}'],
            r":1: field 'reward': no graded row: .*columns the rows carry: score; pass --map"
            r" reward=score",
        ),
        ([b'{"task_id":1,"reward":[1]}'], r":1: field 'reward': is a JSON list"),
        ([b'{"task_id":1,"reward":1}', b'{"task_id":1,"reward":1}\xff'], r":2: not valid UTF-8"),
        ([b'{"task_id":1}'], r"field 'reward': no reward column"),
    ],
)
def test_bad_jsonl_is_located(tmp_path: Path, lines: list[bytes], pattern: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(InputError, match=pattern) as err:
        read_rows([str(path)])
    assert str(err.value).startswith(str(path)) and err.value.exit_code == 2


def test_ungraded_rows_are_left_out_and_located(tmp_path: Path) -> None:
    path = tmp_path / "u.jsonl"
    path.write_bytes(b'{"task_id":1,"reward":1}\n\n{"task_id":1,"reward":NaN}\n{"task_id":1}\n')
    got = read_rows([str(path)])
    assert (got.facts.ungraded, got.facts.first_ungraded) == (2, f"{path} line 3")
    assert got.frame.collect()["reward"].to_list() == [1.0]
    path = tmp_path / "u.parquet"
    pl.DataFrame({"task_id": ["a", "b", "c"], "reward": [1.0, None, 0.0]}).write_parquet(path)
    got = read_rows([str(path)])
    assert (got.facts.ungraded, got.facts.first_ungraded) == (1, f"{path} row 1")


def test_bad_parquet_is_located(tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    pl.DataFrame({"task_id": ["a", "b"], "reward": [1.0, math.inf]}).write_parquet(path)
    with pytest.raises(InputError, match=r"row 1: field 'reward': reward is inf"):
        read_rows([str(path)])
    pl.DataFrame({"task_id": ["a", "b"], "reward": ["1", "high"]}).write_parquet(path)
    with pytest.raises(
        InputError, match=r"row 1: field 'reward': is the text \"high\", not a grade"
    ):
        read_rows([str(path)])


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_empty_input_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match="empty.jsonl: no rows"):
        read_rows([str(path)])


def test_empty_shard_beside_others_is_a_note(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("")
    jsonl(tmp_path / "b.jsonl", [{"task_id": 1, "reward": 1}])
    rows = read_rows([str(tmp_path)])
    assert rows.frame.collect().height == 1
    assert any("a.jsonl: no rows" in n for n in rows.notes)


def test_paths_that_do_not_exist(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_rows([str(tmp_path / "missing.jsonl")])
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="directory holds no"):
        read_rows([str(tmp_path / "d")])
    with pytest.raises(InputError, match="glob matches no row file"):
        read_rows([str(tmp_path / "*.parquet")])
    with pytest.raises(InputError, match="no input given"):
        read_rows([])


def test_not_a_parquet_file(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="x.parquet: not a readable Parquet file"):
        read_rows([str(path)])


def test_glob_and_several_paths_concatenate(tmp_path: Path) -> None:
    jsonl(tmp_path / "a.jsonl", [{"task_id": 1, "reward": 1}])
    pl.DataFrame({"example_id": [2], "score": [0.0]}).write_parquet(tmp_path / "b.parquet")
    rows = read_rows([str(tmp_path / "*.jsonl"), str(tmp_path / "b.parquet")])
    assert rows.frame.collect()["task_id"].to_list() == ["1", "2"]
    assert "a.jsonl: task_id" in rows.sources["task_id"] and rows.format == "jsonl + parquet"


def test_stdin_gzip(tmp_path: Path) -> None:
    import gzip

    data = gzip.compress(b'{"task_id": 1, "reward": 1}\n')
    rows = read_rows(["-"], stdin=io.BytesIO(data))
    assert rows.frame.collect()["passed"].to_list() == [True]


def test_logprobs_and_values_flags(tmp_path: Path) -> None:
    rows = [{"task_id": 1, "reward": 1, "behavior_logprobs": [], "values": [0.1]}]
    _, meta = read_one(tmp_path, rows)
    assert not meta.has_logprobs and meta.has_values
    path = tmp_path / "lp.parquet"
    pl.DataFrame({"task_id": [1, 2], "reward": [1, 0], "logprobs": [[], [-0.5]]}).write_parquet(
        path
    )
    _, meta = frame_of(path)
    assert meta.has_logprobs and not meta.has_values
