"""A summary without a whilecli header does not say whether the rows carried log-probs or
critic values: the route says unknown, never absent."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from whilecli.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"


def _route_json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    with pytest.raises(SystemExit):
        app(["route", str(path), "--format", "json"])
    return json.loads(capsys.readouterr().out)


def _check(report: dict, number: int) -> dict:
    return report["checks"][number - 1]


@pytest.mark.parametrize("rows", ["single.parquet", "mixed.parquet"])
def test_flags_unknown_without_header(
    rows: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        app(["summarize", str(EXAMPLES / rows), "-o", str(tmp_path / "s.parquet")])
    capsys.readouterr()
    with_header = _route_json(tmp_path / "s.parquet", capsys)
    pl.read_parquet(tmp_path / "s.parquet").write_parquet(tmp_path / "bare.parquet")
    bare = _route_json(tmp_path / "bare.parquet", capsys)

    assert isinstance(_check(with_header, 2)["measured"]["sampler_logprobs"], bool)
    measured = _check(bare, 2)["measured"]
    assert measured["sampler_logprobs"] is None and measured["critic_values"] is None
    if rows == "single.parquet":
        assert "log-probs are unknown" in _check(bare, 2)["why"]
        assert "absent" not in _check(bare, 2)["why"]
