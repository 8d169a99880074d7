"""Files whose rows name no model, pooled from paths that name different models
(``runs/Qwen3-8B/`` beside ``runs/Llama-3.1-8B/``, MathArena's solver folders, a results
folder per model): one model's passes and another's fails of a task would read as a split
task and one model's draws as another's, so the pool is refused as different evaluations
are (exit 2, naming the files and the models), unless ``--pool`` (each model's tasks kept
apart) or ``--by source``. A settings file beside the rows that names the model (a run's
``config.yaml``, ``args.json``) speaks as the path does. Paths naming one model in any
spelling, or naming none, pool as before; rows that name their model are read by their own
field.

The generator writes 2 to 3 folders, each a model drawn from spellings of a few models, each
at its own pass rate; the truth (which folders name another model) is the drawn model's
index, never the rule under test."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.modelid import parts_name_other_models
from whilecli.io.read import PoolingError, read_rows
from whilecli.route import run_route
from whilecli.route.model import Route

#: Models, each in the spellings folders give it; one index is one model.
MODELS = (
    ("Qwen3-8B", "qwen3_8b", "Qwen__Qwen3-8B", "Qwen--Qwen3-8B", "QWEN3-8B"),
    ("Llama-3.1-8B-Instruct", "meta-llama__Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"),
    ("Qwen3-32B", "qwen3-32b"),
    ("Qwen2.5-7B-Instruct", "qwen2.5-7b-instruct"),
    ("gpt-4o", "gpt-4o-2024-08-06"),
    ("o3-mini", "o3-mini"),
)
#: Folder names that name no model.
NEUTRAL = ("rollouts", "eval", "run7", "outputs")
TASKS, K = 30, 4


def _rows(rng: random.Random, rate: float, model: str | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for task in range(TASKS):
        for _ in range(K):
            row: dict[str, object] = {
                "task_id": f"t{task}",
                "prompt": f"Solve problem {task}.",
                "completion": f"reply {rng.random()}",
                "reward": float(rng.random() < rate),
                "finish_reason": "stop",
            }
            if model is not None:
                row["model"] = model
            rows.append(row)
    return rows


def _write(folder: Path, rows: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    picks=st.lists(
        st.tuples(st.integers(0, len(MODELS) - 1), st.integers(0, 4)), min_size=2, max_size=3
    ),
    nested=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_paths_naming_different_models_are_refused_unless_pooled(
    picks: list[tuple[int, int]], nested: bool, seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("writers")
    rng = random.Random(seed)
    for place, (model, spelling) in enumerate(picks):
        names = MODELS[model]
        folder = root / f"{place}" / names[spelling % len(names)]
        _write(folder / "step_3" if nested else folder, _rows(rng, rng.random(), None))
    distinct = len({model for model, _ in picks})
    if distinct == 1:
        rows = read_rows([str(root)])
        assert rows.frame.collect().height == len(picks) * TASKS * K
        return
    with pytest.raises(PoolingError, match=r"settings files name different ones") as refused:
        read_rows([str(root)])
    for model, _ in picks:  # every model the paths name is shown, in some spelling
        assert any(name in str(refused.value) for name in MODELS[model])
    pooled = read_rows([str(root)], pool=True).frame.collect()
    assert pooled.height == len(picks) * TASKS * K
    assert pooled["task_id"].n_unique() == distinct * TASKS  # each model's tasks kept apart


#: Settings files a run leaves beside its rows, each writing a model its own way.
SETTINGS = (
    ("config.yaml", lambda m: f"model: {m}\ntemperature: 1.0\n"),
    ("args.json", lambda m: json.dumps({"model_name_or_path": m, "seed": 1})),
    ("run_config.json", lambda m: json.dumps({"model": {"name": m}, "n": 4})),
)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    picks=st.lists(
        st.tuples(
            st.integers(0, len(MODELS) - 1),
            st.integers(0, 4),
            st.integers(0, len(SETTINGS) - 1),
        ),
        min_size=2,
        max_size=3,
    ),
    seed=st.integers(0, 10_000),
)
def test_settings_files_naming_different_models_are_refused_as_paths_are(
    picks: list[tuple[int, int, int]], seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Folders that name no model, each beside a settings file that names one: the same
    rule as paths, each model's tasks kept apart under --pool."""
    root = tmp_path_factory.mktemp("settings")
    rng = random.Random(seed)
    for place, (model, spelling, kind) in enumerate(picks):
        names = MODELS[model]
        folder = root / NEUTRAL[place % len(NEUTRAL)] / f"run{place}"
        _write(folder, _rows(rng, rng.random(), None))
        name, text = SETTINGS[kind]
        (folder / name).write_text(text(names[spelling % len(names)]), encoding="utf-8")
    distinct = len({model for model, _, _ in picks})
    if distinct == 1:
        assert read_rows([str(root)]).frame.collect().height == len(picks) * TASKS * K
        return
    with pytest.raises(PoolingError, match=r"settings files name different ones") as refused:
        read_rows([str(root)])
    for model, _, _ in picks:
        assert any(name in str(refused.value) for name in MODELS[model])
    pooled = read_rows([str(root)], pool=True).frame.collect()
    assert pooled["task_id"].n_unique() == distinct * TASKS


