"""Method names → classes, imported lazily, and construction from the knobs a user gave.

Every method ``while update --method`` takes is declared once here, torch-free: its key, its
family (how ``--help`` groups it), the modules and class that implement it, and the CLI knobs
it takes. ``METHODS`` maps each token method to its class; a class is imported the first time
it is looked up, so naming one never imports the others (or torch, until a method module is
loaded). :func:`check_knobs` refuses a knob a method does not take before anything is
imported; :func:`make_method` then passes the class only the knobs its constructor takes.

Every token method meets the :class:`Method` protocol: what it requires of a batch, and
``update(batch, out=None) -> Update``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from whilecli.errors import UsageError
from whilecli.names import METHOD_LABELS, method_key

if TYPE_CHECKING:  # torch loads with the first method, not with the registry
    from whilecli.methods.batch import Batch, Update


@runtime_checkable
class Method(Protocol):
    """What every token method offers (FlashReinforce, SAO, BPCO, GRPO, ..., SFT).

    ``requires``: the :class:`~whilecli.methods.batch.Batch` fields it needs beyond the
    log-probs (``task_ids``, ``values``, ``ref_logprobs``, ...), read from its declaration
    ``needs`` (:class:`~whilecli.methods.validate.Needs`), which the runner checks a batch
    against once per optimizer batch. ``update`` returns the per-token
    coefficients; ``out``, a previous Update, is overwritten when its shapes match. Its knobs
    are its constructor's keyword arguments, declared in :mod:`whilecli.knobs`; its name is
    its key in :data:`SPECS`.
    """

    requires: frozenset[str]

    def update(self, batch: Batch, *, out: Update | None = None) -> Update: ...


@dataclass(frozen=True)
class MethodSpec:
    """One method as the CLI knows it before anything is imported."""

    key: str
    family: str
    modules: tuple[str, ...]
    cls_name: str
    knobs: tuple[str, ...]

    @property
    def label(self) -> str:
        return METHOD_LABELS.get(self.key, self.key)


_GROUPED = ("loss_type", "clip", "beta", "max_len", "truncated")

#: The families, in ``--help`` order, each with its panel title.
FAMILIES: dict[str, str] = {
    "single": "Single rollout: FlashReinforce, SAO, BPCO",
    "grouped": "Grouped: GRPO, MaxRL, RAE",
    "distill": "Distillation: OPD, OPSD",
    "pairs": "Pairs and SFT: DPO, SFT",
    "rowwise": "Rowwise: GroupwiseGrading, RM",
}

#: Every method, in display order. ``modules``: candidates under whilecli.methods, first wins.
SPECS: dict[str, MethodSpec] = {
    s.key: s
    for s in (
        MethodSpec("flash_reinforce", "single", ("flash_reinforce",), "FlashReinforce", ("trust",)),
        MethodSpec("sao", "single", ("sao",), "SAO", ("ratio", "gae_alpha")),
        MethodSpec("bpco", "single", ("bpco",), "BPCO", ("clip", "gae_alpha", "reward_range")),
        MethodSpec("grpo", "grouped", ("grpo",), "GRPO", _GROUPED),
        MethodSpec("max_rl", "grouped", ("grpo",), "MaxRL", _GROUPED),
        MethodSpec("rae", "grouped", ("grpo",), "RAE", ("decay", "agent_key", *_GROUPED)),
        MethodSpec("opd", "distill", ("distill",), "OPD", ()),
        MethodSpec("opsd", "distill", ("distill",), "OPSD", ()),
        MethodSpec("dpo", "pairs", ("dpo",), "DPO", ("beta", "pass_threshold")),
        MethodSpec("sft", "pairs", ("sft",), "SFT", ("pass_threshold",)),
        MethodSpec(
            "groupwise",
            "rowwise",
            ("groupwise",),
            "GroupwiseGrading",
            ("mode", "floor", "cap", "min_factor", "hack_zero", "pass_threshold"),
        ),
        MethodSpec("rm", "rowwise", ("reward_model",), "RewardModel", ("pass_threshold",)),
    )
}
#: The methods that work on graded rows (one number per rollout), not on tokens.
ROW_METHODS = tuple(k for k, s in SPECS.items() if s.family == "rowwise")
#: The methods that need no reward.
NO_REWARD = frozenset({"opd", "opsd"})
#: Knobs that act on the update as a whole (every token method takes them).
GLOBAL_KNOBS = ("compile",)
#: Knobs that act only under some settings of another knob, declared once: knob → (the other
#: knob, the settings it acts under, the other knob's default). Given under any other setting
#: it would change nothing, so it is refused (:func:`check_applies`), as a knob the method
#: does not take is.
APPLIES_ONLY_WHEN: dict[str, tuple[str, tuple[str, ...], str]] = {
    "max_len": ("loss_type", ("dr_grpo",), "grpo"),  # L_max of dr_grpo's 1/(L_max B)
}


def resolve(text: str) -> str:
    """The method key ``text`` names (``FlashReinforce``, ``flash-reinforce``, any case)."""
    key = method_key(text, SPECS)
    if key is None:
        raise UsageError(f"unknown method {text!r}; known: {', '.join(SPECS)}")
    return key


def flag(knob: str) -> str:
    """The CLI option of a knob: ``max_len`` → ``--max-len``."""
    return "--" + knob.replace("_", "-")


def check_knobs(name: str, given: Collection[str]) -> None:
    """Refuse a knob ``name`` does not take, naming both, before any method module loads."""
    spec = SPECS[resolve(name)]
    for knob in given:
        if knob not in spec.knobs and knob not in GLOBAL_KNOBS:
            takes = ", ".join(flag(k) for k in sorted(spec.knobs)) or "none"
            raise UsageError(f"{flag(knob)} does not apply to {spec.key} (it takes: {takes})")


def check_applies(name: str, given: Mapping[str, Any]) -> None:
    """Refuse a knob given where it does nothing (:data:`APPLIES_ONLY_WHEN`), naming both
    knobs and the settings it needs: ``--max-len`` without ``--loss-type dr_grpo``."""
    for knob, (other, settings, default) in APPLIES_ONLY_WHEN.items():
        if given.get(knob) is None:
            continue
        setting = given.get(other) or default
        if setting not in settings:
            now = f"{flag(other)} {setting}" if given.get(other) else f"{name}'s default {setting}"
            raise UsageError(
                f"{flag(knob)} applies only with {flag(other)} {' or '.join(settings)}: with "
                f"{now} it changes nothing"
            )


def _load(name: str) -> type | None:
    spec = SPECS[name]
    for module in spec.modules:
        try:
            mod = importlib.import_module(f"whilecli.methods.{module}")
        except ImportError as err:
            if err.name in ("torch", "numpy"):
                raise
            continue
        cls = getattr(mod, spec.cls_name, None)
        if isinstance(cls, type):
            return cls
    return None


class _LazyMethods(Mapping[str, type]):
    """A read-only ``{name: class}`` of the token methods that imports each on first access."""

    def __init__(self) -> None:
        self._cache: dict[str, type] = {}
        self._names = tuple(k for k in SPECS if k not in ROW_METHODS)

    def __getitem__(self, name: str) -> type:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._cache:
            cls = _load(name)
            if cls is None:
                raise KeyError(name)
            self._cache[name] = cls
        return self._cache[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._names


#: Every token method ``while update`` knows, in display order (``METHODS[name]`` → class).
METHODS: Mapping[str, type] = _LazyMethods()


def method_class(name: str) -> type:
    """The class behind ``name``; UsageError for an unknown or not yet available method."""
    key = resolve(name)
    if key in ROW_METHODS:
        raise UsageError(f"{key} works on graded rows, not tokens: it has no Method class")
    try:
        return METHODS[key]
    except KeyError:
        raise UsageError(f"method {key!r} is not available in this build") from None


def accepted_knobs(cls: type) -> set[str]:
    """The keyword arguments ``cls``'s constructor takes."""
    params = inspect.signature(cls).parameters
    return {
        p.name
        for p in params.values()
        if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def make_method(name: str, knobs: Mapping[str, Any]) -> Any:
    """Build method ``name`` from ``knobs`` (None values are skipped as not given).

    A knob the constructor does not take is refused: ``--beta does not apply to
    flash_reinforce``; ``compile=True`` for a method that cannot compile yet is refused with
    one line (``compile=False`` is dropped).
    """
    key = resolve(name)
    cls = method_class(key)
    given = {k: v for k, v in knobs.items() if v is not None}
    accepted = accepted_knobs(cls)
    wants_compile = given.pop("compile", False) if "compile" not in accepted else False
    if wants_compile:
        raise UsageError(f"--compile: {key} does not take compile yet; run it without --compile")
    for knob in given:
        if knob not in accepted:
            takes = ", ".join(flag(k) for k in sorted(accepted)) or "none"
            raise UsageError(f"{flag(knob)} does not apply to {key} (it takes: {takes})")
    try:
        return cls(**given)
    except (TypeError, ValueError) as err:
        raise UsageError(f"{key}: {err}") from None
