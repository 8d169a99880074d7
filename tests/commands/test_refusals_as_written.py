"""A converted format's refusal names the field as the file spells it.

Files of the formats read by conversion (EvalScope reviews keyed by ``index``, Atropos groups
keyed by ``seed`` with their ``scores``) are generated with one bad value at a generated
place; ``route`` refuses each in one located line naming the file's own field, never the
canonical name the conversion gave it (``task_id``, ``reward``). HELM's
``display_predictions.json`` given as rows is refused with where the graded rows are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

BAD_IDS = st.sampled_from([[1, 2], {"a": 1}, [["x"]]])
BAD_SCORES = st.sampled_from(["high", [1.0], {"v": 1}])


def _evalscope(n: int, bad: int, value: Any) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        rows.append(
            {
                "index": value if i == bad else i // 2,
                "messages": [
                    {"role": "user", "content": f"question {i // 2}"},
                    {"role": "assistant", "content": f"answer {i}"},
                ],
                "target": "A",
                "sample_score": {"score": {"value": {"acc": float(i % 2)}}},
            }
        )
    return rows


def _atropos(n: int, bad: int, value: Any, field: str) -> list[dict[str, Any]]:
    groups = []
    for i in range(n):
        scores: list[Any] = [1.0, 0.0]
        seed: Any = i // 2
        if i == bad:
            if field == "seed":
                seed = value
            else:
                scores = [value, 0.0]
        groups.append(
            {"seed": seed, "scores": scores, "tokens": [[1, 2], [3, 4]], "masks": [[1, 1], [1, 1]]}
        )
    return groups


def _route(path: Path) -> tuple[int, str]:
    done = CliRunner().invoke(app, ["route", str(path)])
    return done.exit_code, done.stderr


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    kind=st.sampled_from(["evalscope", "atropos seed", "atropos scores"]),
    n=st.integers(4, 12),
)
def test_refusals_name_the_field_as_the_file_spells_it(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, kind: str, n: int
) -> None:
    bad = data.draw(st.integers(1, n - 1))  # the first row decides the layout: keep it sound
    if kind == "evalscope":
        rows, own, canonical = _evalscope(n, bad, data.draw(BAD_IDS)), "index", "task_id"
    elif kind == "atropos seed":
        rows, own, canonical = _atropos(n, bad, data.draw(BAD_IDS), "seed"), "seed", "task_id"
    else:
        rows, own, canonical = _atropos(n, bad, data.draw(BAD_SCORES), "scores"), "scores", "reward"
    path = tmp_path_factory.mktemp("conv") / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, err = _route(path)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f"field '{own}'" in lines[0] and f"field '{canonical}'" not in lines[0], lines[0]
    assert f"rows.jsonl:{bad + 1}:" in lines[0], lines[0]


def test_helm_display_predictions_point_at_the_graded_rows(tmp_path: Path) -> None:
    predictions = [
        {"instance_id": f"id{i}", "train_trial_index": 0, "predicted_text": "B", "stats": {}}
        for i in range(3)
    ]
    alone = tmp_path / "display_predictions.json"
    alone.write_text(json.dumps(predictions), encoding="utf-8")
    code, err = _route(alone)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "per_instance_stats.json" in err and "stats is not a list" not in err
    (tmp_path / "per_instance_stats.json").write_text("[]", encoding="utf-8")
    code, err = _route(alone)
    assert code == 2 and str(tmp_path / "per_instance_stats.json") in err, err
