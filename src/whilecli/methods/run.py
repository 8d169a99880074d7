"""``run_update``: one batch file through one method, the library call behind ``whilecli update``.

Order of work (DESIGN §3, §5): the method name, its knobs and the correction's are checked
against :mod:`whilecli.methods.registry` and :mod:`whilecli.knobs`, the output and state
paths are checked, and the batch is read (Arrow; a missing file or a bad row is reported
here) all before torch is imported; then the batch is padded on the device, the method runs,
the correction is applied last, an error about trajectory ``i`` is re-pointed at its file and
line, rae's state file is read and written, and the rows are written back.

The row-wise methods (groupwise, rm) take graded rows, not tokens: :func:`run_update`
hands them to :func:`run_rowwise`, which returns their report.

>>> result = run_update("batch.jsonl", "grpo", {"loss_type": "dr_grpo"}, correction="tis")
... # doctest: +SKIP
>>> result.update.coefficients.shape  # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whilecli import knobs as declared
from whilecli.errors import InputError, UsageError, WhileError
from whilecli.methods.registry import (
    NO_REWARD,
    ROW_METHODS,
    check_applies,
    check_knobs,
    flag,
    resolve,
)

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from whilecli.io.columns import Columns, InputRows
    from whilecli.methods.batch import Batch, Update
    from whilecli.methods.rowio import Table

DEVICES = ("cpu", "cuda", "auto")
DTYPES = ("float64", "float32")


def torch_hint() -> str:
    """What to tell a user whose environment has no torch: the install line that works for
    this copy of whilecli (a clone, a path, a URL or an index)."""
    from whilecli.install import install_command

    return (
        f"update needs torch, which is not installed: {install_command('torch')} "
        "(route and config work without it)"
    )


@dataclass
class UpdateResult:
    """What :func:`run_update` returns: the method's :class:`Update` and how it was run."""

    method: str
    knobs: dict[str, Any]
    device: str
    dtype: str
    batch: Batch
    update: Update
    sources: dict[str, str]
    output: str | None = None
    #: Every input row, the rows left out of the batch among them (a batch read from a file).
    input_rows: InputRows | None = None

    @property
    def left_out(self) -> int:
        """Input rows left out of the batch (error replies, ungraded rows)."""
        rows = self.input_rows
        return 0 if rows is None else int((rows.batch < 0).sum())

    def table(self) -> pa.Table:
        """The rows ``-o`` writes: one per input row, in input order
        (:func:`whilecli.methods.io.update_table`)."""
        from whilecli.methods.io import update_table

        return update_table(self.batch, self.update, self.input_rows)

    @property
    def stats(self) -> dict[str, Any]:
        """The update's stats, with non-finite floats as None (JSON has no NaN)."""
        return {k: _json_safe(v) for k, v in self.update.stats.items()}

    def to_dict(self) -> dict[str, Any]:
        """The report as one JSON-ready object (``--format json``)."""
        return {
            "method": self.method,
            "knobs": {k: list(v) if isinstance(v, tuple) else v for k, v in self.knobs.items()},
            "device": self.device,
            "dtype": self.dtype,
            "trajectories": self.batch.size,
            "left_out": self.left_out,
            "admitted": int(self.update.admitted.sum()),
            "stats": self.stats,
            "notes": list(self.update.notes),
            "sources": dict(self.sources),
            "output": self.output,
        }


@dataclass
class RowwiseResult:
    """What a row-wise method (groupwise, rm) returns: its report and the rows to write."""

    method: str
    report: dict[str, Any]
    rows: Any = field(repr=False, default=None)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def parse_pair(option: str, text: str | None) -> tuple[float, float] | None:
    """``"0.7,6"`` → ``(0.7, 6.0)``; a UsageError naming ``option`` otherwise."""
    if text is None:
        return None
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise UsageError(f"{option} takes two numbers as LOW,HIGH, got {text!r}") from None


