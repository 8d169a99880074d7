"""How this copy of whilecli was installed, so that a hint names a command that works.

A clone (the package imported from ``ROOT/src/whilecli``, editable or on ``PYTHONPATH``)
installs an extra with ``pip install -e '.[torch]'`` in ``ROOT``; a copy installed from a
directory, a wheel or a git URL records where it came from (``direct_url.json``, PEP 610);
a copy from a package index records nothing and takes ``pip install 'whilecli[torch]'``.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

import whilecli
from whilecli import jsonout

NAME = "whilecli"


def _clone_root(package_dir: Path) -> Path | None:
    """The clone's root when the package is imported from its source tree (``src/``)."""
    root = package_dir.parent.parent
    if package_dir.parent.name == "src" and (root / "pyproject.toml").is_file():
        return root
    return None


def _direct_url() -> dict | None:
    """What pip recorded of where the installed copy came from (None: from an index)."""
    from importlib import metadata

    try:
        text = metadata.distribution(NAME).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    data = jsonout.loads(text, lenient=True) if text else None
    return data if isinstance(data, dict) and isinstance(data.get("url"), str) else None


def _here(path: Path, cwd: Path) -> str:
    """``path`` as the user types it from ``cwd``: ``.`` when it is the working folder."""
    try:
        same = path.resolve() == cwd.resolve()
    except OSError:
        same = False
    return "." if same else str(path)


def install_command(
    extra: str,
    *,
    package_dir: Path | None = None,
    direct_url: dict | None = None,
    cwd: Path | None = None,
) -> str:
    """The ``pip install`` line that adds ``extra`` to this copy of whilecli.

    ``package_dir``, ``direct_url`` and ``cwd`` default to this process's (the tests give
    their own)."""
    package_dir = package_dir or Path(whilecli.__file__).resolve().parent
    cwd = cwd or Path(os.getcwd())
    root = _clone_root(package_dir)
    if root is not None:
        return f"pip install -e '{_here(root, cwd)}[{extra}]'"
    record = direct_url if direct_url is not None else _direct_url()
    if not record:  # from an index ({} given: as if nothing were recorded)
        return f"pip install '{NAME}[{extra}]'"
    url = record["url"]
    parsed = urlparse(url)
    if parsed.scheme == "file" and "dir_info" in record:
        editable = bool(record["dir_info"].get("editable"))
        where = _here(Path(unquote(parsed.path)), cwd)
        return f"pip install {'-e ' if editable else ''}'{where}[{extra}]'"
    vcs = record.get("vcs_info", {}).get("vcs")
    if vcs and not url.startswith(f"{vcs}+"):
        url = f"{vcs}+{url}"
    return f"pip install '{NAME}[{extra}] @ {url}'"
