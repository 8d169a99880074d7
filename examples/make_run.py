"""Write a training run's directory step by step, as prime-rl or verl write theirs.

    python3 examples/make_run.py examples/run                      # the recorded example
    python3 examples/make_run.py /tmp/run --layout verl --delay 0.1   # a run in progress

The run: ``--tasks`` tasks, ``--k`` rollouts each, every step. Until ``--collapse`` every task
splits (some rollouts pass, some fail); from it on every rollout fails (the band collapses to
the floor). From ``--truncated-from`` the last rollout of task 0, cut off at the token cap,
passes. From ``--errors-from`` the first rollout of half the tasks is a harness error. Output
is byte for byte the same for the same arguments (no clock, no randomness).

prime-rl layout (``{output_dir}/{run.name}``): ``configs/orchestrator.json``, ``metrics.jsonl``
(a trainer row and an orchestrator row per step) and ``rollouts/step_N/train/{all,effective}/
traces.jsonl``, one episode per line, appended as episodes arrive; ``effective`` leaves out
the zero-advantage episodes. ``--late STEP`` writes that step's orchestrator row before its
rollouts directory. verl layout (``trainer.rollout_data_dir``): one ``N.jsonl`` per step
with ``input``, ``output``, ``score``, ``step`` (and the reward function's ``truncated``).
``--delay S`` sleeps between writes, and writes each line (a verl step file: the whole file)
in two pieces, so a reader sees partial lines, as it would on a live run.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, BinaryIO

MODEL = "Qwen/Qwen3-0.6B"
BASE_TIME = 1_767_225_600.0  # a fixed clock: the files do not depend on when they were made


class Scenario:
    """Who passes, who is cut off and who errs, at each step."""

    def __init__(
        self,
        *,
        tasks: int = 8,
        k: int = 4,
        collapse: int | None = 5,
        truncated_from: int | None = 9,
        errors_from: int | None = None,
    ) -> None:
        self.tasks, self.k = tasks, k
        self.collapse, self.truncated_from, self.errors_from = collapse, truncated_from, errors_from

    def episodes(self, step: int) -> list[dict[str, Any]]:
        """Every rollout of a step: task, rollout index, reward, truncated, error."""
        out = []
        for t in range(self.tasks):
            collapsed = self.collapse is not None and step >= self.collapse
            passes = 0 if collapsed else 1 + (t + step) % (self.k - 1)
            for j in range(self.k):
                cut = t == 0 and j == self.k - 1
                passed = j < passes
                if cut:
                    passed = self.truncated_from is not None and step >= self.truncated_from
                erred = (
                    self.errors_from is not None
                    and step >= self.errors_from
                    and j == 0
                    and t < self.tasks // 2
                )
                out.append(
                    {
                        "task": t,
                        "rollout": j,
                        "reward": 0.0 if erred else float(passed),
                        "truncated": cut,
                        "error": "HTTP 503 Service Unavailable" if erred else None,
                    }
                )
        return out


class Writer:
    """Appends lines to files, in two pieces with a pause between when ``delay`` > 0."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def pause(self) -> None:
        if self.delay:
            time.sleep(self.delay)

    def line(self, fh: BinaryIO, record: dict[str, Any]) -> None:
        data = (json.dumps(record, separators=(",", ":")) + "\n").encode()
        if self.delay:
            half = len(data) // 2
            fh.write(data[:half])
            fh.flush()
            self.pause()
            fh.write(data[half:])
        else:
            fh.write(data)
        fh.flush()

    def lines(self, path: Path, records: list[dict[str, Any]]) -> None:
        """Append records one line at a time (each in two pieces under ``delay``)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as fh:
            for record in records:
                self.line(fh, record)

    def whole(self, path: Path, records: list[dict[str, Any]], *, rename: bool = False) -> None:
        """Write a file in one go, as verl writes a step's file: under ``delay``, in two pieces
        cut inside a line (a reader sees a partial last line, never a shorter whole file);
        ``rename``: written beside it and renamed into place (it appears whole)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        data = b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)
        target = path.with_name(path.name + ".tmp") if rename else path
        with open(target, "wb") as fh:
            cut = data.rfind(b"\n", 0, len(data) - 1) + 1 + 2 if self.delay else len(data)
            fh.write(data[:cut])
            fh.flush()
            if cut < len(data):
                self.pause()
                fh.write(data[cut:])
        if rename:
            target.rename(path)


def _trace(step: int, e: dict[str, Any], advantage: float) -> dict[str, Any]:
    record: dict[str, Any] = {
        "version": 1,
        "id": f"s{step}-t{e['task']}-r{e['rollout']}",
        "task": {"type": "math", "key": f"task-{e['task']}", "data": {"question": e["task"]}},
        "group": {"id": f"s{step}-g{e['task']}"},
        "run": {"work": {"step": step - 1}},  # sampled by the previous step's policy
        "rewards": {"correct": {"score": e["reward"], "weight": 1.0}},
        "stop_condition": "max_output_tokens" if e["truncated"] else None,
        "calls": [{"finish_reason": "length" if e["truncated"] else "stop"}],
        "traces": [{"nodes": [_node(step, e, advantage)]}],
    }
    if e["error"] is not None:
        record["error"] = e["error"]
    return record


