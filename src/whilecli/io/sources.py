"""Where rows come from: paths, directories, globs and stdin, as files of a known kind.

A *source* is one file (or stdin's bytes) that holds rows as JSONL (plain, ``.gz`` or
``.zst``) or Parquet. This module expands the user's paths into sources, reads the first
lines of a JSONL source for the alias resolver, walks a JSONL source line by line when the
fast polars reader fails (to locate the bad line), and finds the sidecar files that name the
model (vf-eval and Prime RFT ``metadata.json``, lm-eval ``results_*.json``, verifiers v1
``config.toml``), and recognises the writer of a source from its keys and sidecars.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import functools
import glob
import gzip
import hashlib
import io
import json
import math
import os
import re
import stat
import sys
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, TypedDict, cast

import polars as pl

from whilecli import jsonout
from whilecli.errors import InputError, UsageError, WhileError
from whilecli.fileio import UnreadableFile, read_regular, reader_source
from whilecli.io.aliases import MODEL_OBJECT_KEYS, SAMPLING_PLACES, TOKEN_CAPS
from whilecli.io.formats import fastchat, opencompass, openhands, prime_rl, tinker
from whilecli.io.modelid import names_model, said_in_settings
from whilecli.io.shape import Shape

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson", ".jsonl.out")
PARQUET_SUFFIXES = (".parquet", ".pq")
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}
PARQUET_MAGIC = b"PAR1"
#: A zip archive's first bytes (an inspect_ai ``.eval`` log, a ``torch.save`` file).
ZIP_MAGIC = b"PK\x03\x04"
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: Compressions whose streams are not read, by their magic bytes and their file suffixes
#: (bzip2: ``BZh`` and the block size; xz: ``FD 37 7A 58 5A 00``; lz4's frame format:
#: ``04 22 4D 18``; 7-Zip: ``37 7A BC AF 27 1C``): refused by name, never read as text
#: that is not UTF-8, and never left out of a folder in silence.
UNREAD_MAGIC = (
    (re.compile(rb"BZh[1-9]"), "bzip2"),
    (re.compile(rb"\xfd7zXZ\x00"), "xz"),
    (re.compile(rb"\x04\x22\x4d\x18"), "lz4"),
    (re.compile(rb"7z\xbc\xaf\x27\x1c"), "7-Zip"),
)
UNREAD_SUFFIXES = {".bz2": "bzip2", ".xz": "xz", ".lzma": "xz", ".lz4": "lz4", ".7z": "7-Zip"}
#: Files other tools write beside their rows: never read as rows inside a directory.
SIDECAR_NAMES = (
    "metadata.json",
    "run_manifest.json",
    "config.toml",
    "run_spec.json",
    "display_predictions.json",
    "display_requests.json",
    "scenario.json",
    "scenario_state.json",
    "stats.json",
    "instances.json",
    "costs.json",
    "header.json",
    "summaries.json",
    "reductions.json",
)
SIDECAR_PREFIXES = ("results_", "report_")
TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t"}
ZIP_SUFFIXES = (".eval", ".zip")
#: A Hugging Face datasets shard (``save_to_disk``): an Arrow IPC stream.
ARROW_SUFFIX = ".arrow"


class Where(TypedDict, total=False):
    """Where an error points, in the file's own terms: a line (JSONL, CSV), a row (Parquet), or
    a place in a document (``at``: an archive's member, an array's entry)."""

    line: int
    row: int
    at: str


@dataclass(frozen=True)
class Source:
    """One input file (or stdin's bytes): its display name, kind and compression."""

    name: str  # what errors print: the path, or "<stdin>"
    kind: str  # "jsonl" | "parquet"; before :func:`resolve`, also "table", "zip" or "arrow"
    path: Path | None = None  # None for stdin
    data: bytes | None = None  # stdin's bytes
    compression: str | None = None  # None | "gzip" | "zstd"
    #: Set when another tool's document (a JSON array, an inspect log, a HELM run, ...) was
    #: converted to rows in memory (``data``): the tool's format name, where each canonical
    #: field was taken from, and notes for the report (see :mod:`whilecli.io.formats`).
    format: str | None = None
    origins: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    #: The environment or task the file's sidecars name (vf-eval env, lm-eval task, ...), for
    #: pooling; None when none is recorded.
    env: str | None = None
    #: A converted document's rows, where each came from in the file (its CSV line, its
    #: array entry, its archive member, its line of JSON Lines), in row order.
    positions: tuple[Where, ...] = ()
    #: A converted document's fields as the file spells them (canonical -> its own name).
    spelled: tuple[tuple[str, str], ...] = ()
    #: A converted document's model read from a name that may not be the writer's
    #: (:attr:`whilecli.io.formats.Converted.model_unsure`); None: its own record, or none.
    model_unsure: str | None = None
    #: A converted document's task id where it is the writer's own group of a task's draws
    #: (:attr:`whilecli.io.formats.Converted.grouped`); None: an id of the usual kind.
    grouped: str | None = None

    def field(self, name: str) -> str:
        """A canonical field as this file spells it (``name`` itself where it is not a
        converted document's, or where the field came from no one field)."""
        return dict(self.spelled).get(name, name)

    def as_written(self, err: InputError) -> InputError:
        """``err`` naming the field as this file spells it (a converted document's
        ``instance_id``, not the canonical ``task_id``); other errors as they are."""
        own = dict(self.spelled).get(err.field or "")
        if own is None or type(err) is not InputError or err.file != self.name:
            return err
        return err.renamed(own)

    def where(self, lineno: int) -> Where:
        """How an error names a row, in the file's own terms: the 1-based line of a JSONL
        file; for a converted document, where the row came from (:attr:`positions`)."""
        if self.format is None:
            return {"line": lineno}
        if 0 < lineno <= len(self.positions):
            return self.positions[lineno - 1]
        return {"row": lineno - 1}

    def polars_source(self) -> str | bytes | io.BytesIO:
        """What ``pl.scan_*`` reads: the bytes of a stream, or the file's literal path (polars
        expands ``*``, ``?`` and ``[...]`` in a path: escaped here, so a file named
        ``odd[1].jsonl`` is read as itself, never as ``odd1.jsonl`` beside it)."""
        if self.data is not None:
            return self.data if self.kind == "jsonl" else io.BytesIO(self.data)
        assert self.path is not None
        # a name that is not UTF-8: the file's bytes (polars takes names as text only)
        source = reader_source(self.path, literal(self.path))
        if isinstance(source, io.BytesIO) and self.kind == "jsonl":
            return source.getvalue()
        return source

    def file_path(self) -> str:
        """The file's path for readers that take it as it is (pyarrow, ``open``)."""
        assert self.path is not None
        return os.fspath(self.path)


def literal(path: str | os.PathLike[str]) -> str:
    """``path`` as a polars scan reads it literally: absolute (no ``~`` or scheme is read into
    it) with its glob characters escaped. Use with the polars calls that expand globs
    (``scan_ndjson``, ``read_ndjson``, ``scan_parquet``, ``scan_csv``, ``read_parquet_schema``);
    ``read_parquet_metadata`` takes the path as it is."""
    return glob.escape(os.path.abspath(os.fspath(path)))


def _kind_of(path: Path) -> tuple[str, str | None] | None:
    """(kind, compression) from a file name, or None when it is not a row file."""
    name = path.name.lower()
    compression = None
    for suffix, codec in COMPRESSIONS.items():
        if name.endswith(suffix):
            compression, name = codec, name[: -len(suffix)]
            break
    if name.endswith(JSONL_SUFFIXES):
        # A sidecar (metadata.json, results_*.json) is not a shard.
        if name.endswith(".json") and (name in SIDECAR_NAMES or name.startswith(SIDECAR_PREFIXES)):
            return None
        return "jsonl", compression
    if name.endswith(tuple(TABLE_SUFFIXES)):
        return "table", compression
    if name.endswith(ZIP_SUFFIXES) and compression is None:
        return "zip", None
    if name.endswith(PARQUET_SUFFIXES) and compression is None:
        return "parquet", None
    if name.endswith(ARROW_SUFFIX) and compression is None:
        return "arrow", None
    return None


def _walk(folder: Path) -> list[Path]:
    """Every file under ``folder``, sorted; a folder that cannot be listed is an error (a
    shard silently left out would change the numbers)."""
    found: list[Path] = []
    for root, _, files in _folders(folder):
        found += [root / name for name in files]
    return sorted(found)


def _folders(folder: Path) -> Iterator[tuple[Path, list[str], list[str]]]:
    """(folder, its sub-folders, its files) under ``folder``, top down. A directory link is
    followed once to each real folder, and never into a folder that holds the link (a link
    cycle, or a link to ``/``): the walk ends, whatever links the tree holds."""

    def fail(err: OSError) -> None:
        raise InputError(
            f"cannot list the folder: {_reason(err)}", file=err.filename or str(folder)
        )

    seen: set[str] = set()
    for root, dirs, files in os.walk(folder, onerror=fail, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:  # reached again through a link: walked once
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = [
            d for d in sorted(dirs) if not _holds(os.path.realpath(os.path.join(root, d)), real)
        ]
        yield Path(root), dirs, files


def _holds(outer: str, inner: str) -> bool:
    """Whether the real folder ``outer`` is ``inner`` or one of its ancestors."""
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def expand_glob(pattern: str) -> list[Path]:
    """The paths a glob matches, sorted. ``**`` matches any number of folders and is walked by
    :func:`_folders` (each real folder once, never around a link cycle: Python's own
    recursive glob follows links without end); other patterns are :func:`glob.glob`'s. As
    there, ``*`` and ``**`` skip names that begin with a dot."""
    if "**" not in pattern:
        return sorted(Path(m) for m in glob.glob(pattern))
    parts = pattern.split(os.sep)
    fixed: list[str] = []
    for part in parts:
        if glob.has_magic(part):
            break
        fixed.append(part)
    rest = parts[len(fixed) :]
    base = os.sep.join(fixed) if fixed else "."
    if fixed == [""]:
        base = os.sep
    if not os.path.isdir(base):
        return []
    found: list[Path] = [Path(base)] if fixed and _match([], rest) else []
    for root, dirs, files in _folders(Path(base)):
        rel = os.path.relpath(root, base)
        prefix = [] if rel == "." else rel.split(os.sep)
        for name in [*dirs, *files]:
            if _match([*prefix, name], rest):
                found.append(Path(root) / name if fixed else Path(*prefix, name))
    return sorted(found)


def _match(names: list[str], pattern: list[str]) -> bool:
    """Whether the path components ``names`` match the glob components ``pattern``."""
    import fnmatch

    if not pattern:
        return not names
    head, tail = pattern[0], pattern[1:]
    if head == "**":  # zero or more folders, none hidden
        for i in range(len(names) + 1):
            if _match(names[i:], tail):
                return True
            if i < len(names) and names[i].startswith("."):
                return False
        return False
    if not names:
        return False
    hidden = names[0].startswith(".") and not head.startswith(".")
    return not hidden and fnmatch.fnmatchcase(names[0], head) and _match(names[1:], tail)


def _file_source(path: Path, explicit: bool, forced: str | None = None) -> Source | None:
    kind = _kind_of(path)
    if kind is None and not explicit:
        return None
    if not os.access(path, os.R_OK):
        raise InputError("file is not readable (permission denied)", file=str(path))
    if kind is None or kind[0] in ("jsonl", "table"):
        # the bytes say how a text file is compressed, as a stream's do: a .gz name on plain
        # text, or gzip bytes behind a .jsonl name, read as what they are
        try:
            with open(path, "rb") as fh:  # a name of no format: enough to tell text from rows
                head = fh.read(6 if kind is not None else SNIFF_BYTES)
        except OSError as err:
            raise InputError(f"cannot read: {_reason(err)}", file=str(path)) from None
        refuse_unread_compression(head, str(path))
        _refuse_binary_table(head, str(path))
        if head[:4] == PARQUET_MAGIC:  # the bytes say Parquet, whatever the name says
            kind = ("parquet", None)
        elif kind is None:
            kind = ("jsonl", _codec_of(head))
            if kind == ("jsonl", None) and forced is None:
                _refuse_text_of_no_rows(head, path)
        else:
            kind = (kind[0], _codec_of(head))
    return Source(name=str(path), kind=kind[0], path=path, compression=kind[1])


#: How far into a file named as no format :func:`_refuse_text_of_no_rows` looks for JSON.
SNIFF_BYTES = 1 << 16


def _refuse_text_of_no_rows(text: bytes, path: Path) -> None:
    """A file named as no format the reader knows (``notes.md``, ``config.yaml``) and given
    no ``--input-format`` is read as JSON Lines where its text (``text``: its first
    :data:`SNIFF_BYTES`) opens with ``{`` or ``[``; any other text is refused as what it is,
    not as a JSON error on its first line."""
    opening = text.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not opening or opening[:1] in (b"{", b"[") or not _is_text(text):
        return  # rows, or bytes the reader names for what they are (a zip, NULs, not UTF-8)
    line = text[: len(text) - len(opening)].count(b"\n") + 1
    named = f"a {path.suffix} file" if path.suffix else "a file with no suffix"
    table = table_hint(opening.split(b"\n", 1)[0].decode("utf-8", "replace"))
    raise InputError(
        f"not rows: {named} is read as JSON Lines, and this one opens with text, not a JSON"
        " object"
        + (
            f"{table}"
            if table
            else " (rows are read from .jsonl, .json, .parquet, .csv, .tsv and inspect's .eval;"
            " --input-format NAME reads another name as a format)"
        ),
        file=str(path),
        line=line,
    )


def table_hint(line: str) -> str:
    """What a first line that is no JSON says where it reads as a table's header (two or
    more named cells split by commas or tabs, ``task_id,reward``): the words after the JSON
    error, naming the option that reads it; "" where it does not."""
    header = line.removeprefix("\ufeff").strip()
    if not header or header[0] in "{[":
        return ""
    for sep, kind in (("\t", "TSV (tab-separated)"), (",", "CSV (comma-separated)")):
        cells = [cell.strip().strip('"') for cell in header.split(sep)]
        if len(cells) > 1 and all(cells) and not any(":" in cell for cell in cells):
            return f": the text looks like {kind}, not JSON: pass --input-format csv"
    return ""


def _is_text(data: bytes) -> bool:
    """UTF-8 without NUL bytes (a character cut at the end of ``data`` still counts)."""
    if b"\x00" in data:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return True


def refuse_unread_compression(head: bytes, name: str) -> None:
    """Refuse bytes compressed by a tool whose streams are not read (:data:`UNREAD_MAGIC`),
    naming it: read as text they would be refused as bytes that are not UTF-8."""
    for magic, codec in UNREAD_MAGIC:
        if magic.match(head):
            raise InputError(_unread(codec), file=name)


#: An Arrow IPC file's (Feather v2's) first bytes.
ARROW_FILE_MAGIC = b"ARROW1"


def _refuse_binary_table(head: bytes, name: str) -> None:
    """Name a table file by its magic bytes where it would be read as text (refused as bytes
    that are not UTF-8 at byte 9): an Arrow IPC (Feather) file. Parquet under a JSON Lines
    name is read as the Parquet it is, as a stream's bytes are."""
    if head.startswith(ARROW_FILE_MAGIC):
        raise InputError(
            "is an Arrow IPC (Feather) file, which is not read: write it as Parquet"
            " (pyarrow.parquet.write_table(pyarrow.feather.read_table(...), 'rows.parquet'))",
            file=name,
        )


def _unread(codec: str) -> str:
    return (
        f"compressed with {codec}, which is not read: decompress it first, or compress it"
        " with gzip or zstd (.gz, .zst), which are read"
    )


def _refuse_unread_names(paths: list[Path]) -> None:
    """A row file among a directory's (or a glob's) compressed by a tool whose streams are not
    read (``rows.jsonl.bz2``): refused, as an unreadable shard is (left out in silence, its
    rows would be missing from the numbers)."""
    for p in paths:
        name = p.name.lower()
        for suffix, codec in UNREAD_SUFFIXES.items():
            if name.endswith(suffix) and _kind_of(p.with_name(p.name[: -len(suffix)])):
                raise InputError(_unread(codec), file=str(p))


def _codec_of(head: bytes) -> str | None:
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return None


#: The environment variable that sets how many bytes a stream may hold (:func:`stream_limit`).
STREAM_LIMIT_VAR = "WHILECLI_STREAM_LIMIT"
#: Default limit: a stream is held in memory, so it is bounded (an endless one, /dev/zero,
#: stops here).
STREAM_LIMIT = 2 << 30
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
#: Streams already read, so every pass over an input reads the same bytes: stdin (or a
#: stream object a library caller passes) by the object, a FIFO or ``/dev/fd/N`` by the
#: device and inode of the pipe.
_SPOOLED_STREAMS: weakref.WeakKeyDictionary[Any, Source | InputError] = weakref.WeakKeyDictionary()
_SPOOLED_PIPES: dict[tuple[int, int, int, str], tuple[Source | InputError, BinaryIO]] = {}


def stream_limit() -> int:
    """Bytes a stream may hold: :data:`STREAM_LIMIT`, or ``$WHILECLI_STREAM_LIMIT`` (a number
    of bytes, optionally with K, M, G or T)."""
    text = os.environ.get(STREAM_LIMIT_VAR, "").strip().upper().removesuffix("B")
    if not text:
        return STREAM_LIMIT
    unit = text[-1] if text[-1] in _UNITS else ""
    try:
        value = float(text[: len(text) - len(unit)]) * _UNITS[unit]
    except ValueError:
        raise UsageError(
            f"{STREAM_LIMIT_VAR}={os.environ[STREAM_LIMIT_VAR]!r}: give a number of bytes, e.g. 8G"
        ) from None
    if not (math.isfinite(value) and value >= 1):
        raise UsageError(
            f"{STREAM_LIMIT_VAR}={os.environ[STREAM_LIMIT_VAR]!r}: give a number of bytes from 1"
            " up, e.g. 8G"
        )
    return int(value)


def memory_limit_error(limit: int, name: str, what: str = "stream") -> InputError:
    """The located line for an input past :func:`stream_limit`: how to raise the limit."""
    return _too_long(limit, name, what)


def _too_long(limit: int, name: str, what: str = "stream") -> InputError:
    return InputError(
        f"the {what} is longer than {_size(limit)}, the most read into memory: set"
        f" {STREAM_LIMIT_VAR} to raise it (e.g. {STREAM_LIMIT_VAR}={_size(4 * limit)}), or"
        " write the rows to a file and pass its path",
        file=name,
    )


def _size(n: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if n >= _UNITS[unit] and n % _UNITS[unit] == 0:
            return f"{n // _UNITS[unit]}{unit}"
    return str(n)


def _read_bounded(stream: Any, name: str, limit: int, what: str = "stream") -> bytes:
    """All of ``stream``, or an error past ``limit`` bytes."""
    chunks: list[bytes] = []
    total = 0
    while True:
        try:
            chunk = stream.read(min(1 << 22, limit + 1 - total))
        except DecodeFault as fault:
            raise fault.refusal(name) from None
        except _read_errors() as err:
            raise InputError(f"cannot read the {what}: {_reason(err)}", file=name) from None
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_long(limit, name, what)


def stdin_source(stream: BinaryIO | None, name: str = "<stdin>") -> Source:
    """Read a stream (stdin, a FIFO, ``/dev/fd/N``) once, whole, and sniff it: Parquet by its
    ``PAR1`` magic, else JSONL (gzip and zstd decompressed). The same stream object asked for
    again gives the same source: every pass over an input reads the one spool."""
    obj = stream if stream is not None else sys.stdin.buffer
    try:
        cached = _SPOOLED_STREAMS.get(obj)
    except TypeError:  # not weakly referable: not cached
        cached = None
    if cached is not None:
        return _spooled(cached, name)
    try:
        source: Source | InputError = _sniffed(_read_bounded(obj, name, stream_limit()), name)
    except InputError as err:
        source = err  # a later pass fails alike, without reading a drained stream again
    with contextlib.suppress(TypeError):
        _SPOOLED_STREAMS[obj] = source
    return _spooled(source, name)


def _spooled(source: Source | InputError, name: str) -> Source:
    if isinstance(source, InputError):
        raise source
    return source if source.name == name else replace(source, name=name)


def _sniffed(data: bytes, name: str) -> Source:
    if data[:4] == PARQUET_MAGIC:
        return Source(name=name, kind="parquet", data=data)
    refuse_unread_compression(data[:6], name)
    codec = _codec_of(data[:4])
    if codec is not None:
        data = _decompress(data, codec, name)
    return Source(name=name, kind="jsonl", data=data)


def pipe_source(path: Path, raw: str) -> Source:
    """A FIFO, ``/dev/fd/N`` (a process substitution) or other character device, read once:
    a later pass (another expansion of the same path in this process) reads the spool, never
    the pipe again (a drained pipe reads empty; a FIFO whose writer left blocks for ever)."""
    st = path.stat()
    real = os.path.realpath(path)
    key = (st.st_dev, st.st_ino, st.st_rdev, real)
    cached = _SPOOLED_PIPES.get(key)
    if cached is not None:
        return _spooled(cached[0], raw)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - kept open: the pipe's inode stays its own
    except OSError as err:
        raise InputError(f"cannot read: {_reason(err)}", file=raw) from None
    try:
        source: Source | InputError = _sniffed(_read_bounded(handle, raw, stream_limit()), raw)
    except InputError as err:
        source = err
    if not real.startswith("/proc/"):
        # a named FIFO: its inode is a file's. An anonymous pipe (/dev/fd/N) stays open, so
        # its inode is not handed to another pipe while the spool stands for it.
        handle.close()
    _SPOOLED_PIPES[key] = (source, handle)
    return _spooled(source, raw)


def forget_streams() -> None:
    """Drop every spooled stream (a long-lived process that reads a FIFO again, anew)."""
    _SPOOLED_STREAMS.clear()
    for _, handle in _SPOOLED_PIPES.values():
        handle.close()
    _SPOOLED_PIPES.clear()


@contextlib.contextmanager
def layout_bound(name: str) -> Iterator[None]:
    """A value a tool's converter did not expect where it looked (a list where its writer
    puts a word, an object where it puts a number) is that input's one located line, never a
    crash: each converter names what it checks; this holds for what none foresaw."""
    try:
        yield
    except (TypeError, KeyError, AttributeError, IndexError, ValueError, OverflowError) as err:
        if isinstance(err, WhileError):
            raise
        detail = " ".join(str(err).split())[:200] or type(err).__name__
        raise InputError(
            f"cannot read its rows: a value is not of the kind its writer puts there ({detail})",
            file=name,
        ) from None


@contextlib.contextmanager
def memory_bound(name: str) -> Iterator[None]:
    """Running out of memory while reading one input is that input's one located line (a
    value or member far larger than rows hold), never a crash."""
    try:
        yield
    except MemoryError:
        raise InputError(
            "ran out of memory reading it: it holds a value or member larger than this"
            " machine's memory (split it, or read it where there is more memory)",
            file=name,
        ) from None


def _reason(err: BaseException) -> str:
    """An I/O error's reason in a few words (no traceback, no errno prefix)."""
    if isinstance(err, OSError) and err.strerror:
        return err.strerror[:1].lower() + err.strerror[1:]
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:200]


def _read_errors() -> tuple[type[BaseException], ...]:
    """What reading a (compressed) stream may raise; pyarrow's errors once it is loaded
    (it is imported only for zstd, so a plain file never pays for it)."""
    import zlib

    pa = sys.modules.get("pyarrow")
    base: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error)
    return base if pa is None else (*base, pa.ArrowException)


def _decompress(data: bytes, codec: str, name: str = "<stdin>", limit: int = -1) -> bytes:
    limit = stream_limit() if limit < 0 else limit
    try:
        if codec == "gzip":
            with Decoded(gzip.GzipFile(fileobj=io.BytesIO(data)), codec) as fh:
                return _read_bounded(fh, name, limit, "decompressed stream")
        import pyarrow as pa

        stream = Decoded(pa.input_stream(pa.py_buffer(data), compression=codec), codec)
        return _read_bounded(stream, name, limit, "decompressed stream")
    except _read_errors() as err:
        raise InputError(f"cannot decompress {codec} input: {_reason(err)}", file=name) from None


def _refuse_step(step: int | None, raw: str, path: Path | None) -> None:
    """``--step N`` picks a step of a prime-rl run directory: any other input is refused (its
    rows would be read whole, the step silently ignored), except a traces file of that step."""
    if step is None:
        return
    if path is not None and prime_rl.in_layout(path):
        written = prime_rl.step_of(path.parents[2])
        if written == step:
            return
        raise InputError(f"--step {step} given with the traces of step {written}", file=raw)
    raise InputError(
        f"--step {step} picks a step of a prime-rl run directory (rollouts/step_N/...), and this"
        " input is not one: its rows are read whole without --step",
        file=raw,
    )


def expand_paths(
    paths: Sequence[str],
    stdin: BinaryIO | None = None,
    notes: list[str] | None = None,
    convert_lines: bool = True,
    resolve_formats: bool = True,
    step: int | None = None,
    input_format: str | None = None,
) -> list[Source]:
    """Files, directories (every shard inside, sorted), globs, FIFOs and ``-`` as sources, in
    order, each resolved to rows (:func:`resolve`). A path that exists is read as itself
    (brackets or stars in its name are no glob); the same file reached twice (listed twice, a
    link beside its target, identical bytes) is read once, with a note in ``notes``.
    ``convert_lines`` False (``--input-format jsonl``) reads EvalScope and Atropos lines as
    plain rows, for ``--map`` into their own fields; ``input_format`` forces a format
    (:func:`resolve`). ``resolve_formats`` False returns the
    files as found, unconverted (enough to tell which are Parquet summaries). A prime-rl run
    directory is its latest step's traces (``step``: that step's)."""
    if not paths:
        raise InputError("no input given: pass a file, a directory, a glob or - for stdin")
    found: list[tuple[Source, bool]] = []
    chosen = step if step is not None else prime_rl.selected_step()
    for raw in paths:
        if raw == "-":
            _refuse_step(chosen, raw, None)
            found.append((stdin_source(stdin), True))
            continue
        path = Path(raw)
        picked = prime_rl.pick(path, chosen) if path.is_dir() else None
        if picked is None:
            _refuse_step(chosen, raw, path)
        if picked is not None:
            if notes is not None:
                notes.append(f"{raw}: prime-rl run, {picked[1]}")
            found.append((_file_source(picked[0], True, input_format), True))  # type: ignore[arg-type]
        elif path.is_dir():
            walked, hidden = _unhidden(path, _walk(path))
            if hidden and notes is not None:
                notes.append(
                    f"{raw}: {len(hidden)} file(s) whose names begin with a dot left out"
                    f" ({hidden[0]}), as a glob leaves them: a hidden file is no shard"
                )
            _refuse_broken_links(walked)
            _refuse_unread_names(walked)
            inside = [
                s
                for p in walked
                if p.is_file() and (s := _file_source(p, explicit=False)) is not None
            ]
            inside = openhands.rows_only(tinker.rows_only(inside), notes)
            inside = fastchat.judged_only(opencompass.rows_only(inside, notes), notes)
            if not inside:
                raise InputError(
                    "directory holds no row file (.jsonl, .json, .ndjson, optionally .gz/.zst;"
                    " .parquet; .csv/.tsv; an inspect_ai .eval log; a Hugging Face datasets"
                    " .arrow shard; a slime .pt dump is read"
                    " when named, never found in a folder, where checkpoints lie too)",
                    file=raw,
                )
            found.extend((s, False) for s in inside)
        elif path.is_file():
            if not os.access(path, os.R_OK):
                raise InputError("file is not readable", file=raw)
            found.append((_file_source(path, True, input_format), True))  # type: ignore[arg-type]
        elif _is_stream(path):
            found.append((pipe_source(path, raw), True))
        elif glob.has_magic(raw):
            matched = expand_glob(raw)
            _refuse_broken_links(matched)
            _refuse_unread_names(matched)
            inside = [s for p in matched if p.is_file() and (s := _file_source(p, explicit=False))]
            if not inside:
                raise InputError("glob matches no row file", file=raw)
            found.extend((s, False) for s in inside)
        elif path.is_symlink():
            raise InputError(f"cannot read: {_link_problem(path)}", file=raw)
        else:
            raise InputError("no such file or directory", file=raw)
    sources: list[Source] = []
    for source, explicit in _distinct(found, notes):
        if not resolve_formats:
            sources.append(source)
            continue
        with memory_bound(source.name), layout_bound(source.name):
            resolved = resolve(source, explicit, convert_lines, input_format)
        if resolved is not None:
            sources.append(resolved)
        elif not explicit and notes is not None:
            notes.append(
                f"{source.name}: not rows (another tool's sidecar, or a run's settings or"
                " state), not read as rows"
            )
    if not sources:
        raise _no_row_file(found, paths[0])
    return sources


def _no_row_file(found: list[tuple[Source, bool]], first: str) -> InputError:
    """The refusal of inputs none of whose files holds rows: a sidecar is left out of a
    folder, and so is a JSON document with no list of rows that no tool's layout names;
    where one such document is there (a run's settings file, :data:`SETTINGS_SIDECARS`,
    aside), the refusal is its own (what it holds, the lists looked for), as naming it alone
    would say, never that it is another tool's sidecar."""
    from whilecli.io.formats import document

    for source, explicit in found:
        named = source.path.name.lower() if source.path is not None else ""
        if explicit or source.kind != "jsonl" or named in SETTINGS_SIDECARS:
            continue
        try:
            with memory_bound(source.name), layout_bound(source.name):
                resolve(source, True)
        except document.NotRows as err:
            return InputError(f"no row file: {err.detail}", file=err.file)
        except InputError:
            continue
    return InputError("no row file: every file given is another tool's sidecar", file=first)


def _unhidden(folder: Path, paths: list[Path]) -> tuple[list[Path], list[str]]:
    """A folder's files less those under a name that begins with a dot (an editor's lock
    link ``.#rows.jsonl``, a writer's file in progress, a ``.cache`` folder), as ``*`` and
    ``**`` leave them out (:func:`expand_glob`) and Arrow's dataset discovery does; and the
    row files left out, by their path within the folder. A tool's own row file whose name
    begins with a dot (Aider's ``.aider.results.json``) is kept, in folders that are not
    hidden."""
    from whilecli.io.formats import aider

    kept: list[Path] = []
    hidden: list[str] = []
    for p in paths:
        rel = p.relative_to(folder)
        dotted = [part for part in rel.parts if part.startswith(".")]
        if dotted and not (dotted == [aider.FILE_NAME] and rel.name == aider.FILE_NAME):
            if _kind_of(p) is not None:
                hidden.append(str(rel))
        else:
            kept.append(p)
    return kept, hidden


def _refuse_broken_links(paths: list[Path]) -> None:
    """A row file among a directory's (or a glob's) that is a link to nothing: refused, as an
    unreadable shard is (left out, it would change the numbers)."""
    for p in paths:
        if _kind_of(p) is not None and p.is_symlink() and not p.exists():
            raise InputError(f"cannot read: {_link_problem(p)}", file=str(p))


def _link_problem(link: Path) -> str:
    """Why a link leads to no file: its target is missing, or the links loop (a link to
    itself, or two links to each other), which the system reports as a missing file."""
    try:
        os.stat(link)
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "a link that leads back to itself (a loop of links), never to a file"
    return f"a link to {os.readlink(link)!r}, which does not exist"


def _is_stream(path: Path) -> bool:
    """A FIFO, ``/dev/fd/N`` or ``/dev/stdin`` (a process substitution): read once, as stdin."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _distinct(
    found: list[tuple[Source, bool]], notes: list[str] | None
) -> list[tuple[Source, bool]]:
    """Each file once: by its real path, then (row text files) by its bytes (size, then
    SHA-256); each stream once, by its spool."""
    out: list[tuple[Source, bool]] = []
    seen: dict[str, str] = {}
    by_size: dict[int, list[Source]] = {}
    digests: dict[str, str] = {}
    streams: dict[int, str] = {}
    for source, explicit in found:
        if source.path is None:  # a stream named twice (``- -``, one FIFO twice): one spool
            key = id(source.data)
            if source.data is not None and key in streams:
                if notes is not None:
                    notes.append(f"{source.name} is {streams[key]} again: read once")
                continue
            streams[key] = source.name
            out.append((source, explicit))
            continue
        real = os.path.realpath(source.path)
        if real in seen:
            if notes is not None:
                notes.append(f"{source.name} is {seen[real]} again: read once")
            continue
        seen[real] = source.name
        if source.kind == "parquet":
            # shard summaries of different rows can be byte-identical: compare real paths only
            out.append((source, explicit))
            continue
        size = source.path.stat().st_size
        twin = None
        for other in by_size.get(size, []):
            if _digest(other, digests) == _digest(source, digests):
                twin = other
                break
        if twin is not None and not runs_apart(twin, source):
            if notes is not None:
                notes.append(f"{source.name} has the same bytes as {twin.name}: read once")
            continue
        if twin is not None and notes is not None:
            notes.append(
                f"{source.name} has the same bytes as {twin.name}: both read, as two runs"
                " whose rows agree (their names differ by a run, seed or shard)"
            )
        by_size.setdefault(size, []).append(source)
        out.append((source, explicit))
    return out


#: A run of digits in a path: what a run's, a seed's or a shard's index is written with.
_DIGITS = re.compile(r"\d+")


def runs_apart(a: Source, b: Source) -> bool:
    """Whether two files with the same bytes are two runs whose rows agree, not a copy: their
    paths name the same file in two folders (SWE-bench's
    ``run_evaluation/<run_id>/<model>/<instance>/report.json``, a date's or a run's folder
    each), or names that differ only by their numbers (NeMo-Skills' ``output-rs0.jsonl`` and
    ``output-rs1.jsonl``, ``seed_1``, ``run2``). Repeated runs at temperature 0, or of a
    deterministic grader, write the same bytes; read once, their tasks would lose their
    draws (k = 4 read as k = 1) and the route would count one draw where four agree, which
    the identical-draws rule (:mod:`whilecli.io.facts`) reads for what it is. A copy under
    another name (``rows.jsonl`` and ``again.jsonl.gz``, ``rows.jsonl`` and
    ``rows-copy.jsonl``) is read once (DESIGN section 1, "Pooling"): by its bytes here, by
    its rows in :func:`whilecli.io.read` (another encoding), both by this rule."""
    pa, pb = a.path, b.path
    if pa is None or pb is None:
        return False
    if pa.name == pb.name:
        return pa.parent != pb.parent
    return pa.parent == pb.parent and _DIGITS.sub("#", pa.name) == _DIGITS.sub("#", pb.name)


def _digest(source: Source, cache: dict[str, str]) -> str:
    key = str(source.path)
    if key not in cache:
        h = hashlib.sha256()
        with open(source.path, "rb") as fh:  # type: ignore[arg-type]
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        cache[key] = h.hexdigest()
    return cache[key]


def _all_bytes(source: Source) -> bytes:
    stream = _raw_stream(source)
    try:
        return stream.read()
    except DecodeFault as fault:
        raise fault.refusal(source.name) from None
    except _read_errors() as err:
        raise InputError(f"cannot read: {err}", file=source.name) from None
    finally:
        stream.close()


def _first_byte(source: Source) -> bytes:
    stream = _raw_stream(source)
    try:
        while True:
            chunk = stream.read(4096)
            if not chunk:
                return b""
            stripped = chunk.lstrip()
            if stripped:
                return stripped[:1]
    except DecodeFault as fault:
        raise fault.refusal(source.name) from None
    except _read_errors() as err:
        raise InputError(f"cannot read: {err}", file=source.name) from None
    finally:
        stream.close()


def resolve(
    source: Source,
    explicit: bool = True,
    convert_lines: bool = True,
    forced: str | None = None,
) -> Source | None:
    """The source as rows the streaming reader takes: itself, or another tool's document
    converted in memory (:mod:`whilecli.io.formats.document`); None for a sidecar found
    inside a directory (named on its own, a sidecar is refused). ``forced`` (a name of
    ``--input-format``) that names a converted format converts the file as that format, or
    refuses it."""
    from whilecli.io.formats.registry import CONVERTED

    if forced not in CONVERTED:
        out = _resolve(source, explicit, convert_lines and forced != "jsonl")
        got = None if out is None else out.format or out.kind
        if forced in ("jsonl", "parquet") and got not in (None, forced):
            raise InputError(
                f"--input-format {forced}: the file does not read as {forced} (it reads as {got})",
                file=source.name,
            )
        return out
    if forced == "csv" and source.kind != "parquet":
        from whilecli.io.formats import document

        if _first_byte(source) in (b"{", b"["):
            raise InputError("--input-format csv: the file holds JSON, not CSV", file=source.name)
        return document.convert_table(_all_bytes(source), source.name, _separator(source)).source(
            source
        )
    if forced == "prime-rl" and source.kind == "jsonl":
        return prime_rl.convert(_parsed(source), source.path, source.name).source(source)
    out = _resolve(source, explicit, True)
    got = None if out is None else out.format
    if out is not None and got != forced and not (forced == "json" and got == "tau-bench"):
        raise InputError(
            f"--input-format {forced}: the file does not read as {forced} (it reads as"
            f" {got or out.kind})",
            file=source.name,
        )
    return out


def _separator(source: Source) -> str:
    """A table's separator from its name, a compression suffix aside (``.tsv.gz``: tabs)."""
    name = source.name.lower()
    for suffix in COMPRESSIONS:
        name = name.removesuffix(suffix)
    return next((sep for suf, sep in TABLE_SUFFIXES.items() if name.endswith(suf)), ",")


def _resolve(source: Source, explicit: bool, convert_lines: bool) -> Source | None:
    if source.kind == "parquet":
        # a Parquet file is rows, but a LangSmith results table's columns are flattened
        # (feedback.correctness): those are converted, any other is streamed as it is
        from whilecli.io.formats import langsmith

        table = langsmith.from_parquet(source)
        return source if table is None else table.source(source)
    from whilecli.io.formats import document

    if source.kind == "arrow":
        from whilecli.io.formats import hf_datasets

        return hf_datasets.convert(source, _all_bytes(source))
    if source.kind == "zip" or (source.path is not None and _zip_head(source.path)):
        if source.path is None:
            return document.convert_zip(source.data or b"", source.name).source(source)
        return document.convert_zip(str(source.path), source.name).source(
            replace(source, kind="jsonl")
        )
    if source.data is not None and source.data[:4] == ZIP_MAGIC:
        return document.convert_zip(source.data, source.name).source(source)
    source = _without_bom(source)
    if source.kind == "table":
        return document.convert_table(_all_bytes(source), source.name, _separator(source)).source(
            source
        )
    try:
        head = _first_byte(source)
        lines = iter_lines(source)
        first = next(lines, None)
        second = next(lines, None) if first is not None else None
        lines.close()  # type: ignore[attr-defined]
    except InputError:
        return source  # the streaming reader names the problem
    if head == b"[" or (head == b"{" and first is not None and not _one_object(first[1])):
        return _document(source, explicit)
    if first is None:
        return source
    try:
        row = parse_line(source, first[0], first[1])
    except InputError:
        return source
    flat_setting = not explicit and not _keyed_or_graded(row)  # a run's settings, or a document
    if second is None and (
        flat_setting or document.is_sidecar(row) or _holds_rows(row) or not _row_like(row)
    ):
        # one object on one line is the one JSON document it is: rows when it holds a list
        # of them, else refused as a document, unless it reads as a row itself
        return _document(source, explicit)
    if not convert_lines:
        return source
    try:
        converted = document.convert_lines(row, lambda: _parsed(source), source.path, source.name)
    except document.Sidecar as side:
        if explicit:
            raise InputError(side.refusal(), file=source.name) from None
        return None
    return source if converted is None else converted.source(source)


#: Byte order marks some Windows tools write first: UTF-8's (JSON has no place for it), and
#: UTF-16's (Windows PowerShell's ``>`` writes UTF-16 text).
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _without_bom(source: Source) -> Source:
    """A text source that starts with a byte order mark, as its UTF-8 text after the mark
    (UTF-16 re-encoded; every reader then sees the text itself); any other source as it
    is."""
    if source.data is not None:
        head = source.data[:3]
    else:
        errors: tuple[type[BaseException], ...] = (InputError, *_read_errors())
        try:
            stream = _raw_stream(source)
            try:
                head = stream.read(3)
            finally:
                stream.close()
        except errors:
            return source  # the streaming reader names the problem
    if head == UTF8_BOM:
        data = source.data if source.data is not None else _all_bytes(source)
        return replace(source, data=data[3:], compression=None)
    if head[:2] not in UTF16_BOMS:
        return source
    data = source.data if source.data is not None else _all_bytes(source)
    try:
        text = data.decode("utf-16")
    except UnicodeDecodeError as err:
        line = data[: err.start].decode("utf-16", "replace").count("\n") + 1
        raise InputError(
            f"not valid UTF-16 (byte {err.start + 1}; the file starts with a UTF-16 mark)",
            file=source.name,
            line=line,
        ) from None
    return replace(source, data=text.encode("utf-8"), compression=None)


def _document(source: Source, explicit: bool) -> Source | None:
    from whilecli.io.formats import document

    doc = document.load_document(_all_bytes(source), source.name)
    try:
        return document.convert_document(doc, source.path, source.name).source(source)
    except document.Sidecar as side:
        if explicit:
            raise InputError(side.refusal(), file=source.name) from None
        return None
    except document.NotRows:
        if explicit:
            raise
        return None  # a run's config or state beside its rows


def _holds_rows(row: dict[str, Any]) -> bool:
    from whilecli.io.formats import document, inspect_ai

    if inspect_ai.is_log(row):
        return True
    return any(
        isinstance(row.get(k), list) and row[k] and all(isinstance(x, dict) for x in row[k])
        for k in document.SAMPLE_KEYS[:1]
    )


def _keyed_or_graded(row: dict[str, Any]) -> bool:
    """Whether one object carries a grade or a task id under a name the reader knows."""
    from whilecli.io.aliases import REWARD_ALIASES, REWARD_PARTS, TASK_ALIASES

    keys = {*REWARD_ALIASES, REWARD_PARTS, "scores", "sample_score", "choices"}
    keys |= {alias.split(".")[0] for alias in TASK_ALIASES}
    return any(key in row for key in keys)


def _row_like(row: dict[str, Any]) -> bool:
    """Whether one object reads as a row of its own (a one-row file): it carries a grade or a
    task id, or it is flat (scalars only, as a table's row); an object of nested values with
    neither is a document."""
    if _keyed_or_graded(row):
        return True
    return not any(isinstance(value, (dict, list)) for value in row.values())


def _one_object(line: bytes) -> bool:
    """Whether a line is one JSON object (a JSON Lines row); one nested too deeply to read
    is a row all the same, refused at its line by the reader, never read as a document."""
    try:
        return isinstance(jsonout.parse(line), dict)
    except jsonout.TooDeep:
        return line.lstrip()[:1] == b"{"
    except ValueError:
        return False


def _zip_head(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == ZIP_MAGIC
    except OSError:
        return False


def _parsed(source: Source) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, line in iter_lines(source):
        yield lineno, parse_line(source, lineno, line)


def _raw_stream(source: Source) -> BinaryIO:
    if source.data is not None:
        return io.BytesIO(source.data)
    assert source.path is not None
    try:
        if source.compression == "gzip":
            return cast(BinaryIO, Decoded(gzip.open(source.path, "rb"), "gzip"))
        if source.compression == "zstd":
            import pyarrow as pa

            zstd = pa.input_stream(str(source.path), compression="zstd")
            return cast(BinaryIO, Decoded(zstd, "zstd"))
        return open(source.path, "rb")
    except OSError as err:
        raise InputError(f"cannot open: {err.strerror or err}", file=source.name) from None


class DecodeFault(OSError):
    """A compressed stream that cannot be decoded past a point: why, in words, and the line
    of the decoded text the damage is in or past (None where it has no place: a checksum
    that does not match says a byte changed, not where)."""

    def __init__(self, reason: str, line: int | None) -> None:
        super().__init__(reason)
        self.reason, self.line = reason, line

    def refusal(self, name: str) -> InputError:
        return InputError(f"cannot decompress: {self.reason}", file=name, line=self.line)


class Decoded:
    """A decompressing stream (gzip, zstd) that hands over every byte it decoded before a
    fault and raises the fault (:class:`DecodeFault`) at the next read, counting the lines it
    handed over: a stream cut short, damaged, or followed by bytes of another kind is refused
    at the line the decoding stopped in. (Python's gzip reader drops what one ``read`` decoded
    when it fails, so a fault in a file's first megabyte would name its first line.) A read of
    everything (``read()``) never returns part of it: the fault is raised there."""

    def __init__(self, stream: Any, codec: str) -> None:
        self.stream, self.codec = stream, codec
        self.lines = 0  # newlines in the bytes handed over
        self.ended = False  # a stream (gzip: a member) ended whole before the fault
        self.fault: DecodeFault | None = None
        # gzip: exactly one decoding step per read1; pyarrow's zstd decodes ahead in blocks
        self._piece = stream.read1 if isinstance(stream, gzip.GzipFile) else None

    def read(self, size: int | None = -1) -> bytes:
        if self.fault is not None:
            raise self.fault
        want = size if size is not None and size >= 0 else None
        parts: list[bytes] = []
        got, failed = 0, None
        while want is None or got < want:
            step = 1 << 20 if want is None else want - got
            try:
                piece = self._piece(step) if self._piece else self.stream.read(min(step, 1 << 16))
            except _read_errors() as err:
                failed = err
                break
            if not piece:
                break
            parts.append(piece)
            got += len(piece)
        data = b"".join(parts)
        self.lines += data.count(b"\n")
        if failed is not None:
            self.fault = self._fault(failed)
            if not data or want is None:
                raise self.fault from None
        return data

    def _fault(self, err: BaseException) -> DecodeFault:
        text = _reason(err)
        low = text.lower()
        codec, line = self.codec, self.lines + 1
        if "crc check failed" in low or "checksum" in low:
            return DecodeFault(
                f"the {codec} data is damaged: its checksum does not match (a byte changed"
                " somewhere), so no line of it can be trusted",
                None,
            )
        if isinstance(err, EOFError) or "truncated" in low or "ended before" in low:
            return DecodeFault(
                f"the {codec} stream breaks off in this line or past it: the file is cut short",
                line,
            )
        if isinstance(err, gzip.BadGzipFile) and "not a gzipped file" in low and self.lines:
            return DecodeFault(
                f"bytes follow the end of the {codec} stream that are not {codec} (something"
                " written after it, or two files joined)",
                line,
            )
        return DecodeFault(f"the {codec} data is damaged in this line or past it ({text})", line)

    def close(self) -> None:
        self.stream.close()

    def __enter__(self) -> Decoded:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


#: Bytes read at a time when walking a file line by line.
READ_CHUNK = 1 << 20


class _LineBlocks:
    """A source cut into lines, ``size`` bytes at a time: the one place that does it
    (:func:`iter_lines`, :func:`bracketed_lines`).

    Each step gives ``(head, chunk)``: ``head + chunk`` up to the last newline of ``chunk`` is
    whole lines, and what follows that newline is the next step's ``head`` (``head`` holds no
    newline; an unterminated last line comes as ``(line, b"\\n")``). The chunk is the read as
    it came, never copied: a reader splits it and joins ``head`` to its first line alone; a
    line longer than ``size`` is gathered once, in time linear in its length. The reader
    counts the lines it takes into :attr:`lines` (in its cheapest way), which a read error
    names as the last line read.
    """

    def __init__(self, source: Source, size: int) -> None:
        self.source, self.size = source, size
        self.lines = 0

    def __iter__(self) -> Iterator[tuple[bytes, bytes]]:
        stream = _raw_stream(self.source)
        pending: list[bytes] = []  # the current line's pieces so far (a long line: many)
        try:
            while True:
                try:
                    chunk = stream.read(self.size)
                except DecodeFault as fault:
                    raise fault.refusal(self.source.name) from None
                except _read_errors() as err:
                    raise InputError(
                        f"cannot read this line: {_reason(err)}",
                        file=self.source.name,
                        line=self.lines + 1,
                    ) from None
                if not chunk:
                    break
                cut = chunk.rfind(b"\n")
                if cut < 0:
                    pending.append(chunk)
                    continue
                yield b"".join(pending), chunk
                pending = [chunk[cut + 1 :]]
            rest = b"".join(pending)
            if rest:
                yield rest, b"\n"
        finally:
            stream.close()


def _whole_lines(head: bytes, chunk: bytes) -> list[bytes]:
    """The whole lines of one step of :class:`_LineBlocks`, newlines dropped."""
    lines = chunk.split(b"\n")
    lines.pop()  # after the last newline: the next step's head
    if head:
        lines[0] = head + lines[0]
    return lines


def iter_lines(source: Source) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, line bytes) for every non-blank line of a JSONL source."""
    blocks = _LineBlocks(source, READ_CHUNK)
    for head, chunk in blocks:
        if not chunk.strip() and not head.strip():  # a step of blank lines: counted at C speed
            blocks.lines += chunk.count(b"\n")
            continue
        lines = _whole_lines(head, chunk)
        base = blocks.lines
        blocks.lines += len(lines)
        for lineno, line in enumerate(lines, base + 1):
            if line.strip():
                yield lineno, line


#: Every byte but the opening brackets and the newline (:func:`bracketed_lines` drops them).
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[{\n")
#: ``[`` read as ``{``: a step's brackets and newlines become ``{`` and ``\n`` alone.
_ONE_BRACKET = bytes.maketrans(b"[", b"{")
#: Bytes of a source :func:`bracketed_lines` looks at per step.
BRACKET_CHUNK = 8 << 20


class KeySearch:
    """Which of some top-level JSON keys the lines past ``after`` may hold, found in the
    bytes as :func:`bracketed_lines` walks them: each key written as itself (``"key"``), and
    every key wherever an escape could spell one of their characters (``\\u006c`` is ``l``,
    which a JSON parser reads as the letter). A superset of the keys a parser finds there,
    never fewer: a key written only past the sample is found wherever it is.

    The keys' quoted names are searched as few needles: ``"behavior_logprobs"`` and
    ``"logprobs"`` both end with ``logprobs"``, one search (each hit is checked against the
    keys it may close). Polars' reader would otherwise look each key up in every row.
    """

    def __init__(self, keys: Iterable[str], after: int) -> None:
        self.after = after
        self.found: set[str] = set()
        self.quoted = {key: json.dumps(key).encode() for key in keys}
        tails = {q[1:] for q in self.quoted.values()}
        self.needles = sorted(t for t in tails if not any(o != t and o in t for o in tails))
        self.width = max((len(q) for q in self.quoted.values()), default=0)
        letters = sorted({ord(ch) for key in self.quoted for ch in key})
        spelled = b"|".join(b"%02x" % code for code in letters if code < 0x80)
        self.escape = re.compile(rb"(?i)\\u00(?:%s)" % spelled) if spelled else None

    def feed(self, head: bytes, chunk: bytes, base: int) -> None:
        """Search the whole lines of one step of :class:`_LineBlocks` (``head`` and ``chunk``
        up to its last newline; line ``base + 1`` is the first): each byte of a source is
        searched once, in the step that ends its line, and no key spans a newline."""
        if len(self.found) == len(self.quoted):
            return
        end = chunk.rfind(b"\n")
        start = 0
        if base < self.after:  # the step begins inside the sample: its lines are skipped
            start = -1
            for _ in range(self.after - base):
                start = chunk.find(b"\n", start + 1)
                if start < 0:
                    return
            start += 1
            head = b""
        if head:
            self._search(head, 0, len(head))
            self._search(head[-self.width :] + chunk[: self.width], 0, None)
        self._search(chunk, start, end)

    def _search(self, piece: bytes, begin: int, end: int | None) -> None:
        stop = len(piece) if end is None else end
        if self.found:  # a needle whose keys are all found is searched no more
            unfound = [q for k, q in self.quoted.items() if k not in self.found]
            self.needles = [n for n in self.needles if any(q.endswith(n) for q in unfound)]
        for needle in self.needles:
            at = piece.find(needle, begin, stop)
            while at >= 0:
                close = at + len(needle)
                for key, quoted in self.quoted.items():
                    left = close - len(quoted)
                    if left >= 0 and piece[left:close] == quoted:
                        self.found.add(key)
                at = piece.find(needle, at + 1, stop)
        escape = self.escape
        if (
            escape is not None
            and piece.find(b"\\", begin, stop) >= 0
            and escape.search(piece, begin, stop)
        ):
            self.found.update(self.quoted)


class KeyCount:
    """How many times each of some JSON keys' names is written quoted (``"key"``) in a source's
    lines, anywhere in a line; and whether any line may spell one of them with an escape
    (``\\u0072`` is ``r``, which a JSON parser reads as the letter).

    A row whose parsed value holds a key's value (not null) wrote its name at least once
    there; a row that wrote the key twice in one object wrote it twice. So where a name is
    written, in all, exactly as many times as the rows a JSON reader read hold its values
    (and no line spells it with an escape), no row holds it twice (RFC 8259 section 4 leaves
    a repeated name's meaning open: polars takes the first value, Python's json the last).
    Counted with ``bytes.count`` on the blocks :func:`bracketed_lines` walks, beside polars'
    read, never per line; a null, or the name written elsewhere in the row, makes the count
    larger, and :func:`refuse_repeated_lines` then parses the lines that write it twice.

    ``names`` false counts the colons alone, in one search: every key is followed by one
    colon, whatever its spelling, so where the colons are as many as the values polars read
    under the keys, every key of every row was read once (no row holds a key it does not
    read, a null, a colon in a text, or a key twice); otherwise the names are counted."""

    def __init__(self, keys: Iterable[str], names: bool = True) -> None:
        self.quoted = {key: json.dumps(key, ensure_ascii=False).encode() for key in keys}
        self.counts = dict.fromkeys(self.quoted, 0)
        self.names = names
        self.colons = 0
        self.escaped = False
        letters = sorted({ord(ch) for key in self.quoted for ch in key})
        if any(code >= 0x80 for code in letters):
            self.escape: re.Pattern[bytes] | None = re.compile(rb"\\u")
        else:
            spelled = b"|".join(b"%02x" % code for code in letters)
            self.escape = re.compile(rb"(?i)\\u00(?:%s)" % spelled) if spelled else None

    def feed(self, head: bytes, chunk: bytes, base: int) -> None:
        """Count the whole lines of one step of :class:`_LineBlocks` (``head`` and ``chunk`` up
        to its last newline): a name across the seam of the two is counted once, there."""
        del base  # every line counts, the sampled ones too: the scan counts them as well
        end = chunk.rfind(b"\n")
        if not self.names:
            self.colons += head.count(b":") + chunk.count(b":", 0, end)
            return
        for key, quoted in self.quoted.items():
            found = chunk.count(quoted, 0, end)
            if head:
                seam = head[-(len(quoted) - 1) :] + chunk[: len(quoted) - 1]
                found += head.count(quoted) + seam.count(quoted)
            self.counts[key] += found
        if self.escape is not None and not self.escaped:
            for piece, stop in ((head, len(head)), (chunk, end)):
                if piece.find(b"\\", 0, stop) >= 0 and self.escape.search(piece, 0, stop):
                    self.escaped = True

    def differ(self, read: Mapping[str, int]) -> list[str]:
        """The keys whose names are written more often than ``read`` (rows holding a value of
        each) says a reader took them; every key where a line may spell one with an escape."""
        if self.escaped:
            return list(self.quoted)
        return [key for key, count in self.counts.items() if count != read.get(key, 0)]


def refuse_repeated_lines(source: Source, count: KeyCount, keys: Iterable[str]) -> None:
    """Refuse, at its line, the first line that writes one of ``keys`` twice in one object
    with different values (:func:`parse_line`). Only a line that writes one of their quoted
    names twice (or, where ``count`` saw one, an escape that may spell one) is parsed: each
    block of lines is searched by one regular expression, no Python loop per line."""
    needles = [re.escape(count.quoted[key]) for key in keys]
    if not needles:
        return
    patterns = [rb"%s[^\n]*%s" % (n, n) for n in needles]
    if count.escaped and count.escape is not None:
        patterns.append(count.escape.pattern.replace(b"(?i)", b""))
    twice = re.compile(b"(?i)" * count.escaped + b"|".join(patterns))
    blocks = _LineBlocks(source, BRACKET_CHUNK)
    for head, chunk in blocks:
        text = head + chunk[: chunk.rfind(b"\n") + 1]
        lineno, done = blocks.lines + 1, 0  # the line that begins at ``done``
        blocks.lines += text.count(b"\n")
        for found in twice.finditer(text):
            start = text.rfind(b"\n", 0, found.start()) + 1
            if start < done:
                continue  # the line was parsed
            lineno += text.count(b"\n", done, start)
            done = start + 1
            _refuse_repeated_key(source, lineno, text[start : text.find(b"\n", found.start())])


def _refuse_repeated_key(source: Source, lineno: int, line: bytes) -> None:
    """Refuse ``line`` at ``lineno`` when one of its objects writes a key twice
    (:class:`~whilecli.jsonout.RepeatedKey`); any other fault is left to the reader that
    names it."""
    try:
        jsonout.parse(line, pairs=jsonout.one_value_per_key)
    except jsonout.RepeatedKey as err:
        raise InputError(
            str(err), file=source.name, field=err.key, **source.where(lineno)
        ) from None
    except ValueError:
        pass


def count_keys(source: Source, keys: Iterable[str], names: bool = True) -> KeyCount:
    """:class:`KeyCount` of ``keys`` over every line of a source, in one walk of its bytes."""
    count = KeyCount(keys, names)
    for _ in bracketed_lines(source, jsonout.MAX_DEPTH, counts=count):
        pass
    return count


def bracketed_lines(
    source: Source,
    more_than: int,
    after: int = 0,
    keys: KeySearch | None = None,
    counts: KeyCount | None = None,
) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of each line past ``after`` that holds more than ``more_than``
    opening brackets: the only lines that can nest deeper than that. Each chunk is cut to its
    brackets (``[`` read as ``{``) and newlines by ``bytes.translate``; a chunk without a run
    of more than ``more_than`` of them is passed by one search, and the lines of one that has
    found by one regular expression: no Python loop per line. ``keys`` searches the same
    bytes for keys past ``after`` (:class:`KeySearch`) as they pass, and ``counts`` counts
    keys' names in every line (:class:`KeyCount`)."""
    blocks = _LineBlocks(source, BRACKET_CHUNK)
    crowded = _crowded(more_than)
    run = b"{" * (more_than + 1)
    for head, chunk in blocks:
        base = blocks.lines
        if keys is not None:
            keys.feed(head, chunk, base)
        if counts is not None:
            counts.feed(head, chunk, base)
        marks = head.translate(_ONE_BRACKET, _NOT_BRACKETS) + chunk.translate(
            _ONE_BRACKET, _NOT_BRACKETS
        )
        blocks.lines += marks.count(b"\n")
        if len(marks) - (blocks.lines - base) <= more_than or run not in marks:
            continue  # no line of the step holds that many brackets
        many: list[int] = []  # the step's lines (from 0) past the limit
        line = start = 0
        for found in crowded.finditer(marks, 0, marks.rfind(b"\n")):  # whole lines only
            line += marks.count(b"\n", start, found.start())
            start = found.start()
            many.append(line)
        if many:
            lines = _whole_lines(head, chunk)
            yield from ((base + i + 1, lines[i]) for i in many if base + i + 1 > after)


