"""Graded rollouts as RL trainers and eval harnesses write them, drawn by hypothesis in each
writer's layout (its optional fields present or absent, several tasks, k and steps), and read
back by every reader to the tasks, passes, truncation, model and version the test wrote.

Layouts (the writer in each tool's source):

- verl ``RayPPOTrainer._dump_generations`` (``verl/trainer/ppo/ray_trainer.py``): one
  ``{step}.jsonl`` per step under ``trainer.rollout_data_dir`` / ``validation_data_dir``;
  ``input``, ``output``, ``gts`` (later versions), ``score``, ``step`` and the reward
  function's extra keys (``reward``; ``acc`` and ``pred`` from ``math_dapo``, whose score is
  1 / -1); the rollouts of a prompt side by side, no id, no model, no finish reason.
- FastChat LLM-judge ``play_a_match_single`` (``fastchat/llm_judge/common.py``):
  ``model_judgment/<judge>_single.jsonl``, one line per (question, model, turn):
  ``question_id``, ``model``, ``judge`` (``[judge model, prompt name]``), ``user_prompt``,
  ``judgment``, ``score`` (the rating 1..10, -1 when none parsed), ``turn``, ``tstamp``;
  ``play_a_match_pair`` writes ``<judge>_pair.jsonl`` beside it (``model_1``, ``model_2``,
  ``g1_winner``, ``g2_winner``).
- Arena-Hard-Auto ``gen_judgment.py``: ``model_judgment/<judge>/<model>.jsonl``, one line per
  question: ``question_id`` (``uid``, ``category`` and ``baseline`` in the v2 layout),
  ``model``, ``judge``, ``games`` (two, positions swapped in the second) of ``user_prompt``,
  ``judgment`` and ``score`` (``A>>B`` ... ``B>>A``, null when the judge gave no verdict).
- lighteval ``EvaluationTracker.save_details`` (``src/lighteval/logging/evaluation_tracker.py``;
  rows are ``asdict`` of ``DetailsLogger.Detail``, ``src/lighteval/logging/info_loggers.py``):
  ``details/<model>/<date>/details_<suite|task|fewshot>_<date>.parquet``, one row per
  document; since 0.10 ``doc`` (``query``, ``choices``, ``gold_index``, ``task_name``, ``id``),
  ``model_response`` (``input``, ``text``, ``truncated_tokens_count``) and ``metric``; before,
  ``example``, ``full_prompt``, ``predictions``, ``gold``, ``truncated`` (prompt tokens),
  ``metrics``; the model in ``results/<model>/results_<date>.json``.
- SkyRL ``dump_per_dataset_eval_results`` (``skyrl_train/utils/trainer_utils.py``):
  ``dumped_evals/<step>_evals/<data_source>.jsonl``, one sample a line: ``input_prompt``,
  ``output_response``, ``score`` (a number or token-level rewards), ``stop_reason``,
  ``env_class``, ``env_extras``, ``data_source``; ``aggregated_results.jsonl`` beside them.
- OpenAI Evals API output items (``openai-python``,
  ``src/openai/types/evals/runs/output_item_list_response.py``): one
  ``eval.run.output_item`` a line or a listing's page (``data[]``): ``eval_id``, ``run_id``,
  ``datasource_item_id``, ``status`` (``pass`` / ``fail``), ``results[]`` (``name``, ``type``,
  ``passed``, ``score``), ``sample`` (``input``, ``output``, ``finish_reason``, ``model``,
  ``error``).
- OpenCompass work directories (``opencompass/tasks/openicl_infer.py``, ``openicl_eval.py``):
  ``predictions/<model>/<dataset>.json`` (keyed by index: ``origin_prompt``, ``prediction``,
  ``gold``; ungraded), ``results/<model>/<dataset>.json`` (the metrics and ``details`` keyed
  by index with the verdict, ``correct``), ``summary/summary_<time>.csv``, ``configs/``,
  ``logs/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.commands.diff import read_tasks
from whilecli.io.read import read_rows
from whilecli.io.table import read_table
from whilecli.route.pool import Counts, summarize

SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@dataclass
class Dump:
    """Files in one writer's layout, and what must be read from them."""

    files: dict[str, bytes]
    read: str  # the path handed to the reader
    #: (task key the test used, rollouts, passes, cut-off rows), one per task
    tasks: list[tuple[str, int, int, int]]
    fmt: str
    truncation_known: bool = False
    models: set[str | None] = field(default_factory=lambda: {None})
    versions: set[str] = field(default_factory=set)
    pass_threshold: float | None = None
    judged: bool = False


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


