"""A finish / stop reason is read in every container a writer keeps a reply or a whole API
response in (DESIGN section 1, ``truncated``; :data:`whilecli.io.aliases.REASON_PLACES`):
the row's top level and extras, ``response``, ``generation``, ``output`` (never a
``result`` object's: a judge's or a tool's records its own call's end), and
the ``choices`` / ``candidates`` / ``outputs`` lists inside each, under each name
(``finish_reason``, ``stop_reason``, ``finishReason``, ``stopReason``). A reason read in
some containers and not others left a stored OpenAI chat completion, an Anthropic Message
or a Gemini response whose cut-off replies passed "not recorded", and the route firm.

The generator writes such rows, cut ones at a seeded rate, in every container and list and
under every name, the reply beside the reason or only inside the reply object
(``generation: {"text", "finish_reason"}``), and checks the frame's ``truncated`` column
against the truth; the route of a pool whose cut rows pass at their task's rate is
fix-reward (exit 1), as the same reason on the top level already gave.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from read_helpers import frame_of
from rows_files import write_rows
from whilecli.cli import app

HOLDERS = ["", "metadata.", "response.", "generation.", "output.", "info."]
LISTS = ["", "choices[0].", "candidates[0].", "outputs[0]."]
NAMES = ["finish_reason", "stop_reason", "finishReason", "stopReason"]
CUT = ["length", "max_tokens", "MAX_TOKENS", "max_output_tokens"]
ENDED = ["stop", "end_turn", "STOP", "eos"]


def _nested(path: list[str], value: Any) -> dict[str, Any]:
    """``{path: value}`` with each ``name[0]`` a list of one object."""
    head, rest = path[0], value if len(path) == 1 else _nested(path[1:], value)
    if head.endswith("[0]"):
        return {head[:-3]: [rest]}
    return {head: rest}


def _merge(row: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(row.get(key), dict):
            _merge(row[key], value)
        elif isinstance(value, list) and isinstance(row.get(key), list):
            _merge(row[key][0], value[0])
        else:
            row[key] = value
    return row


def _row(i: int, place: str, reason: str, inside: bool) -> dict[str, Any]:
    """One graded row, its reason at ``place``; ``inside``: the reply is kept only in the
    object holding the reason (no ``completion`` beside it)."""
    row: dict[str, Any] = {"task_id": f"t{i // 4}", "reward": float(i % 2)}
    _merge(row, _nested(place.split("."), reason))
    holder = place.split(".")[0]
    if inside and "." in place and holder != "metadata":
        _merge(row, _nested([*place.split(".")[:-1], "text"], f"reply {i}"))
    else:
        row["completion"] = f"reply {i}"
    return row


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    holder=st.sampled_from(HOLDERS),
    inner=st.sampled_from(LISTS),
    name=st.sampled_from(NAMES),
    cut=st.sampled_from(CUT),
    ended=st.sampled_from(ENDED),
    inside=st.booleans(),
    kind=st.sampled_from(["jsonl", "parquet"]),
    seed=st.integers(0, 10_000),
)
def test_a_reason_is_read_in_every_container(
    tmp_path: Path,
    holder: str,
    inner: str,
    name: str,
    cut: str,
    ended: str,
    inside: bool,
    kind: str,
    seed: int,
) -> None:
    rng = random.Random(seed)
    place = holder + inner + name
    truth = [rng.random() < 0.3 for _ in range(24)]
    truth[0], truth[1] = True, False
    rows = [_row(i, place, cut if t else ended, inside) for i, t in enumerate(truth)]
    frame, _ = frame_of(write_rows(tmp_path, rows, kind))
    assert frame["truncated"].to_list() == truth, place


def _api_row(shape: str, text: str, cut: bool) -> dict[str, Any]:
    """A reply kept as the API returned it (the probe's shapes)."""
    if shape == "openai":
        return {
            "model": "gpt-4o-2024-08-06",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "length" if cut else "stop",
                }
            ],
        }
    if shape == "anthropic":
        return {
            "type": "message",
            "model": "claude-sonnet-4-20250514",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "max_tokens" if cut else "end_turn",
        }
    return {
        "modelVersion": "gemini-2.5-flash",
        "candidates": [
            {
                "content": {"parts": [{"text": text}], "role": "model"},
                "finishReason": "MAX_TOKENS" if cut else "STOP",
            }
        ],
    }


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shape=st.sampled_from(["openai", "anthropic", "gemini"]),
    holder=st.sampled_from(["response", "generation", "output"]),
    seed=st.integers(0, 10_000),
)
def test_cut_passes_inside_a_stored_response_route_to_fix_reward(
    tmp_path: Path, shape: str, holder: str, seed: int
) -> None:
    rng = random.Random(seed)
    rows = []
    for t in range(150):
        p = rng.uniform(0.1, 0.9)
        for j in range(8):
            cut = rng.random() < 0.1
            ok = rng.random() < p
            reply = _api_row(shape, f"reply {t}-{j}-{rng.random()}", cut)
            rows.append({"task_id": f"t{t}", "reward": float(ok), holder: reply})
    path = tmp_path / f"{shape}_{holder}_{seed}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(
        app, ["route", str(path), "--model", "Qwen/Qwen3-8B", "--format", "json"]
    )
    assert result.exit_code == 1, result.output[:600]
    out = json.loads(result.stdout)
    assert out["route"] == "fix-reward"
    assert "not recorded" not in out["inputs"]["sources"]["truncated"]
