"""What following a run costs: ``while watch`` on a generated run of many steps.

    PYTHONPATH=src python3 benchmarks/watch_bench.py --steps 1000 --episodes 1000

Writes a run directory (prime-rl layout by default: ``metrics.jsonl`` with a trainer and an
orchestrator row per step, ``rollouts/step_N/train/all/traces.jsonl`` with ``--episodes``
episodes each; ``--layout verl``: one ``N.jsonl`` per step), then times, through the watch's
own follower and step reader (:mod:`whilecli.watch.layout`, :class:`whilecli.watch.run.Watch`):

- **catch-up**: the first poll and the reading of every step on disk (what a watch started
  on a running job pays once);
- **idle poll**: a poll when nothing changed (median of ``--polls``), and the bytes of
  ``metrics.jsonl`` it read;
- **new step**: the polls after one more step was written (verl: two, the second seeing the
  file unchanged), and reading that step (median over ``--new`` steps), against a **rescan**,
  reading every step again, which is what a follower without offsets would pay on each poll
  (the catch-up's cost).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from whilecli.watch.layout import PrimeRLRun, VerlRun
from whilecli.watch.options import WatchOptions
from whilecli.watch.run import Watch

K = 8  # rollouts per task


def _trace(step: int, i: int) -> str:
    task = i // K
    passed = (i + step) % K < (task + step) % K
    cut = i % K == K - 1
    return (
        f'{{"task":{{"key":"task-{task}"}},"group":{{"id":"s{step}-g{task}"}},'
        f'"run":{{"work":{{"step":{max(0, step - 1)}}}}},'
        f'"rewards":{{"correct":{{"score":{1.0 if passed and not cut else 0.0},"weight":1.0}}}},'
        f'"stop_condition":{"&quot;max_output_tokens&quot;" if cut else "null"},'
        f'"calls":[{{"finish_reason":"{"length" if cut else "stop"}"}}]}}\n'
    ).replace("&quot;", '"')


def _verl(step: int, i: int) -> str:
    task = i // K
    passed = (i + step) % K < (task + step) % K
    row = {"input": f"question {task}", "output": "x", "score": float(passed), "step": step}
    return json.dumps(row) + "\n"


def write_step(root: Path, layout: str, step: int, episodes: int) -> None:
    """One more step of the run."""
    if layout == "verl":
        (root / f"{step}.jsonl").write_text("".join(_verl(step, i) for i in range(episodes)))
        return
    path = root / "rollouts" / f"step_{step}" / "train" / "all" / "traces.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(_trace(step, i) for i in range(episodes)))
    rows = [
        {"step": step, "time": 0.0, "loss/mean": 0.1, "producer": "trainer"},
        {
            "step": step,
            "time": 0.0,
            "off_policy/mean": 1.0,
            "off_policy/max": 1,
            "producer": "orch",
        },
    ]
    with open(root / "metrics.jsonl", "a") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--layout", choices=("prime-rl", "verl"), default="prime-rl")
    parser.add_argument("--polls", type=int, default=50)
    parser.add_argument("--new", type=int, default=5)
    parser.add_argument("--data", type=Path, default=None, help="where to write the run")
    args = parser.parse_args()

    root = args.data or Path(tempfile.mkdtemp(prefix="watch_bench_"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        for step in range(1, args.steps + 1):
            write_step(root, args.layout, step, args.episodes)
        wrote = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        print(
            f"wrote {args.steps} steps × {args.episodes} episodes ({size / 1e6:.0f} MB) in {wrote:.1f} s"
        )

        options = WatchOptions(follow=True)
        # settle=0: the cost of a poll, not the wait for a last file to stop growing
        run = PrimeRLRun(root, settle=0) if args.layout == "prime-rl" else VerlRun(root, True, 0)
        state = Watch(root, options, layout=run.layout)
        t0 = time.perf_counter()
        finished = run.poll(final=False)
        first_poll = time.perf_counter() - t0
        finished += run.poll(final=False)  # verl: the last file, once it has not grown
        for step in finished:
            state.read(step)
        catch_up = time.perf_counter() - t0
        assert len(finished) == args.steps, len(finished)
        print(
            f"catch-up: first poll {first_poll * 1e3:.0f} ms, {len(finished)} steps read in"
            f" {catch_up:.1f} s ({catch_up / len(finished) * 1e3:.1f} ms a step)"
        )

        idle = []
        read_bytes = []
        for _ in range(args.polls):
            before = run.tail.offset if isinstance(run, PrimeRLRun) else 0
            t0 = time.perf_counter()
            assert run.poll(final=False) == []
            idle.append(time.perf_counter() - t0)
            read_bytes.append((run.tail.offset if isinstance(run, PrimeRLRun) else 0) - before)
        print(
            f"idle poll: {statistics.median(idle) * 1e6:.0f} µs (median of {args.polls}),"
            f" {max(read_bytes)} bytes of metrics.jsonl read"
        )

        new = []
        for step in range(args.steps + 1, args.steps + 1 + args.new):
            write_step(root, args.layout, step, args.episodes)
            t0 = time.perf_counter()
            got = run.poll(final=False)
            if not got:  # verl: the last file is finished when it has not grown since
                got = run.poll(final=False)
            for one in got:
                state.read(one)
            new.append(time.perf_counter() - t0)
            assert len(got) == 1, got
        per_new = statistics.median(new)
        print(f"new step: {per_new * 1e3:.0f} ms to poll and read it (median of {args.new})")

        print(
            f"rescan: reading every step again, as a follower without offsets would on each"
            f" poll, costs the catch-up's {catch_up:.1f} s, {catch_up / per_new:.0f}× the new"
            " step's poll"
        )
    finally:
        if args.data is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
