"""Training rows beside held-out rows are two evaluations: refused pooled, read apart.

A trainer writes the rollouts it trains on and those it evaluates on held-out prompts, named
by a column (TRL's ``mode``, Tinker's ``split``, a dataset's ``split``, ``phase``, ``stage``,
``subset``) or by the path (TRL's ``completions/train/`` and ``completions/eval/``, Tinker's
``train_rollout_summaries.jsonl`` beside ``eval_<name>_rollout_summaries.jsonl``, AReaL's
``rollout/`` beside ``eval-rollout/``, ``train_*`` beside ``eval_*``). Pooled, the held-out tasks read as the training pool's band (DESIGN
section 1, "Pooling"): every reader refuses them (exit 2), in one line naming the sources and
what reads them apart (``--by COLUMN`` or ``--by source``), unless ``--pool``. Files of one
split, and a column whose values name no split, are read as before.

Each generator writes a layout and records each row's split as it wrote it; the truth (refused
or not, and each split's tasks) is counted from those records, apart from the reader.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.commands.diff import read_tasks
from whilecli.errors import InputError
from whilecli.io.batch import read_batch
from whilecli.io.read import PoolingError, read_rows
from whilecli.io.slices import read_slices
from whilecli.io.table import read_table
from whilecli.route.pool import Counts, summarize

TRAIN_WORDS = ("train", "training", "TRAIN")
HELD_WORDS = ("eval", "test", "validation", "val", "Eval", "dev")


@dataclass
class Layout:
    files: dict[str, Any] = field(default_factory=dict)  # name -> rows (JSONL) or a frame
    #: Each written row: (file, task key, passed, split kind: train / eval / None).
    rows: list[tuple[str, str, bool, str | None]] = field(default_factory=list)
    read: str = "."  # what is read, under the folder
    column: str | None = None  # the column that names the split, where one does


def _kind(word: str | None) -> str | None:
    if word is None:
        return None
    low = word.lower()
    return "train" if low in ("train", "training") else "eval" if low in HELD_WORDS_L else None


HELD_WORDS_L = {w.lower() for w in HELD_WORDS}


def _groups(rng: random.Random, n: tuple[int, int] = (3, 6)) -> list[list[bool]]:
    return [[rng.random() < 0.5 for _ in range(rng.randint(2, 4))] for _ in range(rng.randint(*n))]


def trl(rng: random.Random, variant: str) -> Layout:
    """TRL ``completions/[mode/]completions_{step:05d}.parquet``; ``mode`` on newer rows."""
    out = Layout(read="completions", column=None if variant == "folders-no-mode" else "mode")
    frames: dict[str, list[dict[str, Any]]] = {}
    for mode in ("train", "eval"):
        name = (
            "completions/completions_00040.parquet"
            if variant == "one-file"
            else f"completions/{mode}/completions_00040.parquet"
        )
        for t, group in enumerate(_groups(rng)):
            prompt = f"<|im_start|>user\n{mode} question {t}<|im_end|>\n"
            for i, passed in enumerate(group):
                row = {"mode": mode, "step": 40, "prompt": prompt, "completion": f"draw {i}"}
                row |= {"accuracy_reward": float(passed), "advantage": 0.0}
                if variant == "folders-no-mode":
                    del row["mode"]
                frames.setdefault(name, []).append(row)
                out.rows.append((name, f"{name}|{prompt}", passed, mode))
    out.files = {name: pl.DataFrame(rows) for name, rows in frames.items()}
    return out


def tinker(rng: random.Random, variant: str) -> Layout:
    """Tinker's log path: ``iteration_<N>/train_rollout_summaries.jsonl`` beside
    ``eval_<name>_rollout_summaries.jsonl``; ``variant`` says which bases it writes."""
    out = Layout(read="run", column="split")
    bases = {"both": ("train", "eval_test"), "eval-only": ("eval_test",)}[variant]
    for iteration in (0, 10):
        for base in bases:
            split = "train" if base == "train" else "eval"
            name = f"run/iteration_{iteration:06d}/{base}_rollout_summaries.jsonl"
            records = []
            for g, group in enumerate(_groups(rng)):
                for t, passed in enumerate(group):
                    metrics = {"format": 1.0, "correct": float(passed)}
                    step = {"reward": float(passed), "episode_done": True, "metrics": metrics}
                    records.append(
                        {
                            "schema_version": 1,
                            "split": split,
                            "iteration": iteration,
                            "group_idx": g,
                            "traj_idx": t,
                            "sampling_client_step": iteration,
                            "total_reward": float(passed),
                            "steps": [{**step, "stop_reason": "stop"}],
                        }
                    )
                    out.rows.append((name, f"{split}:{iteration}:{g}", passed, split))
            out.files[name] = records
    out.files["run/config.json"] = {"model_name": "Qwen/Qwen3-8B"}
    return out


def areal(rng: random.Random, variant: str) -> Layout:
    """AReaL's log path: ``rollout/<version>/<task_id>.jsonl`` and, with ``both``,
    ``eval-rollout/<version>/<task_id>.jsonl`` (each split's executor counts from 0)."""
    out = Layout(read="trial0", column="split")
    for folder in ("rollout", "eval-rollout") if variant == "both" else ("rollout",):
        split = "eval" if folder == "eval-rollout" else "train"
        for task, group in enumerate(_groups(rng)):
            name = f"trial0/{folder}/3/{task}.jsonl"
            out.files[name] = [
                {
                    "task_id": task,
                    "sample_idx": i,
                    "head_version": 3,
                    "tail_version": 3,
                    "reward": float(passed),
                    "prompt": f"{folder} problem {task}",
                    "completion": f"answer {i}",
                }
                for i, passed in enumerate(group)
            ]
            out.rows.extend((name, f"{folder}:{task}", p, split) for p in group)
    return out


def rows_with_column(rng: random.Random, variant: str) -> Layout:
    """One JSON Lines file of rows whose ``variant`` column (``metadata.split`` nested) names
    each row's split, in words a dataset uses."""
    column = variant
    out = Layout(read="rows.jsonl", column=column)
    rows = []
    for words in ((rng.choice(TRAIN_WORDS),), (rng.choice(HELD_WORDS),)):
        word = words[0]
        for t, group in enumerate(_groups(rng)):
            for i, passed in enumerate(group):
                row: dict[str, Any] = {
                    "task_id": f"{_kind(word)}-{t}",
                    "prompt": f"{_kind(word)} problem {t}",
                    "completion": f"answer {i}",
                    "reward": float(passed),
                }
                if "." in column:
                    row["metadata"] = {column.split(".")[1]: word}
                else:
                    row[column] = word
                rows.append(row)
                out.rows.append(("rows.jsonl", f"{_kind(word)}-{t}", passed, _kind(word)))
    rng.shuffle(rows)
    out.files["rows.jsonl"] = rows
    return out


def named_files(rng: random.Random, variant: str) -> Layout:
    """Plain rows in files whose names say the split (``train_rows.jsonl``, ``gsm8k_test``)
    or whose folders do (``train/``, ``eval/``); ``same``: both files of one split."""
    names = {
        "prefix": ("train_rows.jsonl", "eval_rows.jsonl"),
        "suffix": ("gsm8k_train.jsonl", "gsm8k_test.jsonl"),
        "folders": ("train/rows.jsonl", "validation/rows.jsonl"),
        "same": ("train_a.jsonl", "train_b.jsonl"),
    }[variant]
    out = Layout()
    for index, name in enumerate(names):
        kind = "train" if name.startswith("train") or "_train" in name else "eval"
        rows = []
        for t, group in enumerate(_groups(rng)):
            for i, passed in enumerate(group):
                task = f"f{index}-{t}"
                rows.append(
                    {"task_id": task, "prompt": f"problem {task}", "completion": f"a{i}"}
                    | {"reward": float(passed)}
                )
                out.rows.append((name, task, passed, kind))
        out.files[name] = rows
    return out


def no_split_column(rng: random.Random, variant: str) -> Layout:
    """A ``subset`` or ``stage`` column whose values name no split (a topic, a curriculum
    stage): one evaluation, read as before."""
    out = Layout(read="rows.jsonl")
    rows = []
    for value in ("algebra", "geometry") if variant == "subset" else ("1", "2"):
        for t, group in enumerate(_groups(rng)):
            for i, passed in enumerate(group):
                task = f"{value}-{t}"
                rows.append(
                    {"task_id": task, "reward": float(passed), "completion": f"a{i}"}
                    | {variant: value}
                )
                out.rows.append(("rows.jsonl", task, passed, None))
    out.files["rows.jsonl"] = rows
    return out


GENERATORS: dict[str, tuple[Callable[[random.Random, str], Layout], tuple[str, ...]]] = {
    "trl": (trl, ("folders-mode", "folders-no-mode", "one-file")),
    "tinker": (tinker, ("both", "eval-only")),
    "areal": (areal, ("both", "train-only")),
    "column": (rows_with_column, ("split", "phase", "stage", "subset", "mode", "metadata.split")),
    "names": (named_files, ("prefix", "suffix", "folders", "same")),
    "no-split": (no_split_column, ("subset", "stage")),
}
CASES = [(g, v, seed) for g, (_, vs) in GENERATORS.items() for v in vs for seed in range(2)]


def _write(folder: Path, layout: Layout) -> Path:
    for name, content in layout.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, pl.DataFrame):
            content.write_parquet(path)
        elif isinstance(content, dict):
            path.write_text(json.dumps(content))
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in content))
    return folder / layout.read


