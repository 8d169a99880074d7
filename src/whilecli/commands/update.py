"""`whilecli update`: a batch file in, each trajectory's per-token coefficients out.

Parses the options, calls :func:`whilecli.methods.run.run_update` (DESIGN section 3), prints
its stats and notes (plain text in the reports' style, or one JSON object with ``--format json``) and, with
``-o -``, the rows as JSON Lines on stdout. A bad method, knob or path is refused before
torch is imported.
"""

from __future__ import annotations

import sys
from typing import Any

import click
import typer

from whilecli import jsonout
from whilecli import knobs as declared
from whilecli.commands import route as route_cmd
from whilecli.commands._common import STEP, knob_option, user_errors
from whilecli.errors import UsageError, shown_path
from whilecli.methods.registry import FAMILIES, SPECS, resolve

INPUTS = "Inputs"
OUTPUT = "Output"
SPEED = "Device and speed"
SINGLE = FAMILIES["single"]
GROUPED = FAMILIES["grouped"]
CORRECTIONS = "Corrections (any token method; need behavior_logprobs)"
ROWWISE = FAMILIES["rowwise"]


class MethodChoice(click.Choice):
    """``--method``: a key or a label as the reports print it, any case, ``-`` for ``_``."""

    name = "method"

    def __init__(self) -> None:
        super().__init__(list(SPECS), case_sensitive=False)

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            return resolve(str(value))
        except UsageError as err:
            self.fail(str(err), param, ctx)


def _choice(*names: str) -> click.Choice:
    return click.Choice(list(names), case_sensitive=False)


def _print_text(
    method: str, stats: dict[str, Any], notes: list[str], output: str | None, *, stderr: bool
) -> None:
    """The stats as the reports print numbers (no box, words for keys), then the notes."""
    from whilecli import textstyle

    stream = sys.stderr if stderr else sys.stdout
    columns = textstyle.width(stream)
    lines = [f"update --method {method}"]
    lines += textstyle.pairs(
        [(textstyle.label(k), textstyle.number(v)) for k, v in stats.items()], columns
    )
    lines += textstyle.said("note", notes, columns)
    if output:
        lines.append(f"wrote {shown_path(output)}")  # a path is never wrapped: it must copy whole
    stream.write("".join(f"{line}\n" for line in lines))
    stream.flush()


def _methods_help() -> str:
    return "; ".join(
        f"{title.split(':')[0]}: {', '.join(k for k, s in SPECS.items() if s.family == fam)}"
        for fam, title in FAMILIES.items()
    ) + (" (names as the reports print them, e.g. FlashReinforce, work too)")


