"""The packages stack as DESIGN's picture draws them: ``commands/`` (and ``cli``) parse, call
one library function and print, so no library module imports them; ``io/`` reads every
input into one frame and imports nothing from the layers that consume it."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "whilecli"
#: The packages ``io`` serves: what it must not import.
ABOVE_IO = ("route", "methods", "emit", "trainers", "watch", "commands", "cli")


def imported(path: Path) -> set[str]:
    """The ``whilecli`` modules a file imports, at its top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return {n for n in names if n == "whilecli" or n.startswith("whilecli.")}


def _package(path: Path) -> str:
    return path.relative_to(SRC).parts[0].removesuffix(".py")


def test_no_library_module_imports_the_commands() -> None:
    found = {
        str(path.relative_to(SRC)): sorted(n for n in imported(path) if n.startswith(
            ("whilecli.commands", "whilecli.cli")))
        for path in sorted(SRC.rglob("*.py"))
        if _package(path) not in ("commands", "cli", "__main__")
    }  # fmt: skip
    assert {k: v for k, v in found.items() if v} == {}


def test_io_imports_nothing_that_consumes_it() -> None:
    found = {
        str(path.relative_to(SRC)): sorted(
            n for n in imported(path) if n.split(".")[1:2] and n.split(".")[1] in ABOVE_IO
        )
        for path in sorted((SRC / "io").rglob("*.py"))
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_the_scan_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from whilecli.commands import check\n", encoding="utf-8")
    assert "whilecli.commands.check" in imported(module)
