"""One reading function: only :mod:`whilecli.io.read` opens a user's rows with polars or
pyarrow. The source expander (:mod:`whilecli.io.sources`) and the format converters
(:mod:`whilecli.io.formats`) turn other formats into rows; no other module of ``io`` (the
row methods' table, update's batch) scans or reads a file itself."""

from __future__ import annotations

import ast
from pathlib import Path

IO = Path(__file__).resolve().parents[2] / "src" / "whilecli" / "io"
#: The calls that read rows from a file (polars' and pyarrow's readers and scanners).
READERS = {
    "scan_ndjson",
    "read_ndjson",
    "scan_parquet",
    "read_parquet",
    "read_table",
    "read_schema",
    "ParquetFile",
    "scan_csv",
    "read_csv",
    "read_json",
    "scan_ipc",
    "read_ipc",
}
#: The one reader, the source expander and the converters of other formats into rows.
ALLOWED = {"read.py", "sources.py"}


def _reader_calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in READERS and isinstance(func, ast.Attribute):
                base = func.value
                owner = base.id if isinstance(base, ast.Name) else None
                if owner in ("pl", "pq", "pa", "polars", "pyarrow", "csv", "pj", "pacsv"):
                    found.append(f"{node.lineno}: {owner}.{name}")
    return found


def test_only_the_one_reader_reads_rows() -> None:
    found = {
        str(path.relative_to(IO)): calls
        for path in sorted(IO.rglob("*.py"))
        if path.name not in ALLOWED
        and path.parent.name != "formats"
        and (calls := _reader_calls(path))
    }
    assert found == {}


def test_the_check_sees_a_reader_call(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import polars as pl\nimport pyarrow.parquet as pq\n\n"
        "a = pl.scan_ndjson('x')\nb = pq.read_table('y')\n",
        encoding="utf-8",
    )
    assert _reader_calls(module) == ["4: pl.scan_ndjson", "5: pq.read_table"]
