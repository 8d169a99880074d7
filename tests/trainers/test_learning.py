"""It learns: the toy echo task (a tiny random Qwen2-style model, a character vocabulary, no
downloads) trained with FlashReinforce inside verl's actor (its ``TrainingWorker`` and FSDP
engine on a one-rank gloo group, ``ppo_loss`` calling the registered loss per micro-batch,
``compute_advantage`` calling the registered estimator) and inside TRL's trainer; seeded,
single-threaded. The success probability ends at least 0.3 and at least 0.2 above a control
whose rewards are permuted within each batch."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytest.importorskip("verl", reason="the learning runs need the trainers environment")
pytest.importorskip("trl", reason="the learning runs need the trainers environment")

from whilecli.trainers.toy import run_trl, run_verl  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


def test_flash_reinforce_learns_inside_verls_actor() -> None:
    learned = run_verl("flash_reinforce", steps=30, micro_batches=2, seed=0)
    control = run_verl("flash_reinforce", steps=30, micro_batches=2, seed=0, permute=True)
    assert learned[0] < 0.15  # a random policy: about 1/8
    assert learned[-1] >= 0.3, learned
    assert learned[-1] - control[-1] >= 0.2, (learned[-1], control[-1])


def test_flash_reinforce_learns_inside_trl(tmp_path: Path) -> None:
    learned = run_trl(steps=40, seed=0, output_dir=str(tmp_path / "run"))
    control = run_trl(steps=40, seed=0, permute=True, output_dir=str(tmp_path / "control"))
    assert learned[0] < 0.15
    assert learned[-1] >= 0.3, learned
    assert learned[-1] - control[-1] >= 0.2, (learned[-1], control[-1])
