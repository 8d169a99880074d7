"""A grade or a truncation flag written as a library's ``repr`` of one value (``str()`` of a
reward computed in torch or NumPy: ``tensor(1.)``, ``tensor([1.0000])``, ``np.float64(1.0)``,
``tensor(True, device='cuda:0')``) is the value inside, in every reader (the polars scans
of JSON Lines and Parquet, and :func:`whilecli.io.words.grade_text` line by line): the
route equals the route of the plain values. Such files were refused. A repr of two values
(``tensor([1., 0.])``) is no grade, refused at its line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.words import flag_text, grade_text
from whilecli.route import run_route

WRAPPERS = [
    "tensor({})",
    "tensor([{}])",
    "np.float64({})",
    "numpy.float32({})",
    "array({})",
    "tensor({}, device='cuda:0')",
    "tensor({}, dtype=torch.float64)",
    " Tensor({}) ",
]


def _number(value: float, style: int) -> str:
    return ["{:.1f}", "{:.4f}", "{:g}.", "{:.0f}."][style].format(value)


def _write(path: Path, rows: list[dict[str, object]]) -> str:
    if path.suffix == ".parquet":
        pl.DataFrame(rows).write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    wrapper=st.sampled_from(WRAPPERS),
    style=st.integers(0, 3),
    suffix=st.sampled_from([".jsonl", ".parquet"]),
    cut_flags=st.booleans(),
)
def test_a_wrapped_value_reads_as_the_value(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    wrapper: str,
    style: int,
    suffix: str,
    cut_flags: bool,
) -> None:
    rng = random.Random(seed)
    plain, wrapped = [], []
    for t in range(60):
        p = rng.random()
        for j in range(4):
            grade = float(rng.random() < p)
            cut = rng.random() < 0.1
            row = {"task_id": f"t{t}", "completion": f"c{t}.{j}", "reward": grade}
            plain.append({**row, "truncated": cut} if cut_flags else row)
            text = wrapper.format(_number(grade, style))
            flag = wrapper.format("True" if cut else "False").replace("True.", "True")
            wrapped.append({**row, "reward": text, **({"truncated": flag} if cut_flags else {})})
    folder = tmp_path_factory.mktemp("wrapped")
    want = run_route(_write(folder / f"plain{suffix}", plain))
    got = run_route(_write(folder / f"wrapped{suffix}", wrapped))
    assert (got.route, got.method, got.exit_code) == (want.route, want.method, want.exit_code)
    assert got.summary["pass_at_1"] == want.summary["pass_at_1"]
    assert got.summary["rows"] == want.summary["rows"]


@pytest.mark.parametrize("text", ["tensor([1., 0.])", "torch(1)", "tensor()", "np.float64(x)"])
def test_what_is_not_one_value_is_no_grade(text: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        grade_text(text)
    rows = [{"task_id": f"t{i // 4}", "reward": float(i % 2)} for i in range(40)]
    rows[7]["reward"] = text  # type: ignore[assignment]
    with pytest.raises(InputError, match=":8: field 'reward'"):
        run_route(_write(tmp_path / "rows.jsonl", rows))


def test_line_by_line_reading_agrees() -> None:
    assert grade_text("tensor(0.5000, device='cuda:0')") == 0.5
    assert grade_text("np.True_") == 1.0 and grade_text("np.False_") == 0.0
    assert flag_text("tensor(True)") is True and flag_text("tensor(False)") is False
