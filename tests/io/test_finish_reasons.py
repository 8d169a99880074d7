"""Finish and stop reasons wherever a writer keeps them, in whatever words (DESIGN section 1,
``truncated``): one reading, :func:`whilecli.io.aliases.cut_reason`, which the frame's
``truncated`` column and every converter share. A reason naming a limit is a cut-off reply;
one saying the reply ended on its own is not; any other word says nothing (unknown), never
"not cut": a tool's own word for the cap read as "not cut" hid cut-off passes.

The generator writes pools whose cut rows carry a cut-off reason and whose other rows an
ended-on-its-own one, in each place (``finish_reason``, ``stop_reason``, an OpenAI
completion's ``choices[0]``, vLLM's ``outputs[0]``, SGLang's ``meta_info``, Ollama's
``done_reason``, ``response``, ``output``, ``metadata``) and each shape (a word in any case,
SGLang's ``{"type": ...}``, a list of one), as JSON Lines and Parquet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from read_helpers import frame_of
from rows_files import write_rows
from whilecli.io.aliases import cut_reason

CUT = ["length", "max_tokens", "MAX_TOKENS", "exceeded_max_length", "max_turns", "Length "]
CUT += ["FINISH_REASON_MAX_TOKENS", "token_limit", "model_context_window_exceeded"]
ENDED = ["stop", "eos", "end_turn", "STOP", "stop_sequence", "tool_calls", "eos_token"]
UNKNOWN = ["banana", "sampled", "2", "other", "not_truncated", "max_retries_exceeded"]
PLACES = [
    "finish_reason",
    "stop_reason",
    "choices[0].finish_reason",
    "outputs[0].finish_reason",
    "meta_info.finish_reason",
    "output.finish_reason",
    "metadata.finish_reason",
    "done_reason",
    "response.finish_reason",
    "candidates[0].finishReason",
    "details.finish_reason",
    "response.body.choices[0].finish_reason",
    "result.message.stop_reason",
]


def _shaped(word: str, shape: str) -> Any:
    if shape == "dict":
        return {"type": word.strip().lower(), "length": 4096}
    if shape == "list":
        return [word]
    return word


def _nested(path: list[str], reason: Any) -> Any:
    """``reason`` at ``path`` (``choices[0]`` a list of one object)."""
    if not path:
        return reason
    head, rest = path[0], _nested(path[1:], reason)
    if head.endswith("[0]"):
        return {head[:-3]: [{**rest, "index": 0}]}
    return {head: rest}


def _placed(row: dict[str, Any], place: str, reason: Any) -> dict[str, Any]:
    return row | _nested(place.split("."), reason)


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    place=st.sampled_from(PLACES),
    shape=st.sampled_from(["word", "dict", "list"]),
    cut=st.sampled_from(CUT),
    ended=st.sampled_from(ENDED),
    other=st.sampled_from(UNKNOWN),
    n_cut=st.integers(1, 6),
)
def test_a_reason_is_read_as_its_words_say(
    tmp_path: Path, kind: str, place: str, shape: str, cut: str, ended: str, other: str, n_cut: int
) -> None:
    rows, truth = [], []
    for i in range(24):
        word, said = (cut, True) if i < n_cut else (other, None) if i == 23 else (ended, False)
        if shape == "dict" and said is None:
            word = word.lower()
        row = {"task_id": f"t{i // 4}", "reward": float(i % 2), "completion": f"reply {i}"}
        rows.append(_placed(row, place, _shaped(word, shape)))
        truth.append(said)
    assert [cut_reason(_shaped(w, shape)) for w in (cut, ended)] == [True, False]
    frame, _ = frame_of(write_rows(tmp_path, rows, kind))
    assert frame["truncated"].to_list() == truth


@pytest.mark.parametrize("word", UNKNOWN + ["", None, 3])
def test_a_word_that_names_no_limit_and_no_end_is_unknown(word: Any) -> None:
    assert cut_reason(word) is None
