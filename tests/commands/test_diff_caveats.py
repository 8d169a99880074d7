"""``diff`` and ``size --before --after`` say what makes a paired difference mean something
else than the change between two dumps (:func:`whilecli.route.shared.pairing_notes`): a
truncated share that differs with intervals apart (a regression that is the token cap's),
rows that name other models on the two sides, and counts equal on every task (one dump given
twice). A difference of -0.14 across a cap change, or of +0.00 of a file against itself,
was printed with no word."""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app


def _dump(
    path: Path, rates: list[float], rng: random.Random, cut: float, model: str | None, k: int = 4
) -> str:
    """k rows per task; a share ``cut`` of the rows cut off (and failing), the rest drawn at
    the task's rate."""
    lines = []
    for t, p in enumerate(rates):
        for j in range(k):
            truncated = rng.random() < cut
            row: dict[str, object] = {
                "task_id": f"t{t}",
                "completion": f"{path.stem}.{t}.{j}",
                "reward": 0.0 if truncated else float(rng.random() < p),
                "truncated": truncated,
            }
            if model is not None:
                row["model"] = model
            lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _warnings(*args: str) -> list[str]:
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    return [str(w) for w in json.loads(res.stdout)["warnings"]]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cuts=st.sampled_from([(0.0, 0.0), (0.1, 0.1), (0.0, 0.3), (0.3, 0.05), (0.02, 0.02)]),
    models=st.sampled_from(
        [
            ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
            ("Qwen/Qwen3-8B", "gpt-4o"),
            (None, "gpt-4o"),
            ("qwen3-8b", "Qwen/Qwen3-8B"),
        ]
    ),
    seed=st.integers(0, 999),
)
def test_diff_names_a_cap_change_and_other_models(
    tmp_path: Path, cuts: tuple[float, float], models: tuple[str | None, str | None], seed: int
) -> None:
    rng = random.Random(seed)
    rates = [rng.random() for _ in range(300)]
    folder = tmp_path / f"{seed}-{cuts}-{models}".replace("/", "_")
    folder.mkdir(exist_ok=True)
    before = _dump(folder / "before.jsonl", rates, rng, cuts[0], models[0])
    after = _dump(folder / "after.jsonl", rates, rng, cuts[1], models[1])
    for command in (["diff", before, after], ["size", "--before", before, "--after", after]):
        said = _warnings(*command)
        cap = [w for w in said if "truncated share" in w]
        assert bool(cap) is (abs(cuts[0] - cuts[1]) >= 0.2), said  # 1200 rows a side
        other = [w for w in said if "other models" in w]
        assert bool(other) is (models == ("Qwen/Qwen3-8B", "gpt-4o")), said


def test_one_dump_given_twice_is_said(tmp_path: Path) -> None:
    rng = random.Random(3)
    path = _dump(tmp_path / "a.jsonl", [rng.random() for _ in range(100)], rng, 0.0, None)
    copy = tmp_path / "b.jsonl"
    copy.write_bytes(Path(path).read_bytes())
    for after in (path, str(copy)):
        said = _warnings("diff", path, after)
        assert any("one dump given twice" in w for w in said), said
    other = _dump(tmp_path / "c.jsonl", [rng.random() for _ in range(100)], rng, 0.0, None)
    assert not any("one dump given twice" in w for w in _warnings("diff", path, other))
