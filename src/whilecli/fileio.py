"""Writing files the user owns: never overwrite without ``force``, always atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from whilecli.errors import UsageError


def check_writable(path: str | os.PathLike[str], *, force: bool) -> Path:
    """Refuse to replace an existing file unless ``force``; return the path."""
    p = Path(path)
    if p.exists() and not force:
        raise UsageError(f"{p} exists; pass --force to overwrite it")
    if p.exists() and p.is_dir():
        raise UsageError(f"{p} is a directory, not a file")
    return p


def atomic_write(
    path: str | os.PathLike[str], write: Callable[[Path], None], *, force: bool = False
) -> Path:
    """Call ``write(tmp_path)`` on a temporary file beside ``path``, then rename it into place.

    A reader never sees a half-written file, and a failed write leaves the old file as it was.
    """
    p = check_writable(path, force=force)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        write(tmp_path)
        os.chmod(tmp_path, _mode_for(p))
        os.replace(tmp_path, p)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return p


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
    return atomic_write(path, lambda t: t.write_text(text, encoding="utf-8"), force=force)
