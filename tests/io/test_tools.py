"""Rows as other RL trainers and eval harnesses write them, read right or refused in one line.

Each generator below writes a file in one tool's layout, as that tool's source writes it, with
its neighbours (a field left out, the grade as a bool, a number or text, nested differently),
and says what must be read from it: the tasks (rows, passes, truncated rows per task), whether
truncation is known, the model; or the one-line refusal and the ``--map`` it names.

Layouts (the writer in each tool's source):

- verl ``RayPPOTrainer._dump_generations`` (``trainer.rollout_data_dir`` /
  ``validation_data_dir``, ``{step}.jsonl``): ``input`` and ``output`` (decoded text),
  ``gts``, ``score``, ``step`` and the reward function's extra keys (``acc``, ``pred``,
  ``reward``; DAPO's score is 1 / -1 with ``acc`` the pass); no task id, model or stop reason.
- SkyRL ``dump_per_dataset_eval_results`` (``dumped_evals/.../{data_source}.jsonl``):
  ``input_prompt``, ``output_response``, ``score`` (a float, or token-level rewards whose sum
  is the reward), ``stop_reason``, ``env_class``, ``env_extras``, ``data_source``; and an
  ``aggregated_results.jsonl`` of metrics beside them.
- NeMo-RL GRPO ``train_data_step{N}.jsonl``: ``content`` (the conversation's messages as
  templated text, the reply last), ``rewards`` (a number), ``generation_logprobs``,
  ``prev_logprobs``, ``input_lengths`` (and ``advantages``, ``token_loss_mask``).
- TRL ``GRPOTrainer`` ``completions/[mode/]completions_{step:05d}.parquet``: ``mode``,
  ``step``, ``prompt``, ``completion``, one column per reward function, ``advantage``.
- LiveCodeBench ``*_eval_all.json``: an array of problems, each with ``question_id``,
  ``code_list`` and ``graded_list`` (one bool per sample: the rollouts) and ``pass@1``.
- Qwen2.5-Math evaluation ``*.jsonl``: ``idx``, ``question``, ``gt``, ``code`` / ``pred`` /
  ``score``, lists with one element per sample.
- reasoning-gym ``eval.py``: one JSON document, ``metadata.model`` and ``results[]`` with
  ``question``, ``best_score``, ``mean_score`` and ``completions[].score``.
- terminal-bench ``results.json``: ``results[]`` with ``task_id``, ``trial_name``,
  ``is_resolved`` (null when the harness failed) and ``failure_mode``; the model in
  ``run_metadata.json: model_name`` beside it.
- lighteval details (``details/<model>/<date>/details_<task>_<date>.parquet``): ``doc``
  (``query``, ``choices``, ``gold_index``, ``task_name``), ``model_response`` (``text``, a list)
  and ``metric`` (an object of named metrics, the pass/fail among them); the model in
  ``results/<model>/results_<date>.json: config_general.model_name``.
- Harbor job folders: ``<trial>/result.json`` each, ``task_name``,
  ``verifier_result.rewards.reward``, ``agent_info.model_info.name``, ``exception_info``; the
  job's ``result.json`` a summary.
- SWE-bench harness reports: ``submitted_ids``, ``resolved_ids``, ``unresolved_ids``,
  ``empty_patch_ids``, ``incomplete_ids``, ``error_ids``.
- OpenCompass results: ``details`` keyed by the sample's index (``correct``); EvalPlus
  ``eval_results.json`` (``evalplus/evaluate.py``): ``eval`` keyed by task with a list of
  samples, ``base_status`` / ``plus_status`` (``pass``, ``fail``, ``timeout``; ``plus_status``
  null with ``--base-only``); BigCodeBench the same with one ``status``.
- OpenAI evals logs: a ``spec`` line (``completion_fns``), then events with ``sample_id``,
  ``type`` and ``data`` (``match``: ``data.correct``; model-graded ``metrics``: ``data.score``).
- open-instruct ``grpo_fast.py --save_traces`` (``traces_<run>.jsonl``): one line per training
  step, lists with one element per sample (``scores``, ``finish_reasons``, ``responses`` as
  token ids, ``queries``, ``indices``, ``raw_queries``, ``decoded_responses``) beside the
  step's ``training_step`` and scalar ``objective/...`` metrics; the verifier's reward is 10
  per correct answer by default.
- promptfoo ``eval -o out.json`` (``results.results[]``) or ``-o out.jsonl`` (one
  ``EvaluateResult`` a line; ``src/types/index.ts``): ``testIdx``, ``promptIdx``,
  ``provider.id``, ``success`` (the pass), ``score`` (a weighted mean, no pass),
  ``failureReason`` 2 and ``error`` for a failed call, ``response.finishReason`` in newer
  versions.
- DeepEval test runs (``.deepeval/.latest_test_run.json``; ``deepeval/test_run/api.py``):
  ``testCases[]`` with ``name`` (``test_case_<i>``), ``input``, ``actualOutput``, ``success``
  and ``metricsData[]`` (``score``, ``success``, ``evaluationModel``, ``error``).
- Tinker cookbook ``iteration_<N>/<base>_rollout_summaries.jsonl``
  (``tinker_cookbook/rl/rollout_logging.py``): one trajectory a line, ``split``,
  ``iteration``, ``group_idx`` (the problem), ``traj_idx``, ``total_reward`` and ``steps[]``
  (``stop_reason``, the environment's ``metrics``: ``correct``); the model in the run's
  ``config.json: model_name``.
- Evalchemy ``results_<date>.json`` (``eval/chat_benchmarks/<TASK>/eval_instruct.py``):
  ``results[TASK].examples[]``: JEEBench a ``score`` list per repetition, code benchmarks the
  last repetition's ``correctness``, math benchmarks ``model_answers`` with no grade.
- slime ``--save-debug-rollout-data`` (``rollout_data_{rollout_id}.pt``,
  ``slime/ray/rollout.py``): ``torch.save({"rollout_id": N, "samples": [Sample.to_dict()]})``,
  a zip holding ``<name>/data.pkl``; each sample ``group_index`` (the prompt's group),
  ``prompt``, ``response``, ``reward`` (a number, or a dict ``--reward-key`` picks from),
  ``status`` (``completed``, ``truncated``, ``aborted``, ``failed``), ``weight_versions``,
  ``rollout_log_probs``, ``tokens``, ``loss_mask``; no model.
- OpenRLHF ``eval_samples_step_<N>.jsonl`` (``openrlhf/trainer/ppo_utils/eval_utils.py``:
  ``build_eval_records`` / ``save_eval_samples``, from ``BasePPOTrainer.run_evaluation``): one
  sample a line, ``prompt``, ``label``, ``reward``, ``score``, ``response_length``,
  ``total_length``, ``truncated`` (null where not recorded), ``datasource`` and ``eval_index``
  (found by a prompt's first sample only); no reply text, no id, the step in the file name.
- AReaL ``<log>/rollout/<version>/<task_id>.jsonl`` and ``eval-rollout/``
  (``areal/infra/workflow_executor.py``: ``WorkflowExecutor._dump_trajectory``): one sample a
  line, ``task_id`` (a group's samples share it; each split's executor counts from 0),
  ``sample_idx``, ``head_version``, ``tail_version``, ``reward``, ``prompt``, ``completion``
  and, where the trajectory kept one, ``original_reward`` beside an adjusted ``reward``.
- ROLL ``rollout_dump_data.step_<N>.jsonl`` (``roll/pipeline/rlvr/utils.py``:
  ``dump_rollout_to_specific_path``): one object of columns a step, lists with one element per
  sample: ``global_step``, ``id``, ``domain``, ``tag``, ``prompt`` and/or ``messages`` (JSON
  text), ``responses``, ``scores``, ``sampling_params``; no finish reason, no model.
- Summaries with no per-sample grade: simple-evals ``<eval>_<model>.json`` and
  ``_allresults.json``, bigcode-evaluation-harness ``evaluation_results.json``; a
  ``torch.save`` file that holds no samples (a checkpoint's dict).
- inspect_ai ``.json`` logs (``inspect_ai/log/_log.py``): ``samples[]`` with ``id``, ``epoch``,
  ``scores.<scorer>.value``, ``output.choices[].stop_reason`` and, when a limit halted the
  sample, ``limit`` (``{"type": "token" | "message" | "context" | "time" | ..., "limit": N}``).
- OpenPipe ART ``trajectories/<split>/<step:04d>.parquet`` (``src/art/utils/trajectory_logging.py``,
  ``write_trajectory_groups_parquet``): one trajectory a row, ``group_index`` (the scenario: a
  group's trajectories are its rollouts), ``reward``, ``metrics`` and ``metadata`` as JSON text,
  ``messages`` (role, content, tool_calls, trainable); no model, no finish reason.
- OpenHands SWE-bench evaluations (``evaluation/benchmarks/swe_bench/eval_infer.py``):
  ``<run>/output.swebench_eval.jsonl``, one instance a line, ``instance_id``,
  ``test_result.report.resolved``, ``metadata.llm_config.model``, ``error`` (a failed run);
  ``--n-runs`` writes one folder per run: k across folders. Beside it: the ungraded
  ``output.jsonl`` it was graded from, ``output.swebench.jsonl``, ``report.json``,
  ``llm_completions/<instance>/*.json`` and ``infer_logs/``: none of them is rows.
- Braintrust experiment events (``braintrust-sdk``, ``py/src/braintrust/framework.py``:
  ``_run_evaluator_internal_impl``; ``_generated_types.py``: ``ExperimentEvent``), as
  ``init_experiment(...).fetch()`` dumped or the REST ``/v1/experiment/{id}/fetch`` answer
  (``events[]``): one span a row, ``span_id``, ``root_span_id``, ``span_parents``,
  ``span_attributes.type`` (``eval`` root, ``task``, ``llm``, ``score``), ``input``, ``output``,
  ``error``, ``origin.id`` (the dataset record; ``dataset_record_id`` in older SDKs); each
  scorer's grade in its own ``score`` span's ``scores``; ``Experiment.log`` puts all on the root.
- LangSmith (``langsmith-sdk``, ``python/langsmith``): ``Client.list_runs`` runs dumped
  (``schemas.py``: ``Run``): ``run_type``, ``trace_id``, ``parent_run_id``, ``inputs``,
  ``outputs``, ``error``, ``reference_example_id``, ``feedback_stats`` (key -> ``avg``, ``n``),
  ``extra.metadata.ls_model_name``; or ``evaluate(...)`` results' ``to_pandas()``
  (``evaluation/_runner.py``: ``_flatten_experiment_results``) written out: ``inputs.*``,
  ``outputs.*``, ``error``, ``reference.*``, ``feedback.*``, ``example_id``, ``id``.
"""