@functools.lru_cache(maxsize=4)
def _crowded(more_than: int) -> re.Pattern[bytes]:
    """A line (of brackets and newlines) that holds more than ``more_than`` brackets."""
    return re.compile(rb"(?m)^[^\n]{%d}" % (more_than + 1))


def parse_line(source: Source, lineno: int, line: bytes) -> dict[str, Any]:
    """One JSONL line as a dict, or an :class:`InputError` that names the line (and the key
    written twice with different values, :class:`~whilecli.jsonout.RepeatedKey`)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(
            f"not valid UTF-8 (byte {err.start + 1} of the line)",
            file=source.name,
            **source.where(lineno),
        ) from None
    try:
        value = jsonout.parse(text, pairs=jsonout.one_value_per_key)
    except jsonout.RepeatedKey as err:
        raise InputError(
            str(err), file=source.name, field=err.key, **source.where(lineno)
        ) from None
    except jsonout.TooDeep as err:
        raise InputError(str(err), file=source.name, **source.where(lineno)) from None
    except json.JSONDecodeError as err:
        if err.pos >= len(text.rstrip()) and text.lstrip()[:1] in ("{", "["):
            raise InputError(
                "not valid JSON: the value is cut off at the line's end (an object written"
                " over several lines, pretty-printed? JSON Lines needs one object per line:"
                " jq -c . FILE writes it so)",
                file=source.name,
                **source.where(lineno),
            ) from None
        from whilecli.io.formats.document import CR_ALONE, cr_alone, line_end_hint

        # a row ending in CR alone, NEL, U+2028 or U+2029 inside the file: named so; a file
        # whose every line ends in CR alone is one line, told how to convert it
        hint = line_end_hint(text, err.pos) if err.msg == "Extra data" else None
        if cr_alone(text) and (lineno == 1 or hint is None):
            raise InputError(CR_ALONE, file=source.name, **source.where(lineno)) from None
        if hint is not None:
            raise InputError(hint, file=source.name, **source.where(lineno)) from None
        table = table_hint(text) if lineno == 1 else ""
        raise InputError(
            f"not valid JSON (column {err.colno}: {err.msg}){_nul_hint(line) or table}",
            file=source.name,
            **source.where(lineno),
        ) from None
    except ValueError as err:
        raise InputError(
            f"not valid JSON: {err}", file=source.name, **source.where(lineno)
        ) from None
    if not isinstance(value, dict):
        from whilecli.io.formats.document import not_a_row

        raise InputError(
            not_a_row(value),
            file=source.name,
            **source.where(lineno),
        )
    return value


def _nul_hint(line: bytes) -> str:
    """Why a line that is no JSON holds NUL bytes: text in UTF-16 or UTF-32 without a byte
    order mark (every ASCII character followed or led by zeros), or zeros a crash or a
    preallocating writer left in the file."""
    if b"\x00" not in line:
        return ""
    return (
        ": the line holds NUL bytes (UTF-16 or UTF-32 text without a byte order mark, or"
        " zeros a crash left in the file; JSON Lines is UTF-8)"
    )


def refuse_repeated_keys(source: Source, limit: int) -> None:
    """Refuse, at its line, a key written twice with different values in the first ``limit``
    lines of a JSONL source (:class:`~whilecli.jsonout.RepeatedKey`), where polars reads the
    rest; any other fault is left to the reader that names it."""
    lines = iter_lines(source)
    try:
        for count, (lineno, line) in enumerate(lines):
            if count >= limit:
                break
            _refuse_repeated_key(source, lineno, line)
    finally:
        lines.close()  # type: ignore[attr-defined]


def sample_rows(source: Source, limit: int = 1000) -> list[tuple[int, dict[str, Any]]]:
    """The first ``limit`` rows of a JSONL source, with their line numbers."""
    rows: list[tuple[int, dict[str, Any]]] = []
    for lineno, line in iter_lines(source):
        rows.append((lineno, parse_line(source, lineno, line)))
        if len(rows) >= limit:
            break
    return rows


def rows_with_keys(
    source: Source, keys: Iterable[str], after: int, per_key: int = 100
) -> list[tuple[int, dict[str, Any]]]:
    """Rows past line ``after`` whose text has one of ``keys`` as a JSON key (``"key":``),
    up to ``per_key`` for each key found, with their line numbers; [] when no line has one.

    polars searches the whole file for every key at once (a multi-threaded multi-pattern
    search over the raw lines, nothing kept); only a key it finds costs a second pass, which
    keeps that key's first matching lines. A line that is not a JSON object is skipped here:
    the full read names it.
    """
    patterns = [json.dumps(key) + ":" for key in keys]
    if not patterns:
        return []
    try:
        lines = lines_frame(source)
        hits = lines.select(
            pl.col("line").str.extract_many(patterns).explode().drop_nulls().unique()
        ).collect()
        found = [p for p in patterns if p in set(hits.to_series().to_list())]
        numbered = lines.with_row_index("lineno", offset=1).filter(pl.col("lineno") > after)
        matches = [
            numbered.filter(pl.col("line").str.contains(p, literal=True)).head(per_key).collect()
            for p in found
        ]
    except (pl.exceptions.PolarsError, OSError, ValueError):
        return []  # not readable as lines: the full read reports why
    rows: dict[int, dict[str, Any]] = {}
    for frame in matches:
        for lineno, text in frame.iter_rows():
            try:
                row = jsonout.parse(text)
            except ValueError:
                continue
            if isinstance(row, dict):
                rows[int(lineno)] = row
    return sorted(rows.items())


def lines_frame(source: Source) -> pl.LazyFrame:
    """The source's lines as one string column (a control character as the separator, never
    raw inside a JSON line, and no quoting)."""
    return pl.scan_csv(
        source.polars_source(),
        has_header=False,
        separator="\x1f",
        quote_char=None,
        new_columns=["line"],
        schema={"line": pl.String},
    )


def read_json_file(path: Path, *, lenient: bool = False) -> Any:
    """A side file's JSON value, or None when no file is there. A file that is there but
    cannot be read as JSON (a folder, a pipe, a device, a loop of links, past
    :data:`whilecli.fileio.SIDE_FILE_LIMIT`, not JSON, a key given twice) is one
    :class:`InputError` naming it: a known tool's side file that is broken is never read as
    missing (that changes what the rows mean). ``lenient``: any such file is None too, for a
    file that may or may not be the side file looked for (a generic ``config.json``)."""
    text = _side_bytes(path, lenient=lenient)
    if text is None:
        return None
    return jsonout.loads(text, file=str(path), lenient=lenient)


def read_toml_file(path: Path, *, lenient: bool = False) -> Any:
    """A side file's TOML value, or None when no file is there; else as :func:`read_json_file`."""
    data = _side_bytes(path, lenient=lenient)
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        if lenient:
            return None
        raise InputError(f"not valid UTF-8 (byte {err.start + 1})", file=str(path)) from None
    return jsonout.loads_toml(text, file=str(path), lenient=lenient)


