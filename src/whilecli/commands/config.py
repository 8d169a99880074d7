"""`while config`: a prime-rl RL config for a method, with what prime-rl reads, ignores and
refuses of its knobs.

The TOML goes to ``-o FILE`` (atomically, never over an existing file without ``--force``) or
to stdout (``-o -``, the default); the knob report goes to the other stream so a pipe carries
only the TOML. ``--format json`` prints config, TOML, report and command as one JSON object.
``--from ROWS`` routes the rows first (``while route``) and writes the routed method's config.
"""

from __future__ import annotations

import math
import os
import sys
from typing import Any, TextIO

import typer

from whilecli import jsonout
from whilecli.commands._common import user_errors
from whilecli.emit.prime_rl import PrimeRLConfig, prime_rl_config
from whilecli.errors import UsageError, WhileError
from whilecli.fileio import atomic_write_text, check_writable

#: What to run instead when the route picks a method prime-rl does not run here.
ELSEWHERE: dict[str, str] = {
    "sft": "SFT is not one of the RL methods while config writes: train it with an SFT trainer "
    "on the passing rows (or a stronger model's completions); to stay on-policy, distil from "
    "that model instead: `while config --method opd --teacher NAME@URL`",
    "groupwise": "GroupwiseGrading ranks the passes inside your own grouped trainer; prime-rl "
    "has no such algorithm; or harden the eval",
    "dpo": "DPO trains on pass/fail pairs offline, not with prime-rl's RL loop: use a DPO "
    "trainer, or `while update --method dpo` for the coefficients",
}
SINGLE = (
    "one rollout per prompt: FlashReinforce, SAO and BPCO run in your own trainer (`while "
    "update --method flash_reinforce|sao|bpco`); on prime-rl the option is `while config "
    "--method rae`; re-running the prompts at k >= 4 is usually the cheaper fix"
)


def _console(stream: TextIO) -> Any:
    from rich.console import Console

    width = None if stream.isatty() else 100
    return Console(file=stream, width=width, highlight=False, soft_wrap=False)


def _section(con: Any, title: str, items: list[tuple[str, str]], empty: str = "") -> None:
    from rich.table import Table
    from rich.text import Text

    con.print(Text(title, style="bold"))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for knob, note in items:
        line = Text(knob, style="bold") if knob else Text()
        if note:
            line.append((" → " if knob else "") + note)
        grid.add_row("  •", line)
    if not items and empty:
        grid.add_row("  ", Text(empty))
    with con.capture() as cap:
        con.print(grid)
    con.file.write("".join(line.rstrip() + "\n" for line in cap.get().splitlines()))


def render_report(cfg: PrimeRLConfig, stream: TextIO, *, wrote: str | None) -> None:
    """Print the three lists (reads, ignores, warnings) and the launch command."""
    from rich.text import Text

    con = _console(stream)
    if wrote:
        con.print(Text(f"wrote {wrote} ({cfg.method})"))
    _section(con, f"prime-rl reads ({cfg.method})", [(n.knob, n.note) for n in cfg.reads])
    ignores = [(n.knob, n.note) for n in cfg.ignored]
    ignores += [(f"refused if asked: {n.knob}", n.note) for n in cfg.refused]
    _section(con, "prime-rl ignores", ignores, "(nothing)")
    _section(con, "warnings", [("", w) for w in cfg.warnings], "(none)")
    con.print(Text(f"run: {cfg.command}"))


def _routed_method(
    paths: list[str],
    *,
    model: str | None,
    pass_threshold: float | None,
    maps: list[str],
    size_b: float | None,
) -> tuple[str, str | None, str]:
    """Route ``paths``; return ``(method, privileged, why)`` or explain why no config fits."""
    import whilecli.route as route_pkg

    mapping = route_pkg.parse_map(maps) if maps else None
    route = route_pkg.run_route(
        paths, mapping=mapping, pass_threshold=pass_threshold, model=model, size_b=size_b
    )
    method = route.method
    why = f"route {route.route}: {route.why}"
    if route.route == "single-rollout" or method in ("flash_reinforce", "sao", "bpco"):
        raise WhileError(f"no config written ({why}): {SINGLE}", exit_code=1)
    if method is None or route.route == "fix-reward":
        raise WhileError(f"no config written: nothing can train yet ({why})", exit_code=1)
    if method in ELSEWHERE:
        raise WhileError(f"no config written ({why}): {ELSEWHERE[method]}", exit_code=1)
    if method not in ("grpo", "max_rl", "rae", "opd", "opsd"):
        raise WhileError(f"no config written ({why}): prime-rl does not run {method}", exit_code=1)
    return method, ("reference" if method == "opsd" else None), why


