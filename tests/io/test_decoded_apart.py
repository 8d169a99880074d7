"""Files decoded greedily beside files sampled are two evaluations (DESIGN section 1,
"Pooling"): pooled, the greedy draw of each task reads as one more sample, and a task it
passes where the sampler fails as a split task. Whatever says how a file was decoded (its
rows' settings, the settings file beside them, lm-eval's results file, an inspect_ai log's
header, NeMo-Skills' file names), such files are refused together unless pooled on purpose.

The generator draws where the decoding is said and how, two to four files, and whether they
were decoded alike; a known truth says whether the refusal is due.
"""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.io.read import PoolingError, read_rows

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
#: Row fields that record decoding: (field, greedy value, sampled value).
ROW_SETTINGS: list[tuple[str, Any, Any]] = [
    ("temperature", 0.0, 0.7),
    ("sampling_params", {"temperature": 0}, {"temperature": 1.0, "top_p": 0.95}),
    ("do_sample", False, True),
    ("generation_config", {"do_sample": "false"}, {"do_sample": "true"}),
    ("metadata", {"temperature": "0"}, {"temperature": "0.6"}),
]
PLACES = ["rows", "metadata.json", "lm-eval", "inspect-ai", "nemo-skills"]
TASKS = 24


def _rows(seed: int, extra: dict[str, Any]) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    return [
        {
            "task_id": f"t{t}",
            "prompt": f"Solve {t}.",
            "completion": f"reply {rnd.random():.6f}",
            "reward": float(rnd.random() < 0.5),
            "model": "Qwen/Qwen3-8B",
            **extra,
        }
        for t in range(TASKS)
    ]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _lm_eval(folder: Path, index: int, greedy: bool, seed: int, text: bool) -> None:
    stamp = f"2025-06-0{index + 1}T00-00-00.00000{index}"
    rnd = random.Random(seed)
    rows = [
        {
            "doc_id": t,
            "doc": {"question": f"q{t}"},
            "arguments": {"gen_args_0": {"arg_0": f"Question: q{t}", "arg_1": {}}},
            "resps": [[f"a {rnd.random():.6f}"]],
            "filtered_resps": [f"a {t}"],
            "filter": "strict-match",
            "metrics": ["exact_match"],
            "exact_match": float(rnd.random() < 0.5),
        }
        for t in range(TASKS)
    ]
    _jsonl(folder / f"samples_gsm8k_{stamp}.jsonl", rows)
    kwargs: Any = {"do_sample": False} if greedy else {"do_sample": True, "temperature": 0.8}
    config: dict[str, Any] = {"model": "vllm", "model_args": "pretrained=Qwen/Qwen3-8B"}
    task: dict[str, Any] = {"task": "gsm8k", "repeats": 1}
    if text:  # --gen_kwargs as given on the command line
        config["gen_kwargs"] = "temperature=0" if greedy else "temperature=0.8,do_sample=True"
    else:
        task["generation_kwargs"] = {"until": ["Question:"], **kwargs}
    doc = {
        "results": {"gsm8k": {"exact_match,strict-match": 0.5}},
        "configs": {"gsm8k": task},
        "config": config,
        "model_name": "Qwen/Qwen3-8B",
    }
    (folder / f"results_{stamp}.json").write_text(json.dumps(doc))


def _inspect(path: Path, greedy: bool, seed: int) -> None:
    rnd = random.Random(seed)
    header = {
        "eval": {"model": "hf/Qwen/Qwen3-8B", "task": "gsm8k"},
        "plan": {"name": "plan", "steps": [], "config": {"temperature": 0.0 if greedy else 1.0}},
        "status": "success",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps(header))
        for t in range(TASKS):
            sample = {
                "id": t + 1,
                "epoch": 1,
                "input": f"q{t}",
                "output": {"completion": f"a {rnd.random():.6f}", "stop_reason": "stop"},
                "scores": {"match": {"value": "C" if rnd.random() < 0.5 else "I"}},
            }
            archive.writestr(f"samples/{t + 1}_epoch_1.json", json.dumps(sample))