from __future__ import annotations

import io
import json
import pickle
import random
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.commands.diff import read_tasks
from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.io.table import read_table
from whilecli.route.pool import Counts, summarize

Dump = dict[str, Any]
TOOLS: dict[str, Callable[[random.Random, str], Dump]] = {}
#: The variants each tool's generator takes (the grade's kind, a field left out, ...).
VARIANTS: dict[str, tuple[str, ...]] = {}


def tool(*variants: str) -> Callable[[Callable[[random.Random, str], Dump]], Any]:
    def register(fn: Callable[[random.Random, str], Dump]) -> Any:
        TOOLS[fn.__name__] = fn
        VARIANTS[fn.__name__] = variants
        return fn

    return register


def _grade(passed: bool, kind: str) -> Any:
    """A pass written as the tool (or a neighbour) writes it."""
    return {"bool": passed, "float": float(passed), "int": int(passed), "str": str(float(passed))}[
        kind
    ]


def _tasks(rng: random.Random, n: int, k: tuple[int, int]) -> list[list[bool]]:
    return [[rng.random() < 0.5 for _ in range(rng.randint(*k))] for _ in range(n)]


def _truth(groups: list[list[bool]], cuts: list[list[bool]] | None = None) -> list[tuple[int, ...]]:
    cuts = cuts or [[False] * len(g) for g in groups]
    return sorted((len(g), sum(g), sum(c)) for g, c in zip(groups, cuts, strict=True))


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


@tool("float", "bool-acc", "dapo", "no-gts")
def verl(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (1, 4))
    rows = []
    for t, group in enumerate(groups):
        prompt = f"<|im_start|>user\nWhat is {t} + {t}?<|im_end|>\n<|im_start|>assistant\n"
        for i, passed in enumerate(group):
            row: dict[str, Any] = {
                "input": prompt,
                "output": f"Step {i}: the answer is {2 * t if passed else -1}.",
                "gts": str(2 * t),
                "score": float(passed),
                "step": 40,
            }
            if variant == "no-gts":
                del row["gts"]
            if variant in ("bool-acc", "dapo"):
                row |= {"reward": row["score"], "acc": passed, "pred": str(2 * t)}
            if variant == "dapo":
                row["score"] = row["reward"] = 1.0 if passed else -1.0
            rows.append(row)
    # DAPO's score is 1 / -1: its acc is the pass, as verl's own validation metrics take it
    return {"files": {"40.jsonl": _jsonl(rows)}, "shape": _truth(groups), "model": None}


@tool("float", "token-rewards", "no-stop-reason")
def skyrl(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (1, 4))
    cuts = [[rng.random() < 0.3 for _ in g] for g in groups]
    rows = []
    for t, (group, cut) in enumerate(zip(groups, cuts, strict=True)):
        for i, (passed, c) in enumerate(zip(group, cut, strict=True)):
            score: Any = float(passed)
            if variant == "token-rewards":
                score = [0.0] * rng.randint(1, 4) + [float(passed)]
            row: dict[str, Any] = {
                "input_prompt": f"<|im_start|>user\nSolve problem {t}.<|im_end|>\n",
                "output_response": f"attempt {i} {'...' if c else 'done'}",
                "score": score,
                "stop_reason": "length" if c else "stop",
                "env_class": "gsm8k",
                "env_extras": {"reward_spec": {"ground_truth": str(t)}, "extra_info": {}},
                "data_source": "openai/gsm8k",
            }
            if variant == "no-stop-reason":
                row["stop_reason"] = None
            rows.append(row)
    metrics = {"eval/openai_gsm8k/avg_score": 0.5, "eval/openai_gsm8k/pass_at_4": 0.75}
    known = variant != "no-stop-reason"
    return {
        "files": {
            "dumped_evals/global_step_10_evals/openai_gsm8k.jsonl": _jsonl(rows),
            "dumped_evals/global_step_10_evals/aggregated_results.jsonl": _jsonl([metrics]),
        },
        "read": "dumped_evals/global_step_10_evals",
        "shape": _truth(groups, cuts if known else None),
        "truncation_known": known,
        "model": None,
    }


@tool("float", "system", "filtered")
def nemo_rl(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (1, 4))
    rows = []
    for t, group in enumerate(groups):
        for i, passed in enumerate(group):
            content = [f"<|im_start|>user\nProve claim {t}.<|im_end|>\n"]
            if variant == "system":
                content.insert(0, "<|im_start|>system\nThink step by step.<|im_end|>\n")
            content.append(
                f"<|im_start|>assistant\nTry {i}: {'yes' if passed else 'no'}<|im_end|>\n"
            )
            tokens = rng.randint(3, 6)
            row = {
                "content": content,
                "rewards": float(passed),
                "generation_logprobs": [0.0] * 4 + [-rng.random() for _ in range(tokens)],
                "prev_logprobs": [0.0] * 4 + [-rng.random() for _ in range(tokens)],
                "input_lengths": 4 + tokens,
            }
            if variant == "filtered":
                row |= {"filtered_rewards": float(passed), "advantages": [0.0] * (4 + tokens)}
            rows.append(row)
    return {
        "files": {"train_data_step3.jsonl": _jsonl(rows)},
        "shape": _truth(groups),
        "model": None,
    }


@tool("rewards", "chat", "no-rewards")
def trl(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (1, 4))
    data: dict[str, list[Any]] = {"mode": [], "step": [], "prompt": [], "completion": []}
    data |= {"accuracy_reward": [], "advantage": []}
    for t, group in enumerate(groups):
        for i, passed in enumerate(group):
            data["mode"].append("train")
            data["step"].append(20)
            if variant == "chat":
                prompt: Any = json.dumps([{"role": "user", "content": f"Question {t}"}])
            else:
                prompt = f"Question {t}"
            data["prompt"].append(prompt)
            data["completion"].append(f"answer {i}")
            data["accuracy_reward"].append(float(passed))
            data["advantage"].append(0.5 if passed else -0.5)
    if variant == "no-rewards":  # TRL before reward columns were written
        data = {k: data[k] for k in ("step", "prompt", "completion")}
    dump: Dump = {
        "files": {"completions/train/completions_00020.parquet": data},
        "shape": _truth(groups),
        "model": None,
    }
    if variant == "no-rewards":
        dump["refused"] = "reward"
    return dump


@tool("bool", "int")
def livecodebench(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (3, 3))
    problems = []
    for t, group in enumerate(groups):
        problems.append(
            {
                "question_title": f"Problem {t}",
                "question_content": f"Read n and print n + {t}.",
                "platform": "atcoder",
                "question_id": f"abc{300 + t}_a",
                "contest_id": f"abc{300 + t}",
                "contest_date": "2024-05-01T00:00:00",
                "starter_code": "",
                "difficulty": "easy",
                "output_list": [f"```python\nprint({i})\n```" for i in range(len(group))],
                "code_list": [f"print({i})" for i in range(len(group))],
                "graded_list": [_grade(p, variant) for p in group],
                "pass@1": sum(group) / len(group),
                "metadata": ["{}" for _ in group],
            }
        )
    return {
        "files": {"Scenario.codegeneration_3_0.2_eval_all.json": json.dumps(problems, indent=4)},
        "shape": _truth(groups),
        "model": None,
    }


