"""The dataset prime-rl's SFT trainer reads, built from graded rows: the passing rows' text.

prime-rl's SFT data reader (``spec/prime-rl.md`` §11, ``src/prime_rl/trainer/sft/data.py``)
loads a dataset with ``datasets.load_dataset`` and takes, per example, both a ``prompt`` and
a ``completion`` column (message lists, or strings) or one ``messages`` column. This module
writes the first layout: two columns of message lists (``{"role", "content"}`` structs), one
row per passing rollout (reward ≥ the pass threshold, read as :func:`whilecli.io.table.
read_table` reads it for every command), so the loss (prime-rl's default mask: assistant
tokens only) is the seed's SFT loss on the passes, L = −Σ_i Σ_t log π_θ(a_i,t | h_i,t)
(``seeds/methods-in-symbols.md``, "SFT": push the passes; the trainer does not filter).

The text is found under the reading layer's aliases (:data:`whilecli.io.aliases.
PROMPT_ALIASES`, :data:`~whilecli.io.aliases.COMPLETION_ALIASES`); a ``messages`` column
with no completion column is a whole chat, cut at its first assistant turn. Rows that carry
no text are refused, naming the fields looked for.

``datasets.load_dataset`` takes a local *folder* of data files (a single file path is looked
up on the Hub), so the dataset is a folder holding one ``train.parquet``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from whilecli import jsonout
from whilecli.errors import InputError, UsageError, WhileError, shown_path
from whilecli.io.aliases import COMPLETION_ALIASES, PROMPT_ALIASES

#: The file inside the dataset folder (``load_dataset(folder)`` reads it as split "train").
DATA_FILE = "train.parquet"
#: One chat message as the Parquet file stores it.
MESSAGE = pl.Struct({"role": pl.String(), "content": pl.String()})
SCHEMA = {"prompt": pl.List(MESSAGE), "completion": pl.List(MESSAGE)}
ROLES = ("system", "user", "assistant", "tool")

Message = dict[str, str]


@dataclass
class SFTData:
    """Passing rows as prompt/completion message lists, and what was read to build them."""

    frame: pl.DataFrame  # SCHEMA: one row per passing rollout with text
    rows: int  # rows read
    passed: int  # rows that pass
    prompt_field: str
    completion_field: str  # "messages (after the first assistant turn)" for whole chats
    skipped: int = 0  # passing rows with an empty prompt or reply
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "passed": self.passed,
            "written": self.frame.height,
            "skipped": self.skipped,
            "prompt_field": self.prompt_field,
            "completion_field": self.completion_field,
        }


def dataset_folder(toml: str | None, data: str | None) -> Path:
    """Where the dataset goes: ``--data`` if given, else beside the TOML (``sft.toml`` →
    ``sft.data/``). Writing the TOML to stdout leaves no place to name: ``--data`` is needed."""
    if data is not None:
        if not data.strip():
            raise UsageError("--data is empty")
        return Path(data)
    if toml is None:
        raise UsageError(
            "an SFT config from rows writes its dataset beside the TOML: pass -o FILE.toml, "
            "or --data FOLDER with -o -"
        )
    path = Path(toml)
    return path.with_name(path.stem + ".data")


def _series(frame: pl.DataFrame, dotted: str) -> pl.Series | None:
    """The column at ``dotted`` (struct fields after the first dot), or None."""
    head, *rest = dotted.split(".")
    if head not in frame.columns:
        return None
    col = frame.get_column(head)
    for part in rest:
        if not isinstance(col.dtype, pl.Struct) or part not in [f.name for f in col.dtype.fields]:
            return None
        col = col.struct.field(part)
    return col


def _content(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # OpenAI content parts: [{"type": "text", "text": ...}]
        texts = [p.get("text") for p in value if isinstance(p, Mapping)]
        if texts and all(isinstance(t, str) for t in texts):
            return "".join(t for t in texts if isinstance(t, str))
    return json.dumps(value, ensure_ascii=False, default=str)


def _json_messages(text: str) -> list[Any] | None:
    """``text`` decoded when it is a JSON message or list of messages, else None."""
    if not text.lstrip().startswith(("[", "{")):
        return None
    try:
        value = jsonout.parse(text)
    except ValueError:  # not JSON, or nested past the parser's limit
        return None
    if isinstance(value, dict):
        value = [value]
    if (
        isinstance(value, list)
        and value
        and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in value)
    ):
        return value
    return None


def messages(value: Any, role: str) -> list[Message] | None:
    """``value`` as a message list: a string becomes one ``role`` message (as prime-rl's
    ``normalize_messages`` does), a message or a list of messages keeps its roles. None when
    it holds no text. A string holding a JSON message list (how the reader keeps a column
    whose rows mix text and lists) is that list."""
    if isinstance(value, str):
        decoded = _json_messages(value)
        if decoded is None:
            return [{"role": role, "content": value}] if value.strip() else None
        value = decoded
    if isinstance(value, Mapping) and "role" in value:
        value = [value]
    if not isinstance(value, list) or not value:
        return None
    out: list[Message] = []
    for item in value:
        if isinstance(item, str):
            out.append({"role": role, "content": item})
        elif isinstance(item, Mapping) and isinstance(item.get("role"), str):
            out.append({"role": str(item["role"]), "content": _content(item.get("content"))})
        else:
            return None
    if not any(m["content"].strip() for m in out):
        return None
    return out


def _split_chat(value: Any) -> tuple[list[Message] | None, list[Message] | None]:
    """A whole chat cut at its first assistant turn: (the turns before, the turns from it)."""
    chat = messages(value, "user")
    if chat is None:
        return None, None
    first = next((i for i, m in enumerate(chat) if m["role"] == "assistant"), None)
    if not first:  # no assistant turn, or nothing before it
        return None, None
    return chat[:first], chat[first:]


def _no_text(file: str | None, prompt: str | None, completion: str | None) -> InputError:
    missing = []
    if prompt is None:
        missing.append(f"no prompt (looked for {', '.join(PROMPT_ALIASES)})")
    if completion is None:
        missing.append(
            f"no completion (looked for {', '.join(COMPLETION_ALIASES)}, or a messages chat "
            "with an assistant turn)"
        )
    return InputError(
        "the rows carry no text to train on: " + " and ".join(missing) + "; SFT needs the "
        "prompts and the model's replies (e.g. prompt/completion columns)",
        file=file,
        field="completion" if prompt is not None else "prompt",
    )


def build_sft_data(
    paths: Sequence[str],
    *,
    mapping: Mapping[str, str] | None = None,
    pass_threshold: float | None = None,
    missing: str = "skip",
    input_format: str | None = None,
) -> SFTData:
    """Read ``paths`` through the reading layer and keep the passing rows' text (``missing``
    and ``input_format`` as ``--missing`` and ``--input-format`` read rows everywhere).

    Raises :class:`WhileError` with exit 1 when no row passes (nothing to train on), and
    :class:`InputError` (exit 2) when the rows carry no prompt or completion text.
    """
    from whilecli.io.table import read_table

    table = read_table(
        list(paths),
        mapping=mapping,
        pass_threshold=pass_threshold,
        missing=missing,
        input_format=input_format,
    )
    frame = table.frame
    prompt_field = next((a for a in PROMPT_ALIASES if _series(frame, a) is not None), None)
    completion_field = next((a for a in COMPLETION_ALIASES if _series(frame, a) is not None), None)
    whole_chat = completion_field is None and prompt_field == "messages"
    passed = table.canonical.get_column("passed").fill_null(False)
    n_passed = int(passed.sum())
    if n_passed == 0:  # first: rows that all fail (a floor) are no SFT data, text or not
        raise WhileError(
            f"no config written: none of the {table.height} rows passes (reward ≥ "
            f"{table.pass_threshold:g}), so there is nothing to fine-tune on; SFT needs a "
            "stronger model's passing completions (`whilecli config --method sft --from ROWS`)",
            exit_code=1,
        )
    if not whole_chat and (prompt_field is None or completion_field is None):
        raise _no_text(table.file(), prompt_field, completion_field)
    # a passing reply cut off at the token cap teaches the model to run to the cap (DESIGN
    # section 2, check 4's rule for a teacher's rows): left out, and said
    cut = passed & table.canonical.get_column("truncated").fill_null(False)
    n_cut = int(cut.sum())
    if n_cut == n_passed:
        raise WhileError(
            f"no config written: all {n_passed} passing rows are replies cut off at the token"
            " cap, which would teach the model to run to the cap; raise max_tokens and"
            " sample again, or score cut-off replies 0",
            exit_code=1,
        )
    keep = frame.filter(passed & ~cut)
    rows: list[dict[str, list[Message]]] = []
    skipped = 0
    if whole_chat:
        for value in _to_list(keep, "messages"):
            p, c = _split_chat(value)
            if p is None or c is None:
                skipped += 1
            else:
                rows.append({"prompt": p, "completion": c})
    else:
        assert prompt_field is not None and completion_field is not None
        for pv, cv in zip(
            _to_list(keep, prompt_field), _to_list(keep, completion_field), strict=True
        ):
            p, c = messages(pv, "user"), messages(cv, "assistant")
            if p is None or c is None:
                skipped += 1
            else:
                rows.append({"prompt": p, "completion": c})
    if not rows:
        raise InputError(
            f"all {n_passed} passing rows have an empty prompt or reply "
            f"({prompt_field}, {completion_field or 'messages'}): nothing to fine-tune on",
            file=table.file(),
            field=completion_field or prompt_field,
        )
    notes = []
    if n_cut:
        notes.append(
            f"{n_cut} passing rows cut off at the token cap were left out (they would teach"
            " the model to run to the cap)"
        )
    if skipped:
        notes.append(f"{skipped} passing rows with an empty prompt or reply were left out")
    return SFTData(
        frame=pl.DataFrame(rows, schema=SCHEMA),
        rows=table.height,
        passed=n_passed,
        prompt_field="messages (before the first assistant turn)"
        if whole_chat
        else str(prompt_field),
        completion_field="messages (from the first assistant turn)"
        if whole_chat
        else str(completion_field),
        skipped=skipped,
        notes=notes,
    )


def _to_list(frame: pl.DataFrame, dotted: str) -> list[Any]:
    col = _series(frame, dotted)
    return [] if col is None else col.to_list()


def check_apart(config: Path, folder: Path) -> None:
    """Refuse a config path and a dataset folder that overlap: the same path, the config
    inside the folder (``load_dataset`` would read it as data), or the folder inside the
    config's path. Checked before anything is written, so a refusal leaves nothing behind."""
    toml, data = Path(os.path.realpath(config)), Path(os.path.realpath(folder))
    if toml == data or data in toml.parents or toml in data.parents:
        raise UsageError(
            f"--data {folder} and -o {config} overlap: the dataset folder and the config file"
            " must be apart; pick another --data folder or -o file"
        )