groups = st.lists(st.lists(st.booleans(), min_size=1, max_size=4), min_size=1, max_size=4)


@st.composite
def verl(draw: st.DrawFn) -> Dump:
    steps = draw(st.lists(st.integers(0, 400), min_size=1, max_size=3, unique=True))
    grade = draw(st.sampled_from(["score", "reward-extra", "acc-dapo", "acc-binary", "acc-int"]))
    gts = draw(st.booleans())
    # a reward function may report a truncation flag through reward_extra_info
    flag = draw(st.sampled_from([None, "truncated", "is_truncated"]))
    files: dict[str, bytes] = {}
    tasks: list[tuple[str, int, int, int]] = []
    for step in steps:
        rows = []
        for t, group in enumerate(draw(groups)):  # the same prompts at every step
            prompt = f"system\nReason step by step.\nuser\nWhat is {t} * 7?\nassistant\n"
            cuts: dict[int, bool] = {}
            for i, passed in enumerate(group):
                row: dict[str, Any] = {
                    "input": prompt,
                    "output": f"Draft {i}: the answer is {7 * t if passed else 0}.",
                }
                if gts:
                    row["gts"] = str(7 * t)
                score = float(passed)
                if grade == "acc-dapo":
                    score = 1.0 if passed else -1.0
                row |= {"score": score, "step": step}
                if grade != "score":
                    row["reward"] = score
                if grade.startswith("acc"):
                    acc: Any = passed if grade != "acc-int" else int(passed)
                    row |= {"acc": acc, "pred": str(7 * t if passed else 0)}
                if flag is not None:
                    row[flag] = cuts[i] = draw(st.booleans())
                rows.append(row)
            tasks.append((f"{step}/{t}", len(group), sum(group), sum(cuts.values())))
        files[f"rollout_data/{step}.jsonl"] = _jsonl(rows)
    read = "rollout_data" if len(steps) > 1 else f"rollout_data/{steps[0]}.jsonl"
    return Dump(
        files,
        read,
        tasks,
        "verl",
        truncation_known=flag is not None,
        versions={str(s) for s in steps},
    )


@st.composite
def fastchat(draw: st.DrawFn) -> Dump:
    models = draw(st.lists(st.sampled_from(MODELS), min_size=1, max_size=3, unique=True))
    questions = draw(st.lists(st.integers(81, 160), min_size=1, max_size=5, unique=True))
    turns = draw(st.sampled_from([(1,), (1, 2)]))
    threshold = draw(st.sampled_from([5.0, 8.0, 10.0]))
    lines: list[dict[str, Any]] = []
    tally: dict[str, list[int]] = {}
    for model in models:
        for q in questions:
            for turn in turns:
                score = draw(st.sampled_from([-1, 1, 3, 5, 7, 8, 9, 10, 6.5]))
                prompt = "single-v1" if turn == 1 else "single-v1-multi-turn"
                if q > 150:  # math and reasoning questions are judged against a reference
                    prompt = "single-math-v1" + ("-multi-turn" if turn == 2 else "")
                line: dict[str, Any] = {
                    "question_id": q,
                    "model": model,
                    "judge": ["gpt-4", prompt],
                    "user_prompt": f"[Instruction]\nRate the answer to question {q}.",
                    "judgment": f"The answer is fine. Rating: [[{score}]]",
                    "score": score,
                    "turn": turn,
                    "tstamp": 1700000000.5,
                }
                lines.append(line)
                if score != -1:  # no rating parsed: an ungraded row
                    n, p = tally.get(f"{q}/{turn}", [0, 0])
                    tally[f"{q}/{turn}"] = [n + 1, p + (score >= threshold)]
    draw(st.randoms()).shuffle(lines)  # appended by a thread pool, in no order
    bench = "data/mt_bench"
    files = {f"{bench}/model_judgment/gpt-4_single.jsonl": _jsonl(lines)}
    read = f"{bench}/model_judgment/gpt-4_single.jsonl"
    if draw(st.booleans()):  # the pairwise judgments beside it are skipped in the folder
        pair = {"question_id": questions[0], "model_1": "a", "model_2": "b", "turn": 1}
        pair |= {"g1_winner": "model_1", "g2_winner": "tie", "judge": ["gpt-4", "pair-v2"]}
        files[f"{bench}/model_judgment/gpt-4_pair.jsonl"] = _jsonl([pair])
        read = f"{bench}/model_judgment"
    if draw(st.booleans()):  # the bench folder: the questions and the answers judged
        files |= _bench_files(bench, models, questions, len(turns))
        read = bench
    assume(tally)
    tasks = [(key, n, p, 0) for key, (n, p) in tally.items()]
    graders = {m for m in models if any(ln["model"] == m and ln["score"] != -1 for ln in lines)}
    return Dump(
        files,
        read,
        tasks,
        "fastchat",
        models=set(graders),
        pass_threshold=threshold,
        judged=True,
    )