@tool("bool")
def qwen_math(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (4, 4))
    rows = []
    for t, group in enumerate(groups):
        rows.append(
            {
                "idx": t,
                "question": f"Compute {t} squared.",
                "gt_cot": "...",
                "gt": str(t * t),
                "code": [f"The answer is \\boxed{{{t * t if p else 0}}}" for p in group],
                "pred": [str(t * t if p else 0) for p in group],
                "report": [None for _ in group],
                "score": [_grade(p, variant) for p in group],
            }
        )
    return {
        "files": {"test_qwen25-math-cot_-1_seed0_t0.6_s0_e-1.jsonl": _jsonl(rows)},
        "shape": _truth(groups),
        "model": None,
    }


@tool("float", "bool")
def reasoning_gym(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (3, 3))
    results = []
    for t, group in enumerate(groups):
        completions = [
            {"model_answer": str(i), "full_model_response": f"<answer>{i}</answer>"}
            | {"score": _grade(p, variant)}
            for i, p in enumerate(group)
        ]
        results.append(
            {
                "question": f"What is {t} + 1?",
                "expected_answer": str(t + 1),
                "best_model_answer": "1",
                "best_full_model_response": "<answer>1</answer>",
                "best_score": float(any(group)),
                "mean_score": sum(group) / len(group),
                "completions": completions,
            }
        )
    doc = {
        "metadata": {"model": "deepseek/deepseek-r1", "provider": "openrouter"},
        "results": results,
    }
    return {
        "files": {"basic_arithmetic.json": json.dumps(doc, indent=2)},
        "shape": _truth(groups),
        "model": "deepseek/deepseek-r1",
    }


@tool("bool", "harness-failed")
def terminal_bench(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (1, 3))
    graded: list[list[bool]] = []
    trials = []
    for t, group in enumerate(groups):
        graded.append([])
        for i, passed in enumerate(group):
            failed = variant == "harness-failed" and i == 0 and t % 2 == 0
            if not failed:
                graded[-1].append(passed)
            trials.append(
                {
                    "id": f"uuid-{t}-{i}",
                    "trial_name": f"task-{t}.{i}-of-{len(group)}.run",
                    "task_id": f"task-{t}",
                    "instruction": f"Fix the build of project {t}.",
                    "is_resolved": None if failed else passed,  # null: the harness failed
                    "failure_mode": "agent_timeout" if failed else "unset",
                    "parser_results": {"test_build": "passed" if passed else "failed"},
                    "total_input_tokens": 1000,
                    "total_output_tokens": 200,
                }
            )
    doc = {"id": "run-uuid", "results": trials, "accuracy": 0.5, "n_resolved": 1}
    meta = {"run_id": "2025-01-01__00-00-00", "agent_name": "terminus", "model_name": "gpt-4.1"}
    shape = _truth([g for g in graded if g])
    files = {"results.json": json.dumps(doc, indent=4), "run_metadata.json": json.dumps(meta)}
    return {"files": files, "shape": shape, "model": "gpt-4.1"}


@tool("parquet", "jsonl", "continuous-first")
def lighteval(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (1, 1))
    rows = []
    for t, group in enumerate(groups):
        metric: dict[str, float] = {"extractive_match": float(group[0])}
        if variant == "continuous-first":  # a score that is no pass/fail comes first
            metric = {"bleu": 40.0 + t, **metric}
        rows.append(
            {
                "doc": {
                    "query": f"Question: what is {t} * 3?\nAnswer:",
                    "choices": [str(3 * t)],
                    "gold_index": 0,
                    "task_name": "lighteval|gsm8k|0",
                    "id": "",
                },
                "model_response": {
                    "input": f"Question: what is {t} * 3?",
                    "text": [f" {3 * t if group[0] else 1}"],
                    "output_tokens": [[1, 2]],
                },
                "metric": metric,
            }
        )
    date = "2025-01-01T00-00-00"
    name = f"details/org/model/{date}/details_lighteval|gsm8k|0_{date}"
    results = {"config_general": {"model_name": "org/model"}, "results": {}, "versions": {}}
    files: dict[str, Any] = {f"results/org/model/results_{date}.json": json.dumps(results)}
    if variant == "jsonl" or variant == "continuous-first":
        files[name + ".jsonl"] = _jsonl(rows)
    else:
        files[name + ".parquet"] = {k: [r[k] for r in rows] for k in rows[0]}
    details = next(f for f in files if f.startswith("details/"))
    # the model is named in the results file of the same date
    return {"files": files, "read": details, "shape": _truth(groups), "model": "org/model"}


@tool("match", "modelgraded")
def openai_evals(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (1, 3))
    spec = {"completion_fns": ["gpt-4o-mini"], "eval_name": "arithmetic.dev.v0", "run_id": "r1"}
    lines: list[dict[str, Any]] = [{"spec": spec}, {"final_report": {"accuracy": 0.5}}]
    event = 0
    for t, group in enumerate(groups):
        for passed in group:
            sample = f"arithmetic.dev.{t}"
            base = {"run_id": "r1", "sample_id": sample, "created_by": "", "created_at": "2024"}
            prompt = [{"role": "user", "content": f"{t} + 1 ="}]
            lines.append(
                base
                | {
                    "event_id": event,
                    "type": "sampling",
                    "data": {"prompt": prompt, "sampled": ["x"]},
                }
            )
            if variant == "match":
                data: dict[str, Any] = {"correct": passed, "expected": [str(t + 1)], "picked": "x"}
                lines.append(base | {"event_id": event + 1, "type": "match", "data": data})
            else:
                data = {"choice": "Y" if passed else "N", "score": float(passed)}
                lines.append(base | {"event_id": event + 1, "type": "metrics", "data": data})
            event += 2
    return {
        "files": {"2403150000ABCD_gpt-4o-mini_arithmetic.jsonl": _jsonl(lines)},
        "shape": _truth(groups),
        "model": "gpt-4o-mini",
    }


@tool("rewards", "reward", "errored", "timeout")
def harbor(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 4), (2, 3))
    graded: list[list[bool]] = []
    cuts: list[list[bool]] = []
    files: dict[str, Any] = {}
    for t, group in enumerate(groups):
        graded.append([])
        cuts.append([])
        for i, passed in enumerate(group):
            broken = variant == "errored" and i == 0  # Trial.run skipped the verifier
            cut = variant == "timeout" and i == 0  # AgentTimeoutError, then verified
            verifier: dict[str, Any] | None = {"rewards": {"reward": float(passed)}}
            if variant == "reward":  # an older Harbor
                verifier = {"reward": float(passed)}
            if broken:
                verifier = None  # no verdict: the harness's error, left out
            else:
                graded[-1].append(passed)
                cuts[-1].append(cut)
            kind = "DockerBuildError" if broken else "AgentTimeoutError" if cut else None
            trial = {
                "id": f"u{t}{i}",
                "task_name": f"fix-build-{t}",
                "trial_name": f"fix-build-{t}__{i}x",
                "task_id": {"path": f"tasks/fix-build-{t}"},
                "agent_info": {"name": "terminus-2", "model_info": {"name": "gpt-5"}},
                "verifier_result": verifier,
                "exception_info": None if kind is None else {"exception_type": kind},
            }
            files[f"job/fix-build-{t}__{i}x/result.json"] = json.dumps(trial, indent=2)
    files["job/result.json"] = json.dumps({"n_total_trials": 9, "stats": {"n_errors": 0}})
    return {
        "files": files,
        "read": "job",
        "shape": _truth(graded, cuts),
        "model": "gpt-5",
        # only a timed-out trial records its cut (Harbor records no other cap)
        "truncation_known": sum(sum(c) for c in cuts),
    }


@tool("plain", "incomplete")
def swe_bench(rng: random.Random, variant: str) -> Dump:
    ids = [f"org__repo-{i}" for i in range(rng.randint(3, 8))]
    resolved = [i for i in ids if rng.random() < 0.5]
    empty = [i for i in ids if i not in resolved][:1]
    incomplete = ids[-1:] if variant == "incomplete" and ids[-1] not in resolved else []
    done = [i for i in ids if i not in incomplete]
    report = {
        "total_instances": 500,
        "submitted_instances": len(ids),
        "completed_ids": [i for i in done if i not in empty],
        "incomplete_ids": incomplete,
        "empty_patch_ids": [i for i in empty if i not in incomplete],
        "submitted_ids": ids,
        "resolved_ids": resolved,
        "unresolved_ids": [i for i in done if i not in resolved and i not in empty],
        "error_ids": [],
        "schema_version": 2,
    }
    shape = _truth([[i in resolved] for i in done])
    return {"files": {"gpt-4o.run1.json": json.dumps(report, indent=4)}, "shape": shape}


