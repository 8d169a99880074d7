"""Hostile rows in every format the readers take, through every command that reads rows: a
right number or one located line and exit 2, never a traceback, exit 70, a hang or a
silently wrong count.

One generator per class, each drawing the reported instance and its neighbours from a seed:

- ids that are no id (null, NaN, an infinity, the texts ``None``/``null``/``NaN``, a lone
  UTF-16 surrogate escape, a list or an object) at a drawn row of every converted format
  and of plain JSON Lines, refused at the row's place in the file's own terms (its line,
  its CSV line, its array entry, its archive member);
- HELM robustness runs: perturbed entries beside each instance are not rollouts;
- EvalScope reports of datasets whose names are prefixes of each other;
- ``.eval`` members with a field of the wrong shape;
- CSV and TSV records over several lines, ragged records and bad quoting;
- row lines, prompts and documents nested past the one depth guard;
- directory links that loop, under ``**`` globs and directory arguments;
- list- and object-valued task ids in ``update``'s batches;
- pass@k and pass^k over tasks claiming up to 10^9 rollouts each.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import random
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import EXAMPLES
from whilecli import jsonout
from whilecli.cli import app
from whilecli.io.read import read_rows
from whilecli.route import stats

PREFIX = "whilecli: error: "
BATCH = EXAMPLES / "batch.jsonl"


def _invoke(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.stdout + r.stderr
    assert "internal error" not in r.stderr, r.stderr
    return r.exit_code, r.stdout, r.stderr


def _refused(args: list[str], *says: str) -> str:
    code, _, err = _invoke(args)
    lines = err.strip().splitlines()
    assert code == 2, (args, err)
    assert len(lines) == 1 and lines[0].startswith(PREFIX), err
    for word in says:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def _readers(path: str, tmp: Path) -> dict[str, list[str]]:
    """Every command that reads rows, on ``path``."""
    return {
        "route": ["route", path],
        "route-json": ["route", path, "--format", "json"],
        "check": ["check", path],
        "diff": ["diff", path, path, "--draws", "50"],
        "size": ["size", "--before", path, "--after", path, "--draws", "50"],
        "summarize": ["summarize", path, "-o", str(tmp / "summary.parquet"), "--force"],
        "ada": ["ada", path],
        "groupwise": ["update", path, "--method", "groupwise", "-o", "-"],
        "rm": ["update", path, "--method", "rm"],
    }


def _counts(path: str, tmp: Path) -> dict[str, tuple[int, int]]:
    """task -> (rollouts, passes), as ``summarize`` counts them."""
    out = tmp / "counts.parquet"
    code, _, err = _invoke(["summarize", path, "-o", str(out), "--force"])
    assert code == 0, err
    frame = pl.read_parquet(out)
    return {t: (n, c) for t, n, c in frame.select("task_id", "n", "passes").iter_rows()}


# --- writers: one per format, each placing a raw JSON value as row `bad`'s id ------------

MARK = "@@ID@@"


@dataclass(frozen=True)
class Written:
    path: Path
    place: str  # how an error names the bad row: "rows.jsonl:3", "log.eval: member ..."


def _dump(value: object, raw: str) -> str:
    return json.dumps(value).replace(json.dumps(MARK), raw)


def _ids(n: int, bad: int) -> list[object]:
    return [MARK if i == bad else f"t{i // 2}" for i in range(n)]


def _rewards(n: int) -> list[float]:
    return [float(i % 3 == 0) for i in range(n)]


def w_jsonl(d: Path, n: int, bad: int, raw: str) -> Written:
    path = d / "rows.jsonl"
    rows = [
        {"task_id": t, "reward": r, "factor": 0.5}
        for t, r in zip(_ids(n, bad), _rewards(n), strict=True)
    ]
    path.write_text("".join(_dump(r, raw) + "\n" for r in rows))
    return Written(path, f"rows.jsonl:{bad + 1}")


def w_array(d: Path, n: int, bad: int, raw: str) -> Written:
    path = d / "rows.json"
    rows = [{"task_id": t, "reward": r} for t, r in zip(_ids(n, bad), _rewards(n), strict=True)]
    path.write_text(_dump(rows, raw).replace("}, {", "},\n{"))
    return Written(path, f"rows.json: entry {bad}")


def w_rows_doc(d: Path, n: int, bad: int, raw: str) -> Written:
    path = d / "doc.json"
    rows = [{"task_id": t, "reward": r} for t, r in zip(_ids(n, bad), _rewards(n), strict=True)]
    path.write_text(_dump({"model": "m", "rows": rows}, raw))
    return Written(path, f"doc.json: rows[{bad}]")


def _table(d: Path, n: int, bad: int, raw: str, sep: str, name: str) -> Written:
    """A table whose cells sometimes span lines; the bad record's first line is named."""
    text = json.loads(raw) if raw.startswith('"') else ("" if raw == "null" else raw)
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=sep, lineterminator="\n")
    writer.writerow(["task_id", "reward", "note"])
    line, place = 2, 0
    for i, (t, r) in enumerate(zip(_ids(n, bad), _rewards(n), strict=True)):
        note = "two\nlines" if i % 3 == 1 else "one"
        writer.writerow([text if t == MARK else t, r, note])
        if i == bad:
            place = line
        line += 1 + note.count("\n")
    path = d / name
    path.write_text(buf.getvalue())
    return Written(path, f"{name}:{place}")


