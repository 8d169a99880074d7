"""The second set of real dumps (tests/data/real, copied from the project's data-real
collection; see each folder's PROVENANCE.md): every format read with no flags, and the numbers
counted by hand from each file's own fields (data-real/README.md, "truth")."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def numbers(paths: list[Path | str], **kw: Any) -> dict[str, Any]:
    rows = read_rows([str(p) for p in paths], **kw)
    frame = rows.frame.collect()
    per = frame.group_by("task_id").agg(n=pl.len(), p=pl.col("passed").cast(pl.Float64).mean())
    return {
        "format": rows.format,
        "rows": frame.height,
        "tasks": per.height,
        "k": sorted(set(per["n"].to_list())),
        "pass1": round(float(per["p"].mean()), 3),
        "models": sorted({m for m in frame["model"].to_list() if m is not None}),
        "truncated": frame["truncated"].to_list(),
        "sources": rows.sources,
        "notes": rows.notes,
        "frame": frame,
    }


# (folder, format, rows, tasks, rollouts per task, pass@1, models)
TRUTH = [
    ("tau-bench/gpt-4o-airline", "tau-bench", 200, 50, [4], 0.42, []),
    (
        "inspect-ai/popularity_gpt-4o-mini_eval",
        "inspect-ai",
        10,
        10,
        [1],
        0.8,
        ["openai/gpt-4o-mini"],
    ),
    (
        "inspect-ai/popularity_gpt-4o-mini_json",
        "inspect-ai",
        3,
        3,
        [1],
        0.667,
        ["openai/gpt-4o-mini"],
    ),
    ("evalscope/qwen-plus_gpqa_diamond", "evalscope", 10, 10, [1], 0.8, ["qwen-plus"]),
    (
        "evalscope/Qwen2.5-0.5B-Instruct_gsm8k_main_2025-01",
        "evalscope",
        10,
        10,
        [1],
        0.4,
        ["Qwen2.5-0.5B-Instruct"],
    ),
    ("nemo-skills/math_5x3_rs", "nemo-skills", 15, 5, [3], 0.867, []),
    (
        "lm-eval/asdiv/meta-llama__Meta-Llama-3-8B-Instruct",
        "lm-eval",
        50,
        50,
        [1],
        0.92,
        ["meta-llama/Meta-Llama-3-8B-Instruct"],
    ),
    ("lm-eval/truthfulqa_gen/neo125", "lm-eval", 817, 817, [1], 0.392, ["EleutherAI/gpt-neo-125M"]),
    (
        "helm/bbq_v4__openai_gpt-4o-2024-05-13",
        "helm",
        100,
        100,
        [1],
        0.95,
        ["openai/gpt-4o-2024-05-13"],
    ),
]


@pytest.mark.parametrize(("folder", "fmt", "n_rows", "n_tasks", "k", "pass1", "models"), TRUTH)
def test_each_format_reads_with_no_flags(
    folder: str, fmt: str, n_rows: int, n_tasks: int, k: list[int], pass1: float, models: list[str]
) -> None:
    got = numbers([REAL / folder])
    assert (got["format"], got["rows"], got["tasks"], got["k"]) == (fmt, n_rows, n_tasks, k)
    assert got["pass1"] == pytest.approx(pass1, abs=5e-4)
    assert got["models"] == models


def test_inspect_scores_truncation_and_sources() -> None:
    got = numbers([REAL / "inspect-ai/popularity_gpt-4o-mini_eval"])
    assert got["truncated"] == [False] * 10  # stop_reason "stop" on every sample
    assert got["sources"]["reward"].startswith("scores.match.value")
    assert got["sources"]["model"] == "header eval.model"


def test_lm_eval_never_takes_a_continuous_metric() -> None:
    got = numbers([REAL / "lm-eval/truthfulqa_gen/neo125"])
    assert got["sources"]["reward"].startswith("bleu_acc")  # bleu_max (0..72) is listed first
    assert any("bleu_max is not 0/1" in n for n in got["notes"])
    assert "truthfulqa_gen_neo125" in got["sources"]["model"]  # the renamed results file


def test_lm_eval_without_metrics_key_takes_the_results_metric() -> None:
    got = numbers([REAL / "lm-eval/asdiv/meta-llama__Meta-Llama-3-8B-Instruct"])
    assert got["sources"]["reward"].startswith("acc (a metric of results_")


def test_helm_one_token_length_stop_is_not_a_cut_off(tmp_path: Path) -> None:
    got = numbers([REAL / "helm/bbq_v4__openai_gpt-4o-2024-05-13"])
    assert got["truncated"] == [False] * 100
    assert any("max_tokens = 1" in n for n in got["notes"])
    # the same run allowed 512 tokens: a length stop is then a cut-off reply
    run = tmp_path / "run"
    shutil.copytree(REAL / "helm/bbq_v4__openai_gpt-4o-2024-05-13", run)
    spec = json.loads((run / "run_spec.json").read_text())
    spec["adapter_spec"]["max_tokens"] = 512
    (run / "run_spec.json").write_text(json.dumps(spec))
    assert numbers([run])["truncated"] == [True] * 100


def test_helm_skips_perturbed_stats(tmp_path: Path) -> None:
    stats = [
        {
            "instance_id": "a",
            "stats": [
                {"name": {"name": "exact_match", "perturbation": {"name": "typo"}}, "mean": 0.0},
                {"name": {"name": "exact_match", "split": "test"}, "mean": 1.0},
            ],
        }
    ]
    (tmp_path / "per_instance_stats.json").write_text(json.dumps(stats))
    got = numbers([tmp_path / "per_instance_stats.json"])
    assert got["frame"]["reward"].to_list() == [1.0]


def test_atropos_one_row_per_score() -> None:
    folder = REAL / "atropos/rubiks_process_results_32"
    with pytest.raises(InputError, match=r"outside \[0, 1\]"):
        read_rows([str(folder)])  # scores run -0.36..0.65: not a pass/fail
    got = numbers([folder], pass_threshold=0.5)
    assert got["rows"] == 24 and got["format"] == "atropos"
    assert got["tasks"] == 2 and got["k"] == [12]  # 6 groups of 4, 2 distinct seeds
    raw = [json.loads(x) for x in (folder / "rubiks_process_results_32.jsonl").open()]
    want = sorted(s for g in raw for s in g["scores"])
    assert sorted(got["frame"]["reward"].to_list()) == pytest.approx(want)


def test_vf_eval_penalty_rows_name_the_binary_part() -> None:
    folder = REAL / "verifiers/math_python/gpt-4.1-mini__976454fe"
    with pytest.raises(InputError, match="correct_answer_reward_func"):
        read_rows([str(folder)])
    # this writer's ids are row // 3 while the prompts cycle through five questions: id 0
    # carries three prompts, so the ids are refused and the prompt keys the tasks
    with pytest.raises(InputError, match=r"task id '0' carries different prompts \(line 1 and"):
        read_rows([str(folder)], mapping={"reward": "correct_answer_reward_func"})
    mapping = {"reward": "correct_answer_reward_func", "task_id": "prompt"}
    got = numbers([folder], mapping=mapping)
    assert (got["rows"], got["tasks"], got["k"], got["pass1"]) == (15, 5, [3], 0.933)


def test_intermediate_save_generated_nothing() -> None:
    with pytest.raises(InputError, match="nothing was generated"):
        read_rows([str(REAL / "verifiers/gsm8k/gpt-4.1-mini__0036a836")])


def test_evalscope_tasks_cover_the_prompt_not_the_reply(tmp_path: Path) -> None:
    """A teacher that answered the same questions differently shares every task."""
    src = REAL / "evalscope/Qwen2.5-0.5B-Instruct_gsm8k_main_2025-01/gsm8k_main.jsonl"
    teacher = tmp_path / "teacher" / "gsm8k_main.jsonl"
    teacher.parent.mkdir()
    with src.open() as fh, teacher.open("w") as out:
        for line in fh:
            row = json.loads(line)
            row["model"] = "teacher"
            row["choices"][0]["message"]["content"] = "a different reply"
            row["choices"][0]["review"]["result"] = True
            out.write(json.dumps(row) + "\n")
    student_ids = set(numbers([src])["frame"]["task_id"].to_list())
    teacher_ids = set(numbers([teacher])["frame"]["task_id"].to_list())
    assert len(student_ids) == 10 and student_ids == teacher_ids


def test_messages_transcript_hashes_only_the_prompt(tmp_path: Path) -> None:
    def rows(reply: str) -> str:
        return "\n".join(
            json.dumps(
                {
                    "messages": [
                        {"role": "user", "content": f"q{i}"},
                        {"role": "assistant", "content": f"{reply}{i}"},
                    ],
                    "reward": 1.0,
                }
            )
            for i in range(4)
        )

    (tmp_path / "a.jsonl").write_text(rows("first"))
    (tmp_path / "b.jsonl").write_text(rows("second"))
    a = numbers([tmp_path / "a.jsonl"])["frame"]["task_id"].to_list()
    b = numbers([tmp_path / "b.jsonl"])["frame"]["task_id"].to_list()
    assert a == b and len(set(a)) == 4


def test_one_json_document_that_is_not_rows(tmp_path: Path) -> None:
    doc = tmp_path / "config.json"
    doc.write_text(json.dumps({"lr": 1e-6, "steps": 10}, indent=2))
    with pytest.raises(InputError, match="this is one JSON document, not JSON Lines: an object"):
        read_rows([str(doc)])
    nums = tmp_path / "nums.json"
    nums.write_text("[1, 2, 3]")
    with pytest.raises(InputError, match="an array of 3 int"):
        read_rows([str(nums)])


def test_pretty_printed_array_and_samples_object(tmp_path: Path) -> None:
    rows = [{"task_id": f"t{i % 3}", "reward": float(i % 2)} for i in range(6)]
    (tmp_path / "a.json").write_text(json.dumps(rows, indent=2))
    got = numbers([tmp_path / "a.json"])
    assert (got["format"], got["rows"], got["tasks"]) == ("json", 6, 3)
    (tmp_path / "b.json").write_text(json.dumps({"model": "m", "samples": rows}, indent=1))
    got = numbers([tmp_path / "b.json"])
    assert (got["rows"], got["models"]) == (6, ["m"])


def test_bad_value_in_a_document_names_its_row(tmp_path: Path) -> None:
    rows = [{"task_id": "a", "reward": 1.0}, {"task_id": "b", "reward": float("inf")}]
    (tmp_path / "a.json").write_text(json.dumps(rows, indent=2))
    with pytest.raises(InputError, match=r"a\.json: entry 1: field 'reward'"):
        read_rows([str(tmp_path / "a.json")])
    rows[1]["reward"] = None  # no grade: an ungraded row, named by its row
    (tmp_path / "u.json").write_text(json.dumps(rows, indent=2))
    assert (
        read_rows([str(tmp_path / "u.json")]).facts.first_ungraded == f"{tmp_path}/u.json entry 1"
    )
    (tmp_path / "bad.json").write_text('[\n  {"task_id": "a",\n  "reward": }\n]')
    with pytest.raises(InputError, match=r"bad\.json:3: not valid JSON"):
        read_rows([str(tmp_path / "bad.json")])


def test_inspect_score_kinds(tmp_path: Path) -> None:
    values = ["C", "I", "P", 1, 0.25, True, {"accuracy": 1}]
    log = {
        "eval": {"model": "m/x", "task": "t"},
        "status": "success",
        "samples": [
            {
                "id": i,
                "epoch": e,
                "input": f"q{i}",
                "scores": {"s": {"value": v}},
                "output": {"choices": [{"stop_reason": "max_tokens" if i == 0 else "stop"}]},
            }
            for i, v in enumerate(values)
            for e in (1, 2)
        ],
    }
    (tmp_path / "log.json").write_text(json.dumps(log, indent=2))
    got = numbers([tmp_path / "log.json"], pass_threshold=0.5)
    assert got["k"] == [2] and got["tasks"] == len(values)
    by_task = dict(zip(got["frame"]["task_id"], got["frame"]["reward"], strict=False))
    assert [by_task[str(i)] for i in range(len(values))] == [1, 0, 0.5, 1, 0.25, 1, 1]
    assert got["truncated"].count(True) == 2
    log["samples"][0]["scores"]["s"]["value"] = {"a": 1, "b": 0}
    (tmp_path / "log.json").write_text(json.dumps(log))
    with pytest.raises(InputError, match=r"samples\[0\]: field 'scores.s.value'"):
        read_rows([str(tmp_path / "log.json")])


def test_csv_and_tsv(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("task_id,reward,truncated\na,1,false\na,0,true\nb,1,false\n")
    got = numbers([tmp_path / "a.csv"])
    assert (got["format"], got["rows"], got["tasks"]) == ("csv", 3, 2)
    assert got["truncated"] == [False, True, False]
    (tmp_path / "a.tsv").write_text("task_id\treward\na\t1\n")
    assert numbers([tmp_path / "a.tsv"])["rows"] == 1


def test_sidecars_are_never_rows(tmp_path: Path) -> None:
    folder = REAL / "lm-eval/truthfulqa_gen/neo125"
    got = numbers([folder])  # the renamed results file beside the samples is not read
    assert got["rows"] == 817
    results = next(folder.glob("truthfulqa_gen_neo125_*.json"))
    with pytest.raises(InputError, match="lm-eval results file"):
        read_rows([str(results)])
    helm = REAL / "helm/bbq_v4__openai_gpt-4o-2024-05-13"
    assert numbers([helm])["rows"] == 100  # run_spec / display_predictions skipped


def test_same_file_twice_is_read_once(tmp_path: Path) -> None:
    rows = "\n".join(json.dumps({"task_id": f"t{i}", "reward": 1.0}) for i in range(4))
    run = tmp_path / "run-42.jsonl"
    run.write_text(rows)
    (tmp_path / "latest.jsonl").symlink_to(run)
    shutil.copy(run, tmp_path / "copy.jsonl")
    for paths in ([run, run], [tmp_path], [run, tmp_path / "copy.jsonl"]):
        got = numbers(paths)
        assert got["rows"] == 4
        assert any("read once" in n for n in got["notes"])


def test_real_name_with_glob_characters(tmp_path: Path) -> None:
    odd = tmp_path / "rows[1]*.jsonl"
    odd.write_text(json.dumps({"task_id": "a", "reward": 1.0}))
    (tmp_path / "rows1x.jsonl").write_text(json.dumps({"task_id": "b", "reward": 1.0}))
    assert numbers([odd])["rows"] == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_read_as_a_stream(tmp_path: Path) -> None:
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    body = "\n".join(json.dumps({"task_id": f"t{i}", "reward": 1.0}) for i in range(3))

    def feed() -> None:
        with open(fifo, "w") as fh:
            fh.write(body)

    writer = threading.Thread(target=feed)
    writer.start()
    got = numbers([fifo])
    writer.join(5)
    assert got["rows"] == 3
