"""Checks on the knobs a user passes to ``whilecli config``, before any config is built."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from whilecli.emit import schema
from whilecli.emit.knobs import CORRECTIONS, DISTILL_METHODS
from whilecli.errors import UsageError

_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def parse_teacher(teacher: str) -> tuple[str, str]:
    """``NAME@URL`` → ``(name, base_url)``; a URL without a path gets ``/v1``."""
    idx = -1
    for scheme in ("@http://", "@https://"):
        idx = teacher.find(scheme)
        if idx >= 0:
            break
    if idx < 0:
        raise UsageError(
            f"--teacher takes NAME@URL (e.g. Qwen/Qwen3-32B@http://127.0.0.1:8001/v1), "
            f"got {teacher!r}"
        )
    name, url = teacher[:idx].strip(), teacher[idx + 1 :].strip()
    check_text(url, "--teacher", "a URL (e.g. http://127.0.0.1:8001/v1)")
    try:
        parts = urlsplit(url)
    except ValueError as err:  # an unclosed IPv6 bracket, ...
        raise UsageError(f"--teacher URL {url!r} is not a URL: {err}") from None
    from whilecli.io.modelid import check_model_option

    check_model_option(
        teacher[:idx], "the NAME of --teacher NAME@URL"
    )  # as given: a newline is no space
    if not parts.hostname:
        raise UsageError(f"--teacher takes NAME@URL with a host in the URL, got {teacher!r}")
    if schema.url_port(url) is None:
        raise UsageError(f"--teacher URL {url!r} has no valid port")
    if parts.path in ("", "/"):
        url = urlunsplit((parts.scheme, parts.netloc, "/v1", parts.query, parts.fragment))
    return name, url


def check_text(value: str, option: str, what: str, *, spaces: bool = False) -> None:
    """The one rule of every text option of ``config`` that lands in a TOML value (``--env``,
    the URL of ``--teacher``, ``--privileged``, ``--data``): one line of text, no control
    character (a newline, a tab, which a URL parser drops silently: ``a\nb`` would name host
    ``ab``), and no whitespace unless ``spaces`` (a local folder may hold a space; an id, a
    URL or a field name never does). ``what``: what the option takes, for the message."""
    bad = next((ch for ch in value if (ch.isspace() and not spaces) or not ch.isprintable()), None)
    if bad is not None:
        control = ord(bad) < 0x20 or 0x7F <= ord(bad) < 0xA0
        kind = (
            "a space"
            if bad == " "
            else f"{'a control' if control else 'a blank'} character (U+{ord(bad):04X})"
        )
        raise UsageError(f"{option} takes {what}, got {value!r}, which holds {kind}")


def check_env(env: str | None) -> None:
    """``--env``: a taskset id (``reverse-text``, a hub ``owner/name@version``), which prime-rl
    imports as a Python package (spec §6): never blank, never holding a space or a control
    character (no package is named so, and an empty id is a source prime-rl rejects)."""
    if env is None:
        return
    if not env.strip():
        raise UsageError("--env is empty; pass a taskset id (e.g. reverse-text)")
    check_text(env, "--env", "a taskset id (e.g. reverse-text or owner/name@version)")


#: The options of ``whilecli config`` that write one key, and that key: the option's range is
#: the key's (:attr:`whilecli.emit.schema.Key.range`), declared once, so ``--steps 0`` and
#: ``--set max_steps=0`` are refused alike.
OPTION_KEYS: dict[str, str] = {
    "--steps": "max_steps",
    "--seq-len": "seq_len",
    "--max-tokens": "orchestrator.train.sampling.max_completion_tokens",
    "--group-size": "orchestrator.group_size",
    "--lr": "trainer.optim.lr",
    "--temperature": "orchestrator.train.sampling.temperature",
    "--off-policy-steps": "orchestrator.max_off_policy_steps",
}
#: The same for an SFT config (``--method sft``): the options that write one key of sft.toml.
SFT_OPTION_KEYS: dict[str, str] = {
    "--steps": "max_steps",
    "--seq-len": "data.seq_len",
    "--prompts": "data.batch_size",
    "--lr": "optim.lr",
}


def refuse_option_and_set(
    given: Mapping[str, Any], keys: Mapping[str, str], overrides: Iterable[str]
) -> None:
    """Refuse an option given on the command line (``given``: option → value, only those
    typed) and a ``--set`` of the key it writes (``keys``) with another value: two values for
    one key, which no later one settles (``--steps 50 --set max_steps=7``). The same value
    twice passes."""
    from whilecli.emit.overrides import parse_override

    for item in overrides:
        key, value = parse_override(item)
        for option, key_of in keys.items():
            if key_of != key or option not in given:
                continue
            mine = given[option]
            same = (
                not isinstance(value, bool)
                and isinstance(value, (int, float))
                and float(value) == float(mine)
            )
            if not same:
                raise UsageError(
                    f"{option} {mine:g} and --set {key}={item.partition('=')[2].strip()} give "
                    f"{key} two values; give one"
                )


def option_range(name: str) -> schema.Range | None:
    """The range option ``name`` takes: its key's."""
    key = schema.lookup(OPTION_KEYS[name])
    return None if key is None else key.range