@tool("bool", "list-keyed", "evalplus", "evalplus-base-only", "bigcodebench")
def opencompass(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 5), (1, 1))
    details: dict[str, Any] = {}
    for t, group in enumerate(groups):
        details[str(t)] = {
            "prompt": f"Question {t}",
            "origin_prediction": "x",
            "predictions": "x",
            "references": "y",
            "correct": group[0],
        }
    doc: dict[str, Any] = {"accuracy": 50.0, "details": details}
    if variant == "list-keyed":  # EvalPlus-like: the samples of each task in a list
        doc = {
            "date": "2024",
            "eval": {f"T/{t}": [{"passed": p} for p in g] for t, g in enumerate(groups)},
        }
    if variant.startswith("evalplus"):  # evalplus/evaluate.py: base and plus verdicts
        groups = _tasks(rng, rng.randint(2, 5), (1, 4))
        base_only = variant == "evalplus-base-only"
        truth = []
        samples: dict[str, list[dict[str, Any]]] = {}
        for t, group in enumerate(groups):
            truth.append([])
            for passed in group:
                base = passed or rng.random() < 0.5  # a plus failure may pass the base tests
                plus = None if base_only else ("pass" if passed else "fail")
                truth[-1].append(base if base_only else passed)
                samples.setdefault(f"HumanEval/{t}", []).append(
                    {"task_id": f"HumanEval/{t}", "solution": "def f(): ..."}
                    | {"base_status": "pass" if base else rng.choice(["fail", "timeout"])}
                    | {"plus_status": plus, "base_fail_tests": [], "plus_fail_tests": []}
                )
        doc = {"date": "2024-05-01 10:00", "hash": "0a1b", "eval": samples}
        name = "humaneval/gpt-4o_vllm_temp_0.8.eval_results.json"
        return {"files": {name: json.dumps(doc, indent=2)}, "shape": _truth(truth)}
    if variant == "bigcodebench":
        doc = {
            "date": "2024-06-01 10:00",
            "eval": {
                f"BigCodeBench/{t}": [
                    {"task_id": f"BigCodeBench/{t}", "solution": "x", "details": {}}
                    | {"status": "pass" if p else rng.choice(["fail", "timeout"])}
                    for p in g
                ]
                for t, g in enumerate(groups)
            },
        }
    return {"files": {"gsm8k.json": json.dumps(doc, indent=4)}, "shape": _truth(groups)}


@tool("indices", "raw-queries", "tokens-only", "per-prompt-lists", "default-reward")
def open_instruct(rng: random.Random, variant: str) -> Dump:
    truth: list[list[bool]] = []
    cuts: list[list[bool]] = []
    lines = []
    for step in range(1, rng.randint(1, 2) + 1):
        k = rng.randint(2, 4)
        groups = _tasks(rng, rng.randint(2, 4), (k, k))
        group_cuts = [[rng.random() < 0.3 for _ in g] for g in groups]
        truth += groups
        cuts += group_cuts
        n = sum(len(g) for g in groups)
        per: dict[str, Any] = {
            "indices": [100 * step + t for t in range(len(groups))],
            "raw_queries": [
                f"<|user|>\nProblem {step}.{t}\n<|assistant|>\n" for t in range(len(groups))
            ],
            "queries": [[1, 2, step, t] for t in range(len(groups))],
            "ground_truths": [[str(t)] for t in range(len(groups))],
            "datasets": ["gsm8k" for _ in groups],
        }
        if variant != "per-prompt-lists":  # one element per sample, as grpo_fast repeats them
            per = {
                key: [v for v, g in zip(vals, groups, strict=True) for _ in g]
                for key, vals in per.items()
            }
        if variant in ("tokens-only", "raw-queries"):
            per["indices"] = None
        if variant == "tokens-only":
            per["raw_queries"] = None
        scale = 10.0 if variant == "default-reward" else 1.0
        lines.append(
            {
                "scores": [scale * p for g in groups for p in g],
                "finish_reasons": ["length" if c else "stop" for g in group_cuts for c in g],
                "responses": [[rng.randint(5, 99) for _ in range(3)] for _ in range(n)],
                "training_step": step,
                **per,
                "decoded_responses": [f"reply {rng.random()}" for _ in range(n)],
                "objective/verifiable_reward": 0.5,
                "time/reward": 1.5,
            }
        )
    dump: Dump = {
        "files": {"output/exp__1__1700000000/traces_exp__1__1700000000.jsonl": _jsonl(lines)},
        "shape": _truth(truth, cuts),
        "truncation_known": True,
        "model": None,
    }
    if variant == "default-reward":
        dump["refused"] = "--pass-threshold"
    return dump


def _promptfoo_results(
    rng: random.Random, variant: str
) -> tuple[list[dict[str, Any]], list[tuple[int, ...]], bool]:
    groups = _tasks(rng, rng.randint(3, 5), (3, 3) if variant == "repeat" else (1, 3))
    known = variant == "finish-reason"
    results: list[dict[str, Any]] = []
    graded: list[list[bool]] = []
    cuts: list[list[bool]] = []
    for t, group in enumerate(groups):
        graded.append([])
        cuts.append([])
        for r, passed in enumerate(group):
            errored = variant == "errored" and r == 0 and t == 0
            cut = known and rng.random() < 0.3
            grading = {
                "pass": passed,
                "score": 0.75 if passed else 0.25,  # a weighted mean of assertions, no pass
                "reason": "",
                "componentResults": [
                    {"pass": passed, "score": 0.75, "assertion": {"type": "contains", "value": "x"}}
                ],
            }
            response: dict[str, Any] = {"output": f"answer {t}.{r}", "tokenUsage": {"total": 9}}
            if known:
                response["finishReason"] = "length" if cut else "stop"
            results.append(
                {
                    "id": f"res-{t}-{r}",
                    "promptIdx": 0,
                    "testIdx": t,
                    "testCase": {"vars": {"q": f"q{t}"}, "assert": [{"type": "contains"}]},
                    "promptId": "p0",
                    "provider": {"id": "openai:gpt-4o-mini", "label": ""},
                    "prompt": {"raw": f"Answer: q{t}", "label": "prompt.txt"},
                    "vars": {"q": f"q{t}"},
                    "response": None if errored else response,
                    "error": "API error: 429 Too Many Requests" if errored else None,
                    "failureReason": 2 if errored else (0 if passed else 1),
                    "success": False if errored else passed,
                    "score": 0 if errored else grading["score"],
                    "latencyMs": 100,
                    "gradingResult": None if errored else grading,
                    "namedScores": {},
                }
            )
            if not errored:
                graded[-1].append(passed)
                cuts[-1].append(cut)
    rng.shuffle(results)
    keep = [(g, c) for g, c in zip(graded, cuts, strict=True) if g]
    return results, _truth([g for g, _ in keep], [c for _, c in keep]), known


@tool("json", "jsonl", "repeat", "errored", "finish-reason")
def promptfoo(rng: random.Random, variant: str) -> Dump:
    results, shape, known = _promptfoo_results(rng, variant)
    if variant == "jsonl":
        files: dict[str, Any] = {"out.jsonl": _jsonl(results)}
    else:
        doc = {
            "evalId": "eval-abc-2025-01-01T00:00:00",
            "results": {
                "version": 3,
                "timestamp": "2025-01-01T00:00:00.000Z",
                "prompts": [{"raw": "Answer: {{q}}", "label": "prompt.txt", "provider": "x"}],
                "results": results,
                "stats": {"successes": 1, "failures": 1, "errors": 0, "tokenUsage": {}},
            },
            "config": {"providers": ["openai:gpt-4o-mini"], "tests": "tests.csv"},
            "shareableUrl": None,
        }
        files = {"output.json": json.dumps(doc, indent=2)}
    return {
        "files": files,
        "shape": shape,
        "truncation_known": known,
        "model": "openai:gpt-4o-mini",
    }


@tool("plain", "repeated-inputs", "metric-error", "model-logged")
def deepeval(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(3, 5), (2, 3) if variant == "repeated-inputs" else (1, 1))
    cases: list[dict[str, Any]] = []
    graded: list[list[bool]] = []
    for t, group in enumerate(groups):
        graded.append([])
        for passed in group:
            failed = variant == "metric-error" and t == 0
            metric: dict[str, Any] = {
                "name": "Answer Relevancy",
                "threshold": 0.5,
                "success": passed and not failed,
                "score": None if failed else (0.9 if passed else 0.3),
                "reason": "because",
                "strictMode": False,
                "evaluationModel": "gpt-4.1",
                "evaluationCost": 0.001,
            }
            if failed:
                metric["error"] = "Evaluation LLM outputted an invalid JSON"
            else:
                graded[-1].append(passed)
            cases.append(
                {
                    "name": f"test_case_{len(cases)}",
                    "input": f"What does policy {t} say?",
                    "actualOutput": f"It says {rng.random()}",
                    "expectedOutput": "it says so",
                    "success": passed and not failed,
                    "metricsData": [metric],
                    "runDuration": 1.2,
                    "evaluationCost": 0.001,
                    "order": len(cases),
                }
            )
    doc: dict[str, Any] = {
        "testFile": "test_chatbot.py",
        "testCases": cases,
        "conversationalTestCases": [],
        "metricsScores": [{"metric": "Answer Relevancy", "scores": [0.9], "passes": 1}],
        "testPassed": 1,
        "testFailed": 1,
        "runDuration": 3.0,
        "evaluationCost": 0.01,
    }
    model = None
    if variant == "model-logged":
        doc["hyperparameters"] = {"model": "gpt-4o", "prompt template": "You are..."}
        model = "gpt-4o"
    files = {".deepeval/.latest_test_run.json": json.dumps(doc)}
    return {"files": files, "shape": _truth([g for g in graded if g]), "model": model}


