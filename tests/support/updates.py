"""Comparing two :class:`~whilecli.methods.batch.Update` results, and a method made to run
its plain function eagerly (the reference for its CPU fast path and its compiled path)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from whilecli.methods import fastmath
from whilecli.methods.batch import Update


def eager_plain(method: Any) -> Any:
    """``method`` (built with ``compile=True``) made to run its plain function, eager."""
    method._compiled = fastmath.Compiled(method._compiled.fn, enabled=False)
    return method


def assert_same_update(
    got: Update,
    want: Update,
    *,
    atol: float,
    stats_rel: float,
    stats_abs: float,
    same_keys: bool,
) -> None:
    """The tensors to rtol 1e-12 (and ``atol``), ``admitted`` exactly, every stat of ``want``
    to ``stats_rel`` / ``stats_abs`` (and no other stat when ``same_keys``), the same notes."""
    for name in ("coefficients", "advantages", "value_targets"):
        a, b = getattr(got, name), getattr(want, name)
        if a is None or b is None:
            assert a is b, name
        else:
            torch.testing.assert_close(a, b, rtol=1e-12, atol=atol, msg=name)
    assert torch.equal(got.admitted, want.admitted)
    if same_keys:
        assert got.stats.keys() == want.stats.keys()
    for key, value in want.stats.items():
        if value is None:  # a mean over no token: approx(None) with a tolerance is refused
            assert got.stats[key] is None, key
            continue
        assert got.stats[key] == pytest.approx(value, rel=stats_rel, abs=stats_abs), key
    assert got.notes == want.notes
