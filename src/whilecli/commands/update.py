"""`while update`: a batch file in, each trajectory's per-token coefficients out.

Reads ragged rows (JSONL or Parquet), pads them into tensors on ``--device``, runs the chosen
method (DESIGN section 3), prints its stats and notes, and writes one row per trajectory with
``-o``. torch is imported only when the command runs.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import typer

from whilecli import jsonout
from whilecli.commands._common import user_errors
from whilecli.errors import InputError, UsageError

NO_REWARD = frozenset({"opd", "opsd"})
#: Batch attribute names some methods list in ``requires`` → the canonical field names.
_FIELD_NAMES = {"task_ids": "task_id", "agents": "agent", "rewards": "reward"}


def _pair(option: str, text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise UsageError(f"{option} takes two numbers as LOW,HIGH, got {text!r}") from None


def _located(err: InputError, cols: Any) -> InputError:
    """A method's error about trajectory ``row`` re-pointed at the file's line or row."""
    if err.row is None or err.file is not None:
        return err
    prefix = f"row {err.row}: " + (f"field '{err.field}': " if err.field else "")
    text = str(err)
    message = text[len(prefix) :] if text.startswith(prefix) else text
    field = cols.sources.get(err.field, err.field) if err.field else None
    return InputError(message, **cols.where(err.row), field=field)


def _device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: no CUDA device is available (use --device cpu or auto)")
    if name not in ("cpu", "cuda"):
        raise UsageError(f"--device must be cpu, cuda or auto, got {name!r}")
    return name


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _print_text(
    method: str, stats: dict[str, Any], notes: list[str], output: str | None, *, stderr: bool
) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=stderr)
    table = Table(title=f"while update --method {method}", show_header=True)
    table.add_column("stat")
    table.add_column("value", justify="right")
    for key, value in stats.items():
        shown = (
            "n/a" if value is None else (f"{value:.6g}" if isinstance(value, float) else str(value))
        )
        table.add_row(key, shown)
    for note in notes:
        console.print(f"• {note}", markup=False, highlight=False)
    console.print(table)
    if output:
        console.print(f"wrote {output}", markup=False, highlight=False)


@user_errors
def update_command(
    batch_path: str = typer.Argument(..., metavar="BATCH", help="Batch file: .jsonl or .parquet."),
    method: str = typer.Option(
        ...,
        "--method",
        help="flash_reinforce, sao, bpco, grpo, max_rl, rae, opd, opsd, dpo, sft, groupwise or rm.",
    ),
    trust: float | None = typer.Option(
        None, "--trust", help="FlashReinforce's KL gate (default 0.003)."
    ),
    ratio: str | None = typer.Option(
        None, "--ratio", metavar="LOW,HIGH", help="SAO's ratio band (default 0.7,6.0)."
    ),
    gae_alpha: float | None = typer.Option(
        None, "--gae-alpha", help="α in λ = 1 − 1/(αL) (SAO 1.5, BPCO 0.4)."
    ),
    clip: float | None = typer.Option(
        None, "--clip", help="BPCO's ε (0.2) or the grouped methods' clip."
    ),
    reward_range: str | None = typer.Option(
        None, "--reward-range", metavar="LO,HI", help="BPCO's critic range (default 0,1)."
    ),
    loss_type: str | None = typer.Option(None, "--loss-type", help="grpo, bnpo or dr_grpo."),
    truncated: str | None = typer.Option(None, "--truncated", help="mask or zero."),
    beta: float | None = typer.Option(None, "--beta", help="KL (grpo family) or DPO β."),
    max_len: int | None = typer.Option(None, "--max-len", help="dr_grpo's constant length."),
    state: str | None = typer.Option(
        None, "--state", metavar="FILE", help="rae's baseline state (JSON)."
    ),
    agent_key: str | None = typer.Option(
        None, "--agent-key", help="Column naming each row's agent (rae)."
    ),
    pass_threshold: float | None = typer.Option(
        None, "--pass-threshold", help="Reward that counts as a pass (dpo, sft)."
    ),
    correction: str | None = typer.Option(
        None, "--correction", help="ipo, icepop or tis, applied last."
    ),
    device: str = typer.Option("cpu", "--device", help="cpu, cuda or auto."),
    dtype: str | None = typer.Option(
        None, "--dtype", help="float64 (CPU default) or float32 (CUDA default)."
    ),
    output: str | None = typer.Option(
        None,
        "-o",
        "--output",
        help="Write one row per trajectory (.parquet, .jsonl; - for stdout).",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite --output if it exists."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
    map_: list[str] | None = typer.Option(
        None, "--map", metavar="FIELD=COLUMN", help="Read FIELD from COLUMN."
    ),
    mode: str = typer.Option(
        "advantage", "--mode", help="groupwise: reward (GRS) or advantage (GAR)."
    ),
    floor: float = typer.Option(0.0, "--floor", help="groupwise GRS: lowest grader factor."),
    cap: float = typer.Option(3.0, "--cap", help="groupwise GAR: largest rescale λ."),
    min_factor: float = typer.Option(
        0.5, "--min-factor", help="groupwise GAR: factor of the lowest-ranked pass."
    ),
    hack_zero: bool = typer.Option(
        True, "--hack-zero/--no-hack-zero", help="groupwise GAR: a flagged hack fails."
    ),
) -> None:
    """Per-token coefficients for a batch of trajectories (FlashReinforce, SAO, BPCO, ...).

    groupwise and rm work on graded rows (one number per rollout) rather than tokens.
    """
    from whilecli.commands.rowwise import ROW_METHODS, run_row_method

    if method in ROW_METHODS:
        from whilecli.io.read import parse_map as parse_row_map

        raise typer.Exit(
            run_row_method(
                method,
                batch_path,
                mode=mode,
                floor=floor,
                cap=cap,
                min_factor=min_factor,
                hack_zero=hack_zero,
                pass_threshold=pass_threshold,
                mapping=parse_row_map(map_ or []),
                output=output,
                force=force,
                fmt=fmt,
            )
        )
    from whilecli.io.batch import parse_map
    from whilecli.methods.registry import make_method

    if fmt not in ("text", "json"):
        raise UsageError(f"--format must be text or json, got {fmt!r}")
    if dtype not in (None, "float64", "float32"):
        raise UsageError(f"--dtype must be float64 or float32, got {dtype!r}")
    knobs = {
        "trust": trust,
        "ratio": _pair("--ratio", ratio),
        "gae_alpha": gae_alpha,
        "clip": clip,
        "reward_range": _pair("--reward-range", reward_range),
        "loss_type": loss_type,
        "truncated": truncated,
        "beta": beta,
        "max_len": max_len,
        "agent_key": agent_key,
        "pass_threshold": pass_threshold,
    }
    given = {k: v for k, v in knobs.items() if v is not None}
    if "agent_key" in given and method == "rae":
        from whilecli.methods.registry import accepted_knobs, method_class

        if "agent_key" not in accepted_knobs(method_class(method)):
            given.pop("agent_key")
    algo = make_method(method, given)
    if state is not None and not hasattr(algo, "load_state"):
        raise UsageError(f"--state does not apply to {method}")
    mapping = parse_map(map_ or [])
    if agent_key is not None:
        mapping.setdefault("agent", agent_key)
    from whilecli.fileio import check_writable

    if output is not None and output != "-":
        from pathlib import Path

        from whilecli.methods.io import JSONL, PARQUET

        check_writable(output, force=force)
        if Path(output).suffix.lower() not in (*PARQUET, *JSONL):
            raise UsageError(
                f"{output}: unknown file type; use .jsonl or .parquet (or - for stdout)"
            )
    if state is not None:
        check_writable(state, force=True)  # rae replaces its own state file

    import torch

    from whilecli.io.batch import read_batch
    from whilecli.methods.batch import Batch
    from whilecli.methods.io import write_update

    dev = _device(device)
    tdtype = {"float64": torch.float64, "float32": torch.float32, None: None}[dtype]
    requires = {_FIELD_NAMES.get(f, f) for f in getattr(algo, "requires", frozenset())}
    need_reward = method not in NO_REWARD or "reward" in requires
    cols = read_batch(batch_path, mapping)
    batch = Batch.from_columns(
        cols,
        device=dev,
        dtype=tdtype,
        require=requires,
        need_reward=need_reward,
        logprob_fields=getattr(algo, "logprob_fields", None),
    )
    if state is not None:
        from pathlib import Path

        if Path(state).exists():
            algo.load_state(state)
    try:
        update = algo.update(batch)
        if correction is not None:
            from whilecli.methods.corrections import apply_correction

            update = apply_correction(update, batch, correction)
    except InputError as err:
        raise _located(err, cols) from None
    if state is not None:
        algo.save_state(state)
    to_stdout = output == "-"
    if to_stdout:  # JSON Lines on stdout, the report on stderr
        from whilecli.methods.io import update_table

        lines = (jsonout.dumps(row) + "\n" for row in update_table(batch, update).to_pylist())
        sys.stdout.write("".join(lines))
        sys.stdout.flush()
    written = None
    if output and not to_stdout:
        written = str(write_update(output, batch, update, force=force))
    stats = {k: _json_safe(v) for k, v in update.stats.items()}
    if fmt == "json":
        doc = {
            "method": method,
            "knobs": {k: list(v) if isinstance(v, tuple) else v for k, v in given.items()},
            "device": dev,
            "dtype": str(batch.logprobs.dtype).removeprefix("torch."),
            "trajectories": batch.size,
            "admitted": int(update.admitted.sum()),
            "stats": stats,
            "notes": list(update.notes),
            "sources": dict(cols.sources),
            "output": written,
        }
        typer.echo(jsonout.dumps(doc, indent=2, ensure_ascii=False), err=to_stdout)
    else:
        _print_text(method, stats, list(update.notes), written, stderr=to_stdout)
