"""The program's standard streams: every byte written checked to completion, text made safe.

Python's own ``sys.stdout`` can lose a write: a short ``write(2)`` (a file-size limit, as
batch schedulers set with ``RLIMIT_FSIZE``; a full disk) may be dropped and the flush report
success, so a report ends mid-line with exit 0. :func:`install` puts the command line's
streams on :class:`CheckedRaw`, which writes every byte or raises:

- a closed pipe (``| head``) raises :class:`BrokenPipeError`, which ends the command quietly
  with 141 (DESIGN section 2);
- any other failure (``ENOSPC``, ``EFBIG``, ``EBADF``, ``/dev/full``) raises
  :class:`OutputError`: one line, exit 2.

After its first failure a stream discards what follows (the failure has been raised and is
remembered in :data:`FAILED`), so the interpreter's last flush cannot fail a second time.
The text layer (:class:`SafeText`) keeps the encoding the environment asks for
(``PYTHONIOENCODING``, the locale) and writes what it cannot encode as a plain stand-in (``->`` for an arrow) or a
backslash escape,
never raising; control characters (escape sequences from an input's ids or headers) are
written as ``\\u001b``-style escapes, so they never reach a terminal raw. Only the styles and
the status line that the program's own renderer emits on a terminal pass.

A standard stream that is closed when the program starts (``>&-``, ``<&-``) gets
``/dev/null`` under its descriptor, so no file the program opens takes its number; a write
to a closed stdout or stderr is an :class:`OutputError`, and a closed stdin reads as empty.
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from whilecli import PROG
from whilecli.errors import OUT_OF_MEMORY, OUT_OF_MEMORY_EXIT, WhileError, path_error


class OutputError(WhileError):
    """A write to stdout, stderr or a file that did not complete: exit 2."""


#: The streams that failed, by name, with the reason (the first failure of each).
FAILED: dict[str, str] = {}

_NAMES = {0: "standard input", 1: "standard output", 2: "standard error"}


def _reason(err: OSError) -> str:
    return err.strerror or errno.errorcode.get(err.errno or 0, "") or type(err).__name__


class CheckedRaw(io.RawIOBase):
    """A raw stream on a descriptor whose ``write`` writes every byte or raises."""

    def __init__(self, fd: int, *, closed: bool = False, name: str | None = None) -> None:
        super().__init__()
        self._fd = fd
        self._closed_at_start = closed
        self.name = name or _NAMES.get(fd, f"descriptor {fd}")
        self._sink = False  # after a failure: discard
        self._write = os.write

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        if self._closed_at_start:
            return False
        try:
            return os.isatty(self._fd)
        except OSError:
            return False

    def _fail(self, err: OSError) -> None:
        self._sink = True
        if isinstance(err, BrokenPipeError):
            FAILED.setdefault(self.name, "closed pipe")
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE)) from None
        reason = _reason(err)
        FAILED.setdefault(self.name, reason)
        raise OutputError(f"cannot write to {self.name}: {reason}") from None

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        total = len(view)
        if self._sink:
            return total
        if self._closed_at_start:
            self._fail(OSError(errno.EBADF, "it is closed"))
        done = 0
        while done < total:
            try:
                n = self._write(self._fd, view[done:])
            except InterruptedError:
                continue
            except OSError as err:
                self._fail(err)
            if n <= 0:  # no progress and no error: never loop forever
                self._fail(OSError(errno.EIO, "the write made no progress"))
            done += n
        return total


#: Control characters: C0 but tab and newline, DEL, C1; and the bidirectional controls
#: (embeddings, overrides, isolates and marks), which reorder the text printed after them: an
#: id holding U+202E would print the rest of its line backwards.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: What the program's own renderer (Rich) writes on a terminal: styles (SGR) on any stream;
#: on stderr also the status line's cursor moves and line erases, and carriage returns.
_STYLE = re.compile(r"\x1b\[[0-9;]*m")
_STATUS = re.compile(r"\x1b\[\??[0-9;]*[ABCDGKhlm]|\r")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def sanitize(text: str, *, keep: re.Pattern[str] | None = None) -> str:
    """``text`` with every control character (tab and newline kept) written as ``\\uXXXX``;
    runs that ``keep`` matches (the renderer's own escape sequences) are left as they are."""
    if not _CONTROL.search(text):
        return text
    if keep is None:
        return _CONTROL.sub(_escape, text)
    out: list[str] = []
    pos = 0
    for m in keep.finditer(text):
        out.append(_CONTROL.sub(_escape, text[pos : m.start()]))
        out.append(m.group())
        pos = m.end()
    out.append(_CONTROL.sub(_escape, text[pos:]))
    return "".join(out)


class SafeText(io.TextIOWrapper):
    """A text stream that never fails to encode and never passes a raw control character."""

    _keep: re.Pattern[str] | None = None

    def write(self, text: str) -> int:
        super().write(sanitize(text, keep=self._keep))
        return len(text)


#: Plain stand-ins for the symbols the reports use, where the stream's encoding lacks them.
_PLAIN = {"→": "->", "←": "<-", "•": "*", "×": "x", "…": "...", "–": "-", "—": "--", "≥": ">=",
          "≤": "<=", "±": "+/-", "≈": "~", "│": "|", "─": "-", "┌": "+", "┐": "+", "└": "+",
          "┘": "+", "├": "+", "┤": "+", "┬": "+", "┴": "+", "┼": "+", "✓": "ok", "✗": "x",
          "▁": "_", "█": "#"}  # fmt: skip


def _plain(err: UnicodeError) -> tuple[str, int]:
    """The error handler of the text streams: a plain stand-in, else a backslash escape."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = []
    for ch in err.object[err.start : err.end]:
        plain = _PLAIN.get(ch)
        if plain is None:
            code = ord(ch)
            plain = f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
        out.append(plain)
    return "".join(out), err.end


codecs.register_error("whilecli-plain", _plain)


def _styles_pass(raw: CheckedRaw) -> bool:
    forced = os.environ.get("FORCE_COLOR", "") not in ("", "0")
    return forced or raw.isatty()


def text_stream(
    fd: int, *, encoding: str | None = None, closed: bool = False, name: str | None = None
) -> SafeText:
    """A checked text stream on ``fd`` (``closed``: the descriptor was closed at start), named
    ``name`` in its errors (by default, for 1 and 2, standard output and standard error)."""
    raw = CheckedRaw(fd, closed=closed, name=name)
    encoding = encoding or "utf-8"
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "utf-8"
    stream = SafeText(
        io.BufferedWriter(raw),
        encoding=encoding,
        errors="whilecli-plain",
        line_buffering=raw.isatty() or raw.name == _NAMES[2],
    )
    if _styles_pass(raw):
        stream._keep = _STATUS if raw.name == _NAMES[2] else _STYLE
    return stream


def _closed(fd: int) -> bool:
    """Whether ``fd`` is closed; if so, ``/dev/null`` takes its number."""
    try:
        os.fstat(fd)
        return False
    except OSError:
        pass
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return True
    if null != fd:
        os.dup2(null, fd)
        os.close(null)
    return True


_INSTALLED: list[bool] = []


def install() -> None:
    """Put stdout and stderr on checked streams, and a closed stdin on ``/dev/null``.

    Only the process's own streams are replaced: a caller that has put its own in their
    place (a test capturing the output, an embedding program) keeps them.
    """
    if _INSTALLED or sys.stdout is not sys.__stdout__ or sys.stderr is not sys.__stderr__:
        return
    _INSTALLED.append(True)
    closed = {fd: _closed(fd) for fd in (0, 1, 2)}
    if closed[0] or sys.stdin is None:
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    for fd, name in ((1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        try:
            if old is not None:
                old.flush()
        except (OSError, ValueError):
            pass
        encoding = getattr(old, "encoding", None)
        setattr(sys, name, text_stream(fd, encoding=encoding, closed=closed[fd]))


def say(line: str) -> None:
    """Write ``line`` to stderr if it can be written; a failure is remembered, not raised."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, WhileError, ValueError, AttributeError):
        pass


def finish(code: int) -> int:
    """Flush both streams; the exit code given, or 2 (141 for a closed pipe) when a write of
    this run failed and the command had not already failed."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        try:
            if stream is not None:
                stream.flush()
        except BrokenPipeError:
            pass
        except (OSError, WhileError, ValueError):
            pass
    if "closed pipe" in FAILED.values():
        return 141  # the reader went away: quietly, whatever the command meant to say
    if code != 0 or not FAILED:
        return code
    what, reason = next(iter(FAILED.items()))
    say(f"{PROG}: error: cannot write to {what}: {reason}")
    return 2


def _code(exit_: SystemExit) -> int:
    if exit_.code is None:
        return 0
    if isinstance(exit_.code, int):
        return exit_.code
    say(str(exit_.code))
    return 1


def run(main: Callable[[], object]) -> int:
    """Run the command line ``main`` and return its exit code, with :func:`finish`'s checks:
    a failed write is exit 2 with one line (141 for a closed pipe), never a traceback."""
    try:
        os.getcwd()
    except OSError as err:  # relative names would resolve nowhere, and libraries ask for it
        say(
            f"{PROG}: error: the working directory is gone ({_reason(err)}):"
            " cd to a folder that exists"
        )
        return finish(2)
    try:
        main()
        code = 0
    except SystemExit as exit_:
        code = _code(exit_)
    except BrokenPipeError:
        FAILED.setdefault("standard output", "closed pipe")
        code = 141
    except WhileError as err:
        say(f"{PROG}: error: {err.on_command_line()}")
        code = err.exit_code
    except KeyboardInterrupt:
        say(f"{PROG}: interrupted")
        code = 130
    except MemoryError:
        if os.environ.get("WHILE_DEBUG") == "1":
            raise
        say(f"{PROG}: error: {OUT_OF_MEMORY}")
        code = OUT_OF_MEMORY_EXIT
    except Exception as err:  # a bug outside the commands' own wrapper: one line
        if isinstance(err, OSError) and (line := path_error(err)) is not None:
            say(f"{PROG}: error: {line}")
            return finish(2)
        if os.environ.get("WHILE_DEBUG") == "1":
            raise
        text = " ".join(str(err).split()) or "no message"
        say(f"{PROG}: internal error: {type(err).__name__}: {text}")
        code = 70
    return finish(code)
