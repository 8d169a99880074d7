"""``whilecli watch RUN_DIR``: route a training run while it runs.

Thin: the options are generated from :class:`whilecli.watch.options.WatchOptions` (each
field's flag, help and panel are declared there, once), the reading options are the route's
declarations, and the command calls :func:`whilecli.watch.watch_run` and exits with its code.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import typer

from whilecli.commands import route as route_cmd
from whilecli.commands._common import existing_paths, option, user_errors
from whilecli.declare import declared
from whilecli.errors import UsageError, shown_path
from whilecli.watch.options import WatchOptions

RUN_DIR = typer.Argument(
    ...,
    metavar="RUN_DIR",
    help="The run's output directory: prime-rl's {output_dir}/{run.name}, or verl's"
    " trainer.rollout_data_dir.",
    callback=existing_paths,
    rich_help_panel="Inputs",
)

#: The command line type of each option field (a repeatable option is a list).
_CLI_TYPES: dict[str, Any] = {
    "bool": bool,
    "float": float,
    "float | None": float | None,
    "int": int,
    "str": str,
    "tuple[str, ...]": list[str] | None,
}


def _parameters() -> tuple[list[inspect.Parameter], dict[str, Any]]:
    """The command's parameters: RUN_DIR, one option per declared field, the reading options."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("run_dir", keyword, default=RUN_DIR, annotation=str)]
    for name, spec in declared(WatchOptions).items():
        kind = _CLI_TYPES[str(spec.type)]
        generated = option(WatchOptions, name)
        params.append(inspect.Parameter(name, keyword, default=generated, annotation=kind))
    params.append(
        inspect.Parameter(
            "pass_threshold", keyword, default=route_cmd.PASS_THRESHOLD, annotation=float | None
        )
    )
    params.append(
        inspect.Parameter(
            "mapping", keyword, default=route_cmd.MAPPING, annotation=list[str] | None
        )
    )
    params.append(inspect.Parameter("missing", keyword, default=route_cmd.MISSING, annotation=str))
    return params, {p.name: p.annotation for p in params}


@user_errors
def watch_command(**given: Any) -> None:
    """Route a training run while it runs: the rates of each finished step, alerts naming the
    method the route would now pick."""
    run_dir = given.pop("run_dir")
    pass_threshold = given.pop("pass_threshold")
    mapping = given.pop("mapping") or []
    missing = given.pop("missing")
    given["fail_on"] = tuple(given.get("fail_on") or ())
    for name in ("layout", "split", "format"):
        given[name] = str(given[name]).lower()
    options = WatchOptions(**given)  # checked before polars loads
    if not os.path.isdir(run_dir):
        raise UsageError(
            f"{shown_path(run_dir)}: not a directory (give the run's output directory)"
        )
    from whilecli.io.read import parse_map
    from whilecli.watch.run import watch_run

    code = watch_run(
        run_dir,
        options,
        mapping=parse_map(mapping),
        pass_threshold=pass_threshold,
        missing=missing,
    )
    raise typer.Exit(code)


_params, _annotations = _parameters()
watch_command.__signature__ = inspect.Signature(_params)  # type: ignore[attr-defined]
watch_command.__annotations__ = {**_annotations, "return": None}