def _in_range(name: str, value: float | None, *, integer: bool = True) -> None:
    """Refuse ``value`` of option ``name`` outside its key's range (or not finite, or, for
    an integer option, not an integer)."""
    if value is None:
        return
    if not math.isfinite(value):
        raise UsageError(f"{name} must be a finite number, got {value}")
    if integer and (isinstance(value, bool) or int(value) != value):
        raise UsageError(f"{name} must be an integer, got {value}")
    bounds = option_range(name) if name in OPTION_KEYS else schema.ABOVE_0
    if bounds is not None and not bounds.contains(value):
        raise UsageError(f"{name} must be {bounds.text()}, got {value:g}")


def check_knobs(
    method: str,
    *,
    gpus: int,
    steps: int,
    prompts: int | None,
    group_size: int | None,
    lr: float | None,
    temperature: float | None,
    max_tokens: int | None,
    seq_len: int | None,
    teacher: str | None,
    privileged: str | None,
    async_: bool,
    off_policy_steps: int | None,
    correction: str | None,
) -> None:
    for name, value in (
        ("--steps", steps),
        ("--prompts", prompts),
        ("--group-size", group_size),
        ("--max-tokens", max_tokens),
        ("--seq-len", seq_len),
        ("--off-policy-steps", off_policy_steps),
    ):
        _in_range(name, value)
    _in_range("--lr", lr, integer=False)
    _in_range("--temperature", temperature, integer=False)
    if gpus < 2:
        raise UsageError(f"--gpus must be at least 2 (one for inference, one to train), got {gpus}")
    if gpus > schema.GPUS_PER_NODE:
        raise UsageError(
            f"--gpus {gpus} is more than one node ({schema.GPUS_PER_NODE}); a multi-node "
            "deployment needs [slurm], which whilecli config does not write"
        )
    if teacher is not None and method != "opd":
        raise UsageError(f"--teacher is opd's teacher; {method} has none")
    if method == "opd" and teacher is None:
        raise UsageError("opd needs --teacher NAME@URL (a frozen model served on its own port)")
    if teacher is not None:
        parse_teacher(teacher)
    if privileged is not None and method != "opsd":
        raise UsageError(f"--privileged is opsd's demo key; {method} has none")
    if privileged is not None:
        check_text(privileged, "--privileged", "a field of the taskset's rows (e.g. info.answer)")
    if privileged is not None and not _FIELD.fullmatch(privileged):
        raise UsageError(
            f"--privileged must name a field of the taskset's rows, got {privileged!r}"
        )
    if (off_policy_steps is not None or correction is not None) and not async_:
        raise UsageError("--off-policy-steps and --correction go with --async")
    if correction is not None and correction not in CORRECTIONS:
        raise UsageError(
            f"--correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}"
        )
    if correction is not None and method in DISTILL_METHODS:
        raise UsageError(
            f"--correction {correction} does not apply to {method}: prime-rl's {method} loss "
            "(ref_kl) ignores [trainer.loss], and its trust region is fixed in code (tokens whose "
            "probability dropped by more than 0.2 are masked)"
        )
