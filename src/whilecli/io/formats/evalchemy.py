"""Evalchemy results (``<output>/<model>/results_<date>.json``; ``mlfoundations/evalchemy``,
``eval/eval.py`` and each ``eval/chat_benchmarks/<TASK>/eval_instruct.py``): one object with
``results`` (per task: its metrics and ``examples[]``), ``config`` and the model's name.

What an example holds depends on the benchmark: math benchmarks (AIME24, MATH500, ...)
``id``, ``problem``, ``expected_answer`` (or ``answer``), ``model_outputs`` and
``model_answers`` (one per repetition) and no grade (``evaluate_responses`` keeps only the
per-repetition counts, ``run_stats``); code benchmarks (LiveCodeBench, CodeElo, ...) the
*last* repetition's ``{content, difficulty, correctness, reason}``, one per problem, in the
problems' order; JEEBench a ``score`` list with one (possibly partial) grade per repetition.
An example is a task (its ``id``, else its place in the list, within its benchmark); a
``score`` list is one rollout per element, ``correctness`` one rollout. Examples with no grade
are refused: the file holds no per-sample grade for them. The model is the document's
``model_name`` (lm-eval's results layout), else ``config.model_args``' ``pretrained``.
"""

from __future__ import annotations

from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, as_dict, as_list

NAME = "evalchemy"


def is_results(doc: Any) -> bool:
    results = as_dict(doc.get("results")) if isinstance(doc, dict) else {}
    return any(isinstance(as_dict(v).get("examples"), list) for v in results.values())


def _model(doc: dict[str, Any]) -> str | None:
    model = doc.get("model_name")
    if isinstance(model, str) and model:
        return model
    args = as_dict(doc.get("config")).get("model_args")
    if isinstance(args, str):
        for part in args.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model"):
                return value.strip()
    return None


def convert(doc: dict[str, Any], name: str) -> Converted:
    model = _model(doc)
    out: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    benchmarks = {k: v for k, v in as_dict(doc.get("results")).items() if isinstance(v, dict)}
    listed = {k: v for k, v in benchmarks.items() if isinstance(v.get("examples"), list)}
    for bench, data in listed.items():
        graded = 0
        for i, example in enumerate(as_list(data.get("examples"))):
            example = as_dict(example)
            own = example.get("id", example.get("idx", i))
            task = f"{bench}/{own}" if len(listed) > 1 else own
            where = f"results[{bench!r}].examples[{i}]"
            replies = as_list(example.get("model_outputs"))
            score = example.get("score")
            if isinstance(score, list):
                grades: list[Any] = score
            elif "correctness" in example:
                grades = [example["correctness"]]
                replies = [example.get("content")]
            else:
                continue
            graded += 1
            prompt = example.get("problem", example.get("question", example.get("prompt")))
            for r, grade in enumerate(grades):
                reply = replies[r] if r < len(replies) else None
                out.append(
                    {
                        "task_id": task,
                        "reward": grade,
                        "prompt": prompt if isinstance(prompt, str) else None,
                        "completion": reply if isinstance(reply, str) else None,
                        "model": model,
                    }
                )
                positions.append({"at": where})
        if not graded and as_list(data.get("examples")):
            raise InputError(
                f"evalchemy's {bench} examples hold model_answers and the expected answer but"
                " no grade (evalchemy keeps only the per-repetition counts, run_stats):"
                " nothing to route per sample",
                file=name,
                at=f"results[{bench!r}].examples",
            )
    origins = {
        "task_id": "each example of results[TASK].examples (its id, else its place)",
        "reward": "score[r] (one rollout per repetition), else correctness (the last repetition's)",
        "truncated": "not recorded",
        "model": "model_name" if model else "not recorded (pass --model)",
    }
    notes = []
    if any("correctness" in as_dict(e) for d in listed.values() for e in as_list(d["examples"])):
        notes.append("evalchemy keeps the last repetition's correctness only: one rollout a task")
    return Converted(NAME, out, origins, notes, positions=positions, spelled={"reward": "score"})