def _side_bytes(path: Path, *, lenient: bool) -> bytes | None:
    """The bytes of a side file (:func:`whilecli.fileio.read_regular`): None where none is
    there, or (``lenient``) where it cannot be read; else the reason, naming the file."""
    try:
        return read_regular(path)
    except UnreadableFile as err:
        if lenient:
            return None
        raise InputError(err.reason, file=str(path)) from None


def side_object(doc: Any, path: Path) -> dict[str, Any] | None:
    """A known tool's side file's value (:func:`read_json_file`) as the JSON object it must
    be; None where no file is there; any other value is refused naming the file."""
    if doc is None or isinstance(doc, dict):
        return doc
    raise InputError(f"holds a JSON {_json_kind(doc)}, not an object", file=str(path))


def side_text(doc: dict[str, Any], key: str, path: Path) -> str | None:
    """``doc[key]`` (a side file's model or name) as text: None where absent or null; a value of
    another type (a number, a list) is refused naming the file and the field."""
    value = doc.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InputError(f"is a JSON {_json_kind(value)}, not text", file=str(path), field=key)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "value"


def lmeval_results(source: Source) -> tuple[Path, Any] | None:
    """The lm-eval results file beside ``samples_<task>_<stamp>.jsonl``: ``results_<stamp>.json``,
    else any JSON file there that holds lm-eval results (a renamed one), the stamp's first."""
    if source.path is None:
        return None
    folder = source.path.parent
    stem = source.path.name.split(".jsonl")[0]
    named = sorted(folder.glob("results_*.json"))
    for cand in named:
        stamp = cand.name[len("results_") : -len(".json")]
        if stamp and stem.endswith(f"_{stamp}"):  # the whole stamp, never a tail of it
            return cand, read_json_file(cand)
    if len(named) == 1:
        return named[0], read_json_file(named[0])
    others = [
        c for c in sorted(folder.glob("*.json")) if c not in named and c.name not in SIDECAR_NAMES
    ]
    others.sort(key=lambda c: 0 if stem.split("_")[-1] in c.stem else 1)
    for cand in others:
        doc = read_json_file(cand, lenient=True)  # any JSON file: the results file or not
        if (
            isinstance(doc, dict)
            and isinstance(doc.get("results"), dict)
            and ("model_name" in doc or "config" in doc or "configs" in doc)
        ):
            return cand, doc
    return None


