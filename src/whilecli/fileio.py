"""Writing files the user owns: never overwrite without ``force``, always atomically.

Every writer checks its target with :func:`check_writable` before it computes anything (so
a long run is not lost to a typo in ``-o``), then writes with :func:`atomic_write`: into a
temporary file beside the target, moved into place at the end. Without ``force`` that last
step never replaces a file: it fails when the target appeared after the check (another
writer racing for the same path), so two writers cannot both succeed. Any ``OSError`` on the
way is one line, naming the file, exit 2.

A target that is a character device or a pipe (``/dev/null``, ``/dev/stdout``, a FIFO, a
shell's ``>(...)``) is written through, not replaced: the bytes are made in a temporary file
first, then copied in whole (a short write, ``/dev/full``'s ENOSPC, is one line). A target
that is one of the command's own inputs is refused, ``force`` or not.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import glob
import io
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from whilecli.errors import UsageError, shown_path


def _reason(err: OSError) -> str:
    return err.strerror or " ".join(str(err).split()) or type(err).__name__


def _nearest_dir(p: Path) -> Path:
    """The nearest ancestor of ``p`` that exists; refused when it is not a directory."""
    for ancestor in (p.parent, *p.parent.parents):
        if ancestor.is_dir():
            return ancestor
        if ancestor.exists() or ancestor.is_symlink():
            raise UsageError(f"cannot write {p}: {ancestor} is not a directory")
    return Path(".")


def check_writable(
    path: str | os.PathLike[str], *, force: bool, inputs: Iterable[str | os.PathLike[str]] = ()
) -> Path:
    """Refuse a target that cannot be written, before any work; return the path.

    Refused: an empty name, a directory, an existing file without ``force`` (a dangling
    symlink counts as existing), a path through a file (``notes.txt/out.toml``), a folder
    where no file can be created (no permission, a read-only file system, ``/proc``), a
    block device or a socket, and a file among ``inputs`` (the command's own input: writing
    it would replace what is being read). A character device or a pipe is written through
    (:func:`is_stream`), ``force`` or not. Missing folders are fine (the write creates them);
    the check probes the nearest folder that exists by creating and removing a temporary
    file there, since ``os.access`` says yes to root everywhere.
    """
    if not os.fspath(path):
        raise UsageError("the output path is empty")
    p = Path(path)
    try:
        refuse_input(p, inputs)
        if is_stream(p):
            return p
        return _check(p, force=force)
    except OSError as err:  # a name too long for the file system, a loop of links, ...
        raise UsageError(f"cannot write {p}: {_reason(err)}") from None


def is_stream(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (its links followed) is a character device or a pipe: a target that
    is written into, never replaced. A block device or a socket is refused."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    if stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
        kind = "a block device" if stat.S_ISBLK(mode) else "a socket"
        raise UsageError(f"cannot write {os.fspath(path)}: it is {kind}, not a file")
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


#: The most bytes a side file or an option file may hold (a writer's metadata, a results or
#: config file, a judge audit): past it the file is refused, never read whole into memory.
SIDE_FILE_LIMIT = 256 << 20


class UnreadableFile(Exception):
    """A file that is there but cannot be read as a file: ``reason`` says why (a folder, a
    pipe, a device, a loop of links, over :data:`SIDE_FILE_LIMIT`, an ``OSError``)."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"{shown_path(os.fspath(path))}: {reason}")
        self.path, self.reason = os.fspath(path), reason


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words (``a folder``, ``a pipe (FIFO)``)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_regular(
    path: str | os.PathLike[str], *, limit: int | None = SIDE_FILE_LIMIT
) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (its links followed); None when nothing
    is there (no such file, a link to nothing, a path through a file). Anything else raises
    :class:`UnreadableFile`: a folder, a pipe or a device (opening a FIFO would wait forever
    for a writer, ``/dev/zero`` never ends), a loop of links, a file over ``limit`` bytes.
    The one rule for every file read beside the rows or named by an option."""
    name = os.fspath(path)
    try:
        mode = os.stat(name).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as err:  # a loop of links, no permission, a name too long
        raise UnreadableFile(name, _reason(err)) from None
    except ValueError as err:  # a NUL in the name
        raise UnreadableFile(name, str(err)) from None
    if not stat.S_ISREG(mode):
        raise UnreadableFile(name, f"it is {file_kind(mode)}, not a file")
    try:  # non-blocking: a FIFO put in its place since the stat cannot hang the open
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise UnreadableFile(name, f"it is {file_kind(mode)}, not a file")
            data = fh.read() if limit is None else fh.read(limit + 1)
    except OSError as err:
        raise UnreadableFile(name, _reason(err)) from None
    if limit is not None and len(data) > limit:
        raise UnreadableFile(
            name, f"it holds more than {limit >> 20} MiB, too much for a side file"
        )
    return data


#: The file formats of rows a writer may write, by the suffixes that name them.
ROW_FORMATS: dict[str, tuple[str, ...]] = {
    "parquet": (".parquet", ".pq"),
    "jsonl": (".jsonl", ".ndjson"),
}


def output_format(
    path: str | os.PathLike[str],
    formats: dict[str, tuple[str, ...]] | None = None,
    *,
    stream: str = "jsonl",
) -> str:
    """The format a writer writes ``path`` in, one rule for every command: the one its suffix
    names (``formats``: format → suffixes, default :data:`ROW_FORMATS`); a character device
    or a pipe (``/dev/null``, ``/dev/stdout``, a FIFO), which has no name to go by, takes
    ``stream`` (JSON Lines, as ``-o -`` writes) unless its suffix names one. Any other name
    is refused in one line naming the suffixes."""
    formats = ROW_FORMATS if formats is None else formats
    suffix = Path(path).suffix.lower()
    for name, suffixes in formats.items():
        if suffix in suffixes:
            return name
    if is_stream(path):
        return stream
    known = [s for suffixes in formats.values() for s in suffixes[:1]]
    shown = f"'{suffix}'" if suffix else "none"
    raise UsageError(
        f"{shown_path(os.fspath(path))}: unknown output extension {shown}; use "
        + " or ".join(known)
    )


def refuse_input(path: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse ``path`` when it is the same file as one of ``inputs`` (a link or another
    spelling of it too), a file inside an input folder, or a file an input glob matches
    (matched as a pattern, never expanded: a tree of looping links has no end): the output
    would replace the rows the command reads."""
    if not os.path.isfile(path):
        return
    real = os.path.realpath(path)
    spelled = (os.path.abspath(path), real)
    for raw in inputs:
        name = os.fspath(raw)
        if not name or name == "-":
            continue
        try:
            if glob.has_magic(name):
                pattern = os.path.abspath(name)
                same = any(fnmatch.fnmatchcase(p, pattern) for p in spelled)
            elif os.path.isdir(name):  # a file of the folder read: one of its shards
                same = real.startswith(os.path.join(os.path.realpath(name), ""))
            else:
                same = os.path.samefile(path, name)
        except (OSError, ValueError):
            continue
        if same:
            raise UsageError(
                f"{os.fspath(path)} is an input of this command: writing it would replace the"
                " rows it reads (--force or not); write to another file"
            )


