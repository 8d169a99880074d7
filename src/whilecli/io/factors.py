"""Columns that may name a condition a harness varies between a task's draws under a name no
field lists: a checkpoint, a sampler, a temperature, a prompt template, a system prompt
(DESIGN section 1, "rows counted before they are looked at").

A task's group is one policy's draws of one prompt. A harness that loops over models or
settings writes each task's rows in the same parts under such a column's values, and when
the values pass at different rates, every task splits across them: a pool of two models
reads as one of many split tasks. The reader cannot tell from a name which column that is,
so it carries a few candidates beside the canonical fields (:attr:`whilecli.io.plan.Plan.
factors`) and the route weighs them on every row (:mod:`whilecli.route.factors`).

A candidate is a top-level column the plan reads for nothing else, of one scalar kind, on
nearly every sampled row, with few values there (a file of one model's rows after
another's shows one value in its first rows), and whose name says it is no outcome of the
draw (a grade, a reason, a parsed answer: those differ with the reply by nature) nor a
row's or a task's own key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from whilecli.io import decoding
from whilecli.io.aliases import EXTRA_PLACES, REQUEST_PLACES, SAMPLING_PLACES
from whilecli.io.shape import Shape, json_kind, split_path

__all__ = ["MAX_FACTORS", "MAX_LEVELS", "SETTINGS", "candidates", "possible", "unread"]

#: Columns carried at the most (each is one more group-by in the file's pass).
MAX_FACTORS = 4
#: Values a condition takes at the most, in the sample and over every row.
MAX_LEVELS = 8
#: The share of sampled rows a candidate stands on.
PRESENT_SHARE = 0.9
#: Sampling settings the plan reads only as evidence of greedy decoding (``temperature``,
#: ``sampling_params.temperature``, ``do_sample``): no field of the row, so still candidates
#: (draws at two temperatures are two conditions).
SETTINGS = frozenset(decoding.aliases())
#: The objects a condition is also looked for in, one level down: a row's extras
#: (``metadata.checkpoint``), a sampler's settings (``sampling_params.top_p``), a request's
#: (``config.template``).
PLACES: tuple[str, ...] = tuple(
    p for p in dict.fromkeys((*EXTRA_PLACES, *SAMPLING_PLACES, *REQUEST_PLACES)) if p
)
#: Names of a draw's outcome or record, never a condition it was drawn under: its grade,
#: its end, its answer, its text, its timing and cost, a trainer's numbers on it (an
#: advantage, a ratio), its key (searched in lower case).
NOT_A_CONDITION = re.compile(
    r"(?:^|[^a-z])(?:id|uuid|guid|hash|key|idx|index|ordinal|pos|position|line|row|nr|num"
    r"|sample|seed|draw|rollout|repeat|trial|attempt|epoch|step|turn|episode|split|source"
    r"|level|env|task|problem|kl|at)s?(?:$|[^a-z])"
    r"|reward|score|correct|solved|pass|acc|grade|judge|verdict|result|success|fail|error|exception"
    r"|status|reason|finish|stop|done|trunc|length|token|pred|answer|extract|parsed"
    r"|target|gold|label|truth|expected|output|response|completion|reply|generation"
    r"|question|input|text|message|content|time|date|latency|duration|elapsed|cost|price"
    r"|usage|difficulty|category|subject|topic|dataset|version|advantage|return|logprob"
    r"|entropy|loss|ratio|match|count|calls|exists|created|updated|metric|solution",
)


def candidates(shape: Shape, rows: Sequence[Mapping[str, object]], used: set[str]) -> list[str]:
    """The top-level columns of ``shape`` that may name a condition of the draws (the module's
    rule), those with more values in ``rows`` (the sampled rows) first, at most
    :data:`MAX_FACTORS`; ``used``: the top-level columns the plan reads."""
    if not rows:
        return []
    found: list[tuple[int, int, str]] = []
    for order, key in enumerate(possible(shape, used)):
        node = shape.children.get(key) or shape.get(split_path(key))
        if node is None:
            continue
        kinds = _kinds(node)
        values = [value_at(row, key) for row in rows]
        present = [
            v for v in values if v is not None and not (isinstance(v, str) and not v.strip())
        ]
        if len(present) < PRESENT_SHARE * len(rows) or any(
            json_kind(v) not in kinds for v in present
        ):
            continue
        levels = len({str(v) for v in present})
        if levels <= MAX_LEVELS:
            found.append((-levels, order, key))
    return [key for _, _, key in sorted(found)[:MAX_FACTORS]]


def possible(shape: Shape, used: set[str]) -> list[str]:
    """The columns of ``shape`` of one scalar kind (numbers of both kinds are one) whose name
    says nothing else (:data:`NOT_A_CONDITION`; a sampling setting's, :data:`SETTINGS`, says
    it is one), among those the plan leaves unread (:func:`unread`)."""
    return [
        dotted
        for dotted, name, node in unread(shape, used)
        if _named(name, node, None if dotted == name else dotted)
    ]


def unread(shape: Shape, used: set[str]) -> list[tuple[str, str, Shape]]:
    """The columns the plan reads for nothing, as (dotted path, name, node): at the top
    level, then one level down in an object of :data:`PLACES` the rows always hold as one
    (``metadata.checkpoint``). ``used``: the dotted paths the plan reads (a top-level column
    read anywhere within, an object read whole, and the fields it reads within it, are left
    out)."""
    tops = {path.split(".", 1)[0] for path in used}
    found = [(key, key, node) for key, node in shape.children.items() if key not in tops]
    for place in PLACES:
        holder = place[:-1]
        node = shape.children.get(holder)
        if node is None or holder in used or node.kinds - {"null"} != {"dict"}:
            continue
        found += [
            (place + key, key, child)
            for key, child in node.children.items()
            if place + key not in used
            and shape.get(split_path(place + key)) is child  # a key a path can name
        ]
    return found


def _named(key: str, node: Shape, dotted: str | None = None) -> bool:
    """Whether a column of this name and these kinds may be a condition."""
    setting = (dotted or key) in SETTINGS
    return bool(_kinds(node)) and (setting or not NOT_A_CONDITION.search(key.lower()))


def value_at(row: Mapping[str, object], key: str) -> object:
    """A sampled row's value at ``key``: the column so named (a frame's rows), else the value
    down its dotted path (a JSON row's objects); None where it holds none."""
    if key in row:
        return row[key]
    value: object = row
    for step in split_path(key):
        if not isinstance(value, Mapping):
            return None
        value = value.get(step)
    return value


def _kinds(node: Shape) -> set[str]:
    """The scalar kinds a candidate's values may take: text, a flag, or a number; none for
    another or a mixture."""
    kinds = node.kinds - {"null"}
    if kinds and kinds <= {"int", "float"}:
        return {"int", "float"}
    return kinds if len(kinds) == 1 and kinds <= {"string", "bool"} else set()