@tool("math", "no-metric", "no-config", "eval-split")
def tinker(rng: random.Random, variant: str) -> Dump:
    truth: list[list[bool]] = []
    cuts: list[list[bool]] = []
    files: dict[str, Any] = {}
    base = "eval_gsm8k" if variant == "eval-split" else "train"
    for iteration in range(rng.randint(1, 2)):
        groups = _tasks(rng, rng.randint(2, 4), (2, 4))
        records = []
        for g, group in enumerate(groups):
            truth.append(group)
            cuts.append([])
            for t, passed in enumerate(group):
                cut = rng.random() < 0.3
                cuts[-1].append(cut)
                metrics: dict[str, Any] = {"format": 1.0, "correct": float(passed), "num_tokens": 9}
                if variant == "no-metric":
                    metrics = {}
                reward = float(passed) if variant == "no-metric" else float(passed) - 0.1 * cut
                records.append(
                    {
                        "schema_version": 1,
                        "split": "test" if variant == "eval-split" else "train",
                        "iteration": iteration,
                        "group_idx": g,
                        "traj_idx": t,
                        "tags": ["gsm8k"],
                        "sampling_client_step": iteration,
                        "total_reward": reward,
                        "final_reward": 0.0,
                        "trajectory_metrics": {},
                        "steps": [
                            {
                                "step_idx": 0,
                                "ob_len": 120,
                                "ac_len": 300,
                                "reward": reward,
                                "episode_done": True,
                                "stop_reason": "length" if cut else "stop",
                                "metrics": metrics,
                                "logs": {},
                            }
                        ],
                        "final_ob_len": 0,
                    }
                )
        name = f"run/iteration_{iteration:06d}/{base}_rollout_summaries.jsonl"
        files[name] = _jsonl(records)
    # the run's own logs beside the iteration folders are no rows
    files["run/metrics.jsonl"] = _jsonl([{"step": 0, "env/all/correct": 0.5, "optim/lr": 1e-5}] * 2)
    files["run/checkpoints.jsonl"] = _jsonl([{"name": "000000", "batch": 0, "state_path": "x"}])
    model = None
    if variant != "no-config":
        files["run/config.json"] = json.dumps({"model_name": "Qwen/Qwen3-8B", "lora_rank": 32})
        model = "Qwen/Qwen3-8B"
    return {
        "files": files,
        "read": "run",
        "shape": _truth(truth, cuts),
        "truncation_known": True,
        "model": model,
    }


@tool("jeebench-score", "code-correctness", "two-benchmarks", "math-ungraded")
def evalchemy(rng: random.Random, variant: str) -> Dump:
    def bench(kind: str, n: int) -> tuple[dict[str, Any], list[list[bool]]]:
        groups = _tasks(rng, n, (3, 3) if kind == "score" else (1, 1))
        examples: list[dict[str, Any]] = []
        for t, group in enumerate(groups):
            if kind == "score":  # JEEBench: one grade per repetition
                examples.append(
                    {"idx": t, "question": f"Q{t}", "gold": "A", "model_outputs": ["x"] * 3}
                    | {"score": [float(p) for p in group]}
                )
            elif kind == "correctness":  # code: the last repetition's verdicts, in order
                examples.append(
                    {"content": [f"print({t})"], "difficulty": "easy"}
                    | {"correctness": group[0], "reason": "" if group[0] else "Code is incorrect."}
                )
            else:  # math: answers, no grade
                examples.append(
                    {"id": t, "problem": f"P{t}", "expected_answer": "3"}
                    | {"model_outputs": ["a", "b"], "model_answers": ["3", "4"]}
                )
        metrics = {"accuracy_avg": 0.5, "num_total": n, "num_repeat": 3, "run_stats": []}
        return metrics | {"examples": examples}, groups

    kinds = {
        "jeebench-score": ["score"],
        "code-correctness": ["correctness"],
        "two-benchmarks": ["score", "correctness"],
        "math-ungraded": ["math"],
    }[variant]
    results: dict[str, Any] = {}
    truth: list[list[bool]] = []
    for i, kind in enumerate(kinds):
        results[f"Bench{i}"], groups = bench(kind, rng.randint(2, 4))
        truth += groups
    doc = {
        "results": results,
        "config": {"model": "vllm", "model_args": "pretrained=Qwen/Qwen3-8B,dtype=auto"},
        "model_name": "Qwen/Qwen3-8B",
        "git_hash": "abc",
    }
    dump: Dump = {
        "files": {
            "logs/Qwen__Qwen3-8B/results_2025-06-01T00-00-00.json": json.dumps(doc, indent=2)
        },
        "shape": _truth(truth),
        "model": "Qwen/Qwen3-8B",
    }
    if variant == "math-ungraded":
        dump["refused"] = "no grade"
    return dump