def _check(p: Path, *, force: bool) -> Path:
    if p.is_dir():
        raise UsageError(f"{shown_path(p)} is a directory, not a file")
    if (p.exists() or p.is_symlink()) and not force:
        raise UsageError(f"{shown_path(p)} exists; pass --force to overwrite it")
    parent = _nearest_dir(p)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {p}: no permission to create files in {parent}")
    try:
        fd, probe = tempfile.mkstemp(prefix=_tmp_prefix(p), suffix=".probe", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise UsageError(f"cannot write {p}: {_reason(err)} ({parent})") from None
    return p


def atomic_write(
    path: str | os.PathLike[str], write: Callable[[Path], None], *, force: bool = False
) -> Path:
    """Call ``write(tmp_path)`` on a temporary file beside ``path``, then move it into place.

    A reader never sees a half-written file, and a failed write leaves the old file as it was.
    Without ``force`` the move refuses to replace a file that appeared since the check.
    """
    return atomic_write_all([(path, write)], force=force)[0]


def atomic_write_all(
    writes: Sequence[tuple[str | os.PathLike[str], Callable[[Path], None]]],
    *,
    force: bool = False,
    stdout: Callable[[], None] | None = None,
    replacing: Iterable[str | os.PathLike[str]] = (),
) -> list[Path]:
    """Write several files as one (a command's two outputs): each ``write(tmp_path)`` into a
    temporary file beside its target, then the streams (:func:`is_stream`: a device, a pipe;
    ``stdout``, what writes the command's ``-`` output) written through, and only once all
    of them are written are the files moved into place,
    in order. A write that fails (a full disk, a closed stdout) leaves every target as it
    was; a move that fails (a file that appeared since the check) takes back the files this
    call had already created, so a failed run leaves no half a rerun would have to
    overwrite. ``replacing``: targets replaced whatever ``force`` says (a state file the
    command owns, written with its output or not at all). Returns the targets as checked."""
    owned = {os.fspath(p) for p in replacing}
    forced = {os.fspath(p): force or os.fspath(p) in owned for p, _ in writes}
    targets = [
        (check_writable(path, force=forced[os.fspath(path)]), write) for path, write in writes
    ]
    staged: list[tuple[Path, Path, Path]] = []  # (given, destination, temporary file)
    try:
        for given, write in targets:
            if not is_stream(given):
                staged.append((given, *_stage(given, write)))
        for given, write in targets:  # what cannot be taken back is written before any move
            if is_stream(given):
                _write_through(given, write)
        if stdout is not None:
            stdout()
        created: list[Path] = []
        for given, dest, tmp in staged:
            existed = dest.exists()
            try:
                _commit(tmp, dest, force=forced[os.fspath(given)])
            except FileExistsError:
                _take_back(created)
                raise UsageError(
                    f"{given} appeared while it was being written (another writer?); it was"
                    " left as it is: pass --force to overwrite it"
                ) from None
            except Exception as err:
                _take_back(created)
                if (error := _write_error(given, err)) is None:
                    raise
                raise error from None
            if not existed:
                created.append(dest)
    finally:
        for _, _, tmp in staged:
            tmp.unlink(missing_ok=True)
    return [given for given, _ in targets]


def _stage(given: Path, write: Callable[[Path], None]) -> tuple[Path, Path]:
    """``(destination, temporary file)``: ``write`` run on a temporary file beside ``given``
    (a link to a file: beside the file it names, which is replaced, the link kept), its mode
    set to what a plain write would give. Any failure is one line and leaves no file."""
    p = Path(os.path.realpath(given)) if given.is_symlink() and given.exists() else given
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # a file took a folder's place since the check
        raise UsageError(f"cannot write {given}: {_reason(err)}") from None
    tmp_path: Path | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(p), suffix=".tmp", dir=p.parent)
        os.close(fd)
        tmp_path = Path(tmp)
        write(tmp_path)
        os.chmod(tmp_path, _mode_for(p))
    except BaseException as err:
        if tmp_path is not None:
            tmp_path.unlink(missing_ok=True)
        if isinstance(err, Exception) and (error := _write_error(given, err)) is not None:
            raise error from None
        raise
    return p, tmp_path