@user_errors
def config_command(
    method: str | None = typer.Option(
        None,
        "--method",
        help="grpo | max_rl | rae | opd | opsd (flash_reinforce, sao, bpco: refused).",
    ),
    model: str | None = typer.Option(None, "--model", help="Model to train (also the route's)."),
    env: str | None = typer.Option(None, "--env", help="Taskset id of the train source."),
    gpus: int = typer.Option(2, "--gpus", help="GPUs on the node: half infer, the rest train."),
    steps: int = typer.Option(100, "--steps", help="Optimizer steps (max_steps)."),
    prompts: int | None = typer.Option(None, "--prompts", help="Prompts per step."),
    group_size: int | None = typer.Option(None, "--group-size", help="Rollouts per prompt."),
    lora: bool = typer.Option(True, "--lora/--full", help="LoRA (rank 16, alpha 32) or full."),
    lr: float | None = typer.Option(None, "--lr", help="Learning rate."),
    temperature: float | None = typer.Option(None, "--temperature", help="Sampling temperature."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Completion token cap."),
    seq_len: int | None = typer.Option(None, "--seq-len", help="Sequence length."),
    teacher: str | None = typer.Option(None, "--teacher", help="opd teacher as NAME@URL."),
    privileged: str | None = typer.Option(
        None, "--privileged", help="opsd: reference|demonstration|hint|feedback|FIELD."
    ),
    async_: bool = typer.Option(False, "--async", help="Train on rollouts up to N steps stale."),
    off_policy_steps: int | None = typer.Option(
        None, "--off-policy-steps", help="With --async: orchestrator.max_off_policy_steps (8)."
    ),
    correction: str | None = typer.Option(
        None, "--correction", help="With --async: ipo (default) | icepop | tis."
    ),
    set_: list[str] | None = typer.Option(
        None, "--set", help="dotted.key=value (TOML value); repeatable."
    ),
    output: str = typer.Option("-", "-o", "--output", help="Output file, or - for stdout."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing output file."),
    fmt: str = typer.Option("text", "--format", help="text | json."),
    from_: list[str] | None = typer.Option(
        None, "--from", help="Graded rows: route them first, then write the routed method."
    ),
    pass_threshold: float | None = typer.Option(
        None, "--pass-threshold", help="With --from: reward >= this passes."
    ),
    maps: list[str] | None = typer.Option(
        None, "--map", help="With --from: field=column (repeatable)."
    ),
    size_b: float | None = typer.Option(
        None, "--size-b", help="Model size in billions (route's floor rule, OPSD's warning)."
    ),
) -> None:
    """Write a prime-rl RL config (TOML) and say what prime-rl reads, ignores and refuses."""
    if fmt not in ("text", "json"):
        raise UsageError(f"--format must be text or json, got {fmt!r}")
    if size_b is not None and not (math.isfinite(size_b) and size_b > 0):
        raise UsageError(f"--size-b must be a positive number of billions, got {size_b}")
    to_stdout = output == "-"
    if not to_stdout:  # before routing: a long read is not lost to a bad -o
        check_writable(output, force=force)
    routed_note = None
    if from_:
        if method is not None:
            raise UsageError("pass --method or --from ROWS, not both")
        method, routed_priv, routed_note = _routed_method(
            list(from_),
            model=model,
            pass_threshold=pass_threshold,
            maps=list(maps or []),
            size_b=size_b,
        )
        privileged = privileged or routed_priv
    elif pass_threshold is not None or maps:
        raise UsageError("--pass-threshold and --map are reading options of --from ROWS")
    if method is None:
        raise UsageError("pass --method grpo|max_rl|rae|opd|opsd, or --from ROWS")
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
        correction=correction,
        size_b=size_b,
        overrides=list(set_ or []),
        file="rl.toml" if to_stdout else os.fspath(output),
    )
    if routed_note:
        cfg.warnings.insert(0, f"routed from the rows: {routed_note}")
    text = cfg.to_toml()
    if not to_stdout:
        atomic_write_text(output, text, force=force)
    if fmt == "json":
        print(jsonout.dumps(cfg.to_dict(), indent=2, ensure_ascii=False))
        return
    if to_stdout:
        sys.stdout.write(text)
        sys.stdout.flush()
        render_report(cfg, sys.stderr, wrote=None)
    else:
        render_report(cfg, sys.stdout, wrote=os.fspath(output))
