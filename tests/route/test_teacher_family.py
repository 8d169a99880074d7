"""A teacher whose rows name another model family than the student's (Llama beside Qwen),
with no tokenizer given: two families are, as a rule, two tokenizers, and OPD on two drops
its per-token signal silently, so the OPD verdict is provisional (``teacher_other_family``),
never firm. A teacher of the student's family (a larger Qwen, QwQ, a distill into Qwen)
stays a firm OPD, and a tokenizer check that passes settles it. The generator draws a
teacher that leads by 0.35 and its name."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.route import run_route
from whilecli.route.model import Route

MODEL = "Qwen/Qwen3-8B"
#: teacher name -> whether it names another family than the student's
TEACHERS = {
    "meta-llama/Llama-3.3-70B-Instruct": True,
    "mistralai/Mistral-Large-Instruct-2411": True,
    "google/gemma-2-27b-it": True,
    "deepseek-ai/DeepSeek-V3": True,
    "Qwen/Qwen3-32B": False,
    "Qwen/QwQ-32B": False,
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": False,
}


def _write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    tasks=st.integers(150, 300),
    name=st.sampled_from(sorted(TEACHERS)),
    vocab=st.booleans(),
)
def test_a_teacher_of_another_family_is_no_firm_opd_on_unread_tokenizers(
    tmp_path: Path, seed: int, tasks: int, name: str, vocab: bool
) -> None:
    rnd = random.Random(seed)
    student: list[dict[str, Any]] = []
    teacher: list[dict[str, Any]] = []
    for t in range(tasks):
        p = rnd.uniform(0.1, 0.5)
        for j in range(4):
            student.append({"task_id": t, "completion": f"s{t}.{j}", "model": MODEL,
                            "reward": float(rnd.random() < p), "truncated": False})  # fmt: skip
            teacher.append({"task_id": t, "completion": f"T{t}.{j}", "model": name,
                            "reward": float(rnd.random() < p + 0.35), "truncated": False})  # fmt: skip
    sizes = {"teacher_vocab": 151936, "student_vocab": 151936} if vocab else {}
    got = run_route(
        _write(tmp_path / "student.jsonl", student),
        teacher=_write(tmp_path / "teacher.jsonl", teacher),
        model=MODEL,
        **sizes,
    )
    assert isinstance(got, Route) and got.method == "opd", got.headline
    other = TEACHERS[name] and not vocab
    assert got.provisional == other, got.headline
    assert ("teacher_other_family" in [f.kind for f in got.data_quality]) == other
