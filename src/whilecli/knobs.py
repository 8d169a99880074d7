"""Every numeric knob of the methods and corrections, declared once: default, range, source, doc.

``while update`` (the method constructors and the corrections), ``while config`` (the
``Settings`` defaults and the whole-config checks) and the prime-rl losses read these
declarations, so a default or a range is written in one place and every command refuses the
same out-of-range value with the same range text. The style is prime-rl's config fields
(``decay: float = Field(0.95, ge=0.0, lt=1.0)`` with the docstring beneath), without pydantic:
a :class:`Knob` is a frozen dataclass, and :meth:`Knob.check` raises a one-line
:class:`~whilecli.errors.UsageError` that names the flag.

This module imports nothing heavy (no torch, no polars): the CLI checks a knob before it loads
a method.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from whilecli.errors import UsageError


def _show(x: float) -> str:
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:g}"


@dataclass(frozen=True)
class Knob:
    """One numeric knob: ``low ≤ value ≤ high`` (``<`` at an open end), a default and a doc.

    ``low``/``high`` of ``±inf`` mean unbounded on that side; an infinite ``high`` with
    ``high_open=False`` admits ∞ itself (FlashReinforce's trust of ∞ turns the gate off).
    ``source`` says where the default comes from; ``flag`` is the CLI option that sets it.
    """

    name: str
    default: float
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = True
    source: str = ""
    doc: str = ""
    flag: str = ""

    @property
    def option(self) -> str:
        """The CLI flag (``--decay``), derived from the name unless given."""
        return self.flag or "--" + self.name.replace("_", "-")

    def range_text(self) -> str:
        """``in [0, 1)``, ``> 0``, ``≥ 1``: the range as every refusal prints it."""
        lo_inf, hi_inf = math.isinf(self.low), math.isinf(self.high)
        if lo_inf and hi_inf:
            return "a finite number" if self.high_open else "a number"
        if hi_inf and self.high_open:
            return f"{'>' if self.low_open else '≥'} {_show(self.low)}"
        if lo_inf:
            return f"{'<' if self.high_open else '≤'} {_show(self.high)}"
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        return f"in {left}{_show(self.low)}, {_show(self.high)}{right}"

    def contains(self, x: float) -> bool:
        """Whether the number ``x`` lies in the range (NaN never does)."""
        if math.isnan(x):
            return False
        above = x > self.low if self.low_open else x >= self.low
        below = x < self.high if self.high_open else x <= self.high
        if math.isinf(x) and x > 0 and math.isinf(self.high):
            below = not self.high_open
        return above and below

    def check(self, value: Any, name: str | None = None) -> float:
        """``value`` as a float in range, else a UsageError naming ``name`` (default the flag).

        ``--decay must be in [0, 1) (default 0.95), got 1.0``. Bools and strings are refused.
        """
        label = name or self.option
        bad = isinstance(value, bool) or not isinstance(value, (int, float))
        x = math.nan if bad else float(value)
        if not self.contains(x):
            raise UsageError(
                f"{label} must be {self.range_text()} (default {self.default:g}), got {value!r}",
                knob=name,
            )
        return x

    def check_fits(self, value: float, dtype: str, name: str | None = None) -> float:
        """``value`` when the tensors' ``dtype`` (``float32``, ``float64``) holds it, else a
        UsageError naming ``name`` (default the flag): a finite knob beyond the dtype's largest
        number turns into ∞ in every product it enters (``--beta 1e39`` under float32), which
        no range of the knob's own says. A knob that admits ∞ (a gate or cap turned off) is
        what ∞ means there, and is left as it is."""
        largest = FLOAT_MAX[dtype]
        admits_inf = math.isinf(self.high) and not self.high_open
        if math.isfinite(value) and abs(value) > largest and not admits_inf:
            label = name or self.option
            raise UsageError(
                f"{label} {value:g} is beyond {dtype}'s largest number ({largest:.4g}), so every "
                f"term it multiplies overflows: give a smaller {label} or --dtype float64",
                knob=name,
            )
        return value


#: The largest finite number of each tensor dtype an update may run in.
FLOAT_MAX = {"float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}
#: The log of it: the largest log-ratio whose exp is finite in that dtype (88.7, 709.8).
LOG_FLOAT_MAX = {name: math.log(x) for name, x in FLOAT_MAX.items()}


# ---------------------------------------------------------------- single-rollout methods

#: Rounding forgiven at a pass threshold: a row passes at reward ≥ threshold − 2⁻²² (about
#: 2.4e-7), in every command and method that passes rows (DESIGN section 1: a rubric sum of
#: 0.9999999999999999 is a pass). The tolerance is float32's, two units in the last place at
#: 1: rewards summed in float32 (torch's default dtype: a reward tensor's ``tolist()``)
#: land at 0.9999999403953552 or 1.0000001 for a sum of 1, and float64's 1e-9 would fail
#: them. No grade means anything finer.
PASS_TOLERANCE = 2.0**-22

TRUST = Knob(
    "trust",
    0.003,
    low=0.0,
    low_open=True,
    high_open=False,
    source="reference SDK §(e), FlashReinforce",
    doc="FlashReinforce's KL gate: a trajectory whose mean Bernoulli KL exceeds it is dropped "
    "(∞ turns the gate off).",
)
SAO_LOW = Knob(
    "sao_low",
    0.7,
    low=0.0,
    high=1.0,
    low_open=True,
    source="SAO (Hou et al. 2026), Eq. 2-3",
    doc="Lower edge of SAO's open ratio band (1 − ε_low).",
    flag="--ratio",
)
SAO_HIGH = Knob(
    "sao_high",
    6.0,
    low=1.0,
    low_open=True,
    high_open=False,
    source="SAO (Hou et al. 2026), Eq. 2-3",
    doc="Upper edge of SAO's open ratio band (1 + ε_high); ∞ removes it.",
    flag="--ratio",
)
SAO_GAE_ALPHA = Knob(
    "gae_alpha",
    1.5,
    low=0.0,
    low_open=True,
    source="SAO, λ = max(0, 1 − 1/(α L))",
    doc="SAO's α in the GAE λ = max(0, 1 − 1/(α L)).",
)
BPCO_CLIP = Knob(
    "clip",
    0.2,
    low=0.0,
    high=1.0,
    low_open=True,
    high_open=False,
    source="BPCO, reference SDK §(e)",
    doc="BPCO's ε: the clip half-width is ε/μ_t.",
)
BPCO_GAE_ALPHA = Knob(
    "gae_alpha",
    0.4,
    low=0.0,
    low_open=True,
    source="BPCO, reference SDK §(e)",
    doc="BPCO's α in the GAE λ = max(0, 1 − 1/(α L)).",
)

# ---------------------------------------------------------------- grouped methods

CLIP = Knob(
    "clip",
    0.2,
    low=0.0,
    high=1.0,
    low_open=True,
    high_open=False,
    source="PPO / GRPO (Shao et al. 2024)",
    doc="ε of the clipped surrogate of grpo, max_rl and rae.",
)
BETA = Knob(
    "beta",
    0.0,
    low=0.0,
    source="GRPO (Shao et al. 2024), k3 estimator",
    doc="Weight of the KL to the reference policy (grpo, max_rl, rae); needs ref_logprobs.",
)
DECAY = Knob(
    "decay",
    0.95,
    low=0.0,
    high=1.0,
    source="prime-rl orchestrator.algo.decay (Field(0.95, ge=0.0, lt=1.0)); SPIRAL",
    doc="rae's baseline decay: b ← d·b + (1 − d)·R after each row of an agent.",
)

# ---------------------------------------------------------------- pairs and SFT

DPO_BETA = Knob(
    "beta",
    0.1,
    low=0.0,
    low_open=True,
    source="DPO (Rafailov et al. 2023)",
    doc="DPO's β: the sharpness of the preference sigmoid.",
)

# ---------------------------------------------------------------- staleness corrections

IPO_EPS = Knob(
    "ipo_eps",
    0.3,
    low=0.0,
    high=1.0,
    low_open=True,
    high_open=False,
    source="Async (Yao et al. 2025); prime-rl's own ipo_threshold default is 0.1",
    doc="ipo keeps a token when |π − μ| ≤ ε.",
)
ICEPOP_LOW = Knob(
    "icepop_low",
    0.5,
    low=0.0,
    high=1.0,
    low_open=True,
    high_open=False,
    source="IcePop (Ring-1T, arXiv:2510.18855)",
    doc="icepop keeps a token when low ≤ ρ ≤ high: the band's lower edge.",
)
ICEPOP_HIGH = Knob(
    "icepop_high",
    5.0,
    low=1.0,
    source="IcePop (Ring-1T, arXiv:2510.18855)",
    doc="icepop keeps a token when low ≤ ρ ≤ high: the band's upper edge.",
)
TIS_CAP = Knob(
    "tis_cap",
    2.0,
    low=1.0,
    source="truncated importance sampling, as in verl",
    doc="tis replaces the method's ratio treatment by the truncated weight min(ρ, cap): "
    "grpo, max_rl, rae A·min(ρ, cap) with no clip; sao, bpco the same in place of band or "
    "clip; flash_reinforce c·min(ρ, cap)/ρ; the others c·min(ρ, cap).",
)

# ---------------------------------------------------------------- row-wise methods

GRS_FLOOR = Knob(
    "floor",
    0.0,
    low=0.0,
    high=1.0,
    source="reference SDK, GroupwiseGrading",
    doc="GRS: the lowest factor a grader score maps to (max(floor, score)).",
)
GAR_CAP = Knob(
    "cap",
    3.0,
    low=1.0,
    high_open=False,
    source="reference SDK, GroupwiseGrading",
    doc="GAR: the largest rescale λ of a group's advantages (∞: no cap).",
)
GAR_MIN_FACTOR = Knob(
    "min_factor",
    0.5,
    low=0.0,
    high=1.0,
    low_open=True,
    high_open=False,
    source="reference SDK, GroupwiseGrading",
    doc="GAR: the factor of the lowest-ranked pass; the best-ranked gets 1.",
    flag="--min-factor",
)

#: icepop's default band ``(low, high)``.
ICEPOP_BAND: tuple[float, float] = (ICEPOP_LOW.default, ICEPOP_HIGH.default)
#: SAO's default ratio band ``(low, high)``.
SAO_RATIO: tuple[float, float] = (SAO_LOW.default, SAO_HIGH.default)


#: The staleness corrections, applied last to any method's coefficients.
CORRECTIONS = ("ipo", "icepop", "tis")
#: Each correction's knobs: CLI knob name → declaration.
CORRECTION_KNOBS: dict[str, dict[str, Knob]] = {
    "ipo": {"ipo_eps": IPO_EPS},
    "icepop": {"icepop_band": ICEPOP_LOW},  # a pair: see check_band
    "tis": {"tis_cap": TIS_CAP},
}
_GROUPED = {"clip": CLIP, "beta": BETA}
#: Each method's declared numeric knobs: method → {constructor keyword → declaration}.
METHOD_KNOBS: dict[str, dict[str, Knob]] = {
    "flash_reinforce": {"trust": TRUST},
    "sao": {"gae_alpha": SAO_GAE_ALPHA},
    "bpco": {"clip": BPCO_CLIP, "gae_alpha": BPCO_GAE_ALPHA},
    "grpo": _GROUPED,
    "max_rl": _GROUPED,
    "rae": {**_GROUPED, "decay": DECAY},
    "dpo": {"beta": DPO_BETA},
}


def check_band(value: Any, name: str = "band") -> tuple[float, float]:
    """icepop's ``(low, high)``, each checked against its declaration."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise UsageError(
            f"{name} must be a pair low, high with low {ICEPOP_LOW.range_text()} and high "
            f"{ICEPOP_HIGH.range_text()} (default {ICEPOP_BAND}), got {value!r}"
        )
    return ICEPOP_LOW.check(value[0], f"{name} low"), ICEPOP_HIGH.check(value[1], f"{name} high")


def all_knobs() -> Iterator[Knob]:
    """Every declaration in this module, in order."""
    for value in globals().values():
        if isinstance(value, Knob):
            yield value
