"""Every JSON the program parses goes through ``jsonout.parse`` (one depth guard, one rule for
lone surrogates): no other module calls ``json.load`` or ``json.loads`` itself."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "whilecli"


def _direct_json_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("load", "loads")
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "json"
    ]


def test_no_module_parses_json_past_the_guard() -> None:
    found = {
        str(path.relative_to(SRC)): lines
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "jsonout.py" and (lines := _direct_json_calls(path))
    }
    assert found == {}


def test_the_check_sees_a_direct_call(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import json\n\nx = json.loads('{}')\n", encoding="utf-8")
    assert _direct_json_calls(module) == [3]


def test_a_sidecar_nested_past_the_guard_is_left_unread(tmp_path: Path) -> None:
    from whilecli.emit import sidecars

    deep = tmp_path / "metadata.json"
    deep.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    assert sidecars._read(deep) is None
