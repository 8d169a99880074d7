"""The two-step API: ``batch_stats`` once per optimizer batch, ``coefficients`` per micro-batch.

Any split of a batch into micro-batches (rows in any order, each padded to its own longest
row) gives every row the coefficients ``update`` gives it on the whole batch, to 1e-12, for
every token method; calling ``update`` on each micro-batch instead does not.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError, UsageError
from whilecli.methods import Batch
from whilecli.methods.registry import METHODS, make_method

TOKEN_METHODS = list(METHODS)
KNOBS: dict[str, dict[str, object]] = {
    "grpo": {"beta": 0.05},
    "max_rl": {"loss_type": "bnpo"},
    "rae": {"loss_type": "dr_grpo"},
    "flash_reinforce": {"trust": 0.05},
}


@st.composite
def batches(draw: st.DrawFn) -> Batch:
    """A batch every token method accepts: 2-3 rows per task, some truncated, observation
    tokens, rewards in [0, 1] that pass and fail, values in the reward range."""
    n_tasks = draw(st.integers(1, 3))
    sizes = [draw(st.integers(2, 3)) for _ in range(n_tasks)]
    tasks = [f"t{k}" for k, n in enumerate(sizes) for _ in range(n)]
    order = draw(st.permutations(range(len(tasks))))
    tasks = [tasks[i] for i in order]
    b = len(tasks)
    t = draw(st.integers(1, 6))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    lengths = torch.randint(1, t + 1, (b,), generator=g)
    mask = torch.arange(t)[None, :] < lengths[:, None]
    action = mask & (torch.rand(b, t, generator=g) < 0.8)
    action[torch.arange(b), lengths - 1] = True  # every row has an action token
    logp = -torch.rand(b, t, generator=g, dtype=torch.float64) * 2 - 0.05
    behavior = (logp + torch.randn(b, t, generator=g, dtype=torch.float64) * 0.3).clamp(max=0)
    ref = (logp + torch.randn(b, t, generator=g, dtype=torch.float64) * 0.2).clamp(max=0)
    teacher = (logp + torch.randn(b, t, generator=g, dtype=torch.float64) * 0.5).clamp(max=0)
    rewards = torch.tensor(
        draw(st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=b, max_size=b))
    )
    values = torch.rand(b, t, generator=g, dtype=torch.float64)
    truncated = torch.rand(b, generator=g) < 0.2
    return Batch.from_tensors(
        logp * mask,
        rewards=rewards.double(),
        mask=mask,
        action_mask=action,
        behavior_logprobs=behavior * mask,
        ref_logprobs=ref * mask,
        teacher_logprobs=teacher * mask,
        values=values * mask,
        truncated=truncated,
        task_ids=tasks,
        agents=[f"a{int(x)}" for x in torch.randint(0, 2, (b,), generator=g)],
    )


@st.composite
def splits(draw: st.DrawFn, b: int) -> list[list[int]]:
    """The rows 0..b-1 in any order, cut into 1..b non-empty micro-batches."""
    order = draw(st.permutations(range(b)))
    cuts = sorted(draw(st.sets(st.integers(1, b - 1), max_size=b - 1))) if b > 1 else []
    bounds = [0, *cuts, b]
    return [list(order[bounds[k] : bounds[k + 1]]) for k in range(len(bounds) - 1)]


def _method(name: str) -> object:
    return make_method(name, KNOBS.get(name, {}))


def _assert_rows_match(whole: torch.Tensor, micro: torch.Tensor, rows: list[int]) -> None:
    width = micro.shape[1]
    expected = whole[rows, :width]
    assert torch.allclose(micro, expected, rtol=1e-12, atol=1e-12), (micro, expected)
    assert not bool(whole[rows, width:].any())  # nothing past the micro-batch's padding


@pytest.mark.parametrize("name", TOKEN_METHODS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_any_split_gives_the_whole_batch_coefficients(name: str, data: st.DataObject) -> None:
    batch = data.draw(batches())
    parts = data.draw(splits(batch.size))
    whole = _method(name).update(batch)  # type: ignore[attr-defined]
    method = _method(name)  # rae: fresh baselines, as for the whole batch
    stats = method.batch_stats(batch)  # type: ignore[attr-defined]
    for rows in parts:
        micro = batch.select(rows)
        got = method.coefficients(micro, stats)  # type: ignore[attr-defined]
        _assert_rows_match(whole.coefficients, got.coefficients, rows)
        _assert_rows_match(whole.advantages, got.advantages, rows)
        assert torch.equal(got.admitted, whole.admitted[rows])
        if whole.value_targets is not None:
            _assert_rows_match(whole.value_targets, got.value_targets, rows)


@pytest.mark.parametrize("name", ["flash_reinforce", "sao", "grpo", "rae", "dpo"])
def test_update_per_micro_batch_is_not_the_whole_batch(name: str) -> None:
    """The mistake the two steps prevent: recomputing the batch-global parts per micro-batch."""
    rows = [
        {"task_id": t, "reward": r, "logprobs": [-0.3, -0.9], "behavior_logprobs": [-0.35, -0.8],
         "ref_logprobs": [-0.4, -0.7], "values": [0.4, 0.6]}
        for t, r in [("a", 1.0), ("a", 0.0), ("b", 1.0), ("b", 0.0), ("c", 0.0), ("c", 1.0)]
    ]  # fmt: skip
    batch = Batch.from_rows(rows)
    whole = _method(name).update(batch)  # type: ignore[attr-defined]
    naive = torch.cat(
        [_method(name).update(m).coefficients for m in batch.split(3)]  # type: ignore[attr-defined]
    )
    method = _method(name)
    stats = method.batch_stats(batch)  # type: ignore[attr-defined]
    two_step = torch.cat([method.coefficients(m, stats).coefficients for m in batch.split(3)])  # type: ignore[attr-defined]
    assert torch.allclose(two_step, whole.coefficients, rtol=0, atol=1e-15)
    assert not torch.allclose(naive, whole.coefficients, rtol=1e-3, atol=1e-6)


def test_a_single_row_micro_batch_gets_the_batch_baseline() -> None:
    """One prime-rl sample at a time: FlashReinforce's coefficient is not 0 (its A is R − mean
    of the optimizer batch, not of the one row)."""
    rows = [{"reward": r, "logprobs": [-0.5, -0.2]} for r in (1.0, 0.0, 0.0, 0.0)]
    batch = Batch.from_rows(rows)
    method = make_method("flash_reinforce", {})
    stats = method.batch_stats(batch)
    c = method.coefficients(batch.select([0]), stats).coefficients
    assert torch.allclose(c, torch.full((1, 2), 0.75 / (2 * 4), dtype=torch.float64))
    assert not bool(method.update(batch.select([0])).coefficients.any())


def test_stats_of_another_method_or_batch_are_refused() -> None:
    rows = [{"task_id": "a", "reward": r, "logprobs": [-0.5]} for r in (1.0, 0.0, 0.0)]
    batch = Batch.from_rows(rows)
    fr, grpo, rae = (make_method(n, {}) for n in ("flash_reinforce", "grpo", "rae"))
    with pytest.raises(UsageError, match="flash_reinforce's batch_stats"):
        grpo.coefficients(batch, fr.batch_stats(batch))
    other = Batch.from_rows([{**r, "task_id": "z"} for r in rows])
    with pytest.raises(InputError, match="task id 'z' is not in the optimizer batch"):
        grpo.coefficients(other, grpo.batch_stats(batch))
    stats = rae.batch_stats(batch)
    with pytest.raises(UsageError, match="must say which rows it holds"):
        rae.coefficients(Batch.from_rows(rows[:2]), stats)


def test_split_cuts_consecutive_rows_evenly() -> None:
    batch = Batch.from_rows([{"reward": float(i), "logprobs": [-0.1] * (i + 1)} for i in range(7)])
    parts = batch.split(3)
    assert [p.rows.tolist() for p in parts] == [[0, 1], [2, 3, 4], [5, 6]]  # type: ignore[union-attr]
    assert [p.logprobs.shape[1] for p in parts] == [2, 5, 7]
    nested = parts[1].select([2])
    assert nested.rows.tolist() == [4]  # type: ignore[union-attr]


def test_importing_the_methods_loads_no_file_reader() -> None:
    code = (
        "import sys, whilecli.methods as m\n"
        "for name in m.__all__:\n"
        "    if name not in ('GroupwiseGrading', 'ReinforceAda', 'RewardModel'):\n"
        "        getattr(m, name)\n"
        "from whilecli.methods.registry import METHODS\n"
        "[METHODS[k] for k in METHODS]\n"
        "bad = sorted({k.split('.')[0] for k in sys.modules} & {'polars', 'pyarrow', 'pandas'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
