"""What prime-rl's loader refuses beyond key names and types (``spec/prime-rl.md`` §3-§6, §11):
the ranges of its numeric fields, the scheduler's fit in ``max_steps``, where an algo may
sample from, a source's taskset id; and the blank ``--env`` / ``--teacher`` a user can type.
Each is refused before anything is written, in one line naming the key or the option."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.emit.prime_rl import prime_rl_config
from whilecli.emit.sft import sft_config
from whilecli.errors import UsageError

RL_METHODS = ("grpo", "max_rl", "rae")
#: key → (a value outside its documented range, a value inside it); an override of the base
#: config written with ``--method``, and the table its discriminator must name.
RANGES: dict[str, tuple[Any, Any, dict[str, Any]]] = {
    "trainer.loss.ipo_threshold": (-0.01, 0.0, {"trainer.loss.type": "ipo"}),
    "trainer.model.lora.rank": (0, 1, {}),
    "orchestrator.max_off_policy_steps": (-1, 0, {}),
    "trainer.optim.lr": (0.0, 1e-6, {}),  # --lr's range, (0, 1): 0 trains nothing
}
SOURCE_RANGES: dict[str, tuple[Any, Any]] = {
    "ratio": (0.0, 0.5),
    "group_size": (0, 4),
}


def _rl(method: str, overrides: dict[str, Any], **kw: Any) -> Any:
    return prime_rl_config(method, model="Qwen/Qwen3-0.6B", overrides=overrides, **kw)


def _source(**extra: Any) -> dict[str, Any]:
    return {"name": "rt", "env": {"taskset": {"id": "reverse-text"}}, **extra}


@settings(max_examples=60, deadline=None)
@given(
    method=st.sampled_from(RL_METHODS),
    key=st.sampled_from(sorted(RANGES)),
    shift=st.sampled_from([0.0, 1.0, 1e6]),
)
def test_a_value_below_its_range_is_refused_naming_the_key(
    method: str, key: str, shift: float
) -> None:
    """ipo_threshold ≥ 0, lora.rank ≥ 1, max_off_policy_steps ≥ 0 (spec §3, §4), lr > 0."""
    bad, good, base = RANGES[key]
    value = type(bad)(bad - shift)
    with pytest.raises(UsageError, match=key.replace(".", r"\.")):
        _rl(method, {**base, key: value})
    _rl(method, {**base, key: good})


@settings(max_examples=40, deadline=None)
@given(
    method=st.sampled_from(RL_METHODS),
    key=st.sampled_from(sorted(SOURCE_RANGES)),
    temperature=st.one_of(st.none(), st.sampled_from([-0.1, 2.5, 100.0])),
)
def test_a_train_source_out_of_range_is_refused(
    method: str, key: str, temperature: float | None
) -> None:
    """A source's ratio > 0, its group_size ≥ 1, its sampling temperature in [0, 2]."""
    bad, good = SOURCE_RANGES[key]
    with pytest.raises(UsageError, match=rf"orchestrator\.train\.source\[0\]\.{key}"):
        _rl(method, {"orchestrator.train.source": [_source(**{key: bad})]})
    if temperature is not None:
        src = _source(sampling={"temperature": temperature})
        with pytest.raises(UsageError, match=r"source\[0\]\.sampling\.temperature"):
            _rl(method, {"orchestrator.train.source": [src]})
    _rl(method, {"orchestrator.train.source": [_source(**{key: good})]})


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["linear", "cosine"]),
    steps=st.integers(1, 60),
    warmup=st.integers(0, 60),
    decay=st.integers(0, 60),
    sft=st.booleans(),
)
def test_a_scheduler_fits_in_max_steps(
    kind: str, steps: int, warmup: int, decay: int, sft: bool
) -> None:
    """linear: warmup + decay ≤ max_steps when decay > 0; cosine: max_steps > warmup."""
    table: dict[str, Any] = {"type": kind, "warmup_steps": warmup}
    if kind == "linear":
        table["decay_steps"] = decay
    fits = steps > warmup if kind == "cosine" else decay == 0 or warmup + decay <= steps
    prefix = "scheduler" if sft else "trainer.scheduler"
    overrides = {f"{prefix}.{k}": v for k, v in table.items()}

    def build() -> Any:
        if sft:
            return sft_config(dataset="foo", steps=steps, overrides=overrides)
        return _rl("grpo", overrides, steps=steps)

    if fits:
        build()
    else:
        with pytest.raises(UsageError, match=f"{kind} {prefix} needs"):
            build()


@pytest.mark.parametrize("method", RL_METHODS)
@pytest.mark.parametrize(
    "source",
    ["teacher", "", {"name": "Qwen/Qwen3-32B", "base_url": "http://127.0.0.1:8001/v1"}],
)
@pytest.mark.parametrize("where", ["top", "source"])
def test_only_sft_samples_from_anything_but_the_policy(method: str, source: Any, where: str):
    """spec §5: ``sampling.source`` is ``"policy"``; only the sft algo names a frozen model."""
    if where == "top":
        overrides: dict[str, Any] = {"orchestrator.algo.sampling.source": source}
    else:
        algo = {"type": method, "sampling": {"source": source}}
        overrides = {"orchestrator.train.source": [_source(algo=algo)]}
    with pytest.raises(UsageError, match=r"sampling\.source"):
        _rl(method, overrides)
    _rl(method, {"orchestrator.algo.sampling.source": "policy"})


@pytest.mark.parametrize("method", RL_METHODS)
@pytest.mark.parametrize("taskset", [None, {}, {"id": ""}, {"id": "  "}])
def test_an_eval_source_needs_a_taskset_id(method: str, taskset: Any) -> None:
    """spec §6: a source without a taskset id is rejected, train or eval."""
    env = {} if taskset is None else {"taskset": taskset}
    with pytest.raises(UsageError, match=r"orchestrator\.eval\.source\[0\] has no"):
        _rl(method, {"orchestrator.eval.source": [{"name": "e", "env": env}]})


@pytest.mark.parametrize("method", RL_METHODS)
@pytest.mark.parametrize("decay", [1.0, -0.1, 5.0])
def test_a_source_algo_decay_is_checked_as_the_top_one(method: str, decay: float) -> None:
    algo = {"type": "rae", "decay": decay}
    with pytest.raises(UsageError, match=r"source\[0\]\.algo\.decay must be in \[0, 1\)"):
        _rl(method, {"orchestrator.train.source": [_source(algo=algo)]})


BLANKS = ["", " ", "\t", "a b", "reverse text", "x\ny", "rt\x00"]


@pytest.mark.parametrize("method", ("grpo", "max_rl", "rae", "opsd"))
@pytest.mark.parametrize("env", BLANKS)
def test_env_is_a_taskset_id(method: str, env: str) -> None:
    """An empty ``--env`` was dropped silently (no train source) and a blank one written as
    ``id = "  "``; neither names a package prime-rl can import."""
    with pytest.raises(UsageError, match="--env"):
        prime_rl_config(method, env=env)


@pytest.mark.parametrize("teacher", ["", " ", "\t"])
def test_a_blank_teacher_names_the_option(teacher: str) -> None:
    with pytest.raises(UsageError, match="--teacher takes NAME@URL"):
        prime_rl_config("opd", teacher=teacher)