def _node(step: int, e: dict[str, Any], advantage: float) -> dict[str, Any]:
    """The model's turn: a few tokens, the sampler's log-prob of each (fixed, negative), the
    loss mask and the advantage."""
    n = 3 + (e["task"] + e["rollout"] + step) % 4
    seed = 7 * e["task"] + 3 * e["rollout"] + step
    logprobs = [-round(0.05 + ((seed + i) % 9) / 10, 2) for i in range(n)]
    return {
        "token_ids": [100 + (seed + i) % 50 for i in range(n)],
        "logprobs": logprobs,
        "mask": [1] * n,
        "advantage": advantage,
    }


def _advantages(episodes: list[dict[str, Any]]) -> list[float]:
    """R − the mean reward of the episode's group (its task's rollouts at this step)."""
    sums: dict[int, list[float]] = {}
    for e in episodes:
        sums.setdefault(e["task"], []).append(e["reward"])
    return [e["reward"] - sum(sums[e["task"]]) / len(sums[e["task"]]) for e in episodes]


def write_prime_rl(
    root: Path, steps: int, scenario: Scenario, *, delay: float = 0.0, late: int | None = None
) -> None:
    """A prime-rl run directory, one step after another."""
    out = Writer(delay)
    (root / "configs").mkdir(parents=True, exist_ok=True)
    config = {"model": {"name": MODEL}, "max_off_policy_steps": 1}
    (root / "configs" / "orchestrator.json").write_text(json.dumps(config, indent=2) + "\n")
    metrics = root / "metrics.jsonl"
    metrics.touch()
    for step in range(1, steps + 1):
        episodes = scenario.episodes(step)
        advantages = _advantages(episodes)
        traces = [_trace(step, e, a) for e, a in zip(episodes, advantages, strict=True)]
        effective = [t for t, a in zip(traces, advantages, strict=True) if abs(a) > 1e-9]
        clock = BASE_TIME + 60.0 * step
        trainer = {"step": step, "time": clock, "loss/mean": 0.0, "producer": "trainer"}
        mean = sum(e["reward"] for e in episodes) / len(episodes)
        orchestrator = {
            "step": step,
            "time": clock + 1.0,
            "train/agg/all/reward/mean": mean,
            "off_policy/mean": 1.0,
            "off_policy/max": 1,
            "progress/rollouts": len(episodes),
            "producer": "orch",
        }
        base = root / "rollouts" / f"step_{step}" / "train"

        if step != late:  # appended episode by episode while the step runs
            out.lines(base / "all" / "traces.jsonl", traces)
            out.lines(base / "effective" / "traces.jsonl", effective)
        out.lines(metrics, [trainer, orchestrator])
        if step == late:  # the directory appears after the row, its files whole
            out.pause()
            out.pause()
            out.whole(base / "all" / "traces.jsonl", traces, rename=True)
            out.whole(base / "effective" / "traces.jsonl", effective, rename=True)
        out.pause()


def write_verl(root: Path, steps: int, scenario: Scenario, *, delay: float = 0.0) -> None:
    """A verl rollout_data_dir, one N.jsonl per step."""
    out = Writer(delay)
    root.mkdir(parents=True, exist_ok=True)
    for step in range(1, steps + 1):
        rows = [
            {
                "input": f"<|im_start|>user\nQuestion {e['task']}: what is {e['task']} + 1?"
                "<|im_end|>\n<|im_start|>assistant\n",
                # each rollout samples its own reply, as a real run's do
                "output": (f"{e['task'] + 1}" if e["reward"] else "I do not know")
                + f" (sample {e['rollout']})",
                "score": e["reward"],
                "step": step,
                "truncated": e["truncated"],
            }
            for e in scenario.episodes(step)
        ]
        out.whole(root / f"{step}.jsonl", rows)
        out.pause()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the run directory to write (new, or empty)")
    parser.add_argument("--layout", choices=("prime-rl", "verl"), default="prime-rl")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--collapse", type=int, default=5)
    parser.add_argument("--truncated-from", type=int, default=9)
    parser.add_argument("--errors-from", type=int, default=None)
    parser.add_argument("--late", type=int, default=None)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args(argv)
    if args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        parser.error(f"{args.out} exists and is not an empty directory: give a new one")
    scenario = Scenario(
        tasks=args.tasks,
        k=args.k,
        collapse=args.collapse,
        truncated_from=args.truncated_from,
        errors_from=args.errors_from,
    )
    if args.layout == "verl":
        write_verl(args.out, args.steps, scenario, delay=args.delay)
    else:
        write_prime_rl(args.out, args.steps, scenario, delay=args.delay, late=args.late)


if __name__ == "__main__":
    main()