def torch_zip(obj: Any, stem: str) -> bytes:
    """``obj`` as ``torch.save`` lays it out (a zip of ``<stem>/data.pkl``, protocol 2, and
    its ``version``), written without torch: the reader must not need it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr(f"{stem}/data.pkl", pickle.dumps(obj, protocol=2))
        archive.writestr(f"{stem}/byteorder", b"little")
        archive.writestr(f"{stem}/version", b"3\n")
    return buf.getvalue()


@tool("float", "reward-dict", "no-group-index", "error-status", "bool")
def slime(rng: random.Random, variant: str) -> Dump:
    truth: list[list[bool]] = []
    cuts: list[list[bool]] = []
    samples: list[dict[str, Any]] = []
    start = rng.randint(0, 500)  # group indexes run on across a run's rollouts
    for g, group in enumerate(_tasks(rng, rng.randint(3, 5), (2, 4))):
        truth.append(group)
        cuts.append([])
        for passed in group:
            cut = rng.random() < 0.3 and not passed
            cuts[-1].append(cut)
            reward: Any = {"float": float(passed), "bool": passed}.get(variant, float(passed))
            if variant == "reward-dict":
                reward = {"acc": float(passed)}
            samples.append(
                {
                    "group_index": None if variant == "no-group-index" else start + g,
                    "index": len(samples),
                    "prompt": [{"role": "user", "content": f"problem {start + g}"}],
                    "tokens": [1, 2, 3, 4],
                    "response": f"answer {len(samples)}",
                    "response_length": 2,
                    "label": "42",
                    "reward": reward,
                    "loss_mask": [1, 1],
                    "weight_versions": ["7", "7"],
                    "rollout_log_probs": [-0.5, -0.25],
                    "status": "truncated" if cut else "completed",
                    "metadata": {},
                    "spec_info": {"spec_accept_token_num": 0},
                    "prefix_cache_info": {"cached_tokens": 0, "total_prompt_tokens": 9},
                }
            )
    if variant == "error-status":  # an engine abort: an error reply, left out and counted
        samples.append({**samples[0], "status": "aborted", "reward": 0.0, "response": ""})
    files = {"debug/rollout_data_7.pt": torch_zip({"rollout_id": 7, "samples": samples}, "r7")}
    return {"files": files, "shape": _truth(truth, cuts), "truncation_known": True}


@tool("float", "bool", "truncation-unrecorded", "two-steps", "score-only")
def openrlhf(rng: random.Random, variant: str) -> Dump:
    truth: list[list[bool]] = []
    cuts: list[list[bool]] = []
    files: dict[str, Any] = {}
    for step in (10, 20) if variant == "two-steps" else (20,):
        records = []
        for t, group in enumerate(_tasks(rng, rng.randint(2, 4), (2, 4))):
            truth.append(group)
            cuts.append([])
            # the same prompts at every evaluation: another step is another draw
            prompt = f"<|im_start|>user\nWhat is {t} * 7?<|im_end|>\n<|im_start|>assistant\n"
            for i, passed in enumerate(group):
                cut = rng.random() < 0.3
                cuts[-1].append(cut)
                first = i == 0  # only a prompt's first sample finds its metadata
                record: dict[str, Any] = {
                    "prompt": prompt,
                    "label": str(7 * t),
                    "reward": _grade(passed, "bool" if variant == "bool" else "float"),
                    "response_length": 1024 if cut else 200,
                    "total_length": 1040 if cut else 216,
                    "truncated": cut,
                    "score": float(passed),
                    "datasource": "math" if first else "unknown",
                    "eval_index": t if first else None,
                    "response_clip_ratio": 0.0,
                }
                if variant == "truncation-unrecorded":  # no truncated value in the info
                    record["truncated"] = None
                if variant == "score-only":  # the reward function gave scores alone
                    record["reward"] = None
                records.append(record)
        files[f"ckpt/eval/eval_samples_step_{step}.jsonl"] = _jsonl(records)
    known = variant != "truncation-unrecorded"
    return {
        "files": files,
        "read": "ckpt/eval" if variant == "two-steps" else next(iter(files)),
        "shape": _truth(truth, cuts if known else None),
        "truncation_known": known,
        "model": None,
    }


@tool("float", "original-reward", "eval-split", "versions")
def areal(rng: random.Random, variant: str) -> Dump:
    truth: list[list[bool]] = []
    files: dict[str, Any] = {}
    log = "fileroot/logs/user/gsm8k-grpo/trial0"
    for split in ("rollout", "eval-rollout") if variant == "eval-split" else ("rollout",):
        task = 0  # each split's executor counts its tasks from 0
        for version in (3, 4) if variant == "versions" else (3,):
            for _ in range(rng.randint(2, 3)):
                group = [rng.random() < 0.5 for _ in range(rng.randint(2, 4))]
                truth.append(group)
                lines = []
                for i, passed in enumerate(group):
                    record: dict[str, Any] = {
                        "task_id": task,
                        "sample_idx": i,
                        "seqlen": 300,
                        "prompt_len": 40,
                        "head_version": version - 1 if variant == "versions" and i else version,
                        "tail_version": version,
                        "version_rle": [[version, 260]],
                        "reward": float(passed),
                        "prompt": f"<|im_start|>user\n{split} problem {task}<|im_end|>\n",
                        "completion": f"The answer is {i}.<|im_end|>",
                    }
                    if variant == "original-reward":  # an adjusted reward beside the grade
                        record |= {"original_reward": float(passed), "reward": passed - 0.25}
                    lines.append(record)
                files[f"{log}/{split}/{version}/{task}.jsonl"] = _jsonl(lines)
                task += 1
    dump: Dump = {
        "files": files,
        "read": log if variant == "eval-split" else f"{log}/rollout",
        "shape": _truth(truth),
        "model": None,
    }
    if variant == "eval-split":  # training and evaluation rollouts: two evaluations
        dump["refused"] = "--by split"
    return dump


@tool("float", "messages", "no-id", "two-steps", "int")
def roll(rng: random.Random, variant: str) -> Dump:
    truth: list[list[bool]] = []
    files: dict[str, Any] = {}
    k = rng.randint(2, 4)  # num_return_sequences_in_group
    for step in (3, 4) if variant == "two-steps" else (3,):
        cols: dict[str, list[Any]] = {
            name: []
            for name in ("global_step", "id", "source", "difficulty", "prompt", "messages")
            + ("ground_truth", "tag", "domain", "responses", "scores", "sampling_params")
        }
        for t, group in enumerate(_tasks(rng, rng.randint(2, 4), (k, k))):
            truth.append(group)
            question = f"Compute {t} + {step % 2}."
            for i, passed in enumerate(group):
                cols["global_step"].append(step)
                cols["id"].append(f"deepmath-{t}")  # the dataset's id, the same at every step
                cols["source"].append("deepmath")
                cols["difficulty"].append("3")
                cols["prompt"].append(f"<|im_start|>user\n{question}<|im_end|>\n")
                cols["messages"].append(json.dumps([{"role": "user", "content": question}]))
                cols["ground_truth"].append(str(t))
                cols["tag"].append("deepmath_103k")
                cols["domain"].append("math_rule")
                cols["responses"].append(f"attempt {i}: \\boxed{{{t if passed else -1}}}")
                cols["scores"].append(int(passed) if variant == "int" else float(passed))
                cols["sampling_params"].append(json.dumps({"global_step": step}))
        if variant == "messages":
            del cols["prompt"]
        if variant == "no-id":
            del cols["id"]
        name = f"output/rollout_dump/rollout_dump_data.step_{step}.jsonl"
        files[name] = _jsonl([cols])
    return {
        "files": files,
        "read": "output/rollout_dump" if variant == "two-steps" else next(iter(files)),
        "shape": _truth(truth),
        "model": None,
    }


@tool("simple-evals", "simple-evals-allresults", "bigcode", "slime-pt")
def summary_only(rng: random.Random, variant: str) -> Dump:
    """Files that hold no per-sample grade are refused in one line saying so, never read as a
    row (a summary's ``score`` is no rollout)."""
    files: dict[str, Any]
    if variant == "simple-evals":
        # simple-evals' aggregate_results: each metric's mean, and its std as NAME:std
        doc = {"chars": 812.0, "chars:std": 40.5, "score:std": 0.4, "score": rng.random()}
        files = {"mmlu_gpt-4o.json": json.dumps(doc)}
    elif variant == "simple-evals-allresults":
        doc = {"score": 0.5, "metrics": {"chars": 1.0}, "htmls": ["<p/>"]}
        files = {"math_gpt-4o_allresults.json": json.dumps(doc | {"convos": [[]], "metadata": {}})}
    elif variant == "bigcode":
        doc = {"humaneval": {"pass@1": 0.3}, "config": {"model": "bigcode/starcoder"}}
        files = {"evaluation_results.json": json.dumps(doc, indent=2)}
    else:  # a torch.save file of no samples: a checkpoint's state dict
        files = {"debug/rollout_3.pt": torch_zip({"w": [0.0, 1.0]}, "rollout_3")}
    refused = "PyTorch" if variant == "slime-pt" else "nothing to route"
    return {"files": files, "shape": [], "refused": refused}


@tool("stop-reason", "sample-limit", "numeric-scores")
def inspect_ai(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 4), (1, 3))
    cuts = [[rng.random() < 0.3 for _ in g] for g in groups]
    samples = []
    for t, (group, cut) in enumerate(zip(groups, cuts, strict=True)):
        for epoch, (passed, c) in enumerate(zip(group, cut, strict=True), start=1):
            value: Any = "C" if passed else "I"
            if variant == "numeric-scores":
                value = float(passed)
            choice = {"message": {"role": "assistant", "content": f"reply {t}.{epoch}"}}
            choice["stop_reason"] = "max_tokens" if c and variant != "sample-limit" else "stop"
            sample: dict[str, Any] = {
                "id": f"q{t}",
                "epoch": epoch,
                "input": [{"role": "user", "content": f"Question {t}"}],
                "target": "x",
                "messages": [],
                "output": {"model": "gpt-4o-mini", "choices": [choice]},
                "scores": {"match": {"value": value, "answer": "x"}},
                "metadata": {},
            }
            if c and variant == "sample-limit":  # halted by the sample's token limit
                sample["limit"] = {"type": "token", "limit": 4096}
            elif variant == "sample-limit" and rng.random() < 0.3:
                sample["limit"] = {"type": "time", "limit": 60}  # no reply was cut short
            samples.append(sample)
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "popularity", "model": "openai/gpt-4o-mini", "created": "2025"},
        "plan": {"steps": []},
        "results": {"scores": []},
        "stats": {},
        "samples": samples,
    }
    return {
        "files": {"logs/2025-01-01T00-00-00_popularity.json": json.dumps(log, indent=2)},
        "shape": _truth(groups, cuts),
        "truncation_known": True,
        "model": "openai/gpt-4o-mini",
    }


@tool("distinct-prompts", "one-prompt", "trajectory-index")
def openpipe_art(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(2, 4), (2, 4))
    data: dict[str, list[Any]] = {"group_index": [], "reward": [], "metrics": [], "messages": []}
    if variant == "trajectory-index":  # the newer writer's columns
        data |= {"format_version": [], "trajectory_index": []}
    for g, group in enumerate(groups):
        user = "Play 2048: the board is empty." if variant == "one-prompt" else f"Scenario {g}"
        for t, passed in enumerate(group):
            data["group_index"].append(g)
            data["reward"].append(float(passed))
            data["metrics"].append(json.dumps({"win": int(passed), "max_value": 64}))
            data["messages"].append(
                [
                    {
                        "role": "system",
                        "content": "You play.",
                        "tool_calls": None,
                        "trainable": False,
                    },
                    {"role": "user", "content": user, "tool_calls": None, "trainable": False},
                    {
                        "role": "assistant",
                        "content": f"move {t}",
                        "tool_calls": None,
                        "trainable": True,
                    },
                ]
            )
            if variant == "trajectory-index":
                data["format_version"].append(2)
                data["trajectory_index"].append(t)
    return {
        "files": {".art/2048/models/agent-001/trajectories/train/0003.parquet": data},
        "shape": _truth(groups),
        "model": None,
    }


