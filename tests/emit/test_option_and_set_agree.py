"""`whilecli config`: an option and the ``--set`` key it writes take the same values.

Every option that writes one key (:data:`whilecli.emit.inputs.OPTION_KEYS`) reads its range
from that key's declaration in :mod:`whilecli.emit.schema`, and the final config, after every
``--set``, is checked against the same declarations: ranges on every key, the cross-field
rules on the final values, and the keys a variant requires. So ``--steps 0`` and
``--set max_steps=0`` are both refused, naming what the user wrote.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.emit.inputs import OPTION_KEYS, option_range
from whilecli.emit.prime_rl import prime_rl_config
from whilecli.errors import UsageError

#: The keyword of :func:`prime_rl_config` each option sets.
KEYWORDS = {
    "--steps": "steps",
    "--seq-len": "seq_len",
    "--max-tokens": "max_tokens",
    "--group-size": "group_size",
    "--lr": "lr",
    "--temperature": "temperature",
    "--off-policy-steps": "off_policy_steps",
}
#: What both ways are run with, so the rules between keys read the same values on both: the
#: completion cap small beside the sequence (and the sequence long beside the cap), one
#: prompt per step (the batch is the group), --async for the staleness bound.
CONTEXT: dict[str, dict[str, Any]] = {
    "--seq-len": {"max_tokens": 1},
    "--max-tokens": {"seq_len": 65536},
    "--group-size": {"prompts": 1},
    "--off-policy-steps": {"async_": True},
}
#: Keys the option writes beside its own, set with it on the ``--set`` way.
ALONGSIDE: dict[str, Any] = {"--group-size": lambda v: {"orchestrator.batch_size": v}}
INTEGERS = {"--steps", "--seq-len", "--max-tokens", "--group-size", "--off-policy-steps"}


def _values(option: str) -> st.SearchStrategy[Any]:
    """Values around the option's range: its bounds, just past them, and far out."""
    bounds = option_range(option)
    assert bounds is not None, f"{option} declares no range"
    edges = [b for b in (bounds.low, bounds.high) if b is not None]
    if option in INTEGERS:
        near = [int(e) + d for e in edges for d in (-2, -1, 0, 1, 2)]
        return st.one_of(st.sampled_from(near), st.integers(-(10**6), 10**6))
    near_f = [e + d for e in edges for d in (-1e-9, 0.0, 1e-9, 0.5, -0.5)]
    return st.one_of(
        st.sampled_from(near_f),
        st.floats(-10.0, 10.0, allow_nan=False),
        st.sampled_from([float("nan"), float("inf"), -float("inf")]),
    )


def _outcome(**kw: Any) -> str | None:
    """None when the config is written, else the refusal."""
    try:
        prime_rl_config("grpo", model="Qwen/Qwen3-0.6B", **kw)
    except UsageError as err:
        return str(err)
    return None


def test_every_option_with_a_range_is_covered() -> None:
    assert set(OPTION_KEYS) == set(KEYWORDS)
    for option in OPTION_KEYS:
        assert option_range(option) is not None, option


@settings(max_examples=300, deadline=None)
@given(data=st.data(), option=st.sampled_from(sorted(OPTION_KEYS)))
def test_an_option_and_its_set_key_refuse_and_accept_the_same_values(
    data: Any, option: str
) -> None:
    value = data.draw(_values(option), label="value")
    context = CONTEXT.get(option, {})
    key = OPTION_KEYS[option]
    by_option = _outcome(**{KEYWORDS[option]: value}, **context)
    extra = ALONGSIDE[option](value) if option in ALONGSIDE else {}
    by_set = _outcome(overrides={key: value, **extra}, **context)
    assert (by_option is None) == (by_set is None), (option, value, by_option, by_set)
    if by_option is not None and by_set is not None:  # each names what it was given
        name = key.rsplit(".", 1)[-1]
        assert option in by_option or name in by_option, by_option
        assert name in by_set, by_set


def _config(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["config", "--method", "grpo", *args, "-o", "-"])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("max_steps=-1", "max_steps must be > 0"),
        ("max_steps=0", "max_steps must be > 0"),
        ("seq_len=-1", "seq_len must be > 0"),
        ("seq_len=2048", "max_completion_tokens 4096 leaves no room for the prompt in seq_len"),
        ("orchestrator.seq_len=100", "leaves no room for the prompt in orchestrator.seq_len 100"),
        ('trainer.loss.type="custom"', "needs import_path"),
        ("orchestrator.train.sampling.max_completion_tokens=0", "must be > 0"),
        ("trainer.max_steps=0", "trainer.max_steps must be > 0"),
    ],
)
def test_set_values_the_options_refuse_are_refused_in_one_line(override: str, message: str) -> None:
    code, out = _config("--set", override)
    assert code == 2, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in out, out
    assert re.search(re.escape(message), lines[0]), lines[0]


def test_a_custom_loss_with_its_import_path_is_written() -> None:
    code, out = _config(
        "--set",
        'trainer.loss.type="custom"',
        "--set",
        'trainer.loss.import_path="whilecli.emit.losses.tis_loss"',
    )
    assert code == 0, out
    assert 'import_path = "whilecli.emit.losses.tis_loss"' in out
