"""OSWorld result folders (run.py: <result_dir>/<action_space>/<observation_type>/<model>/
<domain>/<example_id>/ with traj.jsonl, result.txt; lib_run_single.py): an example folder is a
rollout of its example, result.txt the grade, a last step not done a cut at max_steps, a run
that raised (an Error line, no result.txt) left out as OSWorld's get_result leaves it."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.read import read_rows

MODEL = "gpt-4o"
#: Per (domain, example), each run's outcome: a score, "cut" (max_steps ran out, scored 0) or
#: "raised" (an Error line, no result.txt).
RUNS: dict[tuple[str, str], list[object]] = {
    ("chrome", "bb5e4c0d-f964-439c-97b6-bdb9747de3f4"): [1.0, 1.0, 0.0],
    ("chrome", "7b6c7e24-c58a-49fc-a5bb-d57b80e5b4c3"): [0.0, "cut", 0.0],
    ("os", "94d95f96-9699-4208-98ba-3c3119edf9c2"): [1.0, 0.0, "raised"],
    ("libreoffice_calc", "357ef137-7eeb-4c80-a3bb-0951f26a8aff"): [1.0, 1.0, 1.0],
}


def _example(root: Path, run: int, domain: str, example: str, outcome: object) -> Path:
    folder = root / f"results_{run}" / "pyautogui" / "screenshot" / MODEL / domain / example
    folder.mkdir(parents=True)
    cut = outcome == "cut"
    steps = 15 if cut else 3
    minute = len(domain) + int(example[:2], 16) % 7  # each run at its own time
    lines = []
    for s in range(steps):
        last = s == steps - 1
        lines.append(
            {
                "step_num": s + 1,
                "action_timestamp": f"20240415@1{run}{minute:02d}{s:02d}",
                "action": "DONE" if last and not cut else f"pyautogui.click({100 + s}, {run})",
                "response": f"run {run} step {s + 1}",
                "reward": 0,
                "done": last and not cut,
                "info": {},
                "screenshot_file": f"step_{s + 1}_20240415@1{run}{minute:02d}{s:02d}.png",
            }
        )
    if outcome == "raised":
        lines.append({"Error": f"Time limit exceeded in {domain}/{example}"})
    else:
        (folder / "result.txt").write_text(f"{0.0 if cut else outcome}\n")
    (folder / "traj.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (folder / "runtime.log").write_text("log\n")
    return folder


def _write(root: Path) -> None:
    for (domain, example), outcomes in RUNS.items():
        for run, outcome in enumerate(outcomes):
            _example(root, run, domain, example, outcome)


def test_example_folders_are_rollouts_graded_by_their_result(tmp_path: Path) -> None:
    _write(tmp_path)
    rows = read_rows([str(tmp_path)])
    assert rows.format == "osworld"
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(
        n=pl.len(),
        c=pl.col("passed").cast(pl.Int64).sum(),
        cut=pl.col("truncated").cast(pl.Int64).sum(),
    )
    found = {t: (n, c, cut) for t, n, c, cut in per.iter_rows()}
    assert found == {
        "bb5e4c0d-f964-439c-97b6-bdb9747de3f4": (3, 2, 0),
        "7b6c7e24-c58a-49fc-a5bb-d57b80e5b4c3": (3, 0, 1),
        "94d95f96-9699-4208-98ba-3c3119edf9c2": (2, 1, 0),
        "357ef137-7eeb-4c80-a3bb-0951f26a8aff": (3, 3, 0),
    }
    assert set(frame["model"].to_list()) == {MODEL}
    assert rows.facts.rows == 11
    left = [n for n in rows.notes if "not rows" in n]
    assert len(left) == 1 and "/results_2/" in left[0] and "/os/" in left[0]


def test_route_names_the_layout_and_the_raised_run_alone_is_refused(tmp_path: Path) -> None:
    _write(tmp_path)
    done = CliRunner().invoke(app, ["route", str(tmp_path), "-v"])
    assert done.exit_code in (0, 1), done.output
    assert "format: osworld" in done.output
    assert "truncated ← the last step's done is false" in done.output
    raised = next(tmp_path.glob("results_2/*/*/*/os/*/traj.jsonl"))
    alone = CliRunner().invoke(app, ["route", str(raised)])
    assert alone.exit_code == 2
    lines = alone.output.strip().splitlines()
    assert len(lines) == 1 and "no result.txt beside it" in lines[0]


def test_a_result_that_is_not_a_number_is_refused_at_its_file(tmp_path: Path) -> None:
    folder = _example(tmp_path, 0, "chrome", "bb5e4c0d-f964-439c-97b6-bdb9747de3f4", 1.0)
    (folder / "result.txt").write_text("passed\n")
    done = CliRunner().invoke(app, ["route", str(tmp_path)])
    assert done.exit_code == 2
    assert "result.txt" in done.output and "not the evaluator's score" in done.output
