"""Scratch memory kept between calls, and outputs passed back with ``out=``.

A method object keeps its temporaries in a :class:`~whilecli.methods.fastmath.Workspace`, and
``update(batch, out=previous)`` overwrites the previous call's tensors. Neither may change a
number: one object fed a sequence of batches of different shapes gives, batch by batch, what a
fresh object gives, and the loops agree with both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import slow_reference
from batch_strategies import assert_matches, ragged_rows
from cuda_cases import CASES, assert_float32_close
from whilecli.methods import fastmath
from whilecli.methods.batch import Batch, Update
from whilecli.methods.bpco import BPCO, explained_variance
from whilecli.methods.fastmath import Workspace
from whilecli.methods.flash_reinforce import FlashReinforce
from whilecli.methods.registry import make_method
from whilecli.methods.sao import SAO

METHODS: dict[str, tuple[Callable[[], Any], Callable[[list[dict]], Any]]] = {
    "flash_reinforce": (FlashReinforce, slow_reference.flash_reinforce),
    "sao": (SAO, slow_reference.sao),
    "bpco": (BPCO, slow_reference.bpco),
}
FIELDS = ("coefficients", "advantages", "value_targets")


def _same(got: Update, want: Update) -> None:
    assert torch.equal(got.admitted, want.admitted)
    for name in FIELDS:
        a, b = getattr(got, name), getattr(want, name)
        assert (a is None) == (b is None)
        if a is not None:
            assert torch.equal(a, b), name
    assert got.stats == want.stats
    assert got.notes == want.notes


def _rows(seed: int, b: int, t: int) -> list[dict[str, Any]]:
    gen = torch.Generator().manual_seed(seed)
    rows = []
    for i in range(b):
        n = t if i == 0 else int(torch.randint(1, t + 1, (1,), generator=gen))  # width t
        lp = (-torch.rand(n, generator=gen, dtype=torch.float64) * 3 - 1e-3).tolist()
        drift = 0.4 * torch.randn(n, generator=gen, dtype=torch.float64)
        action = (torch.rand(n, generator=gen) > 0.2).tolist()
        action[0] = True
        rows.append(
            {
                "reward": float(i % 3 == 0),
                "logprobs": lp,
                "behavior_logprobs": [
                    min(0.0, x + d) for x, d in zip(lp, drift.tolist(), strict=True)
                ],
                "action_mask": action,
                "values": torch.rand(n, generator=gen, dtype=torch.float64).tolist(),
            }
        )
    return rows


# ---------------------------------------------------------------------------- Workspace


def test_take_reuses_one_buffer_per_name_and_dtype() -> None:
    work = Workspace()
    cpu = torch.device("cpu")
    a = work.take("x", (4, 8), torch.float64, cpu)
    b = work.take("x", (2, 3), torch.float64, cpu)  # smaller: a view of the same memory
    assert b.data_ptr() == a.data_ptr() and b.shape == (2, 3) and b.is_contiguous()
    c = work.take("x", (8, 8), torch.float64, cpu)  # larger: grown
    assert c.shape == (8, 8) and c.numel() == 64
    assert work.take("x", (4, 8), torch.float64, cpu).data_ptr() == c.data_ptr()
    d = work.take("x", (4, 8), torch.float32, cpu)  # another dtype: another buffer
    e = work.take("y", (4, 8), torch.float64, cpu)  # another name: another buffer
    assert len({c.data_ptr(), d.data_ptr(), e.data_ptr()}) == 3
    work.clear()
    assert work._buffers == {}


def test_take_off_the_cpu_is_a_fresh_tensor() -> None:
    work = Workspace()
    meta = torch.device("meta")
    a = work.take("x", (3, 5), torch.float32, meta)
    assert a.device.type == "meta" and a.shape == (3, 5)
    assert work._buffers == {}  # nothing kept: the device's allocator caches


# ---------------------------------------------------------------------------- out=


@pytest.mark.parametrize("name", METHODS)
def test_out_overwrites_the_previous_tensors_with_the_fresh_result(name: str) -> None:
    factory, _ = METHODS[name]
    first = Batch.from_rows(_rows(0, 7, 12))
    second_rows = _rows(1, 7, 12)
    second = Batch.from_rows(second_rows)
    assert first.logprobs.shape == second.logprobs.shape
    method = factory()
    previous = method.update(first)
    pointers = {
        f: getattr(previous, f).data_ptr() for f in FIELDS if getattr(previous, f) is not None
    }
    got = method.update(second, out=previous)
    for f, ptr in pointers.items():
        assert getattr(got, f).data_ptr() == ptr, f  # written in place
    _same(got, factory().update(second))
    assert_matches(got, METHODS[name][1](second_rows), second_rows)


@pytest.mark.parametrize("name", METHODS)
def test_out_of_another_shape_is_left_alone(name: str) -> None:
    factory, _ = METHODS[name]
    small = factory().update(Batch.from_rows(_rows(2, 3, 5)))
    kept = {f: getattr(small, f).clone() for f in FIELDS if getattr(small, f) is not None}
    big = Batch.from_rows(_rows(3, 6, 11))
    got = factory().update(big, out=small)
    _same(got, factory().update(big))
    for f, value in kept.items():
        assert torch.equal(getattr(small, f), value)
        assert getattr(got, f).data_ptr() != getattr(small, f).data_ptr()


# ---------------------------------------------------------------------------- no state leaks


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(list(METHODS)),
    st.lists(ragged_rows(min_actions=1), min_size=2, max_size=4),
    st.sampled_from([16, 40, 1 << 18]),
)
def test_one_object_over_many_batches_equals_fresh_objects(
    name: str, batches: list[list[dict[str, Any]]], block: int
) -> None:
    """Batches of different shapes through one object (with ``out=`` chained), blocks of one
    or two rows or one block: each result equals a fresh object's and the loops'."""
    factory, slow = METHODS[name]
    old = fastmath.BLOCK_ELEMENTS
    fastmath.BLOCK_ELEMENTS = block
    try:
        method = factory()
        previous = None
        for rows in batches:
            batch = Batch.from_rows(rows)
            got = method.update(batch, out=previous)
            _same(got, factory().update(batch))
            assert_matches(got, slow(rows), rows)
            previous = got
    finally:
        fastmath.BLOCK_ELEMENTS = old


def test_explained_variance_is_the_same_with_a_workspace() -> None:
    gen = torch.Generator().manual_seed(4)
    rewards = torch.rand(9, generator=gen, dtype=torch.float64)
    values = torch.rand(9, 30, generator=gen, dtype=torch.float64)
    action = torch.rand(9, 30, generator=gen) > 0.3
    work = Workspace()
    work.take("ev_centred", (9, 30), torch.float64, torch.device("cpu")).fill_(float("nan"))
    plain = explained_variance(rewards, values, action)
    assert plain is not None
    assert explained_variance(rewards, values, action, work) == plain
    assert explained_variance(rewards, values, action, work) == plain


class _AcceleratorFlow:
    """What a GPU runs, on CPU tensors: no NumPy kernels (every kernel the torch operation),
    one block for every row, and fresh temporaries instead of kept ones."""

    def __enter__(self) -> None:
        self.saved = fastmath._numpy_view, fastmath.BLOCK_ELEMENTS, Workspace.take
        fastmath._numpy_view = lambda x, dtypes=None: None
        fastmath.BLOCK_ELEMENTS = 1 << 60
        Workspace.take = lambda self, name, shape, dtype, device: torch.empty(  # type: ignore[method-assign]
            shape, dtype=dtype, device=device
        )

    def __exit__(self, *exc: object) -> None:
        fastmath._numpy_view, fastmath.BLOCK_ELEMENTS, Workspace.take = self.saved


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(list(METHODS)), ragged_rows(min_actions=1))
def test_the_accelerator_control_flow_on_the_cpu_matches_the_loops(
    name: str, rows: list[dict[str, Any]]
) -> None:
    factory, slow = METHODS[name]
    batch = Batch.from_rows(rows)
    with _AcceleratorFlow():
        method = factory()
        got = method.update(batch)
        again = method.update(batch, out=got)
    assert_matches(again, slow(rows), rows)  # torch's exp may differ from NumPy's in the last place


@pytest.mark.parametrize("name", METHODS)
def test_float32_through_the_accelerator_flow_matches_the_cpu_path(name: str) -> None:
    """The CUDA tests' comparison (:mod:`cuda_cases`), with the GPU's control flow run on the
    CPU: what is left for a GPU to differ in is its own rounding."""
    make_batch, make_method, _ = CASES[name]
    batch = make_batch().to("cpu", torch.float32)
    cpu = make_method().update(batch)
    with _AcceleratorFlow():
        other = make_method().update(batch)
    assert_float32_close(other, cpu, name)


def _grouped_rows(seed: int) -> list[dict[str, Any]]:
    """Every field any method reads: task groups of four, ref and teacher log-probs."""
    gen = torch.Generator().manual_seed(seed)
    rows = _rows(seed, 12, 10)
    for i, row in enumerate(rows):
        n = len(row["logprobs"])
        row["task_id"] = f"t{i // 4}"
        row["reward"] = float(torch.rand(1, generator=gen) > 0.5)
        row["ref_logprobs"] = (-torch.rand(n, generator=gen, dtype=torch.float64) - 0.01).tolist()
        row["teacher_logprobs"] = (-torch.rand(n, generator=gen, dtype=torch.float64)).tolist()
    return rows


@pytest.mark.parametrize("name", ["grpo", "max_rl", "rae", "opd", "opsd", "dpo", "sft"])
def test_every_method_takes_out_and_overwrites_what_fits(name: str) -> None:
    """A training loop can pass ``out=`` whatever the method; the result is the fresh one
    (``rae`` carries its baselines from call to call, so both objects see both batches)."""
    first, second = Batch.from_rows(_grouped_rows(5)), Batch.from_rows(_grouped_rows(6))
    assert first.logprobs.shape == second.logprobs.shape
    method, fresh = make_method(name, {}), make_method(name, {})
    previous = method.update(first)
    fresh.update(first)
    pointers = {f: getattr(previous, f).data_ptr() for f in ("coefficients", "advantages")}
    got = method.update(second, out=previous)
    for f, ptr in pointers.items():
        assert getattr(got, f).data_ptr() == ptr, f
    _same(got, fresh.update(second))
