"""What the methods' per-token arithmetic runs on: row blocks and a few faster CPU kernels.

A method's arithmetic is row-independent given a few per-row numbers, so on CPU it runs
over blocks of rows (:func:`row_blocks`, about 64 K entries each): the temporaries stay in
the core's cache and are small enough for the allocator to hand the same memory back
block after block, where whole ``[B, T]`` temporaries of several MB would be page-faulted
in afresh on every call. Only the outputs are allocated at full size.

On CPU, NumPy's vectorised ``exp``, ``log1p`` and comparisons (AVX2/AVX-512 where the
processor has them) are two to five times faster than torch's for float64, and ``exp_`` and
``log1p_`` write in place. Both libraries are correct to a few units in the last place;
comparisons are exact in both. On any other device, dtype, or a tensor that needs a
gradient, the torch operation runs instead. The results are what the names say:
``exp_(x)`` is ``x.exp_()``, ``compare(x, "<=", y)`` is ``x <= y``, ``any_rows(m)`` is
``m.any(dim=1)``, ``row_counts(m)`` is ``m.sum(dim=1)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

_NUMPY_DTYPES = (torch.float64, torch.float32)


_COMPARE = {
    "<": (np.less, torch.lt),
    "<=": (np.less_equal, torch.le),
    ">": (np.greater, torch.gt),
    ">=": (np.greater_equal, torch.ge),
    "!=": (np.not_equal, torch.ne),
}


def _numpy_view(x: torch.Tensor, dtypes: tuple[torch.dtype, ...] = _NUMPY_DTYPES) -> Any:
    """A NumPy view sharing ``x``'s memory, or None when NumPy cannot run on it."""
    if x.device.type != "cpu" or x.dtype not in dtypes or x.requires_grad:
        return None
    return x.numpy()


def compare(x: torch.Tensor, op: str, other: float | torch.Tensor) -> torch.Tensor:
    """``x op other`` as a bool tensor, ``op`` one of ``< <= > >= !=``; broadcasts like torch.

    The same comparison in either library (a float32 ``other`` is widened exactly first).
    """
    np_op, torch_op = _COMPARE[op]
    view = _numpy_view(x)
    if view is not None:
        rhs = other if not isinstance(other, torch.Tensor) else _numpy_view(other)
        if rhs is not None:
            return torch.from_numpy(np.asarray(np_op(view, rhs)))
    return torch_op(x, other)


def any_rows(mask: torch.Tensor) -> torch.Tensor:
    """``mask.any(dim=1)`` for a bool ``[B, T]`` tensor (NumPy's is faster on CPU)."""
    view = _numpy_view(mask, (torch.bool,))
    if view is None:
        return mask.any(dim=1)
    return torch.from_numpy(view.any(axis=1))


def exp_(x: torch.Tensor) -> torch.Tensor:
    """``x ← exp(x)`` in place; returns ``x``."""
    view = _numpy_view(x)
    if view is None:
        return x.exp_()
    with np.errstate(all="ignore"):  # overflow to ∞ and underflow to 0 are the answers
        np.exp(view, out=view)
    return x


def log1p_(x: torch.Tensor) -> torch.Tensor:
    """``x ← log(1 + x)`` in place; returns ``x``."""
    view = _numpy_view(x)
    if view is None:
        return x.log1p_()
    with np.errstate(all="ignore"):  # log1p(−1) = −∞ and NaN propagate as torch's do
        np.log1p(view, out=view)
    return x


def as_float(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A bool mask as 0/1 in ``dtype``, converted through its bytes (a faster cast on CPU)."""
    if mask.dtype == torch.bool:
        return mask.view(torch.uint8).to(dtype)
    return mask.to(dtype)


def row_counts(mask: torch.Tensor) -> torch.Tensor:
    """``mask.sum(dim=1)`` of a bool ``[B, T]`` mask, as int64 (summed over its bytes)."""
    if mask.dtype != torch.bool or mask.shape[1] >= 2**31:
        return mask.sum(dim=1)
    return mask.view(torch.uint8).sum(dim=1, dtype=torch.int32).long()


def all_finite(x: torch.Tensor) -> bool:
    """True when every entry of ``x`` is finite (their sum is: one pass, no temporary)."""
    return bool(torch.isfinite(x.sum()))


#: Elements per row block: a handful of float64 temporaries of this size stay in a core's
#: L2 cache, and they are small enough for the allocator to reuse without page faults.
BLOCK_ELEMENTS = 1 << 16


def row_blocks(x: torch.Tensor) -> list[slice]:
    """Slices of ``x``'s rows (dim 0) of about :data:`BLOCK_ELEMENTS` entries each.

    On CPU the methods run their per-token arithmetic block by block, so that temporaries
    stay small and hot; on an accelerator one block covers every row (one kernel launch per
    operation).
    """
    rows = int(x.shape[0])
    if x.device.type != "cpu" or x.dim() < 2:
        return [slice(0, rows)]
    step = max(1, BLOCK_ELEMENTS // max(1, int(x.shape[1])))
    return [slice(i, min(i + step, rows)) for i in range(0, rows, step)]
