"""Trainers' dumps that hold a selection of the rollouts, not all of them: the groups of
zero reward spread (every draw of a prompt passing, or every one failing) left out before the
rows were written. The band such rows show has no floor and no saturation, and its rates lean
to the middle (DESIGN section 2, "Data quality first": ``selected_rows``).

- prime-rl's ``effective`` traces (:func:`whilecli.io.formats.prime_rl.selected`): every
  episode of zero advantage left out; the step's ``all`` traces hold them.
- open-instruct's GRPO traces (``--save_traces``): ``grpo_fast.py`` writes them after its
  ``non_zero_std_mask`` drops each prompt whose scores do not vary (and, with
  ``--mask_truncated_completions``, every cut-off reply), so no trace holds a unanimous group.
"""

from __future__ import annotations

from whilecli.io.formats import open_instruct, prime_rl

#: (what the rows are, what to read instead) per dump that holds a selection.
PRIME_RL = (
    "prime-rl's effective traces, which leave out every episode of zero advantage (each group"
    " whose rows all pass or all fail)",
    "read the step's all/traces.jsonl",
)
OPEN_INSTRUCT = (
    "open-instruct's GRPO traces, written after each prompt whose scores do not vary (every"
    " draw passing, or every one failing) was dropped",
    "evaluate the policy's rollouts on their own: the traces hold the filtered batch",
)


def selection(name: str, fmt: str | None) -> tuple[str, str] | None:
    """What a file's rows are where they are a selection (:data:`PRIME_RL`,
    :data:`OPEN_INSTRUCT`), and what to read instead; None where they are every rollout."""
    if prime_rl.selected(name, fmt):
        return PRIME_RL
    if fmt == open_instruct.NAME:
        return OPEN_INSTRUCT
    return None