@tool("one-run", "multirun", "errored")
def openhands(rng: random.Random, variant: str) -> Dump:
    runs = 3 if variant == "multirun" else 1
    groups = _tasks(rng, rng.randint(3, 5), (runs, runs))
    files: dict[str, Any] = {}
    graded: list[list[bool]] = [[] for _ in groups]
    for run in range(runs):
        rows = []
        for t, group in enumerate(groups):
            failed = variant == "errored" and t == 0
            report = {"empty_generation": False, "resolved": group[run], "error_eval": False}
            rows.append(
                {
                    "instance_id": f"django__django-{1000 + t}",
                    # the instruction embeds the instance's issue: one text per instance
                    "instruction": f"<uploaded_files> ... django__django-{1000 + t} ...",
                    "metadata": {
                        "agent_class": "CodeActAgent",
                        "llm_config": {
                            "model": "litellm_proxy/claude-sonnet-4",
                            "temperature": 0.0,
                        },
                        "max_iterations": 100,
                    },
                    "history": [],
                    "error": "RuntimeError: agent stuck in a loop" if failed else None,
                    "test_result": {"git_patch": f"diff --git a/x b/x\n+{rng.random()}"}
                    | ({} if failed else {"report": report}),
                }
            )
            if not failed:
                graded[t].append(group[run])
        folder = f"evaluation/CodeActAgent/claude-sonnet-4_maxiter_100_N_v0.40-run_{run + 1}"
        files[f"{folder}/output.swebench_eval.jsonl"] = _jsonl(rows)
        files[f"{folder}/metadata.json"] = json.dumps({"agent_class": "CodeActAgent"})
        # beside the graded rows: the ungraded inference output they were graded from, the
        # predictions converted for the harness, the report and the logs
        ungraded = [{k: v for k, v in r.items() if k != "test_result"} for r in rows]
        for r in ungraded:
            r["test_result"] = {"git_patch": "diff --git a/x b/x"}
        files[f"{folder}/output.jsonl"] = _jsonl(ungraded)
        files[f"{folder}/output.swebench.jsonl"] = _jsonl(
            [
                {"instance_id": r["instance_id"], "model_patch": "", "model_name_or_path": "m"}
                for r in rows
            ]
        )
        resolved = [
            r["instance_id"] for r in rows if r["test_result"].get("report", {}).get("resolved")
        ]
        report = {"total_instances": 500, "resolved_ids": resolved, "submitted_ids": []}
        files[f"{folder}/report.json"] = json.dumps(report)
        call = {"messages": [{"role": "user", "content": "fix it"}], "response": {"id": "x"}}
        files[f"{folder}/llm_completions/{rows[0]['instance_id']}/claude-1.json"] = json.dumps(call)
        files[f"{folder}/infer_logs/instance_{rows[0]['instance_id']}.log"] = "started\n"
    return {
        "files": files,
        "read": "evaluation",
        "shape": _truth([g for g in graded if g]),
        "model": "litellm_proxy/claude-sonnet-4",
    }


@tool("nested", "listed", "rewards-beside-responses")
def unnamed(rng: random.Random, variant: str) -> Dump:
    """A tool not seen before: its grade under a name no alias knows, nested or listed, is
    refused naming the --map that reads it; a list of rewards beside a list of responses is
    read as one rollout per element."""
    groups = _tasks(rng, rng.randint(2, 5), (2, 3))
    rows: list[dict[str, Any]] = []
    for t, group in enumerate(groups):
        row: dict[str, Any] = {"question": f"Task {t}?"}
        if variant == "nested":
            rows += [row | {"reply": "x", "verifier": {"success": p}} for p in group]
            continue
        if variant == "listed":
            row["outcome"] = {"scores": [float(p) for p in group]}
        else:
            row |= {"responses": ["x"] * len(group), "rewards": [float(p) for p in group]}
        rows.append(row)
    dump: Dump = {"files": {"out.jsonl": _jsonl(rows)}, "shape": _truth(groups)}
    if variant == "nested":
        dump["refused"] = "--map reward=verifier.success"
    elif variant == "listed":
        dump["refused"] = "--map reward=outcome.scores[]"
    return dump


def _braintrust_trace(
    t: int, r: int, passed: bool, cut: bool | None, variant: str
) -> list[dict[str, Any]]:
    """One ``Eval()`` case's trace as ``fetch()`` returns it: the root ``eval`` span, its
    ``task`` span with the task's LLM call, and one ``score`` span per scorer."""
    root = f"{t:02d}{r:02d}-root"
    base = {"experiment_id": "exp-1", "project_id": "proj-1", "root_span_id": root}
    question = {"question": f"What is {t} + {t}?"}
    answer = str(2 * t) if passed else "-1"
    errored = variant == "errored" and t == 0 and r == 0
    spans: list[dict[str, Any]] = [
        {
            **base,
            "id": f"row-{root}",
            "span_id": root,
            "span_parents": None,
            "is_root": True,
            "span_attributes": {"name": "eval", "type": "eval"},
            "input": question,
            "output": None if errored else answer,
            "expected": str(2 * t),
            "error": "Traceback (most recent call last):\nValueError: boom" if errored else None,
            "scores": None,
            "metadata": {},
            "metrics": {"start": 1.0 + r, "end": 2.0 + r},
            "origin": None
            if variant == "no-dataset"
            else {"object_type": "dataset", "object_id": "ds-1", "id": f"rec-{t}", "_xact_id": "9"},
            "created": "2025-01-01T00:00:00Z",
            "_xact_id": "1000",
        },
        {
            **base,
            "id": f"row-{root}-task",
            "span_id": f"{root}-task",
            "span_parents": [root],
            "span_attributes": {"name": "task", "type": "task"},
            "input": question,
            "output": None if errored else answer,
            "scores": None,
        },
    ]
    if errored:
        return spans
    if cut is not None:
        choice = {"index": 0, "finish_reason": "length" if cut else "stop"}
        spans.append(
            {
                **base,
                "id": f"row-{root}-llm",
                "span_id": f"{root}-llm",
                "span_parents": [f"{root}-task"],
                "span_attributes": {"name": "Chat Completion", "type": "llm"},
                "input": [{"role": "user", "content": question["question"]}],
                "output": [choice | {"message": {"role": "assistant", "content": answer}}],
                "metadata": {"model": "gpt-4o-mini", "temperature": 1.0},
                "metrics": {"start": 1.5 + r, "prompt_tokens": 9, "completion_tokens": 4},
                "scores": None,
            }
        )
    graders = {"ExactMatch": float(passed)}
    if variant == "two-scores":
        graders["Levenshtein"] = 0.25 + 0.5 * passed
    if variant == "several-scores":
        graders["Correct"] = float(passed)
    for name, value in graders.items():
        spans.append(
            {
                **base,
                "id": f"row-{root}-{name}",
                "span_id": f"{root}-{name}",
                "span_parents": [root],
                "span_attributes": {"name": name, "type": "score", "purpose": "scorer"},
                "input": {"output": answer, "expected": str(2 * t)},
                "output": {"score": value},
                "scores": {name: value},
            }
        )
    return spans


@tool("spans", "logged", "fetch-page", "errored", "two-scores", "no-dataset", "several-scores")
def braintrust(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(3, 5), (1, 4))
    known = variant in ("spans", "two-scores", "fetch-page")
    graded: list[list[bool]] = []
    cuts: list[list[bool]] = []
    events: list[dict[str, Any]] = []
    for t, group in enumerate(groups):
        graded.append([])
        cuts.append([])
        for r, passed in enumerate(group):
            if variant == "logged":  # Experiment.log: one root span holding everything
                events.append(
                    {
                        "id": f"row-{t}-{r}",
                        "span_id": f"span-{t}-{r}",
                        "root_span_id": f"span-{t}-{r}",
                        "span_parents": [],
                        "experiment_id": "exp-1",
                        "input": f"Translate {t}",
                        "output": f"draft {r}",
                        "scores": {"accuracy": passed},
                        "metadata": {"model": "claude-3-5-sonnet"},
                        "dataset_record_id": f"rec-{t}",
                    }
                )
                graded[-1].append(passed)
                cuts[-1].append(False)
                continue
            cut = (rng.random() < 0.3) if known else None
            events += _braintrust_trace(t, r, passed, cut, variant)
            if not (variant == "errored" and t == 0 and r == 0):
                graded[-1].append(passed)
                cuts[-1].append(bool(cut))
    rng.shuffle(events)  # fetch() returns a trace's spans in no set order
    files: dict[str, Any]
    if variant == "logged":
        files = {"experiment.json": json.dumps(events)}
    elif variant == "fetch-page":
        files = {"fetch.json": json.dumps({"events": events, "cursor": None}, indent=2)}
    else:
        files = {"experiment.jsonl": _jsonl(events)}
    keep = [(g, c) for g, c in zip(graded, cuts, strict=True) if g]
    dump: Dump = {
        "files": files,
        "shape": _truth([g for g, _ in keep], [c for _, c in keep]),
        "truncation_known": known,
        "model": "claude-3-5-sonnet" if variant == "logged" else ("gpt-4o-mini" if known else None),
    }
    if variant == "several-scores":  # two 0/1 scorers: only the user knows which one passes
        dump["refused"] = "--map reward=scores.Correct"
    return dump


