"""Hugging Face datasets saved with save_to_disk (datasets/arrow_dataset.py: save_to_disk;
arrow_writer.py: ArrowWriter, a pa.RecordBatchStreamWriter with the huggingface schema
metadata): data-<i:05d>-of-<n:05d>.arrow shards beside state.json and dataset_info.json, and
dataset_dict.json above a DatasetDict's split folders. A shard's columns are read through the
alias table; the sidecars are left out of a folder and refused when named; an Arrow file no
dataset wrote is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

#: Per task, its rollouts' rewards.
GRID = {"gsm8k-0": [1.0, 0.0, 1.0, 1.0], "gsm8k-1": [0.0, 0.0, 0.0, 1.0], "gsm8k-2": [0.0] * 4}


def _rows() -> list[dict[str, Any]]:
    return [
        {
            "task_id": task,
            "prompt": [{"role": "user", "content": f"Solve {task}"}],
            "completion": [{"role": "assistant", "content": f"draw {k}: {reward}"}],
            "reward": reward,
            "finish_reason": "length" if (task, k) == ("gsm8k-2", 3) else "stop",
            "model": "Qwen/Qwen3-1.7B",
        }
        for task, rewards in GRID.items()
        for k, reward in enumerate(rewards)
    ]


def _features(table: pa.Table) -> dict[str, Any]:
    return {
        name: {"_type": "Value", "dtype": str(table.schema.field(name).type)}
        for name in table.column_names
    }


def _save_to_disk(
    folder: Path, rows: list[dict[str, Any]], shards: int, metadata: bool = True
) -> None:
    """As Dataset.save_to_disk writes: the shards, state.json, dataset_info.json."""
    folder.mkdir(parents=True)
    table = pa.Table.from_pylist(rows)
    info = {"features": _features(table)}
    if metadata:
        hf = json.dumps({"info": info, "fingerprint": "8c1e3f0a2b4d6e71"})
        table = table.replace_schema_metadata({"huggingface": hf})
    size = -(-table.num_rows // shards)
    for i in range(shards):
        name = folder / f"data-{i:05d}-of-{shards:05d}.arrow"
        with (
            pa.OSFile(str(name), "wb") as sink,
            pa.RecordBatchStreamWriter(sink, table.schema) as w,
        ):
            w.write_table(table.slice(i * size, size))
    state = {
        "_data_files": [{"filename": f"data-{i:05d}-of-{shards:05d}.arrow"} for i in range(shards)],
        "_fingerprint": "8c1e3f0a2b4d6e71",
        "_format_columns": None,
        "_format_kwargs": {},
        "_format_type": None,
        "_output_all_columns": False,
        "_split": None,
    }
    (folder / "state.json").write_text(json.dumps(state, indent=2, sort_keys=True))
    dataset_info = {"builder_name": None, "citation": "", "config_name": None}
    dataset_info |= {"dataset_name": None, "dataset_size": None, "description": ""}
    dataset_info |= {"download_checksums": None, "download_size": None, "features": info}
    dataset_info |= {"homepage": "", "license": "", "size_in_bytes": None, "splits": None}
    (folder / "dataset_info.json").write_text(json.dumps(dataset_info, indent=2, sort_keys=True))


def _dataset_dict(root: Path) -> Path:
    folder = root / "gsm8k_samples"
    _save_to_disk(folder / "test", _rows(), shards=2)
    (folder / "dataset_dict.json").write_text(json.dumps({"splits": ["test"]}))
    return folder


def test_a_saved_dataset_reads_as_its_rows(tmp_path: Path) -> None:
    rows = read_rows([str(_dataset_dict(tmp_path))])
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), c=pl.col("passed").cast(pl.Int64).sum())
    assert sorted(per.iter_rows()) == [("gsm8k-0", 4, 3), ("gsm8k-1", 4, 1), ("gsm8k-2", 4, 0)]
    assert frame["truncated"].sum() == 1
    assert set(frame["model"].to_list()) == {"Qwen/Qwen3-1.7B"}
    assert rows.format == "hf-datasets"


@pytest.mark.parametrize(
    "sidecar", ["test/state.json", "test/dataset_info.json", "dataset_dict.json"]
)
def test_a_sidecar_named_is_refused(tmp_path: Path, sidecar: str) -> None:
    folder = _dataset_dict(tmp_path)
    with pytest.raises(InputError, match="Hugging Face datasets"):
        read_rows([str(folder / sidecar)])


def test_a_shard_its_state_names_is_read_without_metadata(tmp_path: Path) -> None:
    _save_to_disk(tmp_path / "ds", _rows(), shards=1, metadata=False)
    frame = read_rows([str(tmp_path / "ds" / "data-00000-of-00001.arrow")]).frame.collect()
    assert frame.height == 12


def test_an_arrow_file_no_dataset_wrote_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rows.arrow"
    table = pa.Table.from_pylist(_rows())
    with pa.OSFile(str(path), "wb") as sink, pa.RecordBatchStreamWriter(sink, table.schema) as w:
        w.write_table(table)
    with pytest.raises(InputError, match="no Hugging Face datasets shard"):
        read_rows([str(path)])
    path.write_bytes(b"not arrow at all")
    with pytest.raises(InputError, match="not an Arrow IPC stream or file"):
        read_rows([str(path)])
