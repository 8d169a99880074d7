"""The config ``whilecli config --from ROWS`` writes: route the rows, then the routed method's
prime-rl config; for SFT, the dataset of the passing rows beside the TOML.

Every route prime-rl can train gets its config (DESIGN section 4): single-rollout → ``rae``,
an SFT verdict → prime-rl's SFT config and its data; ``fix-reward``, ``groupwise`` and
``dpo`` write nothing and say why (a :class:`~whilecli.errors.WhileError` with exit 1).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from whilecli.emit.knobs import METHODS
from whilecli.emit.prime_rl import UNSUPPORTED
from whilecli.emit.sft import PrimeSFTConfig, sft_config
from whilecli.errors import UsageError, WhileError
from whilecli.names import METHOD_LABELS

#: What to run instead when the route picks a method prime-rl does not run here.
ELSEWHERE: dict[str, str] = {
    "groupwise": "GroupwiseGrading ranks the passes inside your own grouped trainer; prime-rl "
    "has no such algorithm; or harden the eval",
    "dpo": "DPO trains on pass/fail pairs offline, not with prime-rl's RL loop: use a DPO "
    "trainer, or `whilecli update --method dpo` for the coefficients",
}
SINGLE = (
    "prime-rl's rae is written (its baseline stands at one rollout per prompt); {first} runs "
    "in your own trainer (`whilecli update --method {key}`)"
)
#: The methods a prime-rl config exists for.
CONFIG_METHODS = (*METHODS, "sft")


@dataclass(frozen=True)
class Routed:
    """What ``config --from`` takes from the route: the method and its qualifiers."""

    method: str
    privileged: str | None
    why: str  # "route R: why", "provisional: ..." first when the verdict is
    async_: bool = False  # the plan wraps the method in Async (another copy wrote rows)
    provisional: bool = False
    #: What reading found that moves the verdict (the route's data-quality findings).
    data_quality: tuple[str, ...] = ()


def verdict_words(route: Any) -> str:
    """The verdict as ``config --from`` says it: the route's headline (``provisional:``
    first, and every check it names as unknown), why it is provisional, and why it routes
    where it does, as the route's own report words them."""
    from whilecli.route.report import verdict

    parts = [verdict(route)]
    if route.provisional and route.provisional_why:
        parts.append(route.provisional_why.removeprefix("provisional: ").rstrip("."))
    return "; ".join([*parts, f"route {route.route}: {route.why}"])


def routed_method(
    paths: list[str],
    *,
    model: str | None,
    pass_threshold: float | None,
    maps: list[str],
    size_b: float | None,
    missing: str = "skip",
    input_format: str | None = None,
) -> Routed:
    """Route ``paths``; return the routed method with the verdict's qualifiers, or explain
    why no config fits.

    Every route prime-rl can train gets its config: single-rollout (and rows that repeat one
    draw per task) → ``rae``, an SFT verdict (another model's rows; a floor under 7B) →
    ``sft``; ``fix-reward``, ``groupwise`` and ``dpo`` write nothing and say why (exit 1,
    DESIGN section 2). The qualifiers travel: a provisional verdict says so first (with
    why), and a plan that wraps the method in Async turns ``--async`` on. ``no-split``
    writes what its plan puts first, provisional, and names the rest of the plan.
    """
    import whilecli.route as route_pkg
    from whilecli.route.checks import sampler_copy

    mapping = route_pkg.parse_map(maps) if maps else None
    route = route_pkg.run_route(
        paths,
        mapping=mapping,
        pass_threshold=pass_threshold,
        missing=missing,
        input_format=input_format,
        model=model,
        size_b=size_b,
    )
    assert isinstance(route, route_pkg.Route)  # no ``by``: one route
    method = route.method
    why = verdict_words(route)
    found = tuple(f"{f.found}: {f.moves}" for f in route.data_quality)
    if len(route.plan) > 1:
        why += f"; the plan, in order: {', '.join(route.plan)}"
    if method is None or route.route == "fix-reward":
        raise WhileError(f"no config written: nothing can train yet ({why})", exit_code=1)
    wrap = "async" in route.plan and route.route != "off-policy"
    if wrap:
        policy = next(c for c in route.checks if c.key == "on_policy")
        why += (
            f"; {sampler_copy(policy)} wrote rows: --async with a correction (ipo unless"
            " --correction)"
        )
    if route.route in ("single-rollout", "repeated-draws") or method in UNSUPPORTED:
        first = method if method in UNSUPPORTED else "flash_reinforce"
        label = METHOD_LABELS[first]
        why = f"{why}; {SINGLE.format(first=label, key=first)}"
        return Routed("rae", None, why, wrap, route.provisional, found)
    if method in ELSEWHERE:
        raise WhileError(f"no config written ({why}): {ELSEWHERE[method]}", exit_code=1)
    if method not in CONFIG_METHODS:
        raise WhileError(f"no config written ({why}): prime-rl does not run {method}", exit_code=1)
    privileged = "reference" if method == "opsd" else None
    return Routed(method, privileged, why, wrap and method != "sft", route.provisional, found)


def sft_from_rows(
    *,
    from_: list[str] | None,
    data: str | None,
    output: str,
    force: bool,
    pass_threshold: float | None,
    maps: list[str],
    knobs: dict[str, Any],
    missing: str = "skip",
    input_format: str | None = None,
) -> PrimeSFTConfig:
    """The SFT config; with rows, the dataset of their passes is checked writable and built
    (written with the TOML that names it, :func:`whilecli.emit.sft_data.write_outputs`)."""
    from pathlib import Path

    from whilecli.emit import sft_data

    toml = None if output == "-" else output
    file = toml or "sft.toml"
    if data is not None and not data.strip():
        raise UsageError("--data is empty")
    if data is not None:
        from whilecli.emit.inputs import check_text

        folder_given = bool(from_) or Path(data).is_dir()
        check_text(
            data,
            "--data",
            "a dataset folder" if folder_given else "a dataset (a Hub id or a local folder)",
            spaces=folder_given,
        )
    if not from_:
        name = data
        if data is not None and Path(data).is_dir():
            name = sft_data.dataset_name(Path(data))
        return sft_config(dataset=name, file=file, **knobs)
    folder = sft_data.dataset_folder(toml, data)
    if toml is not None:
        sft_data.check_apart(Path(toml), folder)
    sft_data.check_dataset_writable(folder, force=force, inputs=from_)  # before the read
    import whilecli.route as route_pkg

    rows = sft_data.build_sft_data(
        from_,
        mapping=route_pkg.parse_map(maps) if maps else None,
        pass_threshold=pass_threshold,
        missing=missing,
        input_format=input_format,
    )
    target = folder / sft_data.DATA_FILE
    cfg = sft_config(
        data=rows,
        dataset=sft_data.dataset_name(folder),
        data_path=os.fspath(target),
        file=file,
        **knobs,
    )
    return cfg  # the dataset is written with the TOML (:func:`sft_data.write_outputs`)
