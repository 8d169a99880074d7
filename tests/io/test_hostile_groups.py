"""Hostile Atropos groups: a ScoredDataGroup whose per-rollout lists (``tokens``, ``masks``)
do not hold one entry per score, or whose ``scores`` is no list, is refused at its line and
field; it was read as rollouts (a group of 12 scores and 8 token lists gave 12 rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import read_rows


def _group(seed: int, scores: object, tokens: int, masks: int) -> dict[str, object]:
    return {
        "seed": seed,
        "scores": scores,
        "tokens": [[1, 2, 3]] * tokens,
        "masks": [[-100, 2, 3]] * masks,
    }


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(2, 12),
    tokens=st.integers(1, 14),
    masks=st.integers(1, 14),
    bad_line=st.integers(1, 12),
)
def test_a_group_whose_lists_differ_in_length_is_refused_at_its_line_and_field(
    tmp_path_factory: pytest.TempPathFactory, n: int, tokens: int, masks: int, bad_line: int
) -> None:
    path = tmp_path_factory.mktemp("at") / "groups.jsonl"
    groups = [_group(g, [float((g + i) % 2) for i in range(n)], n, n) for g in range(12)]
    groups[bad_line - 1] = _group(99, [float(i % 2) for i in range(n)], tokens, masks)
    path.write_text("".join(json.dumps(g) + "\n" for g in groups))
    if tokens == n and masks == n:
        assert read_rows([str(path)]).frame.collect().height == 12 * n
        return
    field = "tokens" if tokens != n else "masks"
    with pytest.raises(InputError, match=rf"groups\.jsonl:{bad_line}: field '{field}': holds"):
        read_rows([str(path)])


@pytest.mark.parametrize("scores", [1.0, "1", {"a": 1}])
def test_a_group_whose_scores_is_no_list_is_refused_naming_the_row_and_field(
    tmp_path: Path, scores: object
) -> None:
    path = tmp_path / "groups.jsonl"
    groups = [_group(0, scores, 4, 4), _group(1, [1.0, 0.0, 1.0, 0.0], 4, 4)]
    path.write_text("".join(json.dumps(g) + "\n" for g in groups))
    with pytest.raises(InputError, match=r"groups\.jsonl:1: field 'scores'"):
        read_rows([str(path)])
