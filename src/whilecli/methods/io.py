"""Writing an :class:`Update` back, one row per trajectory (reading a batch is
:mod:`whilecli.io.batch`'s; its readers stay importable from here).

Output goes to Parquet or JSONL by extension, atomically, and never replaces a file without
``force``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from whilecli import jsonout
from whilecli.fileio import (
    ROW_FORMATS,
    atomic_write,
    atomic_write_all,
    check_writable,
    output_format,
)
from whilecli.io.batch import read_batch, read_batch_rows, read_jsonl

__all__ = ["read_batch", "read_batch_rows", "read_jsonl", "update_table", "write_update"]

#: What ``update -o`` writes, by suffix (``.json`` is JSON Lines too).
UPDATE_FORMATS = {**ROW_FORMATS, "jsonl": (*ROW_FORMATS["jsonl"], ".json")}


def _kind(path: Path) -> str:
    return output_format(path, UPDATE_FORMATS)


def _ragged(tensor: Any, lengths: np.ndarray) -> pa.Array:
    import torch

    mask = (
        torch.arange(tensor.shape[1], device=tensor.device)[None, :]
        < torch.as_tensor(lengths, device=tensor.device)[:, None]
    )
    flat = tensor[mask].detach().to("cpu", torch.float64).numpy()
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat))


def update_table(batch: Any, update: Any, input_rows: Any = None) -> pa.Table:
    """One row per trajectory: task id (when present), ragged coefficients, advantages,
    value targets (null without a critic), and admitted, each list cut to the row's length.

    With ``input_rows`` (:class:`~whilecli.io.columns.InputRows`, a batch read from a file),
    one row per input row, in input order: ``row`` (its place in its source; ``file`` too
    when the batch came from several), and a row the read left out of the batch (an error
    reply, an ungraded row) carries zero coefficients and advantages over its tokens, is not
    admitted, and says why in ``left_out`` (null on the rows in the batch)."""
    lengths = batch.mask.sum(dim=1).cpu().numpy().astype(np.int64)
    data: dict[str, pa.Array] = {}
    if batch.task_ids is not None:
        data["task_id"] = pa.array(list(batch.task_ids), pa.string())
    data["coefficients"] = _ragged(update.coefficients, lengths)
    data["advantages"] = _ragged(update.advantages, lengths)
    data["admitted"] = pa.array(update.admitted.cpu().numpy().astype(bool))
    if update.value_targets is not None:
        data["value_targets"] = _ragged(update.value_targets, lengths)
    else:
        data["value_targets"] = pa.nulls(len(lengths), pa.list_(pa.float64()))
    if input_rows is None:
        return pa.table(data)
    return _every_input_row(data, input_rows)


def _every_input_row(data: dict[str, pa.Array], rows: Any) -> pa.Table:
    """The batch's output rows (``data``) placed among every input row: a left-out row gets
    zeros over its tokens (value targets null: it has no return), ``admitted`` false and ``left_out`` its
    reason."""
    batch_index = np.asarray(rows.batch, dtype=np.int64)
    out = np.flatnonzero(batch_index < 0)
    b = len(data["admitted"])
    take = batch_index.copy()
    take[out] = b + np.arange(len(out))  # the left-out rows follow the batch's
    tokens = np.asarray(rows.tokens, dtype=np.int64)[out]
    offsets = pa.array(np.concatenate([[0], np.cumsum(tokens)]).astype(np.int32))
    zeros = pa.ListArray.from_arrays(offsets, pa.array(np.zeros(int(tokens.sum()))))
    fill: dict[str, pa.Array] = {
        "coefficients": zeros,
        "advantages": zeros,
        "admitted": pa.array(np.zeros(len(out), dtype=bool)),
        "value_targets": pa.nulls(len(out), pa.list_(pa.float64())),  # no return to fit
    }
    indices = pa.array(take)
    table: dict[str, pa.Array] = {}
    if rows.file is not None:
        table["file"] = pa.array(rows.file, pa.string())
    table["row"] = pa.array(np.asarray(rows.row, dtype=np.int64))
    for name, arr in data.items():
        if name == "task_id":
            extra = pa.array([rows.task_id[k] for k in out.tolist()], pa.string())
        else:
            extra = fill[name]
        table[name] = pa.concat_arrays([arr, extra.cast(arr.type)]).take(indices)
    table["left_out"] = pa.array(rows.left_out, pa.string())
    return pa.table(table)


def write_update(
    path: str | Path,
    rows_meta: Any,
    update: Any,
    *,
    force: bool = False,
    input_rows: Any = None,
    state: tuple[str | os.PathLike[str], str] | None = None,
) -> Path:
    """Write ``update`` for the batch ``rows_meta`` (its mask and task ids) to Parquet or JSONL
    (with ``input_rows``: one row per input row, :func:`update_table`).

    Atomic, and refuses to replace an existing file unless ``force``. ``state``: (path,
    text) of rae's baselines, written together with the update (both or neither: a failed
    state write leaves no ``-o`` a rerun would be refused for), replaced without ``force``.
    """
    p = Path(path)
    kind = _kind(p)
    check_writable(p, force=force)
    table = update_table(rows_meta, update, input_rows)

    def write(tmp: Path) -> None:
        if kind == "parquet":
            pq.write_table(table, tmp)
        else:
            with tmp.open("w", encoding="utf-8") as handle:
                for row in table.to_pylist():
                    handle.write(jsonout.dumps(row) + "\n")

    if state is None:
        return atomic_write(p, write, force=force)
    where, text = state

    def write_state(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    return atomic_write_all([(p, write), (where, write_state)], force=force, replacing=[where])[0]