def _bench_files(
    bench: str, models: list[str], questions: list[Any], turns: int
) -> dict[str, bytes]:
    """What an LLM-judge bench folder holds beside its judgments (FastChat ``gen_model_answer.py``
    and Arena-Hard-Auto ``gen_answer.py``): ``question.jsonl``, ``model_answer/<model>.jsonl``
    and ``reference_answer/<model>.jsonl``, none of them graded."""
    asked = [{"question_id": q, "category": "math", "turns": ["Q"] * turns} for q in questions]
    files = {f"{bench}/question.jsonl": _jsonl(asked)}
    for who, folder in [(m, "model_answer") for m in models] + [("gpt-4", "reference_answer")]:
        answers = [
            {"question_id": q, "answer_id": f"a{q}", "model_id": who, "tstamp": 1.0}
            | {"choices": [{"index": 0, "turns": [f"{who} answers"] * turns}]}
            for q in questions
        ]
        files[f"{bench}/{folder}/{who}.jsonl"] = _jsonl(answers)
    return files


LABELS = ["A>>B", "A>B", "A=B", "B>A", "B>>A", None]


def _won(label: str, model_is: str) -> float:
    """The model's result in one game, read from the label by hand."""
    if label == "A=B":
        return 0.5
    return 1.0 if label[0] == model_is else 0.0


@st.composite
def arena_hard(draw: st.DrawFn) -> Dump:
    v2 = draw(st.booleans())
    model = draw(st.sampled_from(MODELS))
    threshold = draw(st.sampled_from([0.5, 0.75, 1.0]))
    lines: list[dict[str, Any]] = []
    tasks: list[tuple[str, int, int, int]] = []
    for q in range(draw(st.integers(1, 6))):
        labels = draw(st.lists(st.sampled_from(LABELS), min_size=2, max_size=2))
        games = [
            {"user_prompt": f"<|User Prompt|>\nQuestion {q}", "judgment": "...", "score": label}
            for label in labels
        ]
        line: dict[str, Any] = {"question_id": f"{q:032x}"}
        if v2:
            line = {"uid": f"{q:016x}", "category": "hard_prompt"}
        line |= {"model": model, "judge": "gpt-4-1106-preview", "games": games}
        if v2:
            line["baseline"] = "o3-mini-2025-01-31"
        lines.append(line)
        got = [_won(lb, "B" if g == 0 else "A") for g, lb in enumerate(labels) if lb is not None]
        if got:  # a question with no verdict in either game is ungraded
            tasks.append((str(q), 1, int(sum(got) / len(got) >= threshold - 1e-9), 0))
    assume(tasks)
    bench = "data/arena-hard-v0.1"
    files = {f"{bench}/model_judgment/gpt-4-1106-preview/{model}.jsonl": _jsonl(lines)}
    read = next(iter(files))
    if draw(st.booleans()):  # the bench folder: the questions and the answers judged
        files |= _bench_files(bench, [model, "gpt-4-0314"], list(range(len(lines))), 1)
        read = bench
    return Dump(
        files, read, tasks, "arena-hard", models={model}, pass_threshold=threshold, judged=True
    )


@st.composite
def opencompass(draw: st.DrawFn) -> Dump:
    models = draw(st.lists(st.sampled_from(ABBRS), min_size=1, max_size=2, unique=True))
    dataset = draw(st.sampled_from(["gsm8k", "math", "ARC-c"]))
    n = draw(st.integers(1, 6))
    verdict = draw(st.sampled_from(["bool", "int"]))
    work = "outputs/default/20240501_101010"
    files: dict[str, bytes] = {}
    tally = [[0, 0] for _ in range(n)]
    for model in models:
        preds, details = {}, {}
        for i in range(n):
            passed = draw(st.booleans())
            tally[i] = [tally[i][0] + 1, tally[i][1] + passed]
            preds[str(i)] = {"origin_prompt": f"{dataset} question {i}", "prediction": "7"}
            preds[str(i)]["gold"] = "7" if passed else "8"
            reply = f"{model}: the answer is {7 if passed else 8}"  # each model's own reply
            details[str(i)] = {"prompt": f"{dataset} question {i}", "predictions": reply}
            details[str(i)] |= {
                "references": "7",
                "correct": passed if verdict == "bool" else int(passed),
            }
        files[f"{work}/predictions/{model}/{dataset}.json"] = json.dumps(preds, indent=4).encode()
        result = {"accuracy": 100.0 * sum(d["correct"] for d in details.values()) / n}
        files[f"{work}/results/{model}/{dataset}.json"] = json.dumps(
            result | {"details": details}, indent=4
        ).encode()
        files[f"{work}/logs/infer/{model}/{dataset}.out"] = b"inference done\n"
    header = "dataset,version,metric,mode," + ",".join(models)
    files[f"{work}/summary/summary_20240501_101010.csv"] = (
        f"{header}\n{dataset},1d7fe4,accuracy,gen,50\n".encode()
    )
    files[f"{work}/configs/20240501_101010.py"] = b"models = []\n"
    read = draw(st.sampled_from([work, f"{work}/results"]))
    tasks = [(str(i), c, p, 0) for i, (c, p) in enumerate(tally)]
    return Dump(files, read, tasks, "json", models=set(models))


