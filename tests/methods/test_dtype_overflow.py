"""An overflow in the update's dtype is blamed on what caused it, at that dtype's limit: a knob
the dtype cannot hold is refused naming its option before any reading, a β whose KL term
overflows names --beta (not the reference log-probs), a log-prob gap past the dtype's limit
names the list with that limit (88.7 for float32, 709.8 for float64), and an entry beyond the
dtype's largest number names its field, never the ∞ it would have become."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError, UsageError
from whilecli.methods.run import run_update

FLOAT_MAX = {"float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}
LOG_FLOAT_MAX = {name: math.log(x) for name, x in FLOAT_MAX.items()}
F32_MAX = FLOAT_MAX["float32"]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def pair(gap: float) -> list[dict]:
    """One task of two rows; row 0's reference log-prob sits ``gap`` above its log π."""
    rows = [
        {"task_id": "a", "reward": 1.0, "logprobs": [-1.0 - gap], "ref_logprobs": [-1.0]},
        {"task_id": "a", "reward": 0.0, "logprobs": [-1.0], "ref_logprobs": [-1.0]},
    ]
    for row in rows:  # on-policy, with critic values: every method and correction reads them
        row.update(behavior_logprobs=row["logprobs"], values=[0.5])
    return rows


@settings(max_examples=25, deadline=None)
@given(
    method=st.sampled_from(["grpo", "max_rl", "rae"]),
    beta=st.floats(F32_MAX * 1.0001, 1e308),
)
def test_a_knob_past_float32_is_refused_naming_its_option_before_reading(
    method: str, beta: float
) -> None:
    with pytest.raises(UsageError, match=r"--beta .* beyond float32's largest number"):
        run_update("/nonexistent/batch.jsonl", method, {"beta": beta}, dtype="float32")


@pytest.mark.parametrize(
    ("option", "value"),
    [("--beta", "1e39"), ("--tis-cap", "1e39"), ("--gae-alpha", "1e39")],
)
def test_the_command_names_the_option(tmp_path: Path, option: str, value: str) -> None:
    path = write(tmp_path / "b.jsonl", pair(0.0))
    method = "sao" if option == "--gae-alpha" else "grpo"
    extra = ["--correction", "tis"] if option == "--tis-cap" else []
    result = CliRunner().invoke(
        app, ["update", "--method", method, str(path), option, value, "--dtype", "float32", *extra]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"whilecli: error: {option} 1e+39 is beyond float32's")
    assert "ref_logprobs" not in result.stderr


@settings(max_examples=30, deadline=None)
@given(
    dtype=st.sampled_from(["float32", "float64"]),
    gap=st.floats(3.0, 80.0),
    data=st.data(),
)
def test_a_kl_term_overflowed_by_beta_names_beta(
    tmp_path_factory: pytest.TempPathFactory, dtype: str, gap: float, data: st.DataObject
) -> None:
    """r = e^gap is finite in either dtype; β w (1 − r) overflows: β is to blame."""
    largest = FLOAT_MAX[dtype]
    beta = data.draw(st.floats(4 / math.expm1(gap) * largest, largest))
    path = write(tmp_path_factory.mktemp("b") / "b.jsonl", pair(gap))
    with pytest.raises(UsageError, match=rf"^beta is too large for {dtype}") as err:
        run_update(path, "grpo", {"beta": beta}, dtype=dtype)
    assert err.value.on_command_line().startswith(f"--beta is too large for {dtype}")


@settings(max_examples=30, deadline=None)
@given(dtype=st.sampled_from(["float32", "float64"]), over=st.floats(1.0, 60.0))
def test_a_reference_gap_past_the_dtypes_limit_names_ref_logprobs_and_that_limit(
    tmp_path_factory: pytest.TempPathFactory, dtype: str, over: float
) -> None:
    limit = LOG_FLOAT_MAX[dtype]
    path = write(tmp_path_factory.mktemp("b") / "b.jsonl", pair(limit + over))
    with pytest.raises(InputError, match=rf"> {limit:.1f}, {dtype}'s limit") as err:
        run_update(path, "grpo", {"beta": 0.1}, dtype=dtype)
    assert err.value.field == "ref_logprobs" and err.value.line == 1


@settings(max_examples=30, deadline=None)
@given(
    field=st.sampled_from(["reward", "logprobs", "values"]),
    value=st.floats(F32_MAX * 1.0001, 1e308),
    sign=st.sampled_from([1.0, -1.0]),
)
def test_an_entry_beyond_float32_names_its_field_not_infinity(
    tmp_path_factory: pytest.TempPathFactory, field: str, value: float, sign: float
) -> None:
    row: dict = {"reward": 1.0, "logprobs": [-0.5, -0.5], "values": [0.5, 0.5]}
    if field == "reward":
        row["reward"] = sign * value
    elif field == "logprobs":
        row["logprobs"][1] = -value
    else:
        row["values"][1] = sign * value
    path = write(tmp_path_factory.mktemp("b") / "b.jsonl", [row])
    with pytest.raises(InputError, match="beyond float32's largest number") as err:
        run_update(path, "sao", dtype="float32")
    assert err.value.field == field and "inf" not in str(err.value)