#: The formats whose writer leaves a ``metadata.json`` beside its rows (vf-eval's, Prime
#: RFT's): one that is there but broken, or whose ``model`` is no text, is refused. Beside
#: any other rows a ``metadata.json`` may be anyone's: read where it is a JSON object, else
#: passed over.
METADATA_FORMATS = ("vf-eval", "prime-rft")


def _metadata(fmt: str, folder: Path) -> dict[str, Any] | None:
    """The ``metadata.json`` beside a file's rows, as an object; None where there is none
    (or, for rows of no format that writes one, where it is no readable JSON object)."""
    where = folder / "metadata.json"
    if fmt in METADATA_FORMATS:
        return side_object(read_json_file(where), where)
    doc = read_json_file(where, lenient=True)
    return doc if isinstance(doc, dict) else None


def sidecar_env(fmt: str, source: Source) -> str | None:
    """The evaluation a file belongs to, as its writer's sidecars name it (vf-eval ``env_id`` or
    ``env``, Prime RFT ``env``, lm-eval's task), or a converted document's own; else None."""
    if source.env is not None:
        return source.env
    if source.path is None:
        return None
    meta = _metadata(fmt, source.path.parent)
    if meta is not None:
        for key in ("env_id", "env", "env_name"):
            if isinstance(meta.get(key), str):
                return meta[key]
        run = meta.get("run")
        if isinstance(run, dict) and isinstance(run.get("env"), str):
            return run["env"]
    if fmt == "lighteval":
        from whilecli.io.formats import lighteval

        return lighteval.task_of(source.path)
    if fmt == "skyrl":
        from whilecli.io.formats import skyrl

        return skyrl.data_source(source.path)
    if fmt == "lm-eval":
        found = lmeval_results(source)
        tasks = None
        if found is not None and isinstance(found[1], dict):
            tasks = [t for t in (found[1].get("results") or {}) if isinstance(t, str)]
        name = source.path.name
        if name.startswith("samples_"):
            for task in sorted(tasks or [], key=len, reverse=True):
                if name.startswith(f"samples_{task}_"):
                    return task
        if tasks and len(tasks) == 1:
            return tasks[0]
    return None