def test_summaries_beside_settings_of_two_models_key_their_tasks_apart(tmp_path: Path) -> None:
    """Summaries of two runs whose settings files name different models: keyed apart as
    their rows read with --pool."""
    rng = random.Random(9)
    runner = CliRunner()
    summaries = []
    for place, (model, rate) in enumerate((("Qwen/Qwen3-8B", 0.8), ("gpt-4o", 0.1))):
        rows = _write(tmp_path / "runs" / f"run{place}", _rows(rng, rate, None))
        (rows.parent / "config.yaml").write_text(f"model: {model}\n", encoding="utf-8")
        out = tmp_path / f"summary{place}.parquet"
        made = runner.invoke(app, ["summarize", str(rows), "-o", str(out)])
        assert made.exit_code == 0, made.output
        summaries.append(str(out))
    pooled = runner.invoke(app, ["route", str(tmp_path / "runs"), "--pool", "--format", "json"])
    summed = runner.invoke(app, ["route", *summaries, "--format", "json"])
    assert pooled.exit_code == summed.exit_code, (pooled.output, summed.output)
    rows_band = next(c for c in json.loads(pooled.output)["checks"] if c["key"] == "band")
    sums_report = json.loads(summed.output)
    sums_band = next(c for c in sums_report["checks"] if c["key"] == "band")
    assert sums_band["measured"]["grouped_tasks"] == 2 * TASKS
    assert rows_band["measured"]["split_tasks"] == sums_band["measured"]["split_tasks"]
    assert any("keyed apart" in note for note in sums_report["notes"])


@pytest.mark.parametrize("placeholder", ["default", "", "None", "N/A", "policy"])
def test_rows_whose_model_field_names_none_name_no_model(tmp_path: Path, placeholder: str) -> None:
    """A model field whose every value names no model (a served-model name, a blank) is as
    good as none: the paths speak, for the pool and for check 6 alike."""
    rng = random.Random(6)
    _write(tmp_path / "Qwen3-8B", _rows(rng, 0.8, placeholder))
    other = _write(tmp_path / "Llama-3.1-8B-Instruct", _rows(rng, 0.1, placeholder))
    with pytest.raises(PoolingError, match=r"settings files name different ones"):
        read_rows([str(tmp_path)])
    route = run_route(str(other), model="Qwen/Qwen3-8B")
    assert isinstance(route, Route) and route.provisional
    assert "model_in_path" in [f.kind for f in route.data_quality]


def test_rows_that_name_their_model_are_read_by_it(tmp_path: Path) -> None:
    rng = random.Random(3)
    _write(tmp_path / "Qwen3-8B", _rows(rng, 0.8, "Qwen/Qwen3-8B"))
    _write(tmp_path / "Llama-3.1-8B", _rows(rng, 0.1, "meta-llama/Llama-3.1-8B"))
    assert read_rows([str(tmp_path)]).frame.collect().height == 2 * TASKS * K


def test_a_path_naming_no_model_says_nothing(tmp_path: Path) -> None:
    rng = random.Random(4)
    for name in (*NEUTRAL[:2], "Qwen3-8B"):
        _write(tmp_path / name, _rows(rng, 0.5, None))
    assert read_rows([str(tmp_path)]).frame.collect().height == 3 * TASKS * K


