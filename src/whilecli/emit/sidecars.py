"""What an eval dump's sidecar says about the run that wrote it, for ``whilecli config --from``.

vf-eval writes ``metadata.json`` beside ``results.jsonl``: the environment (``env_id``; ``env``
in the 2025 layout) and the sampling (``sampling_args``: ``max_tokens``, ``temperature``).
Prime RFT's ``metadata.json`` holds the run (``run.environments``, ``run.max_tokens``). A value
given on the command line wins; a value the dumps disagree on is left out, with a warning.
"""

from __future__ import annotations

import glob
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whilecli import jsonout

SIDECAR = "metadata.json"


@dataclass
class DumpSettings:
    """The config knobs the dumps' sidecars name (a knob they name differently is left out)."""

    #: knob (``env``, ``max_tokens``, ``temperature``) → (value, ``file: key`` it came from)
    named: dict[str, tuple[Any, str]] = field(default_factory=dict)
    #: Knobs the dumps disagree on, as a warning each.
    disagree: list[str] = field(default_factory=list)

    def fill(self, given: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """``given`` (knob → the command line's value or None) with the dumps' values where
        the command line gave none, and a line for each value taken or left out."""
        out = dict(given)
        lines = []
        for knob, (value, where) in self.named.items():
            if out.get(knob) is None:
                out[knob] = value
                lines.append(f"from the dumps: {FLAGS[knob]} {value} ({where})")
        return out, lines + self.disagree


def sidecar_files(paths: Sequence[str]) -> list[Path]:
    """The ``metadata.json`` beside each input (a file's folder; a folder and its children)."""
    seen: dict[Path, None] = {}
    for raw in paths:
        if raw == "-":
            continue
        path = Path(raw)
        named = [path] if path.exists() else [Path(p) for p in sorted(glob.glob(raw))]
        for item in named:
            folders = [item, *sorted(item.iterdir())] if item.is_dir() else [item.parent]
            for folder in folders:
                candidate = folder / SIDECAR
                if candidate.is_file():
                    seen.setdefault(candidate, None)
    return list(seen)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as fh:
            data = jsonout.loads(fh.read(), lenient=True)
    except OSError:
        return None
    return data if isinstance(data, dict) else None


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value < 1 or value != int(value):
        return None
    return int(value)


def _temperature(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _values(meta: dict[str, Any]) -> Iterator[tuple[str, Any, str]]:
    """(knob, value, key) for every knob this sidecar names."""
    for key in ("env_id", "env"):
        if isinstance(meta.get(key), str) and meta[key].strip():
            yield "env", meta[key].strip(), key
            break
    sampling = meta.get("sampling_args")
    if isinstance(sampling, dict):
        for key in ("max_tokens", "max_completion_tokens"):
            tokens = _positive_int(sampling.get(key))
            if tokens is not None:
                yield "max_tokens", tokens, f"sampling_args.{key}"
                break
        temperature = _temperature(sampling.get("temperature"))
        if temperature is not None:
            yield "temperature", temperature, "sampling_args.temperature"
    run = meta.get("run")
    if isinstance(run, dict):
        envs = run.get("environments")
        if isinstance(envs, list) and len(envs) == 1 and isinstance(envs[0], dict):
            env_id, version = envs[0].get("id"), envs[0].get("version")
            if isinstance(env_id, str) and env_id.strip():
                at = f"@{version}" if isinstance(version, str) and version else ""
                yield "env", f"{env_id.strip()}{at}", "run.environments[0].id"
        tokens = _positive_int(run.get("max_tokens"))
        if tokens is not None:
            yield "max_tokens", tokens, "run.max_tokens"
        temperature = _temperature(run.get("temperature"))
        if temperature is not None:
            yield "temperature", temperature, "run.temperature"


#: How the report names each knob: the command-line option it stands for.
FLAGS = {"env": "--env", "max_tokens": "--max-tokens", "temperature": "--temperature"}


def dump_settings(paths: Sequence[str]) -> DumpSettings:
    """The environment and sampling the dumps at ``paths`` were made with, from their
    sidecars; a knob two dumps name differently is left out and said."""
    named: dict[str, dict[Any, str]] = {}
    for path in sidecar_files(paths):
        meta = _read(path)
        if meta is None:
            continue
        for knob, value, key in _values(meta):
            named.setdefault(knob, {}).setdefault(value, f"{SIDECAR}: {key}")
    out = DumpSettings()
    for knob, values in named.items():
        if len(values) == 1:
            out.named[knob] = next(iter(values.items()))
            continue
        listed = ", ".join(repr(v) for v in values)
        out.disagree.append(
            f"the dumps' {SIDECAR} files name different values for {FLAGS[knob]} ({listed}): "
            f"none is written; pass {FLAGS[knob]}"
        )
    return out