class Side(NamedTuple):
    """A value read from a file beside the rows: the value, where (``"metadata.json:
    sampling_args.max_tokens"``), and whether it is unsure: read from a settings file of no
    known tool's layout (:data:`SETTINGS_SIDECARS`), whose ``model`` may name a judge's or a
    dataset's as often as the writer's."""

    value: Any
    where: str
    unsure: bool = False


#: Settings files a run leaves beside its rows in no one tool's layout (a harness's or a
#: script's ``config.yaml``, ``run_config.json``, ``args.json``, ``results.json``), read
#: after every known tool's sidecar: a model they name is unsure (it may be a judge's or a
#: dataset's: :data:`whilecli.io.aliases.UNSURE_MODEL_PLACES`), a cap is read as any sampler's
#: (it pairs with a reply's token count only where the count reaches it exactly), greedy
#: decoding only under a sampler's object (``sampling_params.temperature``: a flat
#: ``temperature`` is a judge's as often). YAML is read in its simple form only, ``key:
#: value`` lines nested by indent (no YAML parser is a dependency).
SETTINGS_SIDECARS: tuple[str, ...] = (
    *("config.yaml", "config.yml", "eval_config.yaml", "run_config.json", "config.json"),
    *("args.json", "generation_config.json", "results.json"),
)
#: Keys that mark a settings file as a model folder's (a Hugging Face ``config.json`` or
#: ``generation_config.json``): its settings are the model's defaults and its names the
#: architecture's, not the run's; such a file is not read.
MODEL_FOLDER_KEYS = frozenset(
    {"architectures", "_name_or_path", "model_type", "transformers_version", "_from_model_config"}
    | {"torch_dtype", "auto_map"}
)
#: The names a settings file gives the model its run sampled (a string, or an object whose
#: ``name`` / ``id`` / ``model`` is one).
SETTINGS_MODEL_KEYS: tuple[str, ...] = ("model", "model_name", "model_name_or_path")
#: Where a settings file keeps a sampler's settings, beyond a row's places
#: (:data:`whilecli.io.aliases.SAMPLING_PLACES`): a harness's ``sampling`` and ``generation``
#: objects (``sampling.max_tokens``).
SETTINGS_SAMPLER_PLACES: tuple[str, ...] = (*SAMPLING_PLACES, "sampling.", "generation.")
_YAML_LINE = re.compile(r"^( *)([A-Za-z_][\w.-]*) *:(?: +(.*?))? *$")
_YAML_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")