def _parquet(rows: list[dict[str, Any]]) -> bytes:
    import io

    out = io.BytesIO()
    pl.DataFrame(rows).write_parquet(out)
    return out.getvalue()


@st.composite
def lighteval(draw: st.DrawFn) -> Dump:
    newer = draw(st.booleans())
    with_ids = newer and draw(st.booleans())
    continuous_first = draw(st.booleans())  # a metric that is no pass/fail comes first
    task = draw(st.sampled_from(["lighteval|gsm8k|0", "leaderboard|mmlu:anatomy|5"]))
    passes = draw(st.lists(st.booleans(), min_size=2, max_size=8))
    rows = []
    tasks: list[tuple[str, int, int, int]] = []
    for t, passed in enumerate(passes):
        query = f"Question: what is {t} * 3?\nAnswer:"
        metric: dict[str, float] = {}
        if continuous_first:
            metric["bleu"] = 40.0 + t
        metric["extractive_match" if newer else "em"] = float(passed)
        if newer:
            row: dict[str, Any] = {
                "doc": {
                    "query": query,
                    "choices": [str(3 * t)],
                    "gold_index": 0,
                    "task_name": task,
                    "id": str(t) if with_ids else "",
                },
                "model_response": {
                    "input": query,
                    "text": [f" {3 * t if passed else 1}"],
                    "truncated_tokens_count": draw(st.integers(0, 3)),
                    "padded_tokens_count": 0,
                },
                "metric": metric,
            }
        else:
            row = {
                "example": query,
                "full_prompt": "Few-shot examples.\n\n" + query,
                "instruction": "",
                "predictions": [f" {3 * t if passed else 1}"],
                "gold": [str(3 * t)],
                "truncated": [draw(st.integers(0, 3))],
                "padded": [0],
                "num_effective_few_shots": 5,
                "num_asked_few_shots": 5,
                "metrics": metric,
                "specifics": {"extracted": str(t)},
            }
        rows.append(row)
        tasks.append((str(t), 1, int(passed), 0))
    model = draw(st.sampled_from(["org/model", "gpt2"]))
    date = "2025-01-01T00-00-00"
    results = {"config_general": {"model_name": model}, "results": {}, "versions": {}}
    details = f"details/{model}/{date}/details_{task}_{date}.parquet"
    files = {
        details: _parquet(rows),
        f"results/{model}/results_{date}.json": json.dumps(results).encode(),
    }
    return Dump(files, details, tasks, "lighteval", models={model})


@st.composite
def skyrl(draw: st.DrawFn) -> Dump:
    token_rewards = draw(st.booleans())
    stop = draw(st.booleans())
    source = draw(st.sampled_from(["openai/gsm8k", "math500"]))
    rows = []
    tasks: list[tuple[str, int, int, int]] = []
    for t, group in enumerate(draw(groups)):
        cut = 0
        for i, passed in enumerate(group):
            cut_here = stop and draw(st.booleans())
            cut += cut_here
            score: Any = float(passed)
            if token_rewards:
                score = [0.0] * draw(st.integers(1, 3)) + [float(passed)]
            rows.append(
                {
                    "input_prompt": f"<|im_start|>user\nSolve problem {t}.<|im_end|>\n",
                    "output_response": f"attempt {i}: {'...' if cut_here else 'done'}",
                    "score": score,
                    "stop_reason": ("length" if cut_here else "stop") if stop else None,
                    "env_class": "gsm8k",
                    "env_extras": {"reward_spec": {"ground_truth": str(t)}},
                    "data_source": source,
                }
            )
        tasks.append((str(t), len(group), sum(group), cut))
    folder = "dumped_evals/global_step_10_evals"
    name = source.replace("/", "_")
    metrics = {f"eval/{name}/avg_score": 0.5, f"eval/{name}/pass_at_4": 0.75}
    files = {
        f"{folder}/{name}.jsonl": _jsonl(rows),
        f"{folder}/aggregated_results.jsonl": _jsonl([metrics]),
    }
    return Dump(files, folder, tasks, "skyrl", truncation_known=stop)