def _tasks(rows: list[tuple[str, str, bool, str | None]]) -> list[tuple[int, int]]:
    tasks: dict[str, list[int]] = {}
    for _, task, passed, _ in rows:
        n, p = tasks.get(task, [0, 0])
        tasks[task] = [n + 1, p + passed]
    return sorted((n, p) for n, p in tasks.values())


def _got(rows: Any) -> list[tuple[int, int]]:
    tasks = summarize(rows).tasks
    return sorted((int(r["n"]), int(r["passes"])) for r in tasks.iter_rows(named=True))


@pytest.mark.parametrize(
    ("gen", "variant", "seed"), CASES, ids=[f"{g}-{v}-{s}" for g, v, s in CASES]
)
def test_train_and_held_out_rows_are_not_pooled(
    tmp_path: Path, gen: str, variant: str, seed: int
) -> None:
    layout = GENERATORS[gen][0](random.Random(seed), variant)
    path = str(_write(tmp_path, layout))
    kinds = {kind for _, _, _, kind in layout.rows if kind is not None}
    files = sorted({f for f, _, _, _ in layout.rows})

    if len(kinds) < 2:  # one evaluation: read as it always was
        assert _got(read_rows([path], aggregate=Counts())) == _tasks(layout.rows)
        return

    readers: list[Callable[[], Any]] = [
        lambda: read_rows([path]),
        lambda: read_tasks(path, mapping=None, pass_threshold=None, input_format=None),
        lambda: read_table([path]),
        lambda: read_batch(path),
    ]
    for read in readers:
        with pytest.raises(PoolingError) as err:
            read()
        message = str(err.value)
        assert "\n" not in message and "--pool" in message, message
        assert "training rows and held-out rows" in message, message
        for name in files:  # every source named (the file, or each file)
            assert str(tmp_path / name) in message or len(files) > 4, message
        if layout.column is not None:
            assert f"--by {layout.column}" in message, message
        else:
            assert "--by source" in message, message

    pooled = read_rows([path], pool=True, aggregate=Counts())  # on purpose: every row
    assert summarize(pooled).rows == len(layout.rows)

    result = CliRunner().invoke(app, ["route", path, "--format", "json"])
    assert result.exit_code == 2, result.output

    if layout.column is not None:  # read apart by the column: each split's own tasks
        slices = read_slices([path], layout.column, aggregate=Counts)
        got = {}
        for value, rows in slices:
            assert not isinstance(rows, InputError), rows
            got.setdefault(_kind(value), []).extend(_got(rows))
        for kind in kinds:
            mine = [r for r in layout.rows if r[3] == kind]
            assert sorted(got[kind]) == _tasks(mine), kind
    else:  # each file apart (route --by source)
        for name in files:
            mine = [r for r in layout.rows if r[0] == name]
            assert _got(read_rows([str(tmp_path / name)], aggregate=Counts())) == _tasks(mine)