def read_simple_yaml(path: Path) -> dict[str, Any] | None:
    """A YAML settings file's mappings, read from its simple ``key: value`` lines nested by
    indent (:data:`SETTINGS_SIDECARS`): scalars as numbers, booleans or text (quotes
    trimmed); a list, a block scalar or a flow value is skipped. None when the file is
    missing or unreadable."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(1 << 20).decode("utf-8")
    except (OSError, ValueError):
        return None
    root: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = _YAML_LINE.match(line.split(" #")[0].rstrip())
        if found is None:
            continue
        indent, key, value = len(found[1]), found[2], found[3]
        while stack[-1][0] >= indent:
            stack.pop()
        if not value:
            child: dict[str, Any] = {}
            stack[-1][1][key] = child
            stack.append((indent, child))
        elif value[0] not in "[{|>&*!":
            stack[-1][1][key] = _yaml_scalar(value)
    return root


def _yaml_scalar(text: str) -> Any:
    """A YAML scalar as :func:`read_simple_yaml` reads it."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text.lower() in ("null", "~"):
        return None
    return float(text) if _YAML_NUMBER.match(text) else text


def _settings_files(source: Source) -> list[tuple[str, dict[str, Any], bool]]:
    """The settings beside the rows, each (file name, its document, whether a known tool's):
    vf-eval's and Prime RFT's ``metadata.json``, then :data:`SETTINGS_SIDECARS` (never the
    rows' own file, nor a model folder's, :data:`MODEL_FOLDER_KEYS`)."""
    if source.path is None:
        return []
    folder = source.path.parent
    out: list[tuple[str, dict[str, Any], bool]] = []
    meta = read_json_file(folder / "metadata.json", lenient=True)  # refused by its readers
    if isinstance(meta, dict):
        out.append(("metadata.json", meta, True))
    for name in SETTINGS_SIDECARS:
        path = folder / name
        if path.name == source.path.name or not path.is_file():
            continue
        # a settings file of no known tool's layout: any JSON file may be named so
        doc = (
            read_simple_yaml(path)
            if name.endswith((".yaml", ".yml"))
            else read_json_file(path, lenient=True)
        )
        if isinstance(doc, dict) and not MODEL_FOLDER_KEYS & doc.keys():
            out.append((name, doc, False))
    return out