def check_dataset_writable(
    folder: Path, *, force: bool, inputs: Sequence[str | os.PathLike[str]] = ()
) -> Path:
    """Refuse a dataset folder that holds anything but our one file (``load_dataset`` would
    read every data file in it), that file without ``force``, or that file when it is one of
    ``inputs`` (the rows read); return the file's path."""
    from whilecli.fileio import check_writable

    if folder.exists() and not folder.is_dir():
        raise UsageError(
            f"{shown_path(folder)} is a file; the SFT dataset is a folder (--data FOLDER)"
        )
    if folder.is_dir():
        others = sorted(p.name for p in folder.iterdir() if p.name != DATA_FILE)
        if others:
            raise UsageError(
                f"{shown_path(folder)} holds other files ({', '.join(others[:3])});"
                " load_dataset would read them too: pick another --data folder"
            )
    return check_writable(folder / DATA_FILE, force=force, inputs=inputs)


def write_dataset(
    data: SFTData, folder: Path, *, force: bool, inputs: Sequence[str | os.PathLike[str]] = ()
) -> Path:
    """Write ``data`` as ``FOLDER/train.parquet`` atomically; return the file's path."""
    from whilecli.fileio import atomic_write

    target = check_dataset_writable(folder, force=force, inputs=inputs)
    atomic_write(target, lambda tmp: data.frame.write_parquet(tmp), force=force)
    return target


