"""What the methods' per-token arithmetic runs on: row blocks, scratch memory, faster kernels.

A method's arithmetic is row-independent given a few per-row numbers, so on CPU it runs
over blocks of rows (:func:`row_blocks`, about 256 K entries each): a block's temporaries
fit in the last-level cache together. They are taken from a :class:`Workspace` the method
keeps between calls, so a training loop that calls it every step on same-shaped batches
does not page-fault fresh memory in for them each time; only the outputs are new (and a
caller can pass the previous outputs back to be overwritten).

On CPU, NumPy's comparisons, counts and row-wise ``any`` are two to thirty times faster than
torch's (measured with torch 2.13 on this project's build machine: 0.07 against 0.11 ms for a
comparison over 256 K float64 entries, 0.008 against 0.24 ms for ``any`` over 128 rows), and
its ``log1p`` is slightly faster; torch's ``exp`` is faster than NumPy's, so ``exp_`` is
torch's. Both libraries are correct to a few units in the last place; comparisons are exact
in both. On any other device, dtype, or a tensor that needs a
gradient, the torch operation runs instead. The results are what the names say:
``exp_(x)`` is ``x.exp_()``, ``compare(x, "<=", y)`` is ``x <= y``, ``any_rows(m)`` is
``m.any(dim=1)``, ``row_counts(m)`` is ``m.sum(dim=1)``.

These serve the CPU fast paths only, which stay where ``benchmarks/update_bench.py`` shows them
faster than the module's plain-torch function. :class:`Compiled` is the other way to speed a
plain function up: ``torch.compile``, opt-in (``compile=True`` on a method).
"""

from __future__ import annotations

import math
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


def compare(
    x: torch.Tensor, op: str, other: float | torch.Tensor, out: torch.Tensor | None = None
) -> torch.Tensor:
    """``x op other`` as a bool tensor, ``op`` one of ``< <= > >= !=``; broadcasts like torch.

    The same comparison in either library (a float32 ``other`` is widened exactly first).
    ``out``, a bool tensor of the result's shape, receives it when given.
    """
    np_op, torch_op = _COMPARE[op]
    view = _numpy_view(x)
    if view is not None:
        rhs = other if not isinstance(other, torch.Tensor) else _numpy_view(other)
        if rhs is not None:
            if out is None:
                return torch.from_numpy(np.asarray(np_op(view, rhs)))
            np_op(view, rhs, out=out.numpy())
            return out
    if out is None:
        return torch_op(x, other)
    return torch_op(x, other, out=out)


def count(mask: torch.Tensor) -> int:
    """The number of true entries of a bool tensor (NumPy's count is faster on CPU)."""
    view = _numpy_view(mask, (torch.bool,))
    if view is None:
        return int(mask.sum())
    return int(np.count_nonzero(view))


def any_rows(mask: torch.Tensor) -> torch.Tensor:
    """``mask.any(dim=1)`` for a bool ``[B, T]`` tensor (NumPy's is faster on CPU)."""
    view = _numpy_view(mask, (torch.bool,))
    if view is None:
        return mask.any(dim=1)
    return torch.from_numpy(view.any(axis=1))


def exp_(x: torch.Tensor) -> torch.Tensor:
    """``x ← exp(x)`` in place; returns ``x``. torch's own: its vectorised ``exp`` is about
    2.5× NumPy's for float64 here (0.09 against 0.22 ms per 256 K entries)."""
    return x.exp_()


def log1p_(x: torch.Tensor) -> torch.Tensor:
    """``x ← log(1 + x)`` in place; returns ``x``."""
    view = _numpy_view(x)
    if view is None:
        return x.log1p_()
    with np.errstate(all="ignore"):  # log1p(−1) = −∞ and NaN propagate as torch's do
        np.log1p(view, out=view)
    return x


def as_float(
    mask: torch.Tensor, dtype: torch.dtype, out: torch.Tensor | None = None
) -> torch.Tensor:
    """A bool mask as 0/1 in ``dtype`` (into ``out`` when given), converted through its bytes:
    on CPU a uint8 → float copy is about five times faster than a bool → float one."""
    source = mask.view(torch.uint8) if mask.dtype == torch.bool else mask
    if out is None:
        return source.to(dtype)
    return out.copy_(source)