def w_csv(d: Path, n: int, bad: int, raw: str) -> Written:
    return _table(d, n, bad, raw, ",", "rows.csv")


def w_tsv(d: Path, n: int, bad: int, raw: str) -> Written:
    return _table(d, n, bad, raw, "\t", "rows.tsv")


def w_evalscope(d: Path, n: int, bad: int, raw: str) -> Written:
    folder = d / "reviews" / "m"
    folder.mkdir(parents=True)
    rows = [
        {
            "index": t,
            "sample_score": {"score": {"value": {"acc": r}}},
            "messages": [
                {"role": "user", "content": f"q {t}"},
                {"role": "assistant", "content": "a"},
            ],
        }
        for t, r in zip(_ids(n, bad), _rewards(n), strict=True)
    ]
    path = folder / "ds_default.jsonl"
    path.write_text("".join(_dump(r, raw) + "\n" for r in rows))
    return Written(path, f"ds_default.jsonl:{bad + 1}")


def _sample(t: object, r: float, epoch: int) -> dict[str, object]:
    return {
        "id": t,
        "epoch": epoch,
        "input": f"q {t}",
        "scores": {"match": {"value": "C" if r else "I"}},
        "output": {"completion": "a", "stop_reason": "stop"},
    }


def w_eval(d: Path, n: int, bad: int, raw: str) -> Written:
    path = d / "log.eval"
    header = {"eval": {"model": "m", "task": "t"}, "status": "success"}
    member = ""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("header.json", json.dumps(header))
        for i, (t, r) in enumerate(zip(_ids(n, bad), _rewards(n), strict=True)):
            name = f"samples/s{i}_epoch_{i % 2 + 1}.json"
            z.writestr(name, _dump(_sample(t, r, i % 2 + 1), raw))
            if i == bad:
                member = name
    return Written(path, f"log.eval: member {member}")


def w_inspect_json(d: Path, n: int, bad: int, raw: str) -> Written:
    path = d / "log.json"
    samples = [
        _sample(t, r, i % 2 + 1)
        for i, (t, r) in enumerate(zip(_ids(n, bad), _rewards(n), strict=True))
    ]
    path.write_text(_dump({"eval": {"model": "m", "task": "t"}, "samples": samples}, raw))
    return Written(path, f"log.json: samples[{bad}]")


def w_helm(d: Path, n: int, bad: int, raw: str) -> Written:
    path = d / "per_instance_stats.json"
    entries = [
        {
            "instance_id": t,
            "train_trial_index": 0,
            "stats": [{"name": {"name": "exact_match", "split": "test"}, "mean": r}],
        }
        for t, r in zip(_ids(n, bad), _rewards(n), strict=True)
    ]
    path.write_text(_dump(entries, raw))
    return Written(path, f"per_instance_stats.json: entry {bad}")


def w_atropos(d: Path, n: int, bad: int, raw: str) -> Written:
    path = d / "groups.jsonl"
    groups = [
        {"seed": MARK if g == bad else g, "scores": [1.0, 0.0], "tokens": [[1], [2]]}
        for g in range(n)
    ]
    path.write_text("".join(_dump(g, raw) + "\n" for g in groups))
    return Written(path, f"groups.jsonl:{bad + 1}")


def w_prime_rl(d: Path, n: int, bad: int, raw: str) -> Written:
    path = d / "traces.jsonl"
    rows = [
        {
            "task": {"key": t},
            "rewards": {"correct": {"score": r, "weight": 1.0}},
            "group": {"id": f"g{i // 2}"},
        }
        for i, (t, r) in enumerate(zip(_ids(n, bad), _rewards(n), strict=True))
    ]
    path.write_text("".join(_dump(r, raw) + "\n" for r in rows))
    return Written(path, f"traces.jsonl:{bad + 1}")


def w_parquet(d: Path, n: int, bad: int, raw: str) -> Written:
    path = d / "rows.parquet"
    value = None if raw == "null" else json.loads(raw)
    ids = [value if t == MARK else t for t in _ids(n, bad)]
    frame = pl.DataFrame(
        {"task_id": ids, "reward": _rewards(n), "factor": [0.5] * n},
        schema={"task_id": pl.String, "reward": pl.Float64, "factor": pl.Float64},
    )
    frame.write_parquet(path)
    return Written(path, f"rows.parquet: row {bad}")


