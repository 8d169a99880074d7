"""`whilecli config`: a prime-rl config for a method (RL, or SFT), with what prime-rl reads,
ignores and refuses of its knobs.

The TOML goes to ``-o FILE`` (atomically, never over an existing file without ``--force``) or
to stdout (``-o -``, the default); the knob report goes to the other stream so a pipe carries
only the TOML. ``--format json`` prints config, TOML, report and command as one JSON object.
``--from ROWS`` routes the rows first (``whilecli route``) and writes the routed method's config:
the single-rollout route gets ``rae``; an SFT verdict (another model's rows) gets prime-rl's
SFT config and a dataset of the passing rows beside it (:mod:`whilecli.emit.sft_data`).
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

import click
import typer

from whilecli import jsonout, textstyle
from whilecli.commands import route as route_cmd
from whilecli.commands._common import STEP, check_exists, option, user_errors
from whilecli.emit.from_rows import CONFIG_METHODS, routed_method, sft_from_rows
from whilecli.emit.inputs import OPTION_KEYS, SFT_OPTION_KEYS, refuse_option_and_set
from whilecli.emit.knobs import CORRECTIONS
from whilecli.emit.prime_rl import UNSUPPORTED, PrimeRLConfig, prime_rl_config
from whilecli.emit.sft import PrimeSFTConfig, refuse_rl_options
from whilecli.emit.sft_data import write_outputs
from whilecli.errors import UsageError, shown_path
from whilecli.fileio import check_writable
from whilecli.names import method_key
from whilecli.route.options import RouteOptions

#: The methods ``--method`` lists, and those it accepts only to refuse with the alternative.
METHOD_CHOICES = CONFIG_METHODS
PANELS = ("Inputs", "Method", "Model and hardware", "Training", "Output")


class MethodName(click.Choice):
    """``--method``: the choices listed in ``--help``, matched as :func:`method_key` matches
    names (any case; ``FlashReinforce``, ``prime-rl rae`` as the reports print them). The
    methods prime-rl cannot run are accepted here so the command refuses them with the
    alternative."""

    def __init__(self) -> None:
        super().__init__(METHOD_CHOICES, case_sensitive=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        key = method_key(str(value), (*METHOD_CHOICES, *UNSUPPORTED))
        if key is not None:
            return key
        self.fail(
            f"unknown method {value!r}; prime-rl configs exist for {', '.join(METHOD_CHOICES)} "
            f"(refused, with the alternative: {', '.join(UNSUPPORTED)})",
            param,
            ctx,
        )


def _choice(*names: str) -> click.Choice:
    return click.Choice(names, case_sensitive=False)


def _console(stream: TextIO) -> Any:
    from rich.console import Console

    from whilecli.textstyle import width

    return Console(file=stream, width=width(stream), highlight=False, soft_wrap=False)


def _section(con: Any, title: str, items: list[tuple[str, str]], empty: str = "") -> None:
    """A title and one bullet per item, wrapped at the console's width with a hanging
    indent; a word longer than a line (a path, with its line number) is kept whole."""
    from rich.text import Text

    from whilecli.textstyle import wrap

    con.print(Text(title, style="bold"))
    lines: list[str] = []
    for knob, note in items:
        text = knob + ((" → " if knob else "") + note if note else "")
        lines += wrap(f"• {text}", con.width, indent="  ", hang="  ")
    if not items and empty:
        lines.append(f"  {empty}")
    con.file.write("".join(line.rstrip() + "\n" for line in lines))


def render_report(
    cfg: PrimeRLConfig | PrimeSFTConfig, stream: TextIO, *, wrote: str | None
) -> None:
    """Print the two lists (reads, ignores), the ``warning: ...`` lines and, for a file written, the command
    that launches it (a TOML on stdout has no file name to launch yet)."""
    from rich.text import Text

    con = _console(stream)
    if isinstance(cfg, PrimeSFTConfig) and cfg.data_path:
        con.print(
            Text(
                f"wrote {shown_path(str(cfg.data_path))} ({cfg.data.frame.height if cfg.data else 0} rows)"
            ),
            soft_wrap=True,
        )
    if wrote:
        con.print(Text(f"wrote {shown_path(wrote)} ({cfg.method})"), soft_wrap=True)
    _section(con, f"prime-rl reads ({cfg.method})", [(n.knob, n.note) for n in cfg.reads])
    ignores = [(n.knob, n.note) for n in cfg.ignored]
    ignores += [(f"refused if asked: {n.knob}", n.note) for n in cfg.refused]
    _section(con, "prime-rl ignores", ignores, "(nothing)")
    said = textstyle.said("warning", cfg.warnings, con.width)
    con.file.write("".join(line.rstrip() + "\n" for line in said))
    if wrote:
        con.print(Text(f"run: {cfg.command}"), soft_wrap=True)


_IN, _ME, _MH, _TR, _OUT = PANELS


def _typed_options(options: dict[str, tuple[str, Any]]) -> dict[str, Any]:
    """Of ``options`` (flag → (parameter, value)), those typed on the command line, not left
    at their defaults: only an option the user gave can contradict a ``--set``."""
    ctx = click.get_current_context(silent=True)
    typed = {}
    for flag, (name, value) in options.items():
        source = None if ctx is None else ctx.get_parameter_source(name)
        if value is not None and source not in (
            click.core.ParameterSource.DEFAULT,
            click.core.ParameterSource.DEFAULT_MAP,
        ):
            typed[flag] = value
    return typed


@user_errors
def config_command(
    method: str | None = typer.Option(
        None,
        "--method",
        click_type=MethodName(),
        help="Method, any case, as the route prints it (flash_reinforce, sao, bpco: refused, "
        "with what to run instead).",
        rich_help_panel=_ME,
    ),
    model: str | None = option(RouteOptions, "model", panel=_MH),
    env: str | None = typer.Option(
        None, "--env", help="Taskset id of the train source.", rich_help_panel=_TR
    ),
    gpus: int = typer.Option(
        2,
        "--gpus",
        help="GPUs on the node: half infer, the rest train (sft: all train).",
        rich_help_panel=_MH,
    ),
    steps: int = typer.Option(
        100, "--steps", help="Optimizer steps (max_steps).", rich_help_panel=_TR
    ),
    prompts: int | None = typer.Option(
        None, "--prompts", help="Prompts per step (sft: examples per step).", rich_help_panel=_TR
    ),
    group_size: int | None = typer.Option(
        None, "--group-size", help="Rollouts per prompt.", rich_help_panel=_TR
    ),
    lora: bool = typer.Option(
        True, "--lora/--full", help="LoRA (rank 16, alpha 32) or full.", rich_help_panel=_MH
    ),
    lr: float | None = typer.Option(None, "--lr", help="Learning rate.", rich_help_panel=_TR),
    temperature: float | None = typer.Option(
        None, "--temperature", help="Sampling temperature.", rich_help_panel=_TR
    ),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", help="Completion token cap.", rich_help_panel=_TR
    ),
    seq_len: int | None = typer.Option(
        None, "--seq-len", help="Sequence length.", rich_help_panel=_TR
    ),
    teacher: str | None = typer.Option(
        None, "--teacher", help="opd teacher as NAME@URL.", rich_help_panel=_ME
    ),
    privileged: str | None = typer.Option(
        None,
        "--privileged",
        help="opsd: reference|demonstration|hint|feedback|FIELD.",
        rich_help_panel=_ME,
    ),
    async_: bool = typer.Option(
        False, "--async", help="Train on rollouts up to N steps stale.", rich_help_panel=_ME
    ),
    off_policy_steps: int | None = typer.Option(
        None,
        "--off-policy-steps",
        help="With --async: orchestrator.max_off_policy_steps (8).",
        rich_help_panel=_ME,
    ),
    correction: str | None = typer.Option(
        None,
        "--correction",
        click_type=_choice(*CORRECTIONS),
        help="With --async: the staleness correction.",
        show_default="ipo",
        rich_help_panel=_ME,
    ),
    set_: list[str] | None = typer.Option(
        None, "--set", help="dotted.key=value (TOML value); repeatable.", rich_help_panel=_TR
    ),
    output: str = typer.Option(
        "-", "-o", "--output", help="Output file, or - for stdout.", rich_help_panel=_OUT
    ),
    data: str | None = typer.Option(
        None,
        "--data",
        help="sft: with --from, the dataset folder to write (beside -o, NAME.data/, when not given); "
        "alone, a Hub dataset or a local folder.",
        rich_help_panel=_OUT,
    ),
    force: bool = typer.Option(
        False, "--force", help="Overwrite an existing output file.", rich_help_panel=_OUT
    ),
    fmt: str = typer.Option(
        "text",
        "--format",
        click_type=_choice("text", "json"),
        help="Report format.",
        rich_help_panel=_OUT,
    ),
    from_: list[str] | None = typer.Option(
        None,
        "--from",
        help="Graded rows: route them first, then write the routed method "
        "(with --method sft: the passing rows are the dataset).",
        rich_help_panel=_IN,
    ),
    pass_threshold: float | None = route_cmd.PASS_THRESHOLD,
    maps: list[str] | None = route_cmd.MAPPING,
    missing: str = route_cmd.MISSING,
    input_format: str | None = route_cmd.INPUT_FORMAT,
    step: int | None = STEP,
    size_b: float | None = option(RouteOptions, "size_b", panel=_MH),
) -> None:
    """Write a prime-rl config (TOML: RL, or SFT) and say what prime-rl reads, ignores and
    refuses."""
    fmt = fmt.lower()
    if fmt not in ("text", "json"):
        raise UsageError(f"--format must be text or json, got {fmt!r}")
    to_stdout = output == "-"
    if not to_stdout:  # before routing: a long read is not lost to a bad -o
        check_writable(output, force=force, inputs=from_ or ())
    routed_note = None
    found: tuple[str, ...] = ()  # what reading the rows found (the route's data quality)
    dumped: list[str] = []
    if from_:
        if method not in (None, "sft"):
            raise UsageError("pass --method or --from ROWS, not both (--method sft takes rows)")
        for path in from_:
            check_exists(path)
        if method is None:
            routed = routed_method(
                list(from_),
                model=model,
                pass_threshold=pass_threshold,
                maps=list(maps or []),
                size_b=size_b,
                missing=missing,
                input_format=input_format,
            )
            method, routed_note, found = routed.method, routed.why, routed.data_quality
            privileged = privileged or routed.privileged
            async_ = async_ or routed.async_
    elif (
        pass_threshold is not None or maps or missing != "skip" or input_format or step is not None
    ):
        raise UsageError(
            "--pass-threshold, --map, --missing, --input-format and --step are reading options"
            " of --from ROWS"
        )
    if method is None:
        raise UsageError(f"pass --method {'|'.join(METHOD_CHOICES)}, or --from ROWS")
    typed = _typed_options(
        {
            "--steps": ("steps", steps),
            "--seq-len": ("seq_len", seq_len),
            "--max-tokens": ("max_tokens", max_tokens),
            "--group-size": ("group_size", group_size),
            "--lr": ("lr", lr),
            "--temperature": ("temperature", temperature),
            "--off-policy-steps": ("off_policy_steps", off_policy_steps),
            "--prompts": ("prompts", prompts),
        }
    )
    keys = SFT_OPTION_KEYS if method == "sft" else OPTION_KEYS
    refuse_option_and_set(typed, keys, set_ or [])
    cfg: PrimeRLConfig | PrimeSFTConfig
    if method == "sft":
        refuse_rl_options(
            {
                "--env": env,
                "--group-size": group_size,
                "--temperature": temperature,
                "--max-tokens": max_tokens,
                "--teacher": teacher,
                "--privileged": privileged,
                "--async": async_,
                "--off-policy-steps": off_policy_steps,
                "--correction": correction,
            }
        )
        cfg = sft_from_rows(
            from_=list(from_) if from_ else None,
            data=data,
            output=output,
            force=force,
            pass_threshold=pass_threshold,
            maps=list(maps or []),
            missing=missing,
            input_format=input_format,
            knobs=dict(
                model=model,
                gpus=gpus,
                steps=steps,
                batch_size=prompts,
                seq_len=seq_len,
                lr=lr,
                lora=lora,
                overrides=list(set_ or []),
            ),
        )
    else:
        if data is not None:
            raise UsageError("--data is the dataset of an SFT config (--method sft)")
        if from_:  # what the dumps were made with, unless the command line says otherwise
            from whilecli.emit.sidecars import dump_settings

            given = {"env": env, "max_tokens": max_tokens, "temperature": temperature}
            filled, dumped = dump_settings(list(from_)).fill(given)
            env, max_tokens, temperature = (filled[k] for k in given)
        cfg = prime_rl_config(
            method,
            model=model,
            env=env,
            gpus=gpus,
            steps=steps,
            prompts=prompts,
            group_size=group_size,
            lora=lora,
            lr=lr,
            temperature=temperature,
            max_tokens=max_tokens,
            seq_len=seq_len,
            teacher=teacher,
            privileged=privileged,
            async_=async_,
            off_policy_steps=off_policy_steps,
            correction=correction.lower() if correction else None,
            size_b=size_b,
            overrides=list(set_ or []),
            file="rl.toml" if to_stdout else os.fspath(output),
        )
    said = [f"routed from the rows: {routed_note}"] if routed_note else []
    said += [f"the rows: {line}" for line in found]
    cfg.warnings[:0] = [*said, *dumped]
    cfg.routed = said  # the verdict's qualifiers travel in the file too
    broken = getattr(cfg, "broken", [])
    if broken and not force:
        raise UsageError(f"not written: {broken[0]} (--force writes it all the same)")
    text = cfg.to_toml()
    write_outputs(
        cfg,
        None if to_stdout else output,
        text,
        force=force,
        inputs=list(from_ or []),
        stdout=to_stdout and fmt != "json",
    )
    if fmt == "json":
        print(jsonout.dumps(jsonout.versioned(cfg.to_dict()), indent=2, ensure_ascii=False))
        return
    if to_stdout:
        render_report(cfg, sys.stderr, wrote=None)
    else:
        render_report(cfg, sys.stdout, wrote=os.fspath(output))