def _langsmith_run(t: int, r: int, passed: bool, keys: dict[str, float]) -> dict[str, Any]:
    """A root run of an ``evaluate()`` experiment as ``list_runs()`` gives it, ``.dict()``
    dumped with ``default=str``."""
    run = f"00000000-0000-4000-8000-{t:06d}{r:06d}"
    return {
        "id": run,
        "name": "target",
        "start_time": f"2025-01-01T00:{t:02d}:{r:02d}",
        "run_type": "chain",
        "end_time": f"2025-01-01T00:{t:02d}:{r:02d}.5",
        "extra": {"metadata": {"ls_run_depth": 0, "num_repetitions": 4, "revision_id": None}},
        "error": None,
        "serialized": None,
        "events": [{"name": "start", "time": "2025-01-01T00:00:00"}],
        "inputs": {"question": f"What is {t} squared?"},
        "outputs": {"answer": str(t * t) if passed else "no idea"},
        "reference_example_id": f"ex-{t:04d}",
        "parent_run_id": None,
        "tags": [],
        "trace_id": run,
        "session_id": "exp-session",
        "child_run_ids": None,
        "feedback_stats": {
            key: {"n": 1, "avg": value, "stdev": 0.0, "errors": 0, "values": {}}
            for key, value in keys.items()
        },
        "status": "success",
        "dotted_order": f"20250101T0000{t:02d}{r:02d}Z{run}",
        "total_tokens": 30,
    }


@tool("runs", "runs-array", "table-csv", "table-parquet", "table-json", "errored", "several-keys")
def langsmith(rng: random.Random, variant: str) -> Dump:
    groups = _tasks(rng, rng.randint(3, 5), (1, 4))
    known = variant == "runs"
    graded: list[list[bool]] = []
    cuts: list[list[bool]] = []
    runs: list[dict[str, Any]] = []
    table: list[dict[str, Any]] = []
    for t, group in enumerate(groups):
        graded.append([])
        cuts.append([])
        for r, passed in enumerate(group):
            errored = variant == "errored" and t == 0 and r == 0
            keys = {"correctness": float(passed)}
            if variant == "runs-array":
                keys["conciseness"] = rng.choice([0.2, 0.5, 0.8])
            if variant == "several-keys":
                keys["helpfulness"] = float(rng.random() < 0.5)
            root = _langsmith_run(t, r, passed, keys)
            cut = known and rng.random() < 0.3
            if variant == "runs-array":
                root["extra"]["metadata"]["ls_model_name"] = "gpt-4o"
            runs.append(root)
            if known:  # the target's chat model call, a child run
                runs.append(
                    {
                        **root,
                        "id": root["id"][:-1] + "f",
                        "name": "ChatOpenAI",
                        "run_type": "llm",
                        "parent_run_id": root["id"],
                        "reference_example_id": None,
                        "feedback_stats": None,
                        "dotted_order": root["dotted_order"] + ".child",
                        "extra": {
                            "invocation_params": {"model": "gpt-4o-mini", "temperature": 1},
                            "metadata": {"ls_model_name": "gpt-4o-mini", "ls_provider": "openai"},
                        },
                        "outputs": {
                            "generations": [
                                [
                                    {
                                        "text": root["outputs"]["answer"],
                                        "generation_info": {
                                            "finish_reason": "length" if cut else "stop"
                                        },
                                        "type": "ChatGeneration",
                                    }
                                ]
                            ],
                            "llm_output": {"model_name": "gpt-4o-mini"},
                        },
                    }
                )
            row: dict[str, Any] = {
                "inputs.question": root["inputs"]["question"],
                "outputs.answer": None if errored else root["outputs"]["answer"],
                "error": "ValueError('boom')" if errored else None,
                "reference.answer": str(t * t),
                **{f"feedback.{k}": (None if errored else v) for k, v in keys.items()},
                "execution_time": 0.5,
                "example_id": root["reference_example_id"],
                "id": root["id"],
            }
            table.append(row)
            if not errored:
                graded[-1].append(passed)
                cuts[-1].append(cut)
    rng.shuffle(runs)
    files: dict[str, Any]
    if variant in ("runs", "several-keys"):
        files = {"runs.jsonl": _jsonl(runs)}
    elif variant == "runs-array":
        files = {"runs.json": json.dumps(runs)}
    elif variant == "table-csv":  # pandas writes booleans True/False and None as empty
        header = list(table[0])
        lines = [",".join(header)] + [
            ",".join(
                "" if row[h] is None else str(bool(row[h]) if h.startswith("feedback.") else row[h])
                for h in header
            )
            for row in table
        ]
        files = {"results.csv": "\n".join(lines) + "\n"}
    elif variant == "table-parquet":
        files = {"results.parquet": {h: [row[h] for row in table] for h in table[0]}}
    elif variant == "table-json":  # DataFrame.to_json's default: column -> {index -> value}
        files = {
            "results.json": json.dumps(
                {h: {str(i): row[h] for i, row in enumerate(table)} for h in table[0]}
            )
        }
    else:  # to_json(orient="records", lines=True)
        files = {"results.jsonl": _jsonl(table)}
    keep = [(g, c) for g, c in zip(graded, cuts, strict=True) if g]
    dump: Dump = {
        "files": files,
        "shape": _truth([g for g, _ in keep], [c for _, c in keep]),
        "truncation_known": known,
        "model": {"runs": "gpt-4o-mini", "runs-array": "gpt-4o"}.get(variant),
    }
    if variant == "several-keys":  # two 0/1 feedback keys: only the user knows which passes
        dump["refused"] = "--map reward=feedback.correctness"
    return dump


def write(folder: Path, dump: Dump) -> Path:
    for name, content in dump["files"].items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict):
            pl.DataFrame(content).write_parquet(path)
        else:
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return folder / dump.get("read", next(iter(dump["files"])))


CASES = [(name, v) for name in TOOLS for v in VARIANTS[name]]


@pytest.mark.parametrize(("name", "variant"), CASES, ids=[f"{n}-{v}" for n, v in CASES])
@pytest.mark.parametrize("seed", range(3))
def test_a_tool_dump_is_read_right_or_refused_in_one_line(
    tmp_path: Path, name: str, variant: str, seed: int
) -> None:
    dump = TOOLS[name](random.Random(seed), variant)
    path = write(tmp_path, dump)
    refused = dump.get("refused")
    if refused is not None:
        with pytest.raises(InputError) as err:
            read_rows([str(path)])
        message = str(err.value)
        assert "\n" not in message and refused in message, message
        return
    pool = summarize(read_rows([str(path)], aggregate=Counts()))
    tasks = pool.tasks
    got = sorted(
        (int(r["n"]), int(r["passes"]), int(r["truncated"])) for r in tasks.iter_rows(named=True)
    )
    assert got == dump["shape"]
    known = int(tasks["truncated_known"].sum())
    said = dump.get("truncation_known")  # True: every row; a number: that many rows
    assert known == (pool.rows if said is True else int(said or 0))
    if "model" in dump:
        assert set(pool.models) == {dump["model"]}


def _grouped(ids: list[Any], passes: list[Any], cuts: list[Any]) -> list[tuple[int, ...]]:
    out: dict[str, list[int]] = {}
    for task, passed, cut in zip(ids, passes, cuts, strict=True):
        n, p, c = out.get(str(task), [0, 0, 0])
        out[str(task)] = [n + 1, p + bool(passed), c + bool(cut)]
    return sorted(tuple(v) for v in out.values())


@pytest.mark.parametrize(("name", "variant"), CASES, ids=[f"{n}-{v}" for n, v in CASES])
def test_every_reader_reads_a_tool_dump_alike(tmp_path: Path, name: str, variant: str) -> None:
    dump = TOOLS[name](random.Random(11), variant)
    if dump.get("refused") is not None:
        return
    path = write(tmp_path, dump)
    tasks = read_tasks(str(path), mapping=None, pass_threshold=None, input_format=None)
    got = sorted(
        (int(r["n"]), int(r["passes"]), int(r["truncated"])) for r in tasks.iter_rows(named=True)
    )
    assert got == dump["shape"], "diff/size"
    table = read_table([str(path)]).canonical.filter(pl.col("graded"))
    cuts = table["truncated"].fill_null(False).to_list()
    assert _grouped(table["task_id"].to_list(), table["passed"].to_list(), cuts) == dump["shape"]


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_the_command_line_reads_a_tool_dump(tmp_path: Path, name: str) -> None:
    dump = TOOLS[name](random.Random(7), VARIANTS[name][0])
    path = write(tmp_path, dump)
    result = CliRunner().invoke(app, ["route", str(path), "--model", "m", "--format", "json"])
    if dump.get("refused") is not None:  # one located line, naming what to pass
        assert result.exit_code == 2 and dump["refused"] in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1, result.output
        return
    report = json.loads(result.output)  # a verdict, whichever it is (exit 0, or 1 when held)
    assert report["summary"]["rows"] == sum(n for n, _, _ in dump["shape"])