WRITERS: dict[str, Callable[[Path, int, int, str], Written]] = {
    "jsonl": w_jsonl,
    "parquet": w_parquet,
    "json-array": w_array,
    "rows-doc": w_rows_doc,
    "csv": w_csv,
    "tsv": w_tsv,
    "evalscope": w_evalscope,
    "eval-zip": w_eval,
    "inspect-json": w_inspect_json,
    "helm": w_helm,
    "atropos": w_atropos,
    "prime-rl": w_prime_rl,
}
#: Raw JSON values that are no task id. A table cell holds text only: its missing value is
#: an empty cell, and the others are the texts a writer leaves for one.
NO_IDS = {
    "null": "null",
    "nan": "NaN",
    "inf": "-Infinity",
    "None": '"None"',
    "null-text": '"null"',
    "NaN-text": '"NaN"',
    "high-surrogate": '"\\ud800"',
    "low-surrogate": '"\\udc01x"',
    "list": '["t0"]',
    "object": '{"k": 1}',
}
TEXT_ONLY = {"csv", "tsv", "parquet"}
#: An Atropos group without a seed is keyed by its group (its line), as the report says.
KEYED_HONESTLY = {("atropos", "null")}
TEXT_IDS = {"null", "None", "null-text", "NaN-text"}


def _id_cases() -> list[tuple[str, str, int]]:
    rng = random.Random(27)
    out = []
    for fmt in WRITERS:
        for kind in NO_IDS:
            if fmt in TEXT_ONLY and kind not in TEXT_IDS:
                continue
            out.append((fmt, kind, rng.randrange(6)))
    return out


ID_CASES = _id_cases()


@pytest.mark.parametrize(("fmt", "kind", "bad"), ID_CASES, ids=[f"{f}-{k}" for f, k, _ in ID_CASES])
def test_no_id_is_refused_at_its_place(fmt: str, kind: str, bad: int, tmp_path: Path) -> None:
    """Every format, every value that is no task id, at a drawn row: one line naming the row's
    place in the file, never a task named "None", "nan" or "[...]", never two ids merged."""
    written = WRITERS[fmt](tmp_path, 8, bad, NO_IDS[kind])
    if (fmt, kind) in KEYED_HONESTLY:
        counts = _counts(str(written.path), tmp_path)
        assert counts[f"group {bad + 1}"] == (2, 1)  # keyed by its group, and says so
        return
    _refused(["route", str(written.path)], written.place)


#: Each format's refusal through every command that reads rows.
EVERY_READER = [(fmt, kind) for fmt in WRITERS for kind in ("None", "high-surrogate")]


@pytest.mark.parametrize(("fmt", "kind"), EVERY_READER)
def test_no_id_is_refused_by_every_reader(fmt: str, kind: str, tmp_path: Path) -> None:
    if fmt in TEXT_ONLY and kind not in TEXT_IDS:
        kind = "null"
    written = WRITERS[fmt](tmp_path, 8, 3, NO_IDS[kind])
    for name, args in _readers(str(written.path), tmp_path).items():
        line = _refused(args, written.place)
        assert "task id" in line or "instance_id" in line or "sample id" in line, (name, line)


@pytest.mark.parametrize("kind", ["None", "nan", "high-surrogate", "list"])
def test_watch_names_a_trace_whose_key_is_no_id(kind: str, tmp_path: Path) -> None:
    """``watch`` reads each step's traces through the same reader: a step whose episode has no
    task key ends the watch with the one located line, after the steps before it."""
    import shutil

    from conftest import ROOT

    run = tmp_path / "run"
    shutil.copytree(ROOT / "examples" / "run", run)
    last = max((int(p.name[5:]), p) for p in (run / "rollouts").glob("step_*"))[1]
    bad = random.Random(kind).randrange(4)
    for traces in sorted(last.glob("train/*/traces.jsonl")):
        lines = traces.read_text().splitlines()
        row = json.loads(lines[bad])
        row["task"]["key"] = MARK
        lines[bad] = _dump(row, NO_IDS[kind])
        traces.write_text("\n".join(lines) + "\n")
    code, out, err = _invoke(["watch", str(run)])
    assert code == 2 and "step" in out, err
    line = err.strip().splitlines()[-1]
    assert line.startswith(PREFIX) and f"traces.jsonl:{bad + 1}" in line, line


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_every_format_reads_its_good_rows_right(fmt: str, tmp_path: Path) -> None:
    """The neighbour with every id good: read, with the counts it holds."""
    written = WRITERS[fmt](tmp_path, 8, -1, "null")
    counts = _counts(str(written.path), tmp_path)
    if fmt == "atropos":
        assert counts == {str(g): (2, 1) for g in range(8)}
    else:
        assert counts == {f"t{i}": (2, 1 if i % 3 != 2 else 0) for i in range(4)}


