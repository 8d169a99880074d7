"""A tool's file with one field or one entry broken (a value of another type, a key removed,
a list of another length) is still that tool's file: a MathArena runs file, an HLE judged
file, SkyThought's results.json, an EvalPlus eval object, an OpenCompass details object.
Reading it names the file, the place (the question, the entry) and the field in one line,
exit 2, or reads it; never a traceback, never the generic "one JSON document" refusal of an
unknown file.

The generator takes a well-formed file and breaks one field of one entry with a value drawn
from the kinds hostile files hold."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app

WEIRD: tuple[Any, ...] = (None, 0, -1, 1.5, "x", "", [], {}, [1, 2], {"a": 1}, True, 10**30)
DELETE = object()


def _matharena(rng: random.Random) -> dict[str, Any]:
    grades = [rng.random() < 0.5 for _ in range(4)]
    return {
        "idx": 3,
        "problem": "Find x.",
        "gold_answer": "7",
        "source": "aime",
        "types": [],
        "N": 4,
        "cost": {"cost": 0.1},
        "pass_at_1": sum(grades) / 4,
        "answers": ["7" if g else "3" for g in grades],
        "correct": grades,
        "warnings": [0] * 4,
        "messages": [[{"role": "assistant", "content": f"r{i}"}] for i in range(4)],
        "judgment": [None] * 4,
        "history": [None] * 4,
        "detailed_costs": [{"output_tokens": 100} for _ in range(4)],
    }


def _hle(rng: random.Random) -> dict[str, Any]:
    return {
        f"q{i:03d}": {
            "model": "o3-mini",
            "response": f"Answer: {i}",
            "usage": {"completion_tokens": 40},
            "judge_response": {"correct": rng.choice(["yes", "no"]), "confidence": 90},
        }
        for i in range(12)
    }


def _refusal_if_any(path: Path, doc: Any) -> str | None:
    """``doc`` written to ``path`` and routed: its one-line refusal (exit 2, never the
    generic refusal of an unknown document), or None where it routed; never a traceback."""
    path.write_text(json.dumps(doc, indent=2))
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code != 2:
        return None
    line = result.output.strip()
    assert "\n" not in line and "one JSON document" not in line, line
    return line


def _skythought(rng: random.Random) -> dict[str, Any]:
    return {
        str(i): {
            "problem": f"p{i}",
            "_index": str(i),
            "prompt": f"Solve {i}",
            "input_conversation": [{"role": "user", "content": f"Solve {i}"}],
            "responses": [
                {"content": f"r{j}", "correctness": rng.random() < 0.5} for j in range(3)
            ],
            "token_usages": [{"completion_tokens": 10, "prompt_tokens": 5} for _ in range(3)],
        }
        for i in range(8)
    }


def _evalplus(rng: random.Random) -> dict[str, Any]:
    status = ("pass", "fail")
    return {
        "date": "2024-01-01 00:00",
        "eval": {
            f"HumanEval/{i}": [
                {
                    "task_id": f"HumanEval/{i}",
                    "solution": "def f(): ...",
                    "base_status": rng.choice(status),
                    "plus_status": rng.choice(status),
                }
                for _ in range(3)
            ]
            for i in range(8)
        },
    }


def _opencompass(rng: random.Random) -> dict[str, Any]:
    details = {
        str(i): {"prompt": f"Q{i}", "predictions": "5", "references": "5", "correct": rng.random() < 0.5}
        for i in range(8)
    }  # fmt: skip
    return {"accuracy": 50.0, "details": details}


#: Tools whose entries sit in an object under their ids: the object, and where it is.
KEYED: dict[str, tuple[Any, str | None]] = {
    "skythought": (_skythought, None),
    "evalplus": (_evalplus, "eval"),
    "opencompass": (_opencompass, "details"),
}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tool=st.sampled_from(sorted(KEYED)),
    where=st.integers(0, 100),
    value=st.sampled_from((*WEIRD, DELETE)),
    seed=st.integers(0, 1000),
)
def test_one_broken_entry_of_a_keyed_table_is_named(
    tool: str, where: int, value: Any, seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    build, inside = KEYED[tool]
    doc = build(random.Random(seed))
    table = doc if inside is None else doc[inside]
    key = sorted(table)[where % len(table)]
    if value is DELETE:
        del table[key]
    else:
        table[key] = value
    path = tmp_path_factory.mktemp(tool) / "results.json"
    refused = _refusal_if_any(path, doc)
    assert refused is None or key in refused, refused


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tool=st.sampled_from(("matharena", "hle")),
    where=st.integers(0, 100),
    value=st.sampled_from((*WEIRD, DELETE)),
    deep=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_one_broken_field_is_named_in_one_line(
    tool: str,
    where: int,
    value: Any,
    deep: bool,
    seed: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    rng = random.Random(seed)
    if tool == "matharena":
        doc = _matharena(rng)
        key = sorted(doc)[where % len(doc)]
        holder: dict[str, Any] = doc
        if deep and isinstance(doc[key], list) and doc[key]:
            doc[key][where % len(doc[key])] = None if value is DELETE else value
        elif value is DELETE:
            del holder[key]
        else:
            holder[key] = value
        name = "3.json"
    else:
        doc = _hle(rng)
        question = sorted(doc)[where % len(doc)]
        entry = doc[question]
        field = sorted(entry)[where % len(entry)]
        target = entry["judge_response"] if deep else entry
        field = "correct" if deep else field
        if value is DELETE:
            target.pop(field, None)
        else:
            target[field] = value
        name = "judged_hle_o3-mini.json.json"
    path = tmp_path_factory.mktemp(tool) / name
    refused = _refusal_if_any(path, doc)
    assert refused is None or name in refused, refused


def test_a_broken_question_is_named(tmp_path: Path) -> None:
    doc = _hle(random.Random(0))
    doc["q004"]["judge_response"] = "yes"
    path = tmp_path / "judged_x.json"
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2
    assert "question 'q004': field 'judge_response'" in result.output