def _setting_at(doc: dict[str, Any], dotted: str) -> Any:
    """The value at ``dotted`` (``sampling_args.max_tokens``) in a settings document."""
    node: Any = doc
    for key in dotted.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _number(value: Any) -> float | None:
    """A setting's number (not a boolean), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def sidecar_cap(source: Source) -> Side | None:
    """The token cap the rows were sampled under, as the settings beside them say it
    (:func:`_settings_files`): the first positive number under a cap's name
    (:data:`whilecli.io.aliases.TOKEN_CAPS`) in a sampler's place
    (:data:`SETTINGS_SAMPLER_PLACES`: vf-eval's ``sampling_args.max_tokens``)."""
    for name, doc, known in _settings_files(source):
        for place in SETTINGS_SAMPLER_PLACES:
            for cap in TOKEN_CAPS:
                value = _number(_setting_at(doc, place + cap))
                if value is not None and value > 0:
                    return Side(value, f"{name}: {place}{cap}", not known)
    return None


def sidecar_temperature(source: Source, fmt: str | None = None) -> Side | None:
    """The sampling temperature the settings beside the rows record
    (:func:`_settings_files`): in a known tool's file under a sampler's place
    (vf-eval's ``sampling_args.temperature``, or flat); in another's only under a
    sampler's object (:data:`whilecli.io.aliases.SAMPLING_PLACES` past the flat one); for
    lm-eval's samples, in their results file (:func:`lmeval_temperature`)."""
    if fmt == "lm-eval":
        return lmeval_temperature(source)
    for name, doc, known in _settings_files(source):
        for place in SAMPLING_PLACES if known else SAMPLING_PLACES[1:]:
            value = _number(_setting_at(doc, place + "temperature"))
            if value is not None and value >= 0:
                return Side(value, f"{name}: {place}temperature", not known)
    return None


def lmeval_temperature(source: Source) -> Side | None:
    """The temperature an lm-eval run sampled its task's samples at, from its results file
    (:func:`lmeval_results`): the task's ``configs.<task>.generation_kwargs``, else the
    run's ``config.gen_kwargs`` (an object, or ``--gen_kwargs`` text:
    ``temperature=0.7,do_sample=True``). ``do_sample`` false is greedy decoding, temperature
    0, whatever temperature is written beside it."""
    found = lmeval_results(source)
    if found is None or not isinstance(found[1], dict):
        return None
    doc, name = found[1], found[0].name
    task = sidecar_env("lm-eval", source)
    configs = doc.get("configs")
    places: list[tuple[str, Any]] = []
    if task is not None and isinstance(configs, dict) and isinstance(configs.get(task), dict):
        places.append((f"configs.{task}.generation_kwargs", configs[task].get("generation_kwargs")))
    config = doc.get("config")
    if isinstance(config, dict):
        places.append(("config.gen_kwargs", _gen_kwargs(config.get("gen_kwargs"))))
    for where, kwargs in places:
        if not isinstance(kwargs, dict):
            continue
        if kwargs.get("do_sample") is False or str(kwargs.get("do_sample")).lower() == "false":
            return Side(0.0, f"{name}: {where}.do_sample false")
        value = _number(kwargs.get("temperature"))
        if value is None and isinstance(kwargs.get("temperature"), str):
            value = _number(_float_text(kwargs["temperature"]))
        if value is not None and value >= 0:
            return Side(value, f"{name}: {where}.temperature")
    return None


def _gen_kwargs(value: Any) -> dict[str, Any] | None:
    """lm-eval's ``config.gen_kwargs``: an object, or the ``--gen_kwargs`` text it was given
    (``temperature=0.7,do_sample=True``) read as one."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        return None
    out: dict[str, Any] = {}
    for part in value.split(","):
        key, eq, text = part.partition("=")
        if eq:
            out[key.strip()] = text.strip()
    return out


def _float_text(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def sidecar_model(fmt: str, source: Source) -> Side | None:
    """(model, where it came from, unsure) from the files a writer leaves beside its rows;
    None where they name none, or a name that names no model (blank, ``None``, ``N/A``:
    :func:`whilecli.io.modelid.names_model`). A model read from a settings file of no known
    tool's layout (:data:`SETTINGS_SIDECARS`) is not read here (:func:`settings_model`)."""
    known = _sidecar_model(fmt, source)
    found = Side(*known) if known is not None else None
    return found if found is not None and names_model(found.value) else None


def settings_model(source: Source) -> str | None:
    """Where a settings file of no known tool's layout names a model (``config.yaml:
    model = gpt-4o``): a judge's, a base model's or the writer's, which the file does not
    say, so never the rows' model; the route weighs it as it weighs a path that names one
    (:func:`whilecli.io.modelid.names_other_model`)."""
    found = _settings_model(source)
    return None if found is None else said_in_settings(found.where, found.value)


def _settings_model(source: Source) -> Side | None:
    """The model a settings file beside the rows names (:data:`SETTINGS_MODEL_KEYS`, a
    string or a model object's name), unsure (:class:`Side`)."""
    for name, doc, known in _settings_files(source):
        if known:
            continue
        for key in SETTINGS_MODEL_KEYS:
            value = doc.get(key)
            if isinstance(value, dict):
                inner = next((k for k in MODEL_OBJECT_KEYS if isinstance(value.get(k), str)), None)
                key, value = (f"{key}.{inner}", value[inner]) if inner else (key, None)
            if isinstance(value, str) and names_model(value):
                return Side(value, f"{name}: {key}", True)
    return None


def _sidecar_model(fmt: str, source: Source) -> tuple[str, str] | None:
    if source.path is None:
        return None
    folder = source.path.parent
    where = folder / "metadata.json"
    meta = _metadata(fmt, folder)
    if meta is not None:
        if fmt in METADATA_FORMATS and (model := side_text(meta, "model", where)) is not None:
            return model, "metadata.json: model"
        if fmt not in METADATA_FORMATS and isinstance(meta.get("model"), str):
            return meta["model"], "metadata.json: model"
        run = meta.get("run")
        if isinstance(run, dict) and isinstance(run.get("base_model"), str):
            return run["base_model"], "metadata.json: run.base_model"
    where = folder / "run_metadata.json"  # terminal-bench, beside results.json
    run = side_object(read_json_file(where), where)
    if run is not None and (model := side_text(run, "model_name", where)) is not None:
        return model, "run_metadata.json: model_name"
    found_lighteval = _lighteval_results(source.path)
    if found_lighteval is not None:
        return found_lighteval
    if fmt == "lm-eval":
        found = lmeval_results(source)
        results = side_object(found[1], found[0]) if found else None
        if found and results and (model := side_text(results, "model_name", found[0])):
            return model, f"{found[0].name}: model_name"
    if fmt == "verifiers-traces":
        where = folder / "config.toml"
        config = read_toml_file(where)
        if isinstance(config, dict) and (model := side_text(config, "model", where)) is not None:
            return model, "config.toml: model"
    return None


def _lighteval_results(path: Path) -> tuple[str, str] | None:
    """lighteval's model: its details are ``<out>/details/<model>/<date>/details_*``, its results
    ``<out>/results/<model>/results_<date>.json`` with ``config_general.model_name``."""
    if not path.name.startswith("details_") or "details" not in path.parts[:-2]:
        return None
    date = path.parent.name
    at = len(path.parts) - 1 - path.parts[::-1].index("details")
    model_dir = Path(*path.parts[at + 1 : -2])
    results = Path(*path.parts[:at]) / "results" / model_dir / f"results_{date}.json"
    doc = read_json_file(results)
    config = doc.get("config_general") if isinstance(doc, dict) else None
    if isinstance(config, dict) and isinstance(config.get("model_name"), str):
        return config["model_name"], f"{results.name}: config_general.model_name"
    return None


def detect(shape: Shape, source: Source) -> str:
    """The writer of a file, from its keys (and the sidecar files beside it): each tool's
    module under :mod:`whilecli.io.formats` says how it is recognised, tried in this order."""
    from whilecli.io.formats import (
        lighteval,
        lm_eval,
        nemo_gym,
        nemo_rl,
        nemo_skills,
        prime_rft,
        skyrl,
        trl,
        verifiers_traces,
        vf_eval,
        whileai,
    )

    if source.format is not None:
        return source.format
    for tool in (verifiers_traces, nemo_gym, nemo_rl, prime_rft, lm_eval, lighteval, skyrl):
        if tool.detect(shape):
            return tool.NAME
    if nemo_skills.detect(shape, source.path.name if source.path is not None else ""):
        return nemo_skills.NAME
    for tool in (whileai, trl):
        if tool.detect(shape):
            return tool.NAME
    meta = None
    if source.path is not None and vf_eval.metadata_path(source.path).is_file():
        # lenient: rows of another tool may sit beside anyone's metadata.json; vf-eval's
        # rows (read as such by their own fields) have theirs refused when broken
        meta = read_json_file(vf_eval.metadata_path(source.path), lenient=True)
    if vf_eval.detect(shape, meta):
        return vf_eval.NAME
    return source.kind
