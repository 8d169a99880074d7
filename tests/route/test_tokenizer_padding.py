"""Check 5 compares like with like: a tokenizer's length (``len(tokenizer)``, read from a
``tokenizer.json``) and a model config's ``vocab_size`` (the embedding's rows, padded past
it) are two quantities, and a bare ``--student-vocab N`` is usually the latter. The
generator draws a teacher and a student from real models' (tokenizer, length, config size)
and gives each side as a bare number (its config size, or its length) or as a model folder
(tokenizer.json plus config.json): one tokenizer is never refused, and sizes apart by more
than padding are."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.route.checks import tokenizer
from whilecli.route.decide import _mismatch
from whilecli.route.model import Status
from whilecli.route.options import RouteOptions

#: name -> (tokenizer, len(tokenizer), config.json vocab_size), as the hub's files say.
MODELS: dict[str, tuple[str, int, int]] = {
    "Qwen3-8B": ("qwen3", 151669, 151936),
    "Qwen3-32B": ("qwen3", 151669, 151936),
    "Qwen2.5-1.5B": ("qwen2.5", 151665, 151936),
    "Qwen2.5-7B": ("qwen2.5", 151665, 152064),
    "Llama-3.1-8B": ("llama3", 128256, 128256),
    "Llama-2-7b": ("llama2", 32000, 32000),
    "gemma-2-9b": ("gemma2", 256000, 256000),
}


def _options(teacher: int | str, student: int | str) -> RouteOptions:
    given: dict[str, Any] = {}
    for side, value in (("teacher", teacher), ("student", student)):
        key = f"{side}_vocab" if isinstance(value, int) else f"{side}_tokenizer"
        given[key] = value
    return RouteOptions(teacher=cast(Any, NO_MODELS), **given)


#: A pool whose rows name no model (check 5 reads the names only to say a family differs).
NO_MODELS = SimpleNamespace(models={})


@settings(max_examples=80, deadline=None)
@given(
    teacher=st.sampled_from(sorted(MODELS)),
    student=st.sampled_from(sorted(MODELS)),
    t_len=st.booleans(),
    s_len=st.booleans(),
)
def test_sizes_of_one_tokenizer_are_never_refused(
    teacher: str, student: str, t_len: bool, s_len: bool
) -> None:
    t_tok, t_n, t_cfg = MODELS[teacher]
    s_tok, s_n, s_cfg = MODELS[student]
    t_size, s_size = (t_n if t_len else t_cfg), (s_n if s_len else s_cfg)
    got = tokenizer(cast(Any, NO_MODELS), _options(t_size, s_size), teacher_cleared=True)
    if t_tok == s_tok:  # one tokenizer: its length beside a padded size is no mismatch
        assert got.status is not Status.FAIL, got.why
        assert not _mismatch(got)
    if t_size == s_size:
        assert got.status is Status.PASS
    elif abs(t_size - s_size) > 0.01 * max(t_size, s_size):  # far apart: two tokenizers
        assert got.status is Status.FAIL and _mismatch(got)
    elif t_tok == s_tok:
        assert got.status is Status.UNKNOWN and "padd" in got.why


def _folder(root: Path, name: str) -> str:
    """A model folder: a tokenizer.json of the model's length, and its config.json."""
    _, n, cfg = MODELS[name]
    folder = root / name
    folder.mkdir()
    vocab = {f"t{i}": i for i in range(n - 3)}
    added = [{"id": n - 3 + i, "content": f"<|x{i}|>", "special": True} for i in range(3)]
    tok = {"model": {"type": "BPE", "vocab": vocab}, "added_tokens": added}
    (folder / "tokenizer.json").write_text(json.dumps(tok), encoding="utf-8")
    (folder / "config.json").write_text(json.dumps({"vocab_size": cfg}), encoding="utf-8")
    return str(folder)


@pytest.mark.parametrize(
    ("teacher", "student", "status"),
    [
        ("Qwen3-32B", "Qwen3-8B", Status.PASS),  # the probe's: folder beside 151936
        ("Qwen2.5-7B", "Qwen2.5-1.5B", Status.UNKNOWN),  # 152064 beside 151936: padding
        ("Llama-3.1-8B", "Qwen3-8B", Status.FAIL),
    ],
)
def test_a_folder_beside_a_bare_number_compares_its_config_size(
    tmp_path: Path, teacher: str, student: str, status: Status
) -> None:
    """``--teacher-tokenizer DIR --student-vocab N``: N is compared with DIR's config.json
    vocab_size, the same quantity, not with the tokenizer's length."""
    folder = _folder(tmp_path, teacher)
    got = tokenizer(
        cast(Any, NO_MODELS), _options(folder, MODELS[student][2]), teacher_cleared=True
    )
    assert got.status is status, got.why
    assert _mismatch(got) == (status is Status.FAIL)
