"""A column that may key the tasks finer than the ids read (DESIGN section 1, task ids against
prompts; "rows counted before they are looked at").

An id is checked against the prompt where the rows carry one: an id over several prompts is
refused. Without a prompt nothing checks it, and an id that names a dataset or a category
(``task_id: "aime24"`` on every row, ``task_id: "algebra"`` beside a ``question_idx``) reads
as one task of every question's draws. Each such task then splits wherever its questions
differ, so a pool of questions each solved always or never reads as split everywhere: GRPO,
firmly, on draws that give no gradient.

The reader carries one column whose name says it is a prompt's id (:func:`candidate`:
``question_idx``, ``problem_id``, ``doc_num``), read for nothing else, and counts per file
how it parts the ids (:func:`aggregates`). Where it parts them
into groups of draws (:func:`parts_ids`: most ids hold several of its values, each on
several rows), the ids may be coarser than the tasks, and the route says so
(``coarse_ids``). A per-draw number (``sample_idx``) parts an id's rows into single rows and
says nothing; a question's own number is one value per id and says nothing either.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from whilecli.io.aliases import names_a_prompts_id
from whilecli.io.factors import unread
from whilecli.io.shape import Shape

__all__ = ["SUBTASK", "aggregates", "candidate", "parts_ids"]

#: The narrow frame's column holding the candidate's value (text), null where none.
SUBTASK = "__subtask"

#: Groups the column must form at the least before it reads as parting the ids.
MIN_GROUPS = 10
#: How many groups an id holds on average, and rows a group holds, at the least.
MIN_PER_ID = 2.0
MIN_PER_GROUP = 2.0


def candidate(shape: Shape, used: set[str]) -> str | None:
    """The first column whose name says it is a prompt's id
    (:func:`~whilecli.io.aliases.names_a_prompts_id`: ``question_idx``, ``problem_id``, never
    ``sample_idx``), of whole numbers or text, that the plan reads for nothing else
    (``used``: the dotted paths it reads; :func:`~whilecli.io.factors.unread`: at the top
    level, then one level down in a row's extras, ``metadata.question_idx``). None: none."""
    for dotted, name, node in unread(shape, used):
        if node.kinds - {"null"} in ({"int"}, {"string"}) and names_a_prompts_id(name):
            return dotted
    return None


def aggregates(task: pl.Expr) -> list[pl.Expr]:
    """Over a narrow frame's rows: the rows carrying the candidate, the ids among them, and
    the (id, value) groups they form (``sub_rows``, ``sub_ids``, ``sub_groups``)."""
    value = pl.col(SUBTASK)
    held = value.is_not_null()
    return [
        held.sum().cast(pl.Int64).alias("sub_rows"),
        task.filter(held).n_unique().cast(pl.Int64).alias("sub_ids"),
        pl.struct(task, value).filter(held).n_unique().cast(pl.Int64).alias("sub_groups"),
    ]


def parts_ids(stats: dict[str, Any]) -> tuple[int, int, int] | None:
    """(ids, groups, rows) where the candidate parts the ids into groups of draws: at least
    :data:`MIN_GROUPS` groups, :data:`MIN_PER_ID` per id and :data:`MIN_PER_GROUP` rows per
    group on average. None: it does not (one value per id, one row per value, too few)."""
    rows, ids, groups = (int(stats.get(k) or 0) for k in ("sub_rows", "sub_ids", "sub_groups"))
    if groups < MIN_GROUPS or not ids:
        return None
    if groups < MIN_PER_ID * ids or rows < MIN_PER_GROUP * groups:
        return None
    return ids, groups, rows
