"""Knob validation shared by the single-rollout methods (reference-sdk section (e)).

Every refusal is a :class:`UsageError` naming the knob, its default and the value received.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from whilecli.errors import UsageError


def _refuse(knob: str, default: Any, value: Any, rule: str) -> UsageError:
    return UsageError(f"{knob} must be {rule} (default {default}); got {value!r}", knob=knob)


def number(knob: str, value: Any, default: Any, *, allow_inf: bool = False) -> float:
    """``value`` as a float; refuses bools, strings, NaN and (unless ``allow_inf``) infinities."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _refuse(knob, default, value, "a number")
    x = float(value)
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise _refuse(knob, default, value, "a finite number" if not allow_inf else "a number")
    return x


def positive(knob: str, value: Any, default: Any, *, allow_inf: bool = False) -> float:
    """A number > 0."""
    x = number(knob, value, default, allow_inf=allow_inf)
    if x <= 0:
        raise _refuse(knob, default, value, "> 0")
    return x


def pair(knob: str, value: Any, default: Any, *, allow_inf: bool = False) -> tuple[float, float]:
    """A pair of numbers ``(a, b)``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise _refuse(knob, default, value, "a pair of numbers")
    a = number(knob, value[0], default)
    b = number(knob, value[1], default, allow_inf=allow_inf)
    return a, b
