"""Batch construction, validation, aliases, and the batch file reader and writer."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError, UsageError
from whilecli.io.batch import read_batch, read_batch_rows, read_jsonl
from whilecli.methods.batch import Batch
from whilecli.methods.flash_reinforce import FlashReinforce
from whilecli.methods.io import write_update
from whilecli.methods.sao import SAO
from whilecli.methods.validate import Needs, check_batch

ROWS = [
    {
        "reward": 1.0,
        "logprobs": [-0.5, -1.2, -0.3],
        "action_mask": [1, 0, 1],
        "values": [0.1, 0.2, 0.3],
    },
    {"reward": 0.0, "logprobs": [-0.7, -0.4], "action_mask": [True, True], "values": [0.5, 0.6]},
]


def test_pads_ragged_rows_float64_on_cpu() -> None:
    batch = Batch.from_rows(ROWS)
    assert batch.logprobs.dtype == torch.float64
    assert batch.logprobs.tolist() == [[-0.5, -1.2, -0.3], [-0.7, -0.4, 0.0]]
    assert batch.mask.tolist() == [[True, True, True], [True, True, False]]
    assert batch.action_mask.tolist() == [[True, False, True], [True, True, False]]
    assert batch.action_counts.tolist() == [2.0, 2.0]
    assert batch.behavior_logprobs is None
    assert Batch.from_rows(ROWS, dtype=torch.float32).values.dtype == torch.float32


def test_aliases_resolve_and_map_overrides() -> None:
    rows = [
        {
            "score": 1,
            "logprobs": [-0.1, -0.2],
            "inference_logprobs": [-0.2, -0.2],
            "loss_mask": [0, 1],
            "prompt_id": 7,
        }
    ]
    batch = Batch.from_rows(rows)
    assert batch.rewards.tolist() == [1.0]
    assert batch.behavior_logprobs is not None and batch.behavior_logprobs.tolist() == [
        [-0.2, -0.2]
    ]
    assert batch.action_mask.tolist() == [[False, True]]
    assert batch.task_ids == ["7"]
    rows[0]["other"] = 0.25
    assert Batch.from_rows(rows, mapping={"reward": "other"}).rewards.tolist() == [0.25]
    for alias in ("token_logprobs", "completion_logprobs"):
        b = Batch.from_rows([{"reward": 1, "logprobs": [-0.1], alias: [-0.3]}])
        assert b.behavior_logprobs is not None and b.behavior_logprobs.tolist() == [[-0.3]]
    b = Batch.from_rows([{"reward": 1, "logprobs": [-0.1, -0.1], "completion_mask": [1, 0]}])
    assert b.action_mask.tolist() == [[True, False]]


_TOKEN_LISTS = {
    "behavior_logprobs": lambda t: [-0.5] * t,
    "action_mask": lambda t: [1] * t,
    "values": lambda t: [0.25] * t,
    "ref_logprobs": lambda t: [-0.4] * t,
    "teacher_logprobs": lambda t: [-0.6] * t,
}


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(_TOKEN_LISTS)),
    lengths=st.lists(st.integers(1, 4), min_size=2, max_size=6),
    data=st.data(),
)
def test_a_per_token_list_on_some_rows_only_is_refused_at_the_first_row_lacking_it(
    name: str, lengths: list[int], data: st.DataObject
) -> None:
    """One rule for every per-token list: present on some rows and absent (or null) on others
    is refused naming the first row lacking it and the field, never filled in (a row without
    behaviour log-probs is not assumed on-policy, nor one without a mask all action tokens)."""
    n = len(lengths)
    lacking = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n - 1)))
    null = data.draw(st.booleans())
    rows: list[dict] = []
    for i, t in enumerate(lengths):
        row: dict = {"reward": float(i % 2), "logprobs": [-0.3] * t}
        if i not in lacking:
            row[name] = _TOKEN_LISTS[name](t)
        elif null:
            row[name] = None
        rows.append(row)
    with pytest.raises(InputError, match="missing here but present on") as err:
        Batch.from_rows(rows)
    assert err.value.row == lacking[0]
    assert err.value.field == name
    assert "on every trajectory or on none" in str(err.value)


def test_a_list_on_every_row_or_on_none_is_read() -> None:
    rows = [
        {"reward": 1.0, "logprobs": [-0.1, -0.2], "behavior_logprobs": [-0.3, -0.3]},
        {"reward": 0.0, "logprobs": [-0.4], "behavior_logprobs": [-0.5]},
    ]
    assert Batch.from_rows(rows).behavior_logprobs is not None
    plain = [{"reward": 1.0, "logprobs": [-0.1, -0.2]}, {"reward": 0.0, "logprobs": [-0.4]}]
    batch = Batch.from_rows(plain)
    assert batch.behavior_logprobs is None  # a batch without them is on-policy
    assert batch.action_mask.tolist() == batch.mask.tolist()


@pytest.mark.parametrize(
    ("bad", "field", "match"),
    [
        ({"logprobs": [-0.1]}, "reward", "missing"),
        ({"reward": 1.0}, "logprobs", "missing"),
        ({"reward": 1.0, "logprobs": []}, "logprobs", "empty"),
        ({"reward": 1.0, "logprobs": "abc"}, "logprobs", "list"),
        ({"reward": 1.0, "logprobs": [-0.1, None]}, "logprobs", "None"),
        ({"reward": 1.0, "logprobs": [-0.1], "values": [0.1, 0.2]}, "values", "2 entries"),
        ({"reward": 1.0, "logprobs": [-0.1], "action_mask": [1, 1]}, "action_mask", "entries"),
        ({"reward": 1.0, "logprobs": [-0.1], "action_mask": ["0"]}, "action_mask", "number"),
        ({"reward": 1.0, "logprobs": [-0.1], "action_mask": [2]}, "action_mask", "0/1"),
        ({"reward": math.inf, "logprobs": [-0.1]}, "reward", "finite"),
        ({"reward": "maybe", "logprobs": [-0.1]}, "reward", "not a grade"),
        ({"reward": 1.0, "logprobs": [0.2]}, "logprobs", "log p"),
        (
            {"reward": 1.0, "logprobs": [-0.1], "behavior_logprobs": [math.nan]},
            "behavior_logprobs",
            "nan",
        ),
    ],
)
def test_refusals_name_row_and_field(bad: dict, field: str, match: str) -> None:
    good: dict = {"reward": 0.0, "logprobs": [-0.3]}
    fill = {"values": [0.5], "action_mask": [1], "behavior_logprobs": [-0.3]}
    good.update({name: value for name, value in fill.items() if name in bad})
    rows = [good, bad]
    with pytest.raises(InputError, match=match) as err:
        Batch.from_rows(rows)
    assert err.value.row == 1
    assert err.value.field == field


def test_positive_logprob_on_an_observation_token_is_fine() -> None:
    batch = Batch.from_rows([{"reward": 1.0, "logprobs": [-0.1, 3.0], "action_mask": [1, 0]}])
    assert batch.logprobs[0, 1] == 3.0


def test_empty_batch_and_required_fields() -> None:
    with pytest.raises(InputError, match="empty"):
        Batch.from_rows([])
    with pytest.raises(InputError, match="values") as err:
        Batch.from_rows([{"reward": 1.0, "logprobs": [-0.1]}], require={"values"})
    assert err.value.field == "values"
    with pytest.raises(InputError, match="task id"):
        Batch.from_rows([{"reward": 1.0, "logprobs": [-0.1]}], require={"task_id"})
    assert Batch.from_rows([{"logprobs": [-0.1]}], need_reward=False).size == 1


def test_from_tensors_lengths_mask_and_to() -> None:
    lp = torch.tensor([[-0.1, -0.2, -0.3], [-0.4, 0.0, 0.0]], dtype=torch.float64)
    batch = Batch.from_tensors(lp, rewards=[1.0, 0.0], lengths=[3, 1])
    assert batch.mask.tolist() == [[True, True, True], [True, False, False]]
    assert batch.action_mask.tolist() == batch.mask.tolist()
    am = torch.tensor([[1, 0, 1], [1, 1, 1]], dtype=torch.bool)
    masked = Batch.from_tensors(lp, rewards=[1.0, 0.0], mask=batch.mask, action_mask=am)
    assert masked.action_mask.tolist() == [[True, False, True], [True, False, False]]
    f32 = masked.to("cpu", torch.float32)
    assert f32.logprobs.dtype == torch.float32 and f32.rewards.dtype == torch.float32
    assert f32.action_mask.dtype == torch.bool
    with pytest.raises(InputError, match="shape"):
        Batch.from_tensors(lp, rewards=[1.0, 0.0], values=torch.zeros(2, 2))
    with pytest.raises(InputError, match="rewards"):
        Batch.from_tensors(lp, rewards=[1.0])


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_jsonl_and_parquet_read_the_same(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "b.jsonl", ROWS)
    as_bool = [{**r, "action_mask": [bool(m) for m in r["action_mask"]]} for r in ROWS]
    pq.write_table(pa.Table.from_pylist(as_bool), tmp_path / "b.parquet")
    a = Batch.from_columns(read_batch(tmp_path / "b.jsonl"), require={"values"})
    b = Batch.from_columns(read_batch(tmp_path / "b.parquet"), require={"values"})
    for name in ("logprobs", "mask", "action_mask", "values", "rewards"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name


def test_file_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_text(
        json.dumps(ROWS[0])
        + "\n\n"
        + json.dumps({"reward": 1, "logprobs": [0.5], "values": [0.5], "action_mask": [1]})
        + "\n"
    )
    with pytest.raises(InputError, match=r"b\.jsonl:3: field 'logprobs'"):
        Batch.from_columns(read_batch(path))
    path.write_text("{not json\n")
    with pytest.raises(InputError, match=r"b\.jsonl:1: not valid JSON"):
        read_batch(path)
    path.write_text(json.dumps(ROWS[0]) + "\n\n  \n" + json.dumps(ROWS[1]) + "\n")
    rows, lines = read_jsonl(path)
    assert rows == ROWS and lines == [1, 4]
    assert read_batch_rows(path) == ROWS
    path.write_text("[1, 2]\n")
    with pytest.raises(InputError, match="object"):
        read_batch(path)
    table = pa.table({"reward": [1.0, None], "logprobs": [[-0.1], [-0.2]]})
    table_path = tmp_path / "c.parquet"
    pq.write_table(table, table_path)
    # an ungraded row is the reader's fact: left out and named, or a failure under fail
    skipped = read_batch(tmp_path / "c.parquet")
    assert skipped.size == 1 and any("c.parquet row 1" in n for n in skipped.notes)
    failed = Batch.from_columns(read_batch(tmp_path / "c.parquet", missing="fail"))
    assert failed.rewards.tolist() == [1.0, 0.0]
    pq.write_table(pa.table({"reward": [None, None], "logprobs": [[-0.1], [-0.2]]}), table_path)
    with pytest.raises(InputError, match=r"c\.parquet.*field 'reward'"):
        read_batch(table_path)
    pq.write_table(pa.table({"reward": [1.0], "logprobs": [[-0.1, None]]}), tmp_path / "d.parquet")
    with pytest.raises(InputError, match="null"):
        read_batch(tmp_path / "d.parquet")
    with pytest.raises(UsageError, match="unknown file type"):
        read_batch(Path(__file__))


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_write_update_round_trip_and_refuses_overwrite(tmp_path: Path, suffix: str) -> None:
    rows = [{**r, "task_id": f"t{i}"} for i, r in enumerate(ROWS)]
    batch = Batch.from_rows(rows)
    update = SAO().update(batch)
    out = tmp_path / f"out{suffix}"
    write_update(out, batch, update)
    back = (
        pq.read_table(out).to_pylist()
        if suffix == ".parquet"
        else [json.loads(line) for line in out.read_text().splitlines()]
    )
    assert [r["task_id"] for r in back] == ["t0", "t1"]
    assert len(back[0]["coefficients"]) == 3 and len(back[1]["coefficients"]) == 2
    assert back[1]["coefficients"] == update.coefficients[1, :2].tolist()
    assert back[0]["value_targets"] == [1.0, 1.0, 1.0]
    assert [r["admitted"] for r in back] == update.admitted.tolist()
    with pytest.raises(UsageError, match="--force"):
        write_update(out, batch, update)
    fr = FlashReinforce().update(Batch.from_rows(ROWS))
    write_update(out, Batch.from_rows(ROWS), fr, force=True)
    back = (
        pq.read_table(out).to_pylist()
        if suffix == ".parquet"
        else [json.loads(x) for x in out.read_text().splitlines()]
    )
    assert back[0]["value_targets"] is None and "task_id" not in back[0]


_ENTRIES = [-0.5, 0.0, -0.0, 0.3, math.nan, math.inf, -math.inf, -1e308, 1e308]


@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from(_ENTRIES), st.booleans()), min_size=1, max_size=6),
        min_size=1,
        max_size=5,
    )
)
@settings(max_examples=150, deadline=None)
def test_the_runner_refuses_the_first_bad_action_token_by_hand(
    rows: list[list[tuple[float, bool]]],
) -> None:
    """Junk anywhere off the action tokens is let through; on one, the first such token (row
    by row, then by position) is named, whichever fast path the tensor takes."""
    width = max(len(r) for r in rows)
    values = [[v for v, _ in r] + [-0.0] * (width - len(r)) for r in rows]
    action = [[a for _, a in r] + [False] * (width - len(r)) for r in rows]
    batch = Batch.from_tensors(
        torch.tensor(values, dtype=torch.float64),
        rewards=[0.0] * len(rows),
        action_mask=torch.tensor(action),
    )
    bad = [
        (i, t)
        for i, r in enumerate(values)
        for t, v in enumerate(r)
        if action[i][t] and not (math.isfinite(v) and v <= 0)
    ]
    needs = Needs(logprobs=("logprobs",), reward=False)
    if not bad:
        check_batch(batch, needs, "sft")
        return
    with pytest.raises(InputError) as err:
        check_batch(batch, needs, "sft")
    assert (err.value.row, err.value.field) == (bad[0][0], "logprobs")
    assert f"token {bad[0][1]} " in str(err.value)


@settings(max_examples=30, deadline=None)
@given(
    field=st.sampled_from(["agent", "values", "logprobs", "action_mask"]),
    column=st.sampled_from(["nosuch", "agent_id", "critic.values", "Values"]),
    parquet=st.booleans(),
)
def test_a_mapped_column_no_row_holds_is_refused(
    tmp_path_factory: pytest.TempPathFactory, field: str, column: str, parquet: bool
) -> None:
    """An optional field mapped to a column the rows lack is refused, as a mapped reward is:
    read from nowhere, it would leave the method on its defaults in silence (a shared rae
    baseline, no critic)."""
    tmp = tmp_path_factory.mktemp("mapped")
    rows = [
        {**r, "task_id": "t", "agent": "a", "action_mask": [int(m) for m in r["action_mask"]]}
        for r in ROWS
    ]
    path = tmp / ("b.parquet" if parquet else "b.jsonl")
    if parquet:
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=rf"--map {field}={column}: the rows have no column"):
        read_batch(path, {field: column})
    assert field in read_batch(path, {field: field}).sources


def test_rae_agent_key_naming_no_column_is_refused(tmp_path: Path) -> None:
    from whilecli.methods.run import run_update

    rows = [{**r, "task_id": "t", "agent": "a"} for r in ROWS]
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match="--agent-key nosuch: the rows have no column 'nosuch'"):
        run_update(path, "rae", {"agent_key": "nosuch"}, output=str(tmp_path / "o.jsonl"))