def _located(err: InputError, cols: Columns) -> InputError:
    """A method's error about trajectory ``row`` re-pointed at the file's line or row."""
    if err.file is not None:
        return err
    if err.row is None:
        if cols.file is None:
            return err
        prefix = f"field '{err.field}': " if err.field else ""
        text = str(err)
        message = text[len(prefix) :] if text.startswith(prefix) else text
        field_name = cols.sources.get(err.field, err.field) if err.field else None
        return InputError(message, file=cols.file, field=field_name)
    prefix = f"row {err.row}: " + (f"field '{err.field}': " if err.field else "")
    text = str(err)
    message = text[len(prefix) :] if text.startswith(prefix) else text
    field_name = cols.sources.get(err.field, err.field) if err.field else None
    return InputError(message, **cols.where(err.row), field=field_name)


def check_method_knobs(method: str, knobs: Mapping[str, Any]) -> dict[str, Any]:
    """The knobs a user gave (None = not given), checked against their declarations.

    Refuses, naming the flag, a knob the method does not take and a value out of its range.
    Torch-free.
    """
    given = {k: v for k, v in knobs.items() if v is not None and v is not False}
    check_knobs(method, given)
    check_applies(method, given)
    for name, knob in declared.METHOD_KNOBS.get(method, {}).items():
        if name in given:
            given[name] = knob.check(given[name], flag(name))
    if method == "sao" and "ratio" in given:
        low, high = given["ratio"]
        if not (declared.SAO_LOW.contains(low) and declared.SAO_HIGH.contains(high)):
            raise UsageError(
                f"--ratio must be a band LOW,HIGH with LOW {declared.SAO_LOW.range_text()} and "
                f"HIGH {declared.SAO_HIGH.range_text()} (default {declared.SAO_RATIO}); got "
                f"{low:g},{high:g}"
            )
    return given


#: The knobs of the row-wise methods (groupwise, rm); every other knob is a token method's.
#: ``pass_threshold`` is both kinds'.
ROW_KNOBS = ("mode", "floor", "cap", "min_factor", "hack_zero")


def knobs_for(method: str, knobs: Mapping[str, Any]) -> dict[str, Any]:
    """Of ``knobs`` (every method knob the command line has, None = not given), those of
    ``method``'s kind: the row-wise knobs for groupwise and rm, the token knobs for the
    others. A given knob of the other kind is refused, naming its flag."""
    rowwise = resolve(method) in ROW_METHODS
    mine, other = {}, []
    for name, value in knobs.items():
        if name == "pass_threshold" or (name in ROW_KNOBS) == rowwise:
            mine[name] = value
        elif value is not None:
            other.append(name)
    if other:
        where = "" if rowwise else " (groupwise only)"
        raise UsageError(f"{flag(other[0])} does not apply to {resolve(method)}{where}")
    return mine


def _dtype_on(dtype: str | None, device: str) -> str | None:
    """The dtype an update computes in: ``dtype`` where given, else float64 on CPU and
    float32 on an accelerator (:func:`whilecli.methods.batch.default_dtype`, torch-free);
    None for ``auto`` before the device is known."""
    if dtype is not None:
        return dtype
    if device == "auto":
        return None
    return "float64" if device == "cpu" else "float32"


def check_knobs_fit(
    method: str,
    given: Mapping[str, Any],
    correction: str | None,
    correction_kwargs: Mapping[str, Any],
    dtype: str,
) -> None:
    """Refuse, naming the flag, a given knob the update's ``dtype`` cannot hold (each
    declaration's :meth:`~whilecli.knobs.Knob.check_fits`). Torch-free."""
    for name, knob in declared.METHOD_KNOBS.get(method, {}).items():
        if name in given:
            knob.check_fits(given[name], dtype, flag(name))
    if correction == "tis" and "cap" in correction_kwargs:
        declared.TIS_CAP.check_fits(correction_kwargs["cap"], dtype, "--tis-cap")
    if correction == "icepop" and "band" in correction_kwargs:
        declared.ICEPOP_HIGH.check_fits(correction_kwargs["band"][1], dtype, "--icepop-band high")
    if method == "sao" and "ratio" in given:
        declared.SAO_HIGH.check_fits(given["ratio"][1], dtype, "--ratio high")