@user_errors
def update_command(
    batch_path: str = typer.Argument(
        ...,
        metavar="BATCH",
        help="Batch file: .jsonl or .parquet, one trajectory per row (graded rows for "
        "groupwise and rm).",
    ),
    method: str = typer.Option(
        ...,
        "--method",
        click_type=MethodChoice(),
        help=_methods_help(),
        rich_help_panel=INPUTS,
    ),
    step: int | None = STEP,
    input_format: str | None = route_cmd.INPUT_FORMAT,
    map_: list[str] | None = route_cmd.MAPPING,
    pass_threshold: float | None = route_cmd.PASS_THRESHOLD,
    missing: str = route_cmd.MISSING,
    pool: bool = route_cmd.POOL,
    output: str | None = typer.Option(
        None,
        "-o",
        "--output",
        help="Write one row per trajectory (.parquet, .jsonl; - for stdout).",
        rich_help_panel=OUTPUT,
    ),
    force: bool = typer.Option(
        False, "--force", help="Overwrite --output if it exists.", rich_help_panel=OUTPUT
    ),
    fmt: str = typer.Option(
        "text",
        "--format",
        click_type=_choice("text", "json"),
        help="Report as text or one JSON object.",
        rich_help_panel=OUTPUT,
    ),
    device: str = typer.Option(
        "cpu",
        "--device",
        click_type=_choice("cpu", "cuda", "auto"),
        help="Where the tensors live.",
        rich_help_panel=SPEED,
    ),
    dtype: str | None = typer.Option(
        None,
        "--dtype",
        click_type=_choice("float64", "float32"),
        help="Float type.",
        show_default="float64 on CPU, float32 on CUDA",
        rich_help_panel=SPEED,
    ),
    compile_: bool = typer.Option(
        False,
        "--compile",
        help="Run the method through torch.compile (eager if it cannot compile).",
        rich_help_panel=SPEED,
    ),
    trust: float | None = knob_option(declared.TRUST, SINGLE),
    ratio: str | None = typer.Option(
        None,
        "--ratio",
        metavar="LOW,HIGH",
        help="SAO's open ratio band.",
        show_default="{:g},{:g}".format(*declared.SAO_RATIO),
        rich_help_panel=SINGLE,
    ),
    gae_alpha: float | None = typer.Option(
        None,
        "--gae-alpha",
        help=f"α in λ = 1 − 1/(αL) (SAO {declared.SAO_GAE_ALPHA.default:g}, "
        f"BPCO {declared.BPCO_GAE_ALPHA.default:g}).",
        rich_help_panel=SINGLE,
    ),
    reward_range: str | None = typer.Option(
        None,
        "--reward-range",
        metavar="LO,HI",
        help="BPCO's critic range.",
        show_default="0,1",
        rich_help_panel=SINGLE,
    ),
    clip: float | None = typer.Option(
        None,
        "--clip",
        help=f"The surrogate's ε (grouped methods {declared.CLIP.default:g}; BPCO's "
        f"{declared.BPCO_CLIP.default:g}, halved by μ).",
        rich_help_panel=GROUPED,
    ),
    loss_type: str | None = typer.Option(
        None,
        "--loss-type",
        click_type=_choice("grpo", "bnpo", "dr_grpo"),
        help="Length weights: 1/(T_i B), 1/Σ T_j or 1/(L_max B).",
        show_default="grpo",
        rich_help_panel=GROUPED,
    ),
    truncated: str | None = typer.Option(
        None,
        "--truncated",
        click_type=_choice("mask", "zero"),
        help="A truncated row: c = 0 (mask) or reward 0 (zero).",
        show_default="mask",
        rich_help_panel=GROUPED,
    ),
    beta: float | None = typer.Option(
        None,
        "--beta",
        help="KL to the reference (grouped methods) or DPO's β.",
        show_default=f"grouped {declared.BETA.default:g}, dpo {declared.DPO_BETA.default:g}",
        rich_help_panel=GROUPED,
    ),
    max_len: int | None = typer.Option(
        None,
        "--max-len",
        help="dr_grpo's L_max: your generation cap, max_tokens.",
        show_default="the longest row",
        rich_help_panel=GROUPED,
    ),
    decay: float | None = knob_option(declared.DECAY, GROUPED),
    state: str | None = typer.Option(
        None,
        "--state",
        metavar="FILE",
        help="rae's baselines (JSON), read if present and replaced.",
        rich_help_panel=GROUPED,
    ),
    agent_key: str | None = typer.Option(
        None, "--agent-key", help="Column naming each row's agent (rae).", rich_help_panel=GROUPED
    ),
    correction: str | None = typer.Option(
        None,
        "--correction",
        click_type=_choice(*declared.CORRECTIONS),
        help="Staleness correction, applied last to the policy-gradient part of c.",
        rich_help_panel=CORRECTIONS,
    ),
    ipo_eps: float | None = knob_option(declared.IPO_EPS, CORRECTIONS),
    icepop_band: str | None = typer.Option(
        None,
        "--icepop-band",
        metavar="LOW,HIGH",
        help="icepop keeps LOW ≤ ρ ≤ HIGH.",
        show_default="{:g},{:g}".format(*declared.ICEPOP_BAND),
        rich_help_panel=CORRECTIONS,
    ),
    tis_cap: float | None = knob_option(declared.TIS_CAP, CORRECTIONS),
    mode: str | None = typer.Option(
        None,
        "--mode",
        click_type=_choice("reward", "advantage"),
        help="groupwise: reward (GRS) or advantage (GAR).",
        show_default="advantage",
        rich_help_panel=ROWWISE,
    ),
    floor: float | None = knob_option(declared.GRS_FLOOR, ROWWISE),
    cap: float | None = knob_option(declared.GAR_CAP, ROWWISE),
    min_factor: float | None = knob_option(declared.GAR_MIN_FACTOR, ROWWISE),
    hack_zero: bool | None = typer.Option(
        None,
        "--hack-zero/--no-hack-zero",
        help="groupwise GAR: a flagged hack fails.",
        show_default="on",
        rich_help_panel=ROWWISE,
    ),
) -> None:
    """Per-token coefficients for a batch of trajectories (FlashReinforce, SAO, BPCO, GRPO, ...).

    groupwise and rm work on graded rows (one number per rollout) rather than tokens.
    """
    from whilecli.methods.run import RowwiseResult, parse_pair, run_update

    knobs = {
        "trust": trust,
        "ratio": parse_pair("--ratio", ratio),
        "gae_alpha": gae_alpha,
        "clip": clip,
        "reward_range": parse_pair("--reward-range", reward_range),
        "loss_type": loss_type,
        "truncated": truncated,
        "beta": beta,
        "max_len": max_len,
        "decay": decay,
        "agent_key": agent_key,
        "pass_threshold": pass_threshold,
        "mode": mode,
        "floor": floor,
        "cap": cap,
        "min_factor": min_factor,
        "hack_zero": hack_zero,
    }
    result = run_update(
        batch_path,
        method,
        knobs,
        correction=correction,
        correction_knobs={
            "ipo_eps": ipo_eps,
            "icepop_band": parse_pair("--icepop-band", icepop_band),
            "tis_cap": tis_cap,
        },
        state=state,
        mapping=list(map_ or []),
        device=device,
        dtype=dtype,
        output=output,
        force=force,
        compile=compile_,
        missing=missing,
        input_format=input_format,
        pool=pool,
    )
    to_stdout = output == "-"
    if isinstance(result, RowwiseResult):
        from whilecli.commands.rowwise import print_rowwise

        print_rowwise(result.report, fmt=fmt, to_stderr=to_stdout)
        return
    if to_stdout:  # JSON Lines on stdout, the report on stderr
        table = result.table()
        sys.stdout.write("".join(jsonout.dumps(row) + "\n" for row in table.to_pylist()))
        sys.stdout.flush()
    if fmt == "json":
        typer.echo(
            jsonout.dumps(jsonout.versioned(result.to_dict()), indent=2, ensure_ascii=False),
            err=to_stdout,
        )
    else:
        _print_text(
            method, result.stats, list(result.update.notes), result.output, stderr=to_stdout
        )
