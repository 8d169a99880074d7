"""One JSON document holding several lists under the keys rows are looked for in (``samples``,
``rows``, ``results``, ``data``, ...): whatever each list holds (objects, other values, both,
nothing) and in whatever order, reading it routes the first list of objects or refuses in one
line naming the list and its entry, and never fails inside (exit 70). An OpenAI Evals page
(``data`` of output items) beside other lists is one of the documents drawn."""

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
from whilecli.errors import InputError
from whilecli.io.formats.document import SAMPLE_KEYS
from whilecli.io.read import read_rows

ROW = st.fixed_dictionaries(
    {"task_id": st.sampled_from(["a", "b", "c"]), "reward": st.sampled_from([0.0, 1.0])}
)
ITEM = st.builds(
    lambda i, ok: {
        "object": "eval.run.output_item",
        "status": "pass" if ok else "fail",
        "datasource_item_id": i,
        "datasource_item": {"question": f"q{i}"},
    },
    st.integers(0, 3),
    st.booleans(),
)
OTHER = st.one_of(
    st.integers(), st.text(max_size=4), st.none(), st.lists(st.integers(), max_size=2)
)
LIST = st.one_of(
    st.lists(ROW, min_size=1, max_size=6),  # rows
    st.lists(st.one_of(ROW, OTHER), min_size=1, max_size=6),  # rows and other values
    st.lists(OTHER, max_size=4),  # no rows, or empty
    st.lists(st.one_of(ITEM, OTHER), min_size=1, max_size=5),  # an Evals page, maybe broken
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(doc=st.dictionaries(st.sampled_from(SAMPLE_KEYS), LIST, min_size=1, max_size=4))
def test_every_document_of_lists_routes_or_is_refused_in_one_line(
    doc: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = CliRunner().invoke(app, ["route", str(path), "--format", "json"])
    assert result.exit_code in (0, 1, 2), (doc, result.output, result.exception)
    if result.exit_code == 2:
        said = result.output.strip().splitlines()
        assert len(said) == 1 and str(path) in said[0], result.output


def test_a_page_beside_a_list_of_rows_names_its_broken_entry(tmp_path: Path) -> None:
    """The case a StopIteration once ended: a list of objects before the page's broken list."""
    item = {"object": "eval.run.output_item", "status": "pass", "datasource_item_id": 1}
    path = tmp_path / "page.json"
    path.write_text(json.dumps({"results": [{"a": 1}], "data": [item, 3]}), encoding="utf-8")
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2
    assert "data[1]: a row must be a JSON object, found int" in result.output


@pytest.mark.parametrize("runs", [1, 4])
def test_opencompass_details_list_reads_one_row_per_run(tmp_path: Path, runs: int) -> None:
    """OpenCompass' current results (``details`` a list of ``example_abbr`` entries, a verdict
    per run in ``correct``): one row per run, the example its task, the model its folder."""

    from whilecli.io.read import read_rows

    rnd = random.Random(runs)
    work = tmp_path / "outputs" / "default" / "20250101_000000"
    (work / "predictions" / "m-hf").mkdir(parents=True)
    (work / "results" / "m-hf").mkdir(parents=True)
    details, truth = [], []
    for t in range(10):
        verdicts = [rnd.random() < 0.4 for _ in range(runs)]
        truth += [float(v) for v in verdicts]
        details.append(
            {"example_abbr": f"default_{t}", "pred": [f"a{t}.{i}" for i in range(runs)],
             "answer": [str(t)] * runs, "correct": verdicts}
        )  # fmt: skip
    doc = {f"accuracy ({runs} runs average)": 40.0, "details": details}
    path = work / "results" / "m-hf" / "aime2024.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    read = read_rows([str(work)])
    frame = read.frame.collect()
    assert frame["reward"].to_list() == truth
    assert frame["task_id"].n_unique() == 10 and frame.height == 10 * runs
    assert set(frame["model"].to_list()) == {"m-hf"}


def _rows(n: int, reward: float) -> list[dict[str, object]]:
    return [{"task_id": f"t{i // 4}", "reward": reward} for i in range(n)]


@pytest.mark.parametrize("seed", range(6))
def test_two_lists_of_rows_alike_are_refused_naming_both(seed: int, tmp_path: Path) -> None:
    first, second = random.Random(seed).sample(SAMPLE_KEYS, 2)
    doc = {first: _rows(8 * (seed + 1), 1.0), second: _rows(12, 0.0)}
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="two lists of rows alike") as err:
        read_rows([str(path)])
    assert repr(first) in str(err.value) and repr(second) in str(err.value)
    assert "doc.json" in str(err.value.file)


def test_a_list_of_other_objects_is_named_as_left_aside(tmp_path: Path) -> None:
    rows = [{"task_id": f"t{i // 4}", "reward": float(i % 2)} for i in range(16)]
    doc = {"samples": rows, "results": [{"metric": "acc", "value": 0.5}]}
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    got = read_rows([str(path)])
    assert got.frame.collect().height == 16
    assert any("'results' list (1 objects) left aside" in n for n in got.notes)


@pytest.mark.parametrize("seed", range(6))
def test_a_preview_of_the_rows_beside_them_is_left_aside(seed: int, tmp_path: Path) -> None:
    """A list whose rows all stand in another list (a preview, a subset of failures) is no
    second set of rollouts: the whole list is read, whichever key comes first."""
    rng = random.Random(seed)
    whole_key, part_key = rng.sample(SAMPLE_KEYS, 2)
    rows = [{"task_id": f"t{i // 4}", "reward": float(rng.random() < 0.5)} for i in range(40)]
    rows = [{**r, "completion": f"reply {i}"} for i, r in enumerate(rows)]
    doc = {part_key: rng.sample(rows, rng.randint(1, 10)), whole_key: rows}
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    got = read_rows([str(path)])
    assert got.frame.collect().height == 40
    assert any(f"{part_key!r} list" in n and "left aside" in n for n in got.notes)