def _take_back(created: Sequence[Path]) -> None:
    """Remove the files a failed :func:`atomic_write_all` had moved into place."""
    for made in reversed(created):
        with contextlib.suppress(OSError):
            made.unlink()


def _write_through(p: Path, write: Callable[[Path], None]) -> Path:
    """Write into a character device or a pipe: ``write`` makes the bytes in a temporary
    file (in the temporary folder: a device's folder is no place for one), then they are
    copied into ``p`` in whole; any failure (ENOSPC from ``/dev/full``, a closed pipe) is
    one line."""
    tmp_path: Path | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(p), suffix=".tmp")
        os.close(fd)
        tmp_path = Path(tmp)
        write(tmp_path)
        with open(tmp_path, "rb") as src, _open_stream(p) as dest:
            while chunk := src.read(1 << 20):
                view = memoryview(chunk)
                while view:
                    done = dest.write(view)
                    if not done:
                        raise OSError(errno.EIO, "the write made no progress")
                    view = view[done:]
    except Exception as err:
        if (error := _write_error(p, err)) is None:
            raise
        raise error from None
    finally:
        if tmp_path is not None:
            tmp_path.unlink(missing_ok=True)
    return p


#: Seconds an output FIFO is given to gain a reader before it is refused.
FIFO_READER_WAIT = 2.0


def _open_stream(p: Path) -> io.FileIO:
    """``p`` (a character device or a pipe) opened for writing without waiting forever: a
    FIFO that no process reads within ``FIFO_READER_WAIT`` seconds (a reader started just
    before, ``cat p &``, may not have opened it yet) is refused in one line, where a plain
    open would wait for a reader forever. The open file then blocks as usual, so a slow
    reader is waited for."""
    import fcntl

    give_up = time.monotonic() + FIFO_READER_WAIT
    while True:
        try:
            fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as err:
            if err.errno != errno.ENXIO:
                raise
            if time.monotonic() >= give_up:
                raise UsageError(
                    f"cannot write {shown_path(p)}: it is a pipe (FIFO) that no process reads"
                ) from None
            time.sleep(0.02)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return io.FileIO(fd, "wb", closefd=True)