def _write(folder: Path, place: str, greedy: list[bool], how: int, seed: int) -> list[Path]:
    """The files of one pool, each decoded as ``greedy`` says, the decoding said at
    ``place`` (``how`` picks a spelling); the paths to route."""
    if place == "rows":
        field, low, high = ROW_SETTINGS[how % len(ROW_SETTINGS)]
        for i, g in enumerate(greedy):
            _jsonl(folder / f"run{i}.jsonl", _rows(seed + i, {field: low if g else high}))
        return [folder]
    if place == "metadata.json":
        for i, g in enumerate(greedy):
            _jsonl(folder / f"run{i}" / "results.jsonl", _rows(seed + i, {}))
            meta = {"env_id": "gsm8k", "model": "Qwen/Qwen3-8B"}
            meta["sampling_args"] = {"temperature": 0.0 if g else 1.0}  # type: ignore[assignment]
            (folder / f"run{i}" / "metadata.json").write_text(json.dumps(meta))
        return [folder]
    if place == "lm-eval":
        for i, g in enumerate(greedy):
            _lm_eval(folder, i, g, seed + i, text=how % 2 == 1)
        return [folder]
    if place == "inspect-ai":
        for i, g in enumerate(greedy):
            _inspect(folder / f"2025-07-0{i + 1}T00-00-00+00-00_gsm8k_{i}.eval", g, seed + i)
        return [folder]
    # NeMo-Skills: the run with no seed is output.jsonl, each seed's output-rs<seed>.jsonl
    seeds = 0
    for i, g in enumerate(greedy):
        rows = [
            {
                "id": r["task_id"],
                "problem": r["prompt"],
                "generation": r["completion"],
                "expected_answer": "1",
                "predicted_answer": "1" if r["reward"] else "2",
                "symbolic_correct": bool(r["reward"]),
            }
            for r in _rows(seed + i, {})
        ]
        name = "output.jsonl" if g else f"output-rs{seeds}.jsonl"
        seeds += 0 if g else 1
        _jsonl(folder / "eval-results" / "aime25" / name, rows)
    return [folder]


@st.composite
def pools(draw: st.DrawFn) -> tuple[str, list[bool], int, int]:
    place = draw(st.sampled_from(PLACES))
    files = draw(st.integers(2, 4))
    greedy = draw(st.lists(st.booleans(), min_size=files, max_size=files))
    if place == "nemo-skills":  # one run with no seed at the most
        greedy = [False] * (files - 1) + [draw(st.booleans())]
    return place, greedy, draw(st.integers(0, 9)), draw(st.integers(0, 2**16))


@SETTINGS
@given(pool=pools())
def test_greedy_files_beside_sampled_files_are_refused_unless_pooled(
    tmp_path_factory: pytest.TempPathFactory, pool: tuple[str, list[bool], int, int]
) -> None:
    place, greedy, how, seed = pool
    folder = tmp_path_factory.mktemp(place.replace(".", "_"))
    paths = [str(p) for p in _write(folder, place, greedy, how, seed)]
    apart = len(set(greedy)) == 2
    if apart:
        with pytest.raises(PoolingError, match="decoded apart") as err:
            read_rows(paths)
        said = str(err.value)
        assert "greedy: " in said and "sampled: " in said
        read_rows(paths, pool=True)  # on purpose: each decoding's tasks kept apart
    else:
        read_rows(paths)


def test_a_folder_of_seeds_alone_is_one_evaluation(tmp_path: Path) -> None:
    """NeMo-Skills' seeds without the greedy run: no decoding is named, whatever the names."""
    paths = _write(tmp_path, "nemo-skills", [False, False, False], 0, 3)
    got = read_rows([str(p) for p in paths])
    assert got.facts.rows == 3 * TASKS