def test_the_cli_refuses_with_exit_2_and_the_split_it_would_have_counted(tmp_path: Path) -> None:
    """A model at 0.8 and one at 0.1 pooled: nearly every task would split (a firm GRPO on
    pooled draws); each alone splits far less. Refused, named, with both ways out."""
    rng = random.Random(5)
    _write(tmp_path / "runs" / "Qwen3-8B", _rows(rng, 0.8, None))
    _write(tmp_path / "runs" / "Llama-3.1-8B-Instruct", _rows(rng, 0.1, None))
    runner = CliRunner()
    refused = runner.invoke(app, ["route", str(tmp_path)])
    assert refused.exit_code == 2, refused.output
    line = refused.output.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "Qwen3-8B" in line and "Llama-3.1-8B-Instruct" in line
    assert "--by source" in line and "--pool" in line
    by = runner.invoke(app, ["route", str(tmp_path), "--by", "source", "--format", "json"])
    assert by.exit_code == 0, by.output
    assert [s["tasks"] for s in json.loads(by.output)["summary"]] == [TASKS, TASKS]


def test_summaries_of_two_models_key_their_tasks_apart_as_pooled_rows_do(tmp_path: Path) -> None:
    """A summary of each model's folder, routed together: each model's tasks keyed apart,
    the numbers those of its rows read with --pool, a note saying so."""
    rng = random.Random(8)
    runner = CliRunner()
    summaries = []
    for name, rate in (("Qwen3-8B", 0.8), ("Llama-3.1-8B-Instruct", 0.1)):
        rows = _write(tmp_path / "runs" / name, _rows(rng, rate, None))
        out = tmp_path / "summaries" / name / "summary.parquet"
        out.parent.mkdir(parents=True)
        made = runner.invoke(app, ["summarize", str(rows), "-o", str(out)])
        assert made.exit_code == 0, made.output
        summaries.append(str(out))
    pooled = runner.invoke(app, ["route", str(tmp_path / "runs"), "--pool", "--format", "json"])
    summed = runner.invoke(app, ["route", *summaries, "--format", "json", "-v"])
    assert pooled.exit_code == summed.exit_code, (pooled.output, summed.output)
    rows_band = next(c for c in json.loads(pooled.output)["checks"] if c["key"] == "band")
    sums_report = json.loads(summed.output)
    sums_band = next(c for c in sums_report["checks"] if c["key"] == "band")
    for measure in ("grouped_tasks", "split_tasks"):
        assert rows_band["measured"][measure] == sums_band["measured"][measure], measure
    assert sums_band["measured"]["grouped_tasks"] == 2 * TASKS
    assert any("keyed apart" in note for note in sums_report["notes"])


@pytest.mark.parametrize(
    ("a", "b", "other"),
    [
        ("Qwen3-8B", "Llama-3.1-8B-Instruct", True),
        ("Qwen3-8B", "Qwen3-32B", True),
        ("Qwen2.5-7B", "Qwen3-8B", True),
        ("gpt-4o", "gpt-4.1-mini", True),
        ("o3-mini", "gpt-4o", True),
        ("gpt-4o-airline", "gpt-4o-retail", False),  # one model, two domains
        ("qwen3-8b-grpo", "Qwen3-8B", False),  # the run's own name beside its base
        ("Qwen__Qwen3-8B", "qwen3_8b", False),
        ("Qwen3-8B", "results", False),
    ],
)
def test_which_path_parts_name_other_models(a: str, b: str, other: bool) -> None:
    assert parts_name_other_models(a, b) is other
    assert parts_name_other_models(b, a) is other


@pytest.mark.parametrize("first", [0, 1])
def test_pooled_on_purpose_the_writer_that_is_not_the_model_is_named(
    tmp_path: Path, first: int
) -> None:
    """--pool of two models' runs, with --model one of them: whichever file reads first,
    the other model's writer is named and the verdict is provisional."""
    rng = random.Random(10)
    models = ["Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct"]
    for place in range(2):
        rows = _write(tmp_path / f"run{place}", _rows(rng, 0.5, None))
        model = models[(place + first) % 2]
        (rows.parent / "config.yaml").write_text(f"model: {model}\n", encoding="utf-8")
    for model, other in (models, models[::-1]):
        route = run_route(str(tmp_path), model=model, pool=True)
        assert isinstance(route, Route) and route.provisional
        found = [f for f in route.data_quality if f.kind == "model_in_path"]
        assert len(found) == 1 and found[0].found.endswith(
            f"another than {model}: config.yaml: model = {other}"
        )
