"""Hugging Face ``datasets`` saved with ``Dataset.save_to_disk`` (``huggingface/datasets``,
``src/datasets/arrow_dataset.py``: ``save_to_disk`` and ``_save_to_disk_single``): a folder
of shards ``data-<i:05d>-of-<n:05d>.arrow``, each an Arrow IPC *stream* (``ArrowWriter``,
``src/datasets/arrow_writer.py``: ``_WRITER_CLASS = pa.RecordBatchStreamWriter``, its schema's
metadata ``huggingface`` holding the features and fingerprint), beside ``state.json``
(``_data_files: [{"filename": ...}]``, ``_fingerprint``, ``_format_columns``,
``_format_kwargs``, ``_format_type``, ``_output_all_columns``, ``_split``) and
``dataset_info.json`` (``asdict(DatasetInfo)``: ``description``, ``citation``, ``homepage``,
``license``, ``features``, ...). ``DatasetDict.save_to_disk`` writes one such folder per split
and ``dataset_dict.json`` (``{"splits": [...]}``) above them.

Rollouts kept as a dataset (a trainer's or an eval script's ``Dataset.from_list(rows)``) are
rows like any others: a shard is read as the table it is and its columns resolve through the
alias table (``task_id``, ``reward``, ``prompt``, ``completion``, ...), as a Parquet file's
do. A shard is recognised by the ``huggingface`` metadata ``ArrowWriter`` writes, or by the
``state.json`` beside it naming it; the sidecars are left out of a folder, and refused when
named.
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import Any

from whilecli import jsonout
from whilecli.errors import InputError

NAME = "hf-datasets"
SUFFIX = ".arrow"
#: The key ``ArrowWriter`` gives its schema's metadata.
METADATA_KEY = b"huggingface"
STATE = "state.json"


def is_state(doc: Any) -> bool:
    """``state.json``: the shards' names and the dataset's fingerprint and format."""
    return (
        isinstance(doc, dict) and isinstance(doc.get("_data_files"), list) and "_fingerprint" in doc
    )


def is_info(doc: Any) -> bool:
    """``dataset_info.json``: ``asdict(DatasetInfo)``."""
    return isinstance(doc, dict) and {"citation", "homepage", "features"} <= set(doc)


def is_split_index(doc: Any) -> bool:
    """``dataset_dict.json``: the splits of a ``DatasetDict``, each a folder beside it."""
    return (
        isinstance(doc, dict)
        and set(doc) == {"splits"}
        and isinstance(doc["splits"], list)
        and all(isinstance(s, str) for s in doc["splits"])
    )


def sidecar(doc: Any) -> str | None:
    """Which of ``save_to_disk``'s sidecars a JSON document is, or None."""
    if is_state(doc):
        return "a Hugging Face datasets state.json (the data-*.arrow shards beside it are rows)"
    if is_info(doc):
        return (
            "a Hugging Face datasets dataset_info.json (the data-*.arrow shards beside it are rows)"
        )
    if is_split_index(doc):
        return (
            "a Hugging Face datasets dataset_dict.json (its splits' folders beside it hold the"
            " data-*.arrow shards)"
        )
    return None


def _named_by_state(path: Path) -> bool:
    """Whether the ``state.json`` beside ``path`` lists it among its ``_data_files``."""
    state = path.with_name(STATE)
    try:
        doc = jsonout.parse(state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not is_state(doc):
        return False
    return any(isinstance(f, dict) and f.get("filename") == path.name for f in doc["_data_files"])


def _table(data: bytes, name: str) -> Any:
    """The Arrow table of an IPC stream (``ArrowWriter``'s) or file."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    errors: list[str] = []
    for opener in (ipc.open_stream, ipc.open_file):
        try:
            with opener(pa.BufferReader(data)) as reader:
                return reader.read_all()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, ValueError) as err:
            errors.append(str(err).splitlines()[0] if str(err) else type(err).__name__)
    raise InputError(f"not an Arrow IPC stream or file ({errors[0]})", file=name)


def convert(source: Any, data: bytes) -> Any:
    """``source`` (a :class:`~whilecli.io.sources.Source` of an ``.arrow`` shard, its bytes
    ``data``) as the in-memory Parquet of its table, for the streaming reader."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = _table(data, source.name)
    metadata = table.schema.metadata or {}
    path = source.path
    if METADATA_KEY not in metadata and not (isinstance(path, Path) and _named_by_state(path)):
        raise InputError(
            "an Arrow file that is no Hugging Face datasets shard (no huggingface metadata in"
            " its schema, no state.json beside it naming it): write it as Parquet"
            " (pyarrow.parquet.write_table) to read it",
            file=source.name,
        )
    if table.num_rows == 0:
        raise InputError("no rows: the shard's table is empty", file=source.name)
    sink = io.BytesIO()
    try:
        pq.write_table(table.replace_schema_metadata(None), sink)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise InputError(f"a column cannot be read: {err}", file=source.name) from None
    split = _split(path)
    notes = ["a Hugging Face datasets shard (save_to_disk), read as its Arrow table"]
    return replace(
        source,
        kind="parquet",
        data=sink.getvalue(),
        compression=None,
        format=NAME,
        notes=(*source.notes, *notes),
        env=split if split is not None else source.env,
    )


def _split(path: Any) -> str | None:
    """The split ``state.json`` names for the shard (``_split``), where it names one."""
    if not isinstance(path, Path):
        return None
    try:
        doc = jsonout.parse(path.with_name(STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    split = doc.get("_split") if isinstance(doc, dict) else None
    return split if isinstance(split, str) and split else None
