"""JSON that every JSON reader takes: no ``NaN``, ``Infinity`` or ``-Infinity``.

Python's ``json.dumps`` writes those three by default, and they are not JSON (RFC 8259):
``jq``, JavaScript's ``JSON.parse`` and most other readers refuse them. Every JSON whilecli
prints or writes goes through :func:`dumps`, which writes a non-finite number as ``null``.
``null`` in a number field means "no finite value": a knob set to infinity (``update
--trust inf``: no gate), or a statistic that has no value on these rows (a variance over
one row, a ratio over zero).
"""

from __future__ import annotations

import json
import math
from typing import Any

#: The version of every JSON report's schema (``docs/json-schema.md``): each report carries it
#: as ``schema_version``, which changes when a key is renamed or removed.
SCHEMA_VERSION = 1


def versioned(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with ``schema_version`` first."""
    return {"schema_version": SCHEMA_VERSION, **report}


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (in dicts, lists and tuples too) as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of :func:`finite` ``(value)``, refusing any NaN or infinity left."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)
