"""prime-rl run directories: a generated run read through the one reader, against a slow loop
over the episodes (task, reward = Σ score × weight, truncation, model, version)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.formats import prime_rl
from whilecli.io.read import read_rows

STOPS = [None, "max_output_tokens", "max_turns", "done", "context_length"]
FINISH = ["stop", "length", "tool_calls"]

episode = st.fixed_dictionaries(
    {
        "task": st.integers(0, 3),
        "scores": st.lists(
            st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0])),
            min_size=1,
            max_size=3,
        ),
        "stop": st.sampled_from(STOPS),
        "finish": st.lists(st.sampled_from(FINISH), max_size=3),
    }
)


def write_run(
    root: Path,
    steps: dict[int, list[dict[str, Any]]],
    model: str | None = "Org/Model",
    keep: str = "all",
) -> Path:
    run = root / "run"
    (run / "configs").mkdir(parents=True, exist_ok=True)
    if model is not None:
        (run / "configs" / "orchestrator.json").write_text(json.dumps({"model": {"name": model}}))
    (run / "metrics.jsonl").write_text('{"step": 0}\n')
    for step, episodes in steps.items():
        folder = run / "rollouts" / f"step_{step}" / "train" / keep
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        for i, e in enumerate(episodes):
            lines.append(
                json.dumps(
                    {
                        "task": {"key": f"t{e['task']}", "data": {"q": e["task"]}},
                        "group": {"id": f"g{step}-{e['task']}"},
                        "run": {"work": {"step": step}},
                        "rewards": {
                            f"r{j}": {"score": s, "weight": w}
                            for j, (s, w) in enumerate(e["scores"])
                        },
                        "stop_condition": e["stop"],
                        "calls": [{"finish_reason": f} for f in e["finish"]],
                        "traces": e.get(
                            "traces", [{"nodes": [{"logprobs": [-0.5], "advantages": [0.0]}]}]
                        ),
                        "episode": i,
                    }
                )
            )
        (folder / "traces.jsonl").write_text("\n".join(lines) + "\n")
    return run


def slow(e: dict[str, Any]) -> tuple[str, float, bool]:
    reward = 0.0
    for s, w in e["scores"]:
        reward += s * w
    cut = e["stop"] in ("max_output_tokens", "max_turns", "context_length")
    if not cut and e["finish"]:
        cut = e["finish"][-1] == "length"
    return f"t{e['task']}", reward, cut


@settings(max_examples=15, deadline=None)
@given(st.lists(episode, min_size=2, max_size=12), st.integers(1, 40))
def test_run_dir_reads_latest_step_as_a_slow_loop_does(
    tmp_path_factory: pytest.TempPathFactory, episodes: list[dict[str, Any]], last: int
) -> None:
    root = tmp_path_factory.mktemp("prl")
    first = [dict(e, scores=[(1.0, 1.0)]) for e in episodes]
    run = write_run(root, {1: first, last + 1: episodes})
    rows = read_rows([str(run)], pass_threshold=0.5)
    frame = rows.frame.collect()
    assert rows.format == "prime-rl"
    want = [slow(e) for e in episodes]
    assert frame["task_id"].to_list() == [w[0] for w in want]
    assert frame["reward"].to_list() == pytest.approx([w[1] for w in want])
    assert frame["truncated"].to_list() == [w[2] for w in want]
    assert set(frame["model"].to_list()) == {"Org/Model"}
    assert set(frame["policy_version"].to_list()) == {str(last + 1)}
    again = prime_rl.read_step(run, step=1, pass_threshold=0.5).frame.collect()
    assert again.height == len(first) and set(again["reward"].to_list()) == {1.0}


def test_step_folder_traces_file_and_run_read_alike(tmp_path: Path) -> None:
    episodes = [
        {"task": t % 2, "scores": [(t % 2, 1.0)], "stop": None, "finish": ["stop"]}
        for t in range(6)
    ]
    run = write_run(tmp_path, {3: episodes, 10: episodes})
    by_run = prime_rl.read_step(run).frame.collect()
    by_step = prime_rl.read_step(run / "rollouts" / "step_10").frame.collect()
    by_file = read_rows([str(run / "rollouts/step_10/train/all/traces.jsonl")]).frame.collect()
    assert by_run.equals(by_step) and by_run.equals(by_file)
    assert prime_rl.steps(run) == [3, 10]
    assert [n for n, _ in prime_rl.step_files(run)] == [3, 10]


def test_effective_traces_are_read_with_a_note(tmp_path: Path) -> None:
    episodes = [{"task": 0, "scores": [(t % 2, 1.0)], "stop": None, "finish": []} for t in range(4)]
    run = write_run(tmp_path, {1: episodes}, model=None, keep="effective")
    rows = read_rows([str(run)])
    assert rows.frame.collect()["model"].to_list() == [None] * 4
    assert any("zero-advantage" in n for n in rows.notes)


@pytest.mark.parametrize("count", [1, 7, 8, 9, 40])
def test_a_missing_step_names_the_first_and_the_last_written(count: int) -> None:
    steps = list(range(1, count + 1))
    shown = prime_rl._steps_shown(steps)
    assert shown.startswith("1") and shown.split(";")[0].endswith(str(count))
    if count <= 8:
        assert shown == ", ".join(map(str, steps))
    else:
        assert "…" in shown and f"{count} in all" in shown and shown.startswith("1, 2, …")


def test_missing_step_and_empty_run_are_one_line(tmp_path: Path) -> None:
    episodes = [{"task": 0, "scores": [(1.0, 1.0)], "stop": None, "finish": []}]
    run = write_run(tmp_path, {2: episodes})
    with pytest.raises(InputError, match=r"--step 5: .*steps written: 2"):
        prime_rl.read_step(run, step=5)
    empty = tmp_path / "empty"
    (empty / "rollouts").mkdir(parents=True)
    (empty / "configs").mkdir()
    with pytest.raises(InputError, match="no rollouts/step_N"):
        read_rows([str(empty)])


def test_cli_routes_a_run_dir_and_its_step(tmp_path: Path) -> None:
    episodes = [
        {"task": t % 3, "scores": [(float(t % 2), 1.0)], "stop": None, "finish": ["stop"]}
        for t in range(12)
    ]
    run = write_run(tmp_path, {1: episodes, 2: episodes})
    out = subprocess.run(
        [sys.executable, "-m", "whilecli", "route", str(run), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode in (0, 1), out.stderr
    assert "prime-rl" in out.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["route"],
        ["check"],
        ["summarize", "-o", "-"],
        ["ada"],
        ["update", "--method", "rm"],
    ],
)
def test_every_row_command_takes_step(tmp_path: Path, command: list[str]) -> None:
    from typer.testing import CliRunner

    from whilecli.cli import app

    one = [{"task": t % 2, "scores": [(1.0, 1.0)], "stop": None, "finish": []} for t in range(4)]
    two = [
        {"task": t % 3, "scores": [(float(t % 2), 1.0)], "stop": None, "finish": []}
        for t in range(9)
    ]
    run = write_run(tmp_path, {1: one, 2: two})
    args = [command[0], str(run), *command[1:]]
    missing = CliRunner().invoke(app, [*args, "--step", "7"])
    assert missing.exit_code == 2 and "--step 7" in missing.output, missing.output
    picked = CliRunner().invoke(app, [*args, "--step", "1"])
    latest = CliRunner().invoke(app, args)  # the step chosen before is not kept
    assert picked.output != latest.output or command[0] in ("update", "check")
    assert "--step" not in latest.output


def test_diff_and_size_take_step(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from whilecli.cli import app

    episodes = [
        {"task": t % 3, "scores": [(float(t % 2), 1.0)], "stop": None, "finish": []}
        for t in range(9)
    ]
    run = write_run(tmp_path, {1: episodes, 2: episodes})
    done = CliRunner().invoke(app, ["diff", str(run), str(run), "--step", "1"])
    assert done.exit_code in (0, 1), done.output
    done = CliRunner().invoke(
        app, ["size", "--before", str(run), "--after", str(run), "--step", "2"]
    )
    assert done.exit_code in (0, 1), done.output


#: A trace node: the model's turn (log-probs, a mask or not) or a node that generated nothing.
node = st.one_of(
    st.builds(
        lambda lp, masked: {"logprobs": lp, **({"mask": [1] * len(lp)} if masked else {})},
        st.lists(st.floats(-5, -0.01, allow_nan=False), max_size=5),
        st.booleans(),
    ),
    st.just({"role": "tool"}),
)
traced = episode.map(dict) | st.builds(
    lambda e, traces: {**e, "traces": traces},
    episode,
    st.lists(st.fixed_dictionaries({"nodes": st.lists(node, max_size=3)}), max_size=3),
)


def slow_lists(e: dict[str, Any]) -> tuple[list[float] | None, list[int] | None]:
    """The episode's log-probs and mask, joined over its traces' nodes, the slow way."""
    traces = e.get("traces", [{"nodes": [{"logprobs": [-0.5]}]}])
    turns = [n for t in traces for n in t["nodes"] if "logprobs" in n]
    if not turns:
        return None, None
    logprobs = [v for n in turns for v in n["logprobs"]]
    masked = all("mask" in n for n in turns)
    return logprobs, [m for n in turns for m in n["mask"]] if masked else None


@settings(max_examples=25, deadline=None)
@given(st.lists(traced, min_size=1, max_size=8))
def test_a_runs_token_log_probs_are_its_nodes_joined(
    tmp_path_factory: pytest.TempPathFactory, episodes: list[dict[str, Any]]
) -> None:
    """Each episode's per-token log-probs are its ``traces[].nodes[].logprobs`` in order, as the
    batch every update reads (a node that generated nothing adds nothing)."""
    from whilecli.io.batch import read_batch

    run = write_run(tmp_path_factory.mktemp("prl"), {3: episodes})
    cols = read_batch(run)
    want = [slow_lists(e) for e in episodes]
    if all(lp is None for lp, _ in want):
        assert "logprobs" not in cols.lists
        return
    flat, lengths = cols.lists["logprobs"]
    assert lengths.tolist() == [-1 if lp is None else len(lp) for lp, _ in want]
    assert flat.tolist() == pytest.approx([v for lp, _ in want if lp for v in lp])
    masks = [m for lp, m in want if lp is not None]
    if masks and all(m is not None for _, m in want):
        assert "action_mask" in cols.lists


@pytest.mark.parametrize("method", ["grpo", "flash_reinforce", "max_rl"])
def test_update_trains_on_a_generated_runs_traces(tmp_path: Path, method: str) -> None:
    """``update`` on a prime-rl run directory (a generated one, as the trainer writes it):
    the latest step's episodes, their log-probs from the traces' nodes."""
    import importlib.util

    from typer.testing import CliRunner

    from whilecli.cli import app

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("make_run", root / "examples" / "make_run.py")
    assert spec is not None and spec.loader is not None
    make_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_run)
    run = tmp_path / "run"
    make_run.write_prime_rl(run, 3, make_run.Scenario(tasks=4, k=4))
    out = tmp_path / "c.jsonl"
    done = CliRunner().invoke(app, ["update", str(run), "--method", method, "-o", str(out)])
    assert done.exit_code == 0, done.output
    written = [json.loads(line) for line in out.read_text().splitlines()]
    episodes = [
        json.loads(line)
        for line in (run / "rollouts/step_3/train/all/traces.jsonl").read_text().splitlines()
    ]
    assert len(written) == len(episodes) == 16
    for row, e in zip(written, episodes, strict=True):
        assert len(row["coefficients"]) == len(e["traces"][0]["nodes"][0]["logprobs"])
    step_one = CliRunner().invoke(app, ["update", str(run), "--method", method, "--step", "1"])
    assert step_one.exit_code == 0, step_one.output


@pytest.mark.parametrize("kind", ["folder", "loop", "dangling"])
def test_an_all_traces_path_that_is_no_file_is_refused_not_passed_over(
    tmp_path: Path, kind: str
) -> None:
    """A step whose ``all/traces.jsonl`` is there but no readable file: refused naming it,
    never read from ``effective`` beside it (whose pass rate leaves out the zero-advantage
    episodes: 1.00 where the step's was 0.25)."""
    episodes = [{"task": t // 4, "scores": [(float(t % 4 == 0), 1.0)], "stop": None,
                 "finish": []} for t in range(16)]  # fmt: skip
    run = write_run(tmp_path, {10: episodes}, keep="effective")
    bad = run / "rollouts" / "step_10" / "train" / "all" / "traces.jsonl"
    bad.parent.mkdir(parents=True)
    if kind == "folder":
        bad.mkdir()
    elif kind == "loop":
        bad.symlink_to(bad)
    else:
        bad.symlink_to(tmp_path / "nowhere.jsonl")
    with pytest.raises(InputError, match="not a readable file") as err:
        read_rows([str(run)])
    assert str(bad) in str(err.value)


def test_effective_traces_leave_the_verdict_provisional(tmp_path: Path) -> None:
    """A run whose steps hold only ``effective`` traces (every zero-advantage group left
    out) routed a firm GRPO on 40 of 40 split tasks: the band cannot see the groups that
    all fail or all pass, so the finding says so and the verdict is provisional."""
    from whilecli.route import run_route
    from whilecli.route.model import Route

    episodes = [{"task": t // 4, "scores": [(float(t % 2), 1.0)], "stop": None, "finish": []}
                for t in range(160)]  # fmt: skip
    run = write_run(tmp_path, {3: episodes}, keep="effective")
    route = run_route([str(run)])
    assert isinstance(route, Route)
    assert [f.kind for f in route.data_quality if f.kind == "selected_rows"] == ["selected_rows"]
    assert route.provisional and route.method == "grpo"
    whole = write_run(tmp_path / "all", {3: episodes}, keep="all")
    alone = run_route([str(whole)])
    assert isinstance(alone, Route)
    assert "selected_rows" not in [f.kind for f in alone.data_quality]


def test_traces_written_while_the_step_is_looked_at_are_never_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A running trainer writes ``all/traces.jsonl`` just after the reader's look found
    nothing there: the step is not written yet (the next look reads it), never "not a
    readable file" (``watch --follow`` stopped on a run in progress so, under load)."""
    from whilecli.io.formats.prime_rl import step_traces

    step = tmp_path / "step_3"
    target = step / "train" / "all" / "traces.jsonl"
    target.parent.mkdir(parents=True)
    real = Path.stat

    def looked_just_before_it_was_written(self: Path, *args: object, **kw: object) -> object:
        if self == target and not os.path.exists(target):
            target.write_text("")  # the trainer writes it right after this look
            raise FileNotFoundError(str(self))
        return real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "stat", looked_just_before_it_was_written)
    assert step_traces(step) is None
    monkeypatch.undo()
    assert step_traces(step) == target
