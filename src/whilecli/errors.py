"""User-facing errors: one line that names the file, the row or line, and the field."""

from __future__ import annotations

import os
import re

#: The longest run of non-blank characters an error echoes whole (a value the input holds:
#: an id, a grade, a line's text) and the longest message after the place: past them the
#: middle is elided, so a megabyte id is still one readable line.
LONGEST_WORD = 160
LONGEST_DETAIL = 1000


#: What :func:`shown_path` writes as an escape: control characters (C0, DEL, C1), the
#: bidirectional controls that reorder the text after them, and the lone surrogates a name
#: that is not UTF-8 decodes to.
_UNPRINTED = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown_path(path: str | os.PathLike[str] | bytes) -> str:
    """A path as every error prints it: a newline, a tab, a carriage return or any other
    character that would break or reorder the error's one line written as an escape
    (``\\n``, ``\\t``, ``\\u202e``), so a name reads the same whether the file exists or not."""
    text = os.fsdecode(path)
    return _UNPRINTED.sub(lambda m: _SHORT_ESCAPES.get(m.group(), f"\\u{ord(m.group()):04x}"), text)


def clipped(text: str) -> str:
    """``text`` with each over-long word (:data:`LONGEST_WORD`) and the whole
    (:data:`LONGEST_DETAIL`) cut in the middle, saying how much was left out."""
    words = [
        w if len(w) <= LONGEST_WORD else f"{w[:100]}…[{len(w) - 130:,} more]…{w[-30:]}"
        for w in text.split()
    ]
    out = " ".join(words)
    if len(out) > LONGEST_DETAIL:
        out = f"{out[:700]} …[{len(out) - 900:,} more]… {out[-200:]}"
    return out


#: The one line of a command that ran out of memory (a MemoryError): not a bug, so not an
#: internal error (70); the input is more than this machine holds as read at once. Written
#: out beforehand: nothing is built while memory is short.
OUT_OF_MEMORY = (
    "out of memory (the input is more than this machine holds as read at once): free memory"
    " or raise the limit (ulimit -v), or read it in parts: whilecli summarize PART -o"
    " PART.parquet for each part, whilecli summarize --merge PART*.parquet -o tasks.parquet,"
    " then route or check tasks.parquet"
)
#: Its exit code: 2, as for any other input the command cannot take.
OUT_OF_MEMORY_EXIT = 2


class WhileError(Exception):
    """An error the user can act on. The CLI prints ``str(err)`` on one line and exits with ``exit_code``.

    Exit codes follow the route contract: 2 for bad usage or unreadable input, 1 when
    nothing can train yet.
    """

    exit_code: int = 2

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(" ".join(str(message).split()))
        if exit_code is not None:
            self.exit_code = exit_code

    def on_command_line(self) -> str:
        """The line the command line prints (:class:`UsageError` names its option)."""
        return str(self)


class InputError(WhileError):
    """Bad input data, located: ``FILE:LINE: field 'F': what is wrong``.

    ``line`` is 1-based for text files (JSONL, CSV) and ``row`` is 0-based for tabular files
    (Parquet) and for in-memory batches (the trajectory index). ``at`` names a place in a
    document's own terms where it has no line or row: an archive's member, an array's entry.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        row: int | None = None,
        field: str | None = None,
        at: str | None = None,
    ) -> None:
        where = shown_path(file) if file else ""
        if line is not None:
            where += f":{line}" if where else f"line {line}"
        elif row is not None:
            where += f": row {row}" if where else f"row {row}"
        elif at is not None:
            where += f": {at}" if where else at
        prefix = f"{where}: " if where else ""
        what = f"field '{clipped(field)}': " if field else ""
        super().__init__(f"{prefix}{what}{clipped(str(message))}")
        self.file, self.line, self.row, self.field = file, line, row, field
        self.at = at
        self.detail = message  # what is wrong, without the place

    def renamed(self, field: str) -> InputError:
        """The same error naming the field as ``field`` (a converted document's own name)."""
        return InputError(
            self.detail, file=self.file, line=self.line, row=self.row, field=field, at=self.at
        )


class MostlyErrorReplies(InputError):
    """A file refused because half or more of its replies are harness errors.

    Carries the counts, so a caller that reports such a file (``watch``) reads them here
    rather than from the message.
    """

    def __init__(self, message: str, *, errors: int, rows: int, file: str | None = None) -> None:
        super().__init__(message, file=file)
        self.errors, self.rows = errors, rows


class UsageError(WhileError):
    """Options that do not fit together or a knob out of range. ``knob``: the library
    keyword the message names (``max_len``), which the command line spells as its option
    (:meth:`on_command_line`)."""

    def __init__(
        self, message: str, *, exit_code: int | None = None, knob: str | None = None
    ) -> None:
        super().__init__(message, exit_code=exit_code)
        self.knob = knob

    def on_command_line(self) -> str:
        """The message with the knob named as its option (``max_len`` → ``--max-len``)."""
        text = str(self)
        if self.knob is None or not self.knob.isidentifier():
            return text
        return text.replace(self.knob, "--" + self.knob.replace("_", "-"), 1)


def path_error(err: OSError) -> str | None:
    """The one line for a path the system would not let a command read or list (a folder of
    mode 000 met while expanding an input, a run directory's step folder): the path and the
    system's reason, exit 2; None for an error that names no path (a bug's, not the input's).
    Every reader says so where it opens a file; this holds for the checks on the way there
    (``Path.is_dir`` raises on a folder it cannot enter)."""
    if err.filename is None or isinstance(err, BrokenPipeError):
        return None
    reason = err.strerror or type(err).__name__
    return f"{shown_path(err.filename)}: cannot read it: {reason.lower()}"