def write_outputs(
    cfg: Any,
    output: str | None,
    text: str,
    *,
    force: bool,
    inputs: Sequence[str | os.PathLike[str]] = (),
    stdout: bool = False,
) -> None:
    """A config's files: its dataset (an SFT config built from rows), then the TOML that
    names it at ``output`` (None: on stdout where ``stdout``, else the caller's). A TOML that
    cannot be written (a full disk, a closed stdout) takes back the dataset this call
    created, so a failed run leaves nothing a rerun would have to overwrite."""
    from whilecli.fileio import atomic_write_text

    data, path = getattr(cfg, "data", None), getattr(cfg, "data_path", None)
    created: list[Path] = []
    if isinstance(data, SFTData) and path is not None:
        target = Path(path)
        missing = [p for p in (*reversed(target.parents), target) if not p.exists()]
        write_dataset(data, target.parent, force=force, inputs=inputs)
        created = missing
    if output is None and not stdout:
        return
    try:
        if output is not None:
            atomic_write_text(output, text, force=force)
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    except BaseException:
        for made in reversed(created):  # the file, then the folder this call made for it
            with contextlib.suppress(OSError):
                made.unlink() if made.is_file() else made.rmdir()
        raise


def dataset_name(folder: Path) -> str:
    """The ``[data] name`` for a local folder: its absolute path (a relative name with at most
    one ``/`` that does not exist where the trainer runs is looked up on the Hub)."""
    return os.path.abspath(folder)