@st.composite
def openai_eval_runs(draw: st.DrawFn) -> Dump:
    runs = draw(st.integers(1, 3))
    page = draw(st.booleans())  # the listing's page as saved, else one item a line
    judged = draw(st.booleans())
    grader = {"name": "Correctness", "type": "score_model" if judged else "string_check"}
    model = draw(st.sampled_from(["gpt-4o-mini-2024-07-18", "o3-mini"]))
    count = draw(st.integers(1, 5))
    tally = {i: [0, 0, 0] for i in range(count)}
    files: dict[str, bytes] = {}
    for run in range(runs):
        items = []
        for i in range(count):
            passed = draw(st.booleans())
            cut = draw(st.booleans())
            tally[i] = [tally[i][0] + 1, tally[i][1] + passed, tally[i][2] + cut]
            items.append(
                {
                    "object": "eval.run.output_item",
                    "id": f"outputitem_{run}_{i}",
                    "created_at": 1735689600,
                    "eval_id": "eval_67e0",
                    "run_id": f"evalrun_{run}",
                    "datasource_item_id": i,
                    "datasource_item": {"question": f"What is {i} + {i}?"},
                    "status": "pass" if passed else "fail",
                    "results": [grader | {"passed": passed, "score": float(passed)}],
                    "sample": {
                        "input": [{"role": "user", "content": f"What is {i} + {i}?"}],
                        "output": [{"role": "assistant", "content": str(2 * i)}],
                        "finish_reason": "length" if cut else "stop",
                        "model": model,
                        "error": None,
                        "usage": {"total_tokens": 20},
                        "temperature": 1.0,
                        "max_completion_tokens": 64,
                        "top_p": 1.0,
                        "seed": 42,
                    },
                }
            )
        if page:
            doc = {"object": "list", "data": items, "first_id": "a", "last_id": "b"}
            files[f"runs/evalrun_{run}.json"] = json.dumps(doc | {"has_more": False}).encode()
        else:
            files[f"runs/evalrun_{run}.jsonl"] = _jsonl(items)
    tasks = [(str(i), n, p, c) for i, (n, p, c) in tally.items()]
    read = "runs" if runs > 1 else next(iter(files))
    return Dump(
        files,
        read,
        tasks,
        "openai-eval-runs",
        truncation_known=True,
        models={model},
        judged=judged,
    )


ABBRS = ["hf_qwen2_7b_instruct", "hf_llama3_8b_instruct", "gpt-4o-mini"]
MODELS = ["vicuna-13b-v1.3", "gpt-3.5-turbo", "Llama-2-7b-chat", "claude-v1"]
WRITERS = {
    "verl": verl,
    "fastchat": fastchat,
    "arena-hard": arena_hard,
    "json": opencompass,
    "lighteval": lighteval,
    "skyrl": skyrl,
    "openai-eval-runs": openai_eval_runs,
}


def write(folder: Path, dump: Dump) -> Path:
    for name, content in dump.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return folder / dump.read


def _shape(tasks: list[tuple[str, int, int, int]]) -> list[tuple[int, int, int]]:
    return sorted((n, p, c) for _, n, p, c in tasks)


def check(tmp: Path, dump: Dump) -> None:
    path = write(tmp, dump)
    threshold = dump.pass_threshold
    rows = read_rows([str(path)], aggregate=Counts(), pass_threshold=threshold)
    assert rows.format == dump.fmt
    pool = summarize(rows)
    got = sorted(
        (int(r["n"]), int(r["passes"]), int(r["truncated"]))
        for r in pool.tasks.iter_rows(named=True)
    )
    assert got == _shape(dump.tasks)
    known = int(pool.tasks["truncated_known"].sum())
    assert known == (pool.rows if dump.truncation_known else 0)
    assert set(pool.models) == dump.models
    assert rows.judge is not None and (rows.judge.judged == rows.judge.rows) == dump.judged
    if dump.versions:
        assert {str(v) for v in pool.versions} == dump.versions
    # diff/size and ada/the row methods read the same tasks
    by_task = read_tasks(str(path), mapping=None, pass_threshold=threshold, input_format=None)
    got = sorted(
        (int(r["n"]), int(r["passes"]), int(r["truncated"])) for r in by_task.iter_rows(named=True)
    )
    assert got == _shape(dump.tasks), "diff/size"
    table = read_table([str(path)], pass_threshold=threshold).canonical.filter(pl.col("graded"))
    per: dict[str, list[int]] = {}
    for task, passed, cut in zip(
        table["task_id"], table["passed"], table["truncated"].fill_null(False), strict=True
    ):
        n, p, c = per.get(str(task), [0, 0, 0])
        per[str(task)] = [n + 1, p + bool(passed), c + bool(cut)]
    assert sorted(tuple(v) for v in per.values()) == _shape(dump.tasks), "ada/row methods"