def test_lone_surrogates_and_nul_are_one_rule_on_every_path(tmp_path: Path) -> None:
    """A high surrogate (the fast reader's U+0000), a low one (which fails the fast reader,
    so the exact one reads the file) and a real NUL: the same refusal."""
    for raw in ('"\\ud800"', '"\\udfff"', '"\\u0000"', '"a\\ud83db"'):
        path = tmp_path / "r.jsonl"
        path.write_text(
            '{"task_id": "x", "reward": 1}\n' + '{"task_id": ' + raw + ', "reward": 0}\n'
        )
        _refused(["route", str(path)], "r.jsonl:2", "U+0000")
    # a surrogate pair is one character, and a lone surrogate in a prompt is no id: read
    path.write_text(
        '{"task_id": "\\ud83d\\ude00", "reward": 1, "prompt": "\\ud800"}\n'
        '{"task_id": "\\ud83d\\ude00", "reward": 0, "prompt": "\\ud800"}\n'
    )
    assert _counts(str(path), tmp_path) == {"\U0001f600": (2, 1)}


# --- HELM robustness runs -------------------------------------------------------------------

PERTURBATIONS = ("typos", "synonym", "dialect", "lowercase", "contrast_sets")


def _helm_run(
    d: Path, rng: random.Random, instances: int, trials: int, kinds: int, with_original: bool
) -> dict[str, tuple[int, int]]:
    """A run of ``instances`` x ``trials`` with ``kinds`` perturbations of each instance, and
    the counts a right reading gives."""
    entries = []
    truth: dict[str, tuple[int, int]] = {}
    for i in range(instances):
        iid = f"id{i}"
        for trial in range(trials):
            grade = float(rng.random() < 0.5)
            stats_ = [{"name": {"name": "exact_match", "split": "test"}, "mean": grade}]
            if with_original:
                entries.append({"instance_id": iid, "train_trial_index": trial, "stats": stats_})
                n, c = truth.get(iid, (0, 0))
                truth[iid] = (n + 1, c + int(grade))
            for kind in PERTURBATIONS[:kinds]:
                pert = {
                    "name": kind,
                    "robustness": True,
                    "fairness": False,
                    "computed_on": "perturbed",
                }
                perturbed_stats = [
                    {
                        "name": {"name": "exact_match", "split": "test", "perturbation": pert},
                        "mean": float(rng.random() < 0.5),
                    }
                ]
                entries.append(
                    {
                        "instance_id": iid,
                        "perturbation": pert,
                        "train_trial_index": trial,
                        "stats": perturbed_stats,
                    }
                )
    rng.shuffle(entries)
    (d / "per_instance_stats.json").write_text(json.dumps(entries, indent=1))
    (d / "run_spec.json").write_text(
        json.dumps(
            {
                "name": "mmlu:subject=x,model=m",
                "adapter_spec": {"model": "org/m", "max_tokens": 1},
                "scenario_spec": {},
            }
        )
    )
    return truth