def row_counts(mask: torch.Tensor) -> torch.Tensor:
    """``mask.sum(dim=1)`` of a bool ``[B, T]`` mask, as int64.

    Summed over its bytes into int32, a block of rows at a time (:func:`row_blocks`): torch
    widens the whole input before it sums, and for a 1024 × 8192 mask that 32 MB temporary
    costs more than the sum (18 against 2.3 ms measured here).
    """
    if mask.dtype != torch.bool or mask.dim() != 2 or mask.shape[1] >= 2**31:
        return mask.sum(dim=1)
    data = mask.view(torch.uint8)
    out = torch.empty(mask.shape[0], dtype=torch.int32, device=mask.device)
    for rows in row_blocks(data):
        torch.sum(data[rows], dim=1, dtype=torch.int32, out=out[rows])
    return out.long()


def all_finite(x: torch.Tensor) -> bool:
    """True when every entry of ``x`` is finite (their sum is: one pass, no temporary)."""
    return bool(torch.isfinite(x.sum()))


#: Elements per row block: the dozen temporaries of a float64 block (2 MB each) stay in the
#: last-level cache together. Tests shrink it to exercise the joins between blocks.
BLOCK_ELEMENTS = 1 << 18


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


class Workspace:
    """Scratch tensors a method keeps between calls, one flat buffer per name and dtype.

    ``take(name, shape, dtype, device)`` returns an uninitialised tensor of that shape,
    a view of the named buffer, grown when a call needs more. On CPU this saves the page
    faults of fresh memory on every call (about 1 µs per 4 KiB page, so ~1 ms for a 4 MB
    temporary); on an accelerator the framework's caching allocator already does that, and
    ``take`` is ``torch.empty``. Two live temporaries must have different names. A method
    object that holds a workspace is not safe to call from two threads at once.
    """

    def __init__(self) -> None:
        self._buffers: dict[tuple[str, torch.dtype], torch.Tensor] = {}

    def take(
        self, name: str, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device
    ) -> torch.Tensor:
        """An uninitialised ``shape`` tensor that may share memory with the last call's."""
        if device.type != "cpu":
            return torch.empty(shape, dtype=dtype, device=device)
        size = math.prod(shape)
        key = (name, dtype)
        buf = self._buffers.get(key)
        if buf is None or buf.numel() < size:
            buf = torch.empty(size, dtype=dtype)
            self._buffers[key] = buf
        return buf[:size].view(shape)

    def clear(self) -> None:
        """Drop every buffer (the memory goes back once nothing else holds it)."""
        self._buffers.clear()


class Compiled:
    """A method's plain-torch function, compiled by ``torch.compile`` on its first call.

    One per method object, so a training loop pays the compilation once (seconds: dynamo
    traces the function and inductor writes and builds C++ or Triton kernels) and reuses the
    kernels while the shapes allow. When the compiler is unavailable (no C compiler, an
    inductor or dynamo error), the call runs the eager function instead and :attr:`note`
    says so; it stays eager afterwards.
    """

    def __init__(self, fn: Any, enabled: bool = True, backend: str = "inductor") -> None:
        self.fn = fn
        self.backend = backend
        self._compiled: Any = None if enabled else fn  # disabled: the eager plain function
        self.note: str | None = None

    def __call__(self, *args: Any) -> Any:
        if self._compiled is None:
            try:
                self._compiled = torch.compile(self.fn, backend=self.backend)
            except Exception as exc:  # noqa: BLE001  (any compiler failure means: run eager)
                return self._fall_back(exc, args)
        if self._compiled is self.fn:
            return self.fn(*args)
        try:
            return self._compiled(*args)
        except Exception as exc:  # noqa: BLE001
            return self._fall_back(exc, args)

    def _fall_back(self, exc: Exception, args: tuple[Any, ...]) -> Any:
        self._compiled = self.fn
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        self.note = (
            f"torch.compile is unavailable here ({type(exc).__name__}"
            + (f": {first[:120]}" if first else "")
            + "); the eager plain-torch path ran instead."
        )
        return self.fn(*args)


def plain_path(compiled: Compiled | None, fn: Any, *args: Any) -> Any:
    """``fn(*args)``, through ``compiled`` when the method was built with ``compile=True``."""
    return fn(*args) if compiled is None else compiled(*args)


def compile_note(compiled: Compiled | None) -> list[str]:
    """The note of a compilation that fell back to eager, as a list (empty otherwise)."""
    return [] if compiled is None or compiled.note is None else [compiled.note]