@SETTINGS
@given(dump=verl())
def test_verl_dumps_are_read_as_written(
    tmp_path_factory: pytest.TempPathFactory, dump: Dump
) -> None:
    check(tmp_path_factory.mktemp("verl"), dump)


@settings(max_examples=2 * len(WRITERS), deadline=None)
@given(data=st.data())
def test_the_format_is_forced_and_routed_by_name(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(WRITERS)))
    dump = data.draw(WRITERS[name]())
    path = write(tmp_path_factory.mktemp(name), dump)
    forced = read_rows([str(path)], input_format=dump.fmt, pass_threshold=dump.pass_threshold)
    assert forced.format == dump.fmt
    args = ["route", str(path), "--model", "m", "--format", "json"]
    if dump.pass_threshold is not None:
        args += ["--pass-threshold", str(dump.pass_threshold)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    assert json.loads(result.output)["summary"]["rows"] == sum(n for _, n, _, _ in dump.tasks)


@SETTINGS
@given(dump=lighteval())
def test_lighteval_details_are_read_as_written(
    tmp_path_factory: pytest.TempPathFactory, dump: Dump
) -> None:
    check(tmp_path_factory.mktemp("lighteval"), dump)
    _update_reads_the_same_tasks(tmp_path_factory.mktemp("lighteval"), dump)


@SETTINGS
@given(dump=skyrl())
def test_skyrl_eval_dumps_are_read_as_written(
    tmp_path_factory: pytest.TempPathFactory, dump: Dump
) -> None:
    check(tmp_path_factory.mktemp("skyrl"), dump)
    _update_reads_the_same_tasks(tmp_path_factory.mktemp("skyrl"), dump)


@SETTINGS
@given(dump=openai_eval_runs())
def test_openai_eval_run_items_are_read_as_written(
    tmp_path_factory: pytest.TempPathFactory, dump: Dump
) -> None:
    check(tmp_path_factory.mktemp("openai"), dump)
    if len(dump.files) == 1:
        _update_reads_the_same_tasks(tmp_path_factory.mktemp("openai"), dump)


def test_an_openai_eval_item_that_errored_is_an_error_reply(tmp_path: Path) -> None:
    """A sample whose call failed (``sample.error``) is an error reply, left out and
    counted; an entry of a page that is not an item is refused naming it."""
    items = [
        {
            "object": "eval.run.output_item",
            "eval_id": "e",
            "datasource_item_id": i,
            "status": "fail" if i == 0 else "pass",
            "results": [{"name": "m", "type": "string_check", "passed": i != 0}],
            "sample": {
                "input": [{"role": "user", "content": f"q{i}"}],
                "output": [],
                "finish_reason": "stop",
                "model": "m",
                "error": {"code": "rate_limit_exceeded", "message": "Rate limit"}
                if i == 0
                else None,
            },
        }
        for i in range(4)
    ]
    path = tmp_path / "items.jsonl"
    path.write_bytes(_jsonl(items))
    pool = summarize(read_rows([str(path)], aggregate=Counts()))
    assert pool.rows == 3 and int(pool.tasks["passes"].sum()) == 3
    page = tmp_path / "page.json"
    page.write_text(json.dumps({"object": "list", "data": [*items, 7]}))
    result = CliRunner().invoke(app, ["route", str(page)])
    assert result.exit_code == 2 and "data[4]" in result.output, result.output
    assert result.output.count("\n") == 1, result.output
    for at, bad, named in (
        (2, {"datasource_item_id": [2]}, "datasource_item_id"),
        (3, {"eval_id": "other"}, "eval_id"),
    ):
        lines = [{**item, **bad} if i == at else item for i, item in enumerate(items)]
        path.write_bytes(_jsonl(lines))
        result = CliRunner().invoke(app, ["route", str(path)])
        assert result.exit_code == 2, result.output
        assert f"items.jsonl:{at + 1}: field '{named}'" in result.output, result.output
        assert result.output.count("\n") == 1, result.output


def _update_reads_the_same_tasks(tmp: Path, dump: Dump) -> None:
    """``update`` (:func:`~whilecli.io.batch.read_batch`) groups the rows into the same tasks,
    with the same passes and cut-off rows."""
    from whilecli.io.batch import read_batch

    path = write(tmp, dump)
    files = [
        p
        for p in ([path] if path.is_file() else sorted(path.iterdir()))
        if "aggregated" not in p.name
    ]
    cols = read_batch(files[0])
    assert cols.task_ids is not None and cols.rewards is not None
    cuts = cols.truncated if cols.truncated is not None else [False] * len(cols.task_ids)
    per: dict[str, list[int]] = {}
    for task, reward, cut in zip(cols.task_ids, cols.rewards, cuts, strict=True):
        n, p, c = per.get(str(task), [0, 0, 0])
        per[str(task)] = [n + 1, p + bool(reward >= 1.0), c + bool(cut)]
    assert sorted(tuple(v) for v in per.values()) == _shape(dump.tasks), "update"


def test_two_lighteval_tasks_or_skyrl_sources_are_two_evaluations(tmp_path: Path) -> None:
    """A details folder of two tasks, a dump folder of two data sources: refused as two
    evaluations in one line, naming --by source; each file alone reads."""
    date = "2025-01-01T00-00-00"
    folder = tmp_path / "details" / "m" / date
    folder.mkdir(parents=True)
    for task in ("lighteval|gsm8k|0", "lighteval|math_500|0"):
        rows = [
            {"doc": {"query": f"{task} q{i}", "id": ""}, "model_response": {"text": ["a"]}}
            | {"metric": {"extractive_match": float(i % 2)}}
            for i in range(4)
        ]
        (folder / f"details_{task}_{date}.parquet").write_bytes(_parquet(rows))
    evals = tmp_path / "dumped_evals" / "global_step_1_evals"
    evals.mkdir(parents=True)
    for source in ("gsm8k", "math500"):
        rows = [
            {"input_prompt": f"{source} {i}", "output_response": "a", "score": float(i % 2)}
            | {"stop_reason": "stop", "env_class": source, "data_source": source}
            for i in range(4)
        ]
        (evals / f"{source}.jsonl").write_bytes(_jsonl(rows))
    for path in (folder, evals):
        result = CliRunner().invoke(app, ["route", str(path)])
        assert result.exit_code == 2 and "--by source" in result.output, result.output
        assert result.output.count("\n") == 1, result.output
        for one in sorted(path.iterdir()):
            assert read_rows([str(one)]).format in ("lighteval", "skyrl")


def test_verl_lines_without_a_step_are_not_verl(tmp_path: Path) -> None:
    """A file with input, output and score but no integer step is another writer's: the
    alias table reads it (its task from the prompt), not the verl reader."""
    rows = [{"input": f"q{i % 2}", "output": "a", "score": float(i % 2)} for i in range(4)]
    path = tmp_path / "out.jsonl"
    path.write_bytes(_jsonl(rows))
    assert read_rows([str(path)]).format != "verl"


@SETTINGS
@given(dump=fastchat())
def test_fastchat_judgments_are_read_as_written(
    tmp_path_factory: pytest.TempPathFactory, dump: Dump
) -> None:
    check(tmp_path_factory.mktemp("fastchat"), dump)


@SETTINGS
@given(dump=arena_hard())
def test_arena_hard_judgments_are_read_as_written(
    tmp_path_factory: pytest.TempPathFactory, dump: Dump
) -> None:
    check(tmp_path_factory.mktemp("arena"), dump)


@SETTINGS
@given(dump=opencompass())
def test_an_opencompass_work_directory_reads_its_results(
    tmp_path_factory: pytest.TempPathFactory, dump: Dump
) -> None:
    check(tmp_path_factory.mktemp("opencompass"), dump)


def test_opencompass_predictions_and_two_datasets_are_refused_in_one_line(tmp_path: Path) -> None:
    """A predictions file holds no grade; the results of two datasets are two evaluations."""
    work = tmp_path / "outputs" / "default" / "20240501_101010"
    for dataset in ("gsm8k", "math"):
        details = {str(i): {"prompt": f"{dataset} {i}", "correct": i % 2 == 0} for i in range(4)}
        preds = {str(i): {"origin_prompt": f"{dataset} {i}", "prediction": "x"} for i in range(4)}
        for folder, doc in (("results", {"details": details}), ("predictions", preds)):
            (work / folder / "m").mkdir(parents=True, exist_ok=True)
            (work / folder / "m" / f"{dataset}.json").write_text(json.dumps(doc, indent=2))
    for path, says in (
        (work / "predictions" / "m" / "gsm8k.json", "ungraded"),
        (work, "--by source"),
    ):
        result = CliRunner().invoke(app, ["route", str(path)])
        assert result.exit_code == 2 and says in result.output, result.output
        assert result.output.count("\n") == 1, result.output


def test_fastchat_pairwise_judgments_are_refused_in_one_line(tmp_path: Path) -> None:
    pair = {"question_id": 81, "model_1": "a", "model_2": "b", "g1_winner": "model_1"}
    pair |= {"g2_winner": "tie", "judge": ["gpt-4", "pair-v2"], "turn": 1}
    path = tmp_path / "gpt-4_pair.jsonl"
    path.write_bytes(_jsonl([pair, pair]))
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "pairwise" in result.output, result.output


@pytest.mark.parametrize(
    ("name", "doc"),
    [
        ("metadata.json", {"run": {"base_model": "Qwen/Qwen3.5-2B", "batch_size": 64}}),
        (
            "run_manifest.json",
            {"run_id": "r1", "results_jsonl_path": "results.jsonl", "max_tokens": 2048},
        ),
    ],
)
def test_a_prime_rft_sidecar_named_alone_is_refused_as_a_sidecar(
    tmp_path: Path, name: str, doc: dict[str, Any]
) -> None:
    """Prime RFT's metadata.json (``run.base_model``) and a run manifest beside its
    results.jsonl name the rows; named alone they are refused as what they are, in one line,
    and a folder holding them reads its rows."""
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2))
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2 and "not rows: pass the rows file" in result.output
    assert result.output.count("\n") == 1, result.output
    rows = [
        {"problem_id": i % 3, "step": 40, "run_id": "r", "reward": float(i % 2), "prompt": "q"}
        for i in range(9)
    ]
    (tmp_path / "results.jsonl").write_bytes(_jsonl(rows))
    assert read_rows([str(tmp_path)]).format == "prime-rft"


