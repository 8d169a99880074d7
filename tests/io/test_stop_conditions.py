"""``stop_condition``: the name of the condition that ended a verifiers or prime-rl episode,
read one way wherever it is written (plain rows, a prime-rl run's traces): a limit on tokens
or the context cut the episode, whatever the harness calls it (``length``, ``max_tokens``,
``max_tokens_reached``, ``truncated``, ``prompt_too_long``); any other name is the
environment's own end. Cut-off names outside a short list read as "not cut" hid cut-off
passes: a firm GRPO where the truth is fix-reward. ``max_turns_reached`` stays an end: it
ends every rollout of verifiers' ``SingleTurnEnv`` (``MultiTurnEnv(max_turns=1)``)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from read_helpers import frame_of
from rows_files import write_rows
from whilecli.io.aliases import cut_stop
from whilecli.io.read import read_rows

#: Names a harness writes when a limit on tokens or the context ended the episode.
CUT = ["length", "max_tokens", "max_tokens_reached", "truncated", "prompt_too_long"]
CUT += ["max_output_tokens", "max_total_tokens", "max_input_tokens", "context_length"]
CUT += ["Context_Length ", "MAX_TOKENS", "compaction_failed", "max_turns", "token_limit"]
#: Names of the environment's own ends.
ENDED = ["is_completed", "state_completed", "max_turns_reached", "no_tools_called"]
ENDED += ["answer_submitted", "has_error", "game_over", "not_truncated"]


@pytest.mark.parametrize("name", CUT)
def test_a_limit_cuts_the_episode(name: str) -> None:
    assert cut_stop(name) is True


@pytest.mark.parametrize("name", ENDED)
def test_another_name_is_the_environments_own_end(name: str) -> None:
    assert cut_stop(name) is False


@pytest.mark.parametrize("name", [None, "", 3])
def test_no_name_says_nothing(name: Any) -> None:
    assert cut_stop(name) is None


def _prime_run(root: Path, stops: list[str]) -> Path:
    """A prime-rl run directory as its orchestrator writes one step's traces."""
    run = root / "run"
    (run / "configs").mkdir(parents=True)
    (run / "configs" / "orchestrator.json").write_text(json.dumps({"model": {"name": "Org/M"}}))
    folder = run / "rollouts" / "step_1" / "train" / "all"
    folder.mkdir(parents=True)
    lines = [
        json.dumps(
            {
                "task": {"key": f"t{i // 4}"},
                "group": {"id": f"g{i // 4}"},
                "run": {"work": {"step": 1}},
                "rewards": {"r": {"score": float(i % 2), "weight": 1.0}},
                "stop_condition": stop,
                "calls": [{"finish_reason": "stop"}],
                "episode": i,
            }
        )
        for i, stop in enumerate(stops)
    ]
    (folder / "traces.jsonl").write_text("\n".join(lines) + "\n")
    return run


@pytest.mark.parametrize("where", ["jsonl", "parquet", "prime-rl"])
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cut=st.sampled_from(CUT),
    ended=st.sampled_from(ENDED),
    n_cut=st.integers(1, 8),
    spread=st.randoms(use_true_random=False),
)
def test_a_stop_condition_is_read_as_it_says(
    tmp_path: Path, where: str, cut: str, ended: str, n_cut: int, spread: Any
) -> None:
    stops = [cut] * n_cut + [ended] * (24 - n_cut)
    spread.shuffle(stops)
    truth = [s == cut for s in stops]
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    if where == "prime-rl":
        frame = read_rows([str(_prime_run(folder, stops))], pass_threshold=0.5).frame.collect()
    else:
        rows = [
            {"task_id": f"t{i // 4}", "reward": float(i % 2), "completion": f"reply {i}"}
            | {"stop_condition": stop}
            for i, stop in enumerate(stops)
        ]
        frame, _ = frame_of(write_rows(folder, rows, where))
    assert frame["truncated"].to_list() == truth
