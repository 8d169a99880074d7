"""What a watch reports of a run on disk: every number from what the run recorded (a lag the
rollouts do not record is the orchestrator's or not recorded, an ungraded rollout failed
under ``--missing fail`` is a reward of 0), and every step on disk it did not report named,
with why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from whilecli.errors import InputError
from whilecli.watch import WatchOptions, watch_run
from whilecli.watch.layout import VerlRun


def _trace(step: int, task: int, score: float | None, version: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "task": {"key": f"task-{task}", "data": {"q": task}},
        "group": {"id": f"s{step}-g{task}"},
        "rewards": {"correct": {"score": score, "weight": 1.0}},
        "stop_condition": None,
        "calls": [{"finish_reason": "stop"}],
    }
    if version is not None:
        out["run"] = {"work": {"step": version}}
    return out


def _prime_step(
    root: Path, step: int, scores: list[list[float]], version: int | None, row: dict[str, Any]
) -> None:
    folder = root / "rollouts" / f"step_{step}" / "train" / "all"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(_trace(step, t, s, version)) for t, group in enumerate(scores) for s in group
    ]
    (folder / "traces.jsonl").write_text("\n".join(lines) + "\n")
    with open(root / "metrics.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"step": step, "producer": "orch", **row}) + "\n")


def _json(root: Path, **options: Any) -> tuple[list[dict[str, Any]], list[str]]:
    out: list[str] = []
    said: list[str] = []
    missing = options.pop("missing", "skip")
    opts = WatchOptions(format="json", bootstrap_draws=50, **options)
    watch_run(root, opts, write=out.append, say=said.append, missing=missing)
    return [json.loads(line) for line in out], said


def _text(root: Path, **options: Any) -> list[str]:
    lines: list[str] = []
    opts = WatchOptions(bootstrap_draws=50, **options)
    watch_run(root, opts, write=lines.append, say=lines.append)
    return lines


MIXED = [[1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]]
FLOOR = [[0.0] * 4, [0.0] * 4]


@pytest.mark.parametrize(
    ("version", "row", "lag"),
    [
        (None, {"off_policy/mean": 2.5, "off_policy/max": 4}, (2.5, 4, "metrics.jsonl")),
        (None, {"train/x": 1}, None),
        (1, {"off_policy/mean": 2.5, "off_policy/max": 4}, (2.0, 2, "rows")),
    ],
)
def test_lag_is_what_the_run_recorded(
    tmp_path: Path, version: int | None, row: dict[str, Any], lag: tuple[Any, ...] | None
) -> None:
    """Traces that record no policy version: the orchestrator's off-policy numbers, else not
    recorded; never step − the step folder's own number (a lag of 0)."""
    _prime_step(tmp_path, 3, MIXED, version, row)
    records, _ = _json(tmp_path)
    off = records[0]["off_policy"]
    assert (off["mean"], off["max"], off["from"]) == lag if lag is not None else off is None


def test_zero_advantage_counts_ungraded_failures_as_reward_zero(tmp_path: Path) -> None:
    """Under --missing fail an ungraded rollout is a failure, reward 0: in a group of failures
    it has zero advantage like the rest; under skip it is left out of both counts."""
    lines = [
        {"input": f"p{t}", "output": f"o{t}{r}", "score": None if r == 3 else 0.0, "step": 1}
        for t in range(4)
        for r in range(4)
    ]
    (tmp_path / "1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    failed, _ = _json(tmp_path, missing="fail")
    share = failed[0]["zero_advantage_share"]
    assert (share["value"], share["n_rows"]) == (1.0, 16)
    skipped, _ = _json(tmp_path)
    share = skipped[0]["zero_advantage_share"]
    assert (share["value"], share["n_rows"]) == (1.0, 12)


def test_a_folder_named_like_a_verl_step_file_is_no_step(tmp_path: Path) -> None:
    for step in (1, 3):
        (tmp_path / f"{step}.jsonl").write_text('{"input": "p", "output": "o", "score": 1}\n')
    (tmp_path / "2.jsonl").mkdir()
    (tmp_path / "2.jsonl" / "x.jsonl").write_text('{"input": "p", "output": "o", "score": 0}\n')
    assert [s.step for s in VerlRun(tmp_path, follow=False).poll(final=True)] == [1, 3]


def test_a_metrics_row_writing_step_twice_is_refused(tmp_path: Path) -> None:
    _prime_step(tmp_path, 1, MIXED, 0, {"train/x": 1})
    with open(tmp_path / "metrics.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"step": 4, "step": 1, "producer": "orch"}\n')
    with pytest.raises(InputError, match="field 'step': written twice") as err:
        _text(tmp_path)
    assert err.value.exit_code == 2 and "metrics.jsonl:2" in str(err.value)


def test_steps_on_disk_not_reported_are_named(tmp_path: Path) -> None:
    prime = tmp_path / "prime"
    for step in (1, 2, 3):
        _prime_step(prime, step, MIXED, step - 1, {"train/x": 1})
    (prime / "metrics.jsonl").unlink()
    lines = _text(prime)
    assert " ".join(" ".join(lines).split()).endswith(
        "note: step 3 on disk not reported: with no metrics.jsonl a step counts as finished"
        " once a later step's directory exists 2 steps; alerts: none"
    )
    verl = tmp_path / "verl"
    verl.mkdir()
    (verl / "1.jsonl").write_text('{"input": "p", "output": "o", "score": 1}\n')
    (verl / "2.jsonl").write_text('{"input": "p", "output": "o", "score": 1}\n{"inp')
    _, said = _json(verl)
    assert said == [
        "note: step 2 on disk not reported (2.jsonl): empty, or its last line is incomplete"
        " (still being written)"
    ]


def test_the_window_label_names_the_steps_it_holds(tmp_path: Path) -> None:
    for step in (1, 2, 5):
        _prime_step(tmp_path, step, FLOOR, step - 1, {"train/x": 1})
    text = " ".join(" ".join(_text(tmp_path)).split())
    assert "the band collapsed to the floor over steps 1-2, 5 (every group fails)" in text


def test_a_restart_on_disk_is_said_in_the_report(tmp_path: Path) -> None:
    """metrics.jsonl holding a run and its restart: a note, then the new run's steps."""
    for step in (1, 2, 3):
        _prime_step(tmp_path, step, MIXED, step - 1, {"train/x": 1})
    for step in (1, 2):
        _prime_step(tmp_path, step, FLOOR, step - 1, {"train/x": 2})
    lines = _text(tmp_path)
    text = " ".join(" ".join(lines).split())
    assert "the run restarted or resumed from step 1" in text
    assert "step 3 on disk not reported" in text
    records, said = _json(tmp_path)
    assert [(r["step"], r["pass_at_1"]["value"]) for r in records] == [(1, 0.0), (2, 0.0)]
    assert records[0]["notices"] and said[0].startswith("note: metrics.jsonl line 4")