#: A field each line-writer always writes, and a value it never writes there.
BROKEN = {
    "verl": [("input", ["not", "text"]), ("step", None), ("step", "40")],
    "fastchat": [("turn", None), ("turn", "2")],
    "arena-hard": [("games", "A>B"), ("games", [None])],
}


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_a_broken_line_is_refused_naming_its_line_and_field(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(BROKEN)))
    dump = data.draw(WRITERS[name]())
    path, text = next((p, t) for p, t in dump.files.items() if p.endswith(".jsonl"))
    lines = text.decode().splitlines()
    at = data.draw(st.integers(0, len(lines) - 1))
    key, bad = data.draw(st.sampled_from(BROKEN[name]))
    lines[at] = json.dumps({**json.loads(lines[at]), key: bad})
    folder = tmp_path_factory.mktemp("broken")
    (folder / "rows.jsonl").write_text("\n".join(lines) + "\n")
    args = ["route", str(folder / "rows.jsonl"), "--pass-threshold", "0.5"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1, result.output
    assert f"rows.jsonl:{at + 1}: field '{key}'" in result.output, result.output


def test_two_steps_of_one_skyrl_source_are_two_evaluations(tmp_path: Path) -> None:
    """``dumped_evals/global_step_10_evals/gsm8k.jsonl`` and ``global_step_20_evals/gsm8k.jsonl``
    are two checkpoints' evaluations of one data source: refused as two, naming --by source,
    never pooled into one pool of twice the draws; one step's folder reads."""
    root = tmp_path / "dumped_evals"
    for step in (10, 20):
        evals = root / f"global_step_{step}_evals"
        evals.mkdir(parents=True)
        rows = [
            {"input_prompt": f"q {i // 4}", "output_response": f"a {step} {i}"}
            | {"score": float((i + step) % 3 == 0), "stop_reason": "stop", "env_class": "gsm8k"}
            for i in range(16)
        ]
        (evals / "gsm8k.jsonl").write_bytes(_jsonl(rows))
    result = CliRunner().invoke(app, ["route", str(root)])
    assert result.exit_code == 2 and "--by source" in result.output, result.output
    assert "global_step_10" in result.output and "global_step_20" in result.output
    one = read_rows([str(root / "global_step_10_evals")])
    assert one.format == "skyrl" and one.frame.collect().height == 16
