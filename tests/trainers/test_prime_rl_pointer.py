"""prime-rl cannot run the single-rollout family: ``config`` refuses each, pointing at where
whilecli runs it (the verl plug-in and the TRL trainer for FlashReinforce; whilecli's own
two-step loop for SAO and BPCO, which the verl plug-in refuses)."""

from __future__ import annotations

import pytest

from whilecli.emit.prime_rl import normalize_method
from whilecli.errors import UsageError


def test_flash_reinforce_points_at_verl_and_trl() -> None:
    with pytest.raises(UsageError) as err:
        normalize_method("FlashReinforce")
    text = str(err.value)
    assert "whilecli.trainers.verl" in text and "whilecli_flash_reinforce" in text
    assert "whilecli.trainers.trl.FlashReinforceTrainer" in text


@pytest.mark.parametrize("method", ["sao", "bpco"])
def test_critic_methods_point_at_the_two_step_loop(method: str) -> None:
    with pytest.raises(UsageError, match="batch_stats once per optimizer batch"):
        normalize_method(method)