def check_correction(
    correction: str | None, knobs: Mapping[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    """The correction and its knobs (``ipo_eps``, ``icepop_band``, ``tis_cap``), checked.

    Returns the keyword arguments :func:`~whilecli.methods.twostep.apply_correction`
    takes (``eps``, ``band``, ``cap``). Torch-free.
    """
    given = {k: v for k, v in knobs.items() if v is not None}
    if correction is None:
        if given:
            raise UsageError(f"{flag(next(iter(given)))} needs --correction")
        return None, {}
    name = correction.lower()
    if name not in declared.CORRECTIONS:
        raise UsageError(
            f"unknown correction {correction!r}; choose one of {', '.join(declared.CORRECTIONS)}"
        )
    out: dict[str, Any] = {}
    for knob, value in given.items():
        if knob not in declared.CORRECTION_KNOBS[name]:
            raise UsageError(f"{flag(knob)} does not apply to --correction {name}")
        if knob == "icepop_band":
            out["band"] = declared.check_band(value, "--icepop-band")
        elif knob == "ipo_eps":
            out["eps"] = declared.IPO_EPS.check(value, "--ipo-eps")
        else:
            out["cap"] = declared.TIS_CAP.check(value, "--tis-cap")
    return name, out


def check_output(output: str | None, *, force: bool, inputs: Sequence[str | Path] = ()) -> None:
    """Refuse a bad ``-o`` before any work: an unknown extension, a file without force, or
    one of ``inputs`` (the batch being read)."""
    if output is None or output == "-":
        return
    from whilecli.fileio import check_writable, output_format
    from whilecli.methods.io import UPDATE_FORMATS

    check_writable(output, force=force, inputs=inputs)
    output_format(output, UPDATE_FORMATS)


#: The files the row-wise methods and ``ada`` write their rows to.


def check_rows_output(
    output: str | None, *, force: bool, inputs: Sequence[str | Path] = ()
) -> None:
    """Refuse a file of rows to write (``-o``, ``--next-round``) before any work: an unknown
    extension, an existing file without ``force``, or one of ``inputs`` (the rows being
    read). ``-`` (stdout) and None pass."""
    if output is None or output == "-":
        return
    from whilecli.fileio import check_writable, output_format

    output_format(output)
    check_writable(output, force=force, inputs=inputs)


def check_paths_exist(paths: Sequence[str | Path]) -> None:
    """Refuse a path that names nothing, before the readers (polars, Arrow) are imported.

    ``-`` (stdin), globs and anything that exists are left to :mod:`whilecli.io`; the
    message is the one the reading layer gives.
    """
    for raw in paths:
        text = str(raw)
        if text == "-" or any(ch in text for ch in "*?[") or os.path.lexists(text):
            continue
        raise InputError("no such file or directory", file=text)


def _parse_map(items: Mapping[str, str] | Sequence[str] | None, *, rows: bool) -> dict[str, str]:
    """``--map FIELD=COLUMN`` items (or a ready mapping) as ``{field: column}``."""
    if not items:
        return {}
    if isinstance(items, Mapping):
        return dict(items)
    if rows:
        from whilecli.io.read import parse_map as parse_rows_map

        return parse_rows_map(list(items))
    from whilecli.io.columns import parse_map as parse_batch_map

    return parse_batch_map(list(items))


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise WhileError(torch_hint()) from None
    return torch


def _device(torch: Any, name: str) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: no CUDA device is available (use --device cpu or auto)")
    if name not in ("cpu", "cuda"):
        raise UsageError(f"--device must be cpu, cuda or auto, got {name!r}")
    return name


def run_update(
    path: str | Path | Sequence[str],
    method: str,
    knobs: Mapping[str, Any] | None = None,
    *,
    correction: str | None = None,
    correction_knobs: Mapping[str, Any] | None = None,
    state: str | None = None,
    mapping: Mapping[str, str] | Sequence[str] | None = None,
    device: str = "cpu",
    dtype: str | None = None,
    output: str | None = None,
    force: bool = False,
    compile: bool = False,
    missing: str = "skip",
    input_format: str | None = None,
    pool: bool = False,
) -> UpdateResult | RowwiseResult:
    """Run ``method`` (a key or its label, any case) on the batch at ``path``.

    ``knobs`` are the method's constructor keywords (None = not given; see
    :mod:`whilecli.knobs`); ``correction`` (ipo, icepop, tis) is applied last with
    ``correction_knobs`` (``ipo_eps``, ``icepop_band``, ``tis_cap``); ``state`` is rae's JSON
    baseline file, read when it exists and replaced after the batch; ``mapping`` (a dict, or
    ``--map`` items ``FIELD=COLUMN``) reads a field from another column; ``output`` (``.parquet``/``.jsonl``) is written atomically, never over
    a file without ``force`` (``-`` is left to the caller). ``compile=True`` asks the method
    for its ``torch.compile`` path; a method that has none is refused. ``missing``
    (``--missing``): an ungraded row is left out (``skip``) or kept as a failure (``fail``);
    ``input_format`` (``--input-format``) forces the format, as every command forces it.

    Raises :class:`~whilecli.errors.WhileError` (one line) on bad usage or bad input, located
    at the file and line of the row at fault.
    """
    key = resolve(method)
    knobs = knobs_for(key, knobs or {})
    if key in ROW_METHODS:
        if correction is not None or correction_knobs and any(correction_knobs.values()):
            raise UsageError(f"--correction does not apply to {key} (it works on graded rows)")
        if compile:
            raise UsageError(f"--compile does not apply to {key} (it works on graded rows)")
        paths = [str(p) for p in ([path] if isinstance(path, (str, Path)) else path)]
        return run_rowwise(
            key, paths, mapping=_parse_map(mapping, rows=True), output=output, force=force,
            missing=missing, input_format=input_format, pool=pool, **knobs,
        )  # fmt: skip
    if state is not None and key != "rae":
        raise UsageError(f"--state does not apply to {key} (it is rae's baseline file)")
    given = check_method_knobs(key, knobs)
    corr, corr_kwargs = check_correction(correction, correction_knobs or {})
    if device not in DEVICES:
        raise UsageError(f"--device must be cpu, cuda or auto, got {device!r}")
    if dtype not in (None, *DTYPES):
        raise UsageError(f"--dtype must be float64 or float32, got {dtype!r}")
    planned = _dtype_on(dtype, device)  # auto: once the device is resolved
    if planned is not None:
        check_knobs_fit(key, given, corr, corr_kwargs, planned)
    inputs = [path] if isinstance(path, (str, Path)) else list(path)
    check_output(output, force=force, inputs=inputs)
    if state is not None:
        from whilecli.fileio import check_writable

        if os.path.exists(state) and not os.path.isfile(state) and not os.path.isdir(state):
            raise UsageError(f"--state {state}: rae's baselines are a JSON file, not a device")
        others = [*inputs, *([output] if output not in (None, "-") else [])]
        if output not in (None, "-") and Path(state).resolve() == Path(str(output)).resolve():
            raise UsageError("--state and -o name the same file")
        check_writable(state, force=True, inputs=others)  # rae replaces its own state file
    read_map = _parse_map(mapping, rows=False)
    named_by: dict[str, str] = {}
    if key == "rae" and "agent_key" in given and "agent" not in read_map:
        read_map["agent"] = given["agent_key"]
        named_by["agent"] = f"--agent-key {given['agent_key']}"
    if not isinstance(path, (str, Path)):
        listed = list(path)
        if len(listed) != 1:
            raise UsageError(f"whilecli update takes one batch file, got {len(listed)}")
        path = listed[0]
    check_paths_exist([path])
    from whilecli.io.batch import read_batch

    # a missing file or a bad row stops here, before torch
    cols = read_batch(
        path, read_map, missing=missing, input_format=input_format, named_by=named_by, pool=pool
    )
    torch = _torch()
    from whilecli.methods.batch import Batch
    from whilecli.methods.registry import make_method
    from whilecli.methods.validate import correction_needs

    dev = _device(torch, device)
    if planned is None:
        resolved = _dtype_on(dtype, dev)
        assert resolved is not None  # the device is known now
        check_knobs_fit(key, given, corr, corr_kwargs, resolved)
    algo = make_method(key, {**given, **({"compile": True} if compile else {})})
    requires = set(algo.needs.field_names)
    reads = (algo.needs | correction_needs(corr)).reads  # the lists this update reads
    ignored = _ignored_lists(cols, reads, key)
    batch = Batch.from_columns(
        cols,
        device=dev,
        dtype={"float64": torch.float64, "float32": torch.float32, None: None}[dtype],
        require=requires,
        need_reward=key not in NO_REWARD or "reward" in requires,
        logprob_fields=(),  # the values are the runner's to check, once, in update
        reads=reads,
    )
    if state is not None and Path(state).exists():
        algo.load_state(state)
    try:  # the runner checks the batch for the method and the correction together
        update = algo.update(batch, correction=corr, **corr_kwargs)
    except InputError as err:
        raise _located(err, cols) from None
    update.notes = [*cols.notes, *ignored, *update.notes]  # what reading left out comes first
    rows = cols.input_rows
    left_out = 0 if rows is None else int((rows.batch < 0).sum())
    if output is not None and left_out:
        update.notes.append(
            f"{left_out} of {rows.size if rows else 0} rows left out of the update are written "
            "in their places with zero coefficients, admitted false and left_out saying why "
            "(output row k is input row k)."
        )
    written = None
    if output is not None and output != "-":
        from whilecli.methods.io import write_update

        with_state = None if state is None else (state, algo.state_text())
        written = str(
            write_update(output, batch, update, force=force, input_rows=rows, state=with_state)
        )  # with the state, both or neither: a failed write leaves both as they were
    elif state is not None:  # last: a failed write leaves the baselines as they were
        algo.save_state(state)
    shown = dict(given)
    if corr is not None:
        shown["correction"] = corr
        shown.update(corr_kwargs)
    if compile:
        shown["compile"] = True
    return UpdateResult(
        method=key,
        knobs=shown,
        device=dev,
        dtype=str(batch.logprobs.dtype).removeprefix("torch."),
        batch=batch,
        update=update,
        sources=dict(cols.sources),
        output=written,
        input_rows=rows,
    )


def _ignored_lists(cols: Any, reads: Collection[str], method: str) -> list[str]:
    """One note per per-token list the rows carry that ``method`` does not read: it is
    ignored (left out of the batch, its entries never checked), not refused."""
    notes = []
    for name in sorted(set(cols.lists) - set(reads)):
        held = int((cols.lists[name][1] >= 0).sum())
        column = cols.sources.get(name, name)
        shown = f"'{name}'" if column == name else f"'{name}' (column '{column}')"
        notes.append(
            f"{shown} on {held} of {cols.size} trajectories ignored: {method} does not read "
            "it, so its entries were not checked."
        )
    return notes


# ------------------------------------------------------------------ row-wise methods


def read_inputs(
    paths: str | Sequence[str],
    *,
    mapping: dict[str, str] | None = None,
    pass_threshold: float | None = None,
    **options: Any,
) -> Table:
    """The rows at ``paths`` as a table (:func:`whilecli.io.table.read_table`)."""
    from whilecli.methods import rowio

    listed = [paths] if isinstance(paths, str) else list(paths)
    return rowio.read_table(listed, mapping=mapping, pass_threshold=pass_threshold, **options)


def input_label(paths: str | Sequence[str]) -> str:
    """The paths as the report names them."""
    return paths if isinstance(paths, str) else " ".join(paths)


def _groupwise(table: Table, **knobs: Any) -> tuple[dict[str, Any], pl.DataFrame]:
    from whilecli.methods.groupwise import GroupwiseGrading

    result = GroupwiseGrading(**knobs).apply(table)
    spread = result.spread
    warnings = [spread.why] if spread.no_spread else []
    what = "GRS, reshaped reward" if result.mode == "reward" else "GAR, reshaped advantage"
    report: dict[str, Any] = {
        "title": f"groupwise ({what})",
        "method": "groupwise",
        "mode": result.mode,
        "columns": result.columns,
        "stats": result.stats,
        "spread": {
            "n": spread.n,
            "std": spread.std,
            "cluster_share": spread.cluster_share,
            "no_spread": spread.no_spread,
            "why": spread.why,
        },
        "warnings": warnings,
        "notes": result.notes,
        "extra": [f"spread: {spread.why}"] if not spread.no_spread else [],
    }
    return report, result.frame


def _rm(table: Table, pass_threshold: float | None) -> tuple[dict[str, Any], pl.DataFrame]:
    from whilecli.methods.reward_model import RewardModel, why_rarely

    result = RewardModel(pass_threshold=pass_threshold).pairs(table)
    report: dict[str, Any] = {
        "title": f"rm (Bradley-Terry loss on pairs from {result.source})",
        "method": "rm",
        "columns": result.columns,
        "stats": result.stats,
        "warnings": [],
        "notes": result.notes,
        "why_rarely": why_rarely,
        "extra": [why_rarely],
    }
    return report, result.frame


def run_rowwise(
    method: str,
    path: str | Sequence[str],
    *,
    mode: str | None = None,
    floor: float | None = None,
    cap: float | None = None,
    min_factor: float | None = None,
    hack_zero: bool | None = None,
    pass_threshold: float | None = None,
    mapping: dict[str, str] | None = None,
    output: str | None = None,
    force: bool = False,
    missing: str = "skip",
    input_format: str | None = None,
    pool: bool = False,
) -> RowwiseResult:
    """GroupwiseGrading (GRS / GAR) or the reward model's Bradley–Terry loss on graded rows.

    ``mode``, ``floor``, ``cap``, ``min_factor`` and ``hack_zero`` act on groupwise only (None:
    its defaults); ``pass_threshold`` (reward ≥ T passes; None: 1.0, and rewards outside
    [0, 1] are refused as the route refuses them) and ``mapping`` on both. Writes one row per
    input row to ``output`` (``-`` writes JSON Lines to stdout). torch is never imported.
    """
    key = resolve(method)
    if key not in ROW_METHODS:
        raise UsageError(f"row-wise method must be groupwise or rm, got {method!r}")
    group_knobs = {
        "mode": mode,
        "floor": floor,
        "cap": cap,
        "min_factor": min_factor,
        "hack_zero": hack_zero,
    }
    given = {k: v for k, v in group_knobs.items() if v is not None}
    if key == "rm" and given:
        raise UsageError(
            f"{flag(next(iter(given)))} does not apply to rm (it takes: --pass-threshold)"
        )
    inputs = [path] if isinstance(path, str) else list(path)
    check_paths_exist(inputs)
    check_rows_output(output, force=force, inputs=inputs)
    from whilecli.methods import rowio
    from whilecli.methods.groupwise import GroupwiseGrading
    from whilecli.methods.reward_model import READ_OPTIONS

    knobs: dict[str, Any] = {**given, "pass_threshold": pass_threshold}
    grader = GroupwiseGrading(**knobs) if key == "groupwise" else None
    options = grader.read_options() if grader is not None else dict(READ_OPTIONS)
    table = read_inputs(
        path,
        mapping=mapping,
        pass_threshold=pass_threshold,
        missing=missing,
        input_format=input_format,
        pool=pool,
        **options,
    )
    try:
        if key == "groupwise":
            report, rows = _groupwise(table, **knobs)
        else:
            report, rows = _rm(table, pass_threshold)
    except InputError as err:
        raise table.locate(err) from None
    report["input"] = input_label(path)
    report["format"] = table.format
    report["notes"] = [*table.notes, *report["notes"]]
    written: dict[str, str] = {}
    if output is not None:
        rowio.write_rows(rows, output, force=force)
        if output != "-":
            written["rows"] = output
    else:
        report["notes"] = [*report["notes"], "no rows written: pass -o FILE (.parquet or .jsonl)"]
    report["written"] = written
    report["output"] = output
    return RowwiseResult(method=key, report=report, rows=rows)


def run_ada(
    path: str | Sequence[str],
    *,
    keep: int = 4,
    round_size: int = 8,
    max_rounds: int = 4,
    exit: str = "balanced",
    pass_threshold: float | None = None,
    mapping: dict[str, str] | None = None,
    next_round: str | None = None,
    output: str | None = None,
    force: bool = False,
    missing: str = "skip",
    input_format: str | None = None,
    pool: bool = False,
) -> dict[str, Any]:
    """Plan ReinforceAda on the rows at ``path``: write the task list to draw again
    (``next_round``) and the balanced selection (``output``) when asked, and return the
    report (title, knobs, columns, stats, notes, the tasks to draw again, the files written).
    ``missing`` (``--missing``): ungraded rows are left out (``skip``) or fail (``fail``).

    Raises :class:`~whilecli.errors.WhileError` on bad knobs or bad input.
    """
    from whilecli.methods import rowio
    from whilecli.methods.ada import ReinforceAda

    ada = ReinforceAda(
        keep=keep,
        round_size=round_size,
        max_rounds=max_rounds,
        exit=exit,
        pass_threshold=pass_threshold,
    )
    if next_round == "-" and output == "-":
        raise UsageError("--next-round and -o cannot both be '-' (stdout)")
    same = "-" not in (next_round, output) and next_round is not None and output is not None
    if same and Path(next_round).resolve() == Path(output).resolve():  # type: ignore[arg-type]
        raise UsageError("--next-round and -o name the same file")
    inputs = [path] if isinstance(path, str) else list(path)
    check_rows_output(next_round, force=force, inputs=inputs)
    check_rows_output(output, force=force, inputs=inputs)
    table = read_inputs(
        path,
        mapping=mapping,
        pass_threshold=pass_threshold,
        missing=missing,
        input_format=input_format,
        pool=pool,
    )
    try:
        result = ada.plan(table)
    except InputError as err:
        raise table.locate(err) from None
    written: dict[str, str] = {}
    notes = [*table.notes, *result.notes]
    outputs = [(result.next_round, next_round), (result.selection, output)]
    rowio.write_rows_all([(frame, to) for frame, to in outputs if to is not None], force=force)
    for name, to in (("next round", next_round), ("selection", output)):
        if to is not None and to != "-":
            written[name] = to
    if next_round is None and result.next_round.height:
        notes.append("task list for the sampler not written: pass --next-round FILE")
    if output is None and result.selection.height:
        notes.append("selection not written: pass -o FILE (.parquet or .jsonl)")
    report: dict[str, Any] = {
        "title": f"ada (ReinforceAda, exit {ada.exit}, keep {ada.keep})",
        "method": "ada",
        "input": input_label(path),
        "format": table.format,
        "knobs": {
            "keep": ada.keep,
            "round_size": ada.round_size,
            "max_rounds": ada.max_rounds,
            "exit": ada.exit,
            "pass_threshold": table.pass_threshold,
        },
        "columns": result.columns,
        "stats": result.stats,
        "warnings": [],
        "notes": notes,
        "next_round": result.next_round.get_column("task_id").to_list(),
        "written": written,
    }
    return report