#: Characters of the target's name kept in its temporary file's name: the temporary name
#: stays far below any file system's name limit (255 bytes) whatever the target's length.
_TMP_NAME_CHARS = 24
_UNSAFE_IN_TMP = re.compile(r"[^A-Za-z0-9._+-]")


def _tmp_prefix(p: Path) -> str:
    """``.NAME.`` for the temporary file beside ``p``: the target's name cut short and in
    plain ASCII (a name in another encoding cannot reach a writer that takes only text)."""
    return "." + _UNSAFE_IN_TMP.sub("_", p.name[:_TMP_NAME_CHARS]) + "."


_OS_ERROR = re.compile(r"\(os error (\d+)\)|\[errno (\d+)\]", re.IGNORECASE)


def _write_error(path: Path, err: Exception) -> UsageError | None:
    """The one line for a failed write of ``path``: the system's reason, also when a writer
    (polars) wraps the system's error in its own; None for an error that is not the system's."""
    reason = _reason(err) if isinstance(err, OSError) else _os_reason(err)
    return None if reason is None else UsageError(f"cannot write {path}: {reason}")


def _os_reason(err: BaseException) -> str | None:
    """The system's reason inside another library's error (``... (os error 28)``), or None."""
    m = _OS_ERROR.search(str(err))
    if m is None:
        return None
    return os.strerror(int(m.group(1) or m.group(2)))


def _commit(tmp: Path, dest: Path, *, force: bool) -> None:
    """Move ``tmp`` to ``dest``: ``os.replace`` with ``force``, else a move that raises
    ``FileExistsError`` when ``dest`` exists (``renameat2(RENAME_NOREPLACE)`` where the
    kernel and file system have it, else a hard link, else an exclusive create)."""
    if force:
        os.replace(tmp, dest)
        return
    if _rename_noreplace(tmp, dest):
        return
    try:
        os.link(tmp, dest)
    except FileExistsError:
        raise
    except OSError as err:  # no hard links here (some FUSE, vfat, ...)
        if err.errno not in (
            errno.EPERM,
            errno.ENOTSUP,
            errno.EOPNOTSUPP,
            errno.EXDEV,
            errno.EMLINK,
        ):
            raise
        # claim the name first (fails if taken), then replace our own empty placeholder
        os.close(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        try:
            os.replace(tmp, dest)
        except OSError:
            dest.unlink(missing_ok=True)  # our placeholder, not someone's file
            raise
        return
    tmp.unlink()


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1


def _load_renameat2() -> Callable[..., int] | None:
    """libc's ``renameat2`` (glibc 2.28 and later), or None."""
    import ctypes

    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_UNLOADED = object()
#: libc's ``renameat2``, loaded on the first write (not at startup); None where it is absent.
_renameat2: object = _UNLOADED


def _rename_noreplace(tmp: Path, dest: Path) -> bool:
    """``renameat2(tmp, dest, RENAME_NOREPLACE)``: True when moved, False when the system
    lacks it; ``FileExistsError`` when ``dest`` exists."""
    global _renameat2
    if _renameat2 is _UNLOADED:
        _renameat2 = _load_renameat2()
    fn = _renameat2
    if not callable(fn):
        return False
    rc = fn(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(dest), _RENAME_NOREPLACE)
    if rc == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(dest))


def _mode_for(path: Path) -> int:
    """The permission bits a plain ``open(path, "w")`` would give: the old file's, or 0666 less
    the umask (``mkstemp`` alone would leave 0600)."""
    if path.exists():
        return path.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write_text(path: str | os.PathLike[str], text: str, *, force: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""

    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise UsageError(
            f"cannot write {path}: the text holds {err.object[err.start]!r} at character"
            f" {err.start}, which UTF-8 cannot encode (a name that was not valid UTF-8?)"
        ) from None

    def write(tmp: Path) -> None:
        tmp.write_bytes(data)

    return atomic_write(path, write, force=force)


def reader_source(path: str | os.PathLike[str], name: str | None = None) -> str | io.BytesIO:
    """``path`` as polars' and pyarrow's readers take it: ``name`` (by default the path as
    it is), or, for a name that is not UTF-8 (Python holds its bytes as lone surrogates,
    which those readers refuse as text), the file's bytes."""
    text = os.fspath(path)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            with open(text, "rb") as handle:
                return io.BytesIO(handle.read())
    return text if name is None else name
