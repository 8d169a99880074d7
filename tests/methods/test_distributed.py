"""Two gloo ranks, each with part of a batch, compute the coefficients of the whole batch."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from whilecli.methods.batch import Batch
from whilecli.methods.bpco import BPCO
from whilecli.methods.flash_reinforce import FlashReinforce
from whilecli.methods.sao import SAO

DATA = Path(__file__).parents[1] / "data" / "batch_single.jsonl"
SPLIT = 3  # rank 0 takes rows [0, 3), rank 1 the rest: unequal halves on purpose
METHODS = {"flash_reinforce": FlashReinforce, "sao": SAO, "bpco": BPCO}


def _rows() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text().splitlines()]


def _worker(rank: int, port: int, out_dir: str) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        rows = _rows()
        part = rows[:SPLIT] if rank == 0 else rows[SPLIT:]
        batch = Batch.from_rows(part)
        result = {
            name: cls().update(batch, group=dist.group.WORLD).coefficients
            for name, cls in METHODS.items()
        }
        torch.save(result, Path(out_dir) / f"rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_ranks_equal_the_global_batch(tmp_path: Path) -> None:
    mp.spawn(_worker, args=(_free_port(), str(tmp_path)), nprocs=2, join=True)
    parts = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    rows = _rows()
    whole = Batch.from_rows(rows)
    for name, cls in METHODS.items():
        expected = cls().update(whole).coefficients
        for rank, lo, hi in ((0, 0, SPLIT), (1, SPLIT, len(rows))):
            got = parts[rank][name]
            width = got.shape[1]
            torch.testing.assert_close(got, expected[lo:hi, :width], rtol=1e-12, atol=1e-15)
            assert bool((expected[lo:hi, width:] == 0).all())
    # the global quantities matter: rank 0 alone would give different coefficients
    alone = FlashReinforce().update(Batch.from_rows(rows[:SPLIT])).coefficients
    assert not torch.allclose(alone, parts[0]["flash_reinforce"])