@pytest.mark.parametrize("seed", range(6))
def test_helm_perturbed_entries_are_not_rollouts(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    instances, trials, kinds = rng.randint(2, 6), rng.randint(1, 3), rng.randint(1, 5)
    truth = _helm_run(tmp_path, rng, instances, trials, kinds, with_original=True)
    path = str(tmp_path / "per_instance_stats.json")
    assert _counts(path, tmp_path) == truth
    code, _, err = _invoke(["route", path])
    assert code in (0, 1), err
    rows = read_rows([path])
    assert any("perturbed input" in note for note in rows.notes)


def test_helm_only_perturbed_entries_are_refused(tmp_path: Path) -> None:
    _helm_run(tmp_path, random.Random(0), 3, 1, 2, with_original=False)
    path = str(tmp_path / "per_instance_stats.json")
    for args in _readers(path, tmp_path).values():
        _refused(args, "per_instance_stats.json: entry", "perturbed input")


def test_helm_predictions_of_perturbed_inputs_are_not_the_reply(tmp_path: Path) -> None:
    _helm_run(tmp_path, random.Random(1), 2, 1, 1, with_original=True)
    entries = json.loads((tmp_path / "per_instance_stats.json").read_text())
    preds = []
    for e in entries:
        text = "perturbed reply" if e.get("perturbation") else "own reply"
        preds.append(
            {
                **{k: e[k] for k in ("instance_id", "train_trial_index")},
                "perturbation": e.get("perturbation"),
                "predicted_text": text,
            }
        )
    (tmp_path / "display_predictions.json").write_text(json.dumps(preds[::-1]))
    rows = read_rows([str(tmp_path / "per_instance_stats.json")])
    assert rows.notes is not None
    from whilecli.io.formats import helm

    converted = helm.convert(entries, tmp_path / "per_instance_stats.json", "p")
    assert {r["completion"] for r in converted.rows} == {"own reply"}


# --- EvalScope: the report of the reviews' own dataset ------------------------------------


def _evalscope(root: Path, datasets: dict[str, str], reviewed: str) -> Path:
    """Reports for ``datasets`` (name -> model) under reports/<folder>/, reviews of
    ``reviewed`` under reviews/<folder>/."""
    reviews, reports = root / "reviews" / "folder-model", root / "reports" / "folder-model"
    reviews.mkdir(parents=True)
    reports.mkdir(parents=True)
    for name, model in datasets.items():
        report = {
            "name": f"{model}@{name}",
            "dataset_name": name,
            "model_name": model,
            "metrics": [
                {
                    "name": "mean_acc",
                    "categories": [{"name": ["default"], "subsets": [{"name": "default"}]}],
                }
            ],
        }
        (reports / f"{name}.json").write_text(json.dumps(report))
    rows = [
        {
            "index": i,
            "sample_score": {"score": {"value": {"acc": float(i % 2)}}},
            "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
        }
        for i in range(4)
    ]
    path = reviews / f"{reviewed}_default.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


PREFIXED = [("gsm8k", "gsm8k_hard"), ("gpqa", "gpqa_diamond"), ("math", "math_500"), ("a", "a_b_c")]


@pytest.mark.parametrize(("short", "long"), PREFIXED)
@pytest.mark.parametrize("which", ["short", "long", "long-alone", "short-alone"])
def test_evalscope_takes_its_own_datasets_report(
    short: str, long: str, which: str, tmp_path: Path
) -> None:
    both = {short: "model-short", long: "model-long"}
    if which == "long-alone":  # only the prefix's report is there: not this dataset's
        reviews = _evalscope(tmp_path, {short: "model-short"}, long)
        expect = "folder-model"
    elif which == "short-alone":
        reviews = _evalscope(tmp_path, {long: "model-long"}, short)
        expect = "folder-model"
    else:
        reviews = _evalscope(tmp_path, both, short if which == "short" else long)
        expect = both[short if which == "short" else long]
    frame = read_rows([str(reviews)]).frame.collect()
    assert set(frame["model"].to_list()) == {expect}
    code, _, err = _invoke(["route", str(reviews)])
    assert code in (0, 1), err


# --- .eval members of the wrong shape -------------------------------------------------------

#: (member, dotted field, a wrong value): each a shape the reader checks before use.
EVAL_BREAKS = [
    ("header.json", "eval", [1]),
    ("header.json", "eval", "m"),
    ("header.json", "eval.model", 5),
    ("header.json", "eval.model", {"name": "m"}),
    ("header.json", "eval.task", ["t"]),
    ("header.json", "status", 1),
    ("sample", "id", None),
    ("sample", "id", True),
    ("sample", "id", [1]),
    ("sample", "id", {"a": 1}),
    ("sample", "id", ""),
    ("sample", "epoch", "1"),
    ("sample", "epoch", [1]),
    ("sample", "scores", [1]),
    ("sample", "scores", "C"),
    ("sample", "scores.match.value", {"a": 1, "b": 2}),
    ("sample", "scores.match.value", [1]),
    ("sample", "output", "text"),
    ("sample", "output", [1]),
    ("sample", "output.choices", {"a": 1}),
    ("sample", "output.choices", ["x"]),
    ("sample", "output.stop_reason", 3),
    ("sample", "output.completion", {"text": "a"}),
    ("sample", "input", 5),
]


def _set(doc: dict[str, object], dotted: str, value: object) -> None:
    keys = dotted.split(".")
    node = doc
    for key in keys[:-1]:
        node = node.setdefault(key, {})  # type: ignore[assignment]
    node[keys[-1]] = value


@pytest.mark.parametrize(
    ("member", "field", "value"),
    EVAL_BREAKS,
    ids=[f"{m}-{f}-{json.dumps(v)}" for m, f, v in EVAL_BREAKS],
)
def test_an_eval_member_of_the_wrong_shape(
    member: str, field: str, value: object, tmp_path: Path
) -> None:
    rng = random.Random(f"{member}{field}{value}")
    bad = rng.randrange(4)
    header: dict[str, object] = {"eval": {"model": "m", "task": "t"}, "status": "success"}
    path = tmp_path / "log.eval"
    target = "header.json"
    with zipfile.ZipFile(path, "w") as z:
        samples = []
        for i in range(4):
            sample = _sample(f"s{i // 2}", float(i % 2), i % 2 + 1)
            name = f"samples/s{i // 2}_epoch_{i % 2 + 1}.json"
            if member == "sample" and i == bad:
                _set(sample, field, value)
                target = name
            samples.append((name, sample))
        if member == "header.json":
            _set(header, field, value)
        z.writestr("header.json", json.dumps(header))
        for name, sample in samples:
            z.writestr(name, json.dumps(sample))
        z.writestr("summaries.json", json.dumps([]))
    for args in _readers(str(path), tmp_path).values():
        _refused(args, f"log.eval: member {target}", field.split(".")[-1])


def _odd_zip(path: Path, change: str) -> None:
    """A two-member .eval log whose sample member is changed: its flag, method or bytes."""
    import struct

    buf = io.BytesIO()
    method = {"bzip2": zipfile.ZIP_BZIP2, "lzma": zipfile.ZIP_LZMA}.get(change, 8)
    sample = json.dumps(_sample("a", 1.0, 1) | {"pad": "x" * 200})
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("header.json", json.dumps({"eval": {"model": "m"}}))
        z.writestr(zipfile.ZipInfo("samples/a_epoch_1.json"), sample, compress_type=method)
    data = bytearray(buf.getvalue())
    name = b"samples/a_epoch_1.json"
    for sig, flag_at, method_at, name_at in ((b"PK\x03\x04", 6, 8, 30), (b"PK\x01\x02", 8, 10, 46)):
        i = data.find(sig)
        while i != -1:
            if data[i + name_at : i + name_at + len(name)] == name:
                if change == "encrypted":
                    data[i + flag_at : i + flag_at + 2] = struct.pack("<H", 1)
                elif change.startswith("method-"):
                    data[i + method_at : i + method_at + 2] = struct.pack("<H", int(change[7:]))
                if change == "damaged" and sig == b"PK\x03\x04":
                    start = i + name_at + len(name) + 10
                    data[start : start + 20] = bytes(20)
            i = data.find(sig, i + 4)
    path.write_bytes(bytes(data))


ODD_MEMBERS = ["encrypted", "method-99", "method-7", "method-93", "damaged", "bzip2", "lzma"]


@pytest.mark.parametrize("change", ODD_MEMBERS)
def test_an_odd_eval_member_is_read_or_named(change: str, tmp_path: Path) -> None:
    path = tmp_path / "log.eval"
    _odd_zip(path, change)
    for args in _readers(str(path), tmp_path).values():
        code, _, err = _invoke(args)
        if change in ("bzip2", "lzma"):
            assert code in (0, 1) or "samples/a_epoch_1.json" not in err, err
        else:
            assert code == 2 and "log.eval: member samples/a_epoch_1.json" in err, err


def test_eval_members_of_the_right_shape_are_read(tmp_path: Path) -> None:
    written = w_eval(tmp_path, 8, -1, "null")
    assert sum(n for n, _ in _counts(str(written.path), tmp_path).values()) == 8


# --- CSV and TSV records, located by the line they start on ---------------------------------


def _csv_case(seed: int) -> tuple[str, str, str, int]:
    """(text, separator, what is wrong, the line named): records with cells spanning lines,
    then one broken record."""
    rng = random.Random(seed)
    sep = rng.choice([",", "\t"])
    lines = [sep.join(["task_id", "reward", "note"])]
    for i in range(rng.randint(1, 6)):
        note = '"a\nb\nc"' if rng.random() < 0.4 else "x"
        lines.append(sep.join([f"t{i % 2}", str(i % 2), note]))
    start = sum(line.count("\n") + 1 for line in lines) + 1
    kind = rng.choice(["ragged-long", "ragged-short", "quote-mid", "quote-open", "reward"])
    broken = {
        "ragged-long": sep.join(["t9", "1", "x", "extra"]),
        "ragged-short": "t9",
        "quote-mid": sep.join(['"t9"x', "1", "x"]),
        "quote-open": sep.join(['"t9', "1", "x"]),
        "reward": sep.join(["t9", "[1]", "x"]),
    }[kind]
    lines.append(broken)
    lines.append(sep.join(["t1", "0", "x"]))
    return "\n".join(lines) + "\n", sep, kind, start


@pytest.mark.parametrize("seed", range(16))
def test_a_broken_csv_record_is_named_by_its_line(seed: int, tmp_path: Path) -> None:
    text, sep, kind, line = _csv_case(seed)
    name = "rows.csv" if sep == "," else "rows.tsv"
    path = tmp_path / name
    path.write_text(text)
    _refused(["route", str(path)], f"{name}:{line}")


@pytest.mark.parametrize("gz", [False, True])
def test_a_bad_csv_value_is_named_by_its_line_in_every_reader(gz: bool, tmp_path: Path) -> None:
    import gzip

    text = 'task_id,reward,factor,note\nt0,1,0.5,"a\nb"\nt0,0,0.5,x\nt1,inf,0.5,x\nt1,0,0.5,x\n'
    path = tmp_path / ("rows.csv.gz" if gz else "rows.csv")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    for args in _readers(str(path), tmp_path).values():
        _refused(args, f"{path.name}:5", "reward")


# --- one depth guard -----------------------------------------------------------------------


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


DEPTHS = [jsonout.MAX_DEPTH - 2, jsonout.MAX_DEPTH + 1, 999, 5000]


def _deep_files(d: Path, depth: int) -> dict[str, tuple[Path, str]]:
    """Files nesting ``depth`` levels in one place each, and the place a refusal names."""
    good = '{"task_id": "a", "reward": 1, "factor": 0.5}\n{"task_id": "a", "reward": 0, "factor": 0.5}\n'
    out: dict[str, tuple[Path, str]] = {}
    (d / "extra.jsonl").write_text(
        good + '{"task_id": "b", "reward": 1, "x": ' + _deep(depth) + "}\n"
    )
    out["extra-field"] = (d / "extra.jsonl", "extra.jsonl:3")
    (d / "id.jsonl").write_text(good + '{"task_id": ' + _deep(depth) + ', "reward": 1}\n')
    out["task-id"] = (d / "id.jsonl", "id.jsonl:3")
    prompt = json.dumps(_deep(depth))
    (d / "prompt.jsonl").write_text(
        '{"reward": 1, "factor": 0.5, "prompt": ' + prompt + "}\n"
        '{"reward": 0, "factor": 0.5, "prompt": ' + prompt + "}\n"
    )
    out["prompt-text"] = (d / "prompt.jsonl", "")
    (d / "doc.json").write_text(
        '[{"task_id": "a", "reward": 1},\n{"task_id": "a", "reward": 0, "x": ' + _deep(depth) + "}]"
    )
    out["document"] = (d / "doc.json", "doc.json:2")
    (d / "rows.csv").write_text(
        "task_id,reward,prompt\na,1,"
        + json.dumps(_deep(depth)).replace('"', '""').join('""')
        + "\na,0,x\n"
    )
    out["csv-cell"] = (d / "rows.csv", "")
    with zipfile.ZipFile(d / "log.eval", "w") as z:
        z.writestr("header.json", '{"eval": {"model": "m"}}')
        z.writestr(
            "samples/a_epoch_1.json",
            '{"id": "a", "scores": {"m": {"value": "C"}}, "x": ' + _deep(depth) + "}",
        )
    out["eval-member"] = (d / "log.eval", "log.eval: member samples/a_epoch_1.json")
    return out


@pytest.mark.parametrize("depth", DEPTHS)
def test_nesting_past_the_guard_is_one_line_in_every_reader(depth: int, tmp_path: Path) -> None:
    for what, (path, place) in _deep_files(tmp_path, depth).items():
        deep = depth > jsonout.MAX_DEPTH
        for name, args in _readers(str(path), tmp_path).items():
            code, _, err = _invoke(args)
            if code == 2 and deep and place and what != "task-id":
                assert place in err and "nested too deeply" in err, (what, name, err)
            assert code in (0, 1, 2), (what, name, err)
            assert code != 2 or err.strip().count("\n") == 0, (what, name, err)


def test_the_one_parser_guards_depth_and_surrogates() -> None:
    for depth in (jsonout.MAX_DEPTH + 1, 5000):
        with pytest.raises(jsonout.TooDeep):
            jsonout.parse(_deep(depth))
    assert jsonout.parse(_deep(jsonout.MAX_DEPTH)) is not None
    assert jsonout.parse('{"a": "\\ud800\\udc00", "\\udfff": ["\\ud800"]}') == {
        "a": "\U00010000",
        "\x00": ["\x00"],
    }


# --- directory links that loop --------------------------------------------------------------


def _looped_tree(root: Path, rng: random.Random) -> int:
    """Folders holding row files and links back up, across and to ``/``; the rows in it."""
    folders = [root]
    rows = 0
    for i in range(rng.randint(2, 5)):
        parent = rng.choice(folders)
        child = parent / f"d{i}"
        child.mkdir()
        folders.append(child)
    for i, folder in enumerate(folders):
        if rng.random() < 0.7:
            (folder / f"r{i}.jsonl").write_text(
                "".join(
                    json.dumps({"task_id": f"f{i}", "reward": float(j % 2), "factor": 0.5}) + "\n"
                    for j in range(2)
                )
            )
            rows += 2
    for i in range(rng.randint(2, 5)):
        at = rng.choice(folders)
        target = rng.choice([*folders, Path("/")])
        os.symlink(target, at / f"link{i}", target_is_directory=True)
    if rows == 0:
        (root / "r.jsonl").write_text('{"task_id": "a", "reward": 1, "factor": 0.5}\n')
        rows = 1
    return rows


@pytest.mark.parametrize("seed", range(5))
def test_link_cycles_end_and_read_each_file_once(seed: int, tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    rows = _looped_tree(root, random.Random(seed))
    for form in (str(root), f"{root}/**/*.jsonl", f"{root}/**"):
        started = time.monotonic()
        counts = _counts(form, tmp_path)
        assert sum(n for n, _ in counts.values()) == rows, form
        assert time.monotonic() - started < 30
    for args in _readers(f"{root}/**/*.jsonl", tmp_path).values():
        code, _, err = _invoke(args)
        assert code in (0, 1, 2), err


def test_a_recursive_glob_matches_as_pythons_does(tmp_path: Path) -> None:
    from whilecli.io.sources import expand_glob

    for rel in (
        "a/b/c.jsonl",
        "a/x.jsonl",
        "top.jsonl",
        ".hidden/h.jsonl",
        "a/.h.jsonl",
        "b/c/d/e.json",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}\n")
    import glob

    for pattern in ("**/*.jsonl", "a/**/*.jsonl", "**/c/**/*.json", "**", "a/**", "**/*"):
        full = f"{tmp_path}/{pattern}"
        assert expand_glob(full) == sorted(Path(p) for p in glob.glob(full, recursive=True)), (
            pattern
        )


# --- list- and object-valued task ids in update's batches -----------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_update_refuses_a_task_id_that_is_a_list(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    rows = [json.loads(line) for line in BATCH.read_text().splitlines() if line.strip()]
    bad = rng.randrange(len(rows))
    value = rng.choice([[rows[bad]["task_id"]], {"id": rows[bad]["task_id"]}, [1, 2], []])
    kind = "list" if isinstance(value, list) else "object"
    if rng.random() < 0.5:  # every row of that task, or one
        for row in rows:
            if row["task_id"] == rows[bad]["task_id"]:
                row["task_id"] = value
        bad = next(i for i, r in enumerate(rows) if r["task_id"] == value)
    else:
        rows[bad]["task_id"] = value
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for method in ("sao", "flash_reinforce", "grpo", "bpco", "groupwise"):
        _refused(
            ["update", str(path), "--method", method, "-o", "-"], f"batch.jsonl:{bad + 1}", kind
        )
    _refused(["route", str(path)], f"batch.jsonl:{bad + 1}", kind)
    _refused(["ada", str(path)], f"batch.jsonl:{bad + 1}", kind)


# --- pass@k and pass^k: cost by tasks, not by rollouts per task -----------------------------


def _slow_ratio(m: int, n: int, k: int) -> float:
    return float(Fraction(math.comb(m, k), math.comb(n, k)))


@settings(max_examples=60)
@given(
    n=st.integers(1, 400),
    data=st.data(),
    product_k=st.sampled_from([0, 64]),
)
def test_pass_k_matches_the_exact_loop(n: int, data: st.DataObject, product_k: int) -> None:
    k = data.draw(st.integers(1, n))
    c = data.draw(st.integers(0, n))
    old = stats.PRODUCT_K
    stats.PRODUCT_K = product_k
    try:
        at_k = stats.pass_at_k_estimate(np.array([c]), np.array([n]), k)[0]
        hat_k = stats.pass_hat_k_estimate(np.array([c]), np.array([n]), k)[0]
    finally:
        stats.PRODUCT_K = old
    assert at_k == pytest.approx(1 - _slow_ratio(n - c, n, k), abs=1e-9)
    assert hat_k == pytest.approx(_slow_ratio(c, n, k), abs=1e-9)


@settings(max_examples=60)
@given(
    a=st.floats(1e-3, 1e5),
    b=st.floats(1e-3, 1e5),
    k=st.integers(1, 600),
    product_k=st.sampled_from([0, 64]),
)
def test_the_priors_moment_matches_the_product(a: float, b: float, k: int, product_k: int) -> None:
    """E[p^k] under the pool's Beta prior, which floors pass@k's spread: log-gamma past
    PRODUCT_K, the product of its k factors below."""
    exact = 1.0
    for j in range(k):
        exact *= (a + j) / (a + b + j)
    old = stats.PRODUCT_K
    stats.PRODUCT_K = product_k
    try:
        got = stats._beta_moment(a, b, k)
    finally:
        stats.PRODUCT_K = old
    assert got == pytest.approx(exact, abs=1e-8)


def test_pass_k_cost_does_not_grow_with_rollouts(tmp_path: Path) -> None:
    big = 10**9
    c = np.array([0, 1, big // 2, big - 1, big], dtype=np.float64)
    # CPU seconds of this process, not wall time: the claim is the work done, which a
    # loaded machine does not change
    started = time.process_time()
    at_k = stats.pass_at_k_estimate(c, np.full(5, big, dtype=np.float64), big)
    assert time.process_time() - started < 0.5
    assert at_k.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0]
    summary = tmp_path / "s.parquet"
    code, _, err = _invoke(["summarize", str(EXAMPLES / "mixed.jsonl"), "-o", str(summary)])
    assert code == 0, err
    import pyarrow.parquet as pq

    table = pq.read_table(summary)
    frame = pl.from_arrow(table).with_columns(
        n=pl.lit(big, pl.Int64),
        passes=pl.col("passes") * (big // 8),
        truncated=pl.lit(0, pl.Int64),
        truncated_known=pl.lit(big, pl.Int64),
        truncated_passes=pl.lit(0, pl.Int64),
        reward_sum=(pl.col("passes") * (big // 8)).cast(pl.Float64),
        reward_sumsq=(pl.col("passes") * (big // 8)).cast(pl.Float64),
        models=pl.col("models").list.eval(
            pl.element().struct.with_fields(pl.lit(big, pl.Int64).alias("rows"))
        ),
    )
    huge = tmp_path / "huge.parquet"
    pq.write_table(frame.to_arrow().replace_schema_metadata(table.schema.metadata), huge)
    started = time.process_time()
    code, out, err = _invoke(["route", str(huge), "--format", "json"])
    assert code in (0, 1), err
    assert time.process_time() - started < 60
    assert str(big) in out
