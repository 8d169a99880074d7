"""Vocabulary sizes read from tokenizer files and local model directories."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError, UsageError
from whilecli.route.checks import tokenizer
from whilecli.route.decide import _mismatch
from whilecli.route.model import Status
from whilecli.route.options import RouteOptions
from whilecli.route.tokenizer import vocab_size, vocabulary


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def bpe(vocab: list[str], added: list[str]) -> dict:
    return {
        "model": {"type": "BPE", "vocab": {t: i for i, t in enumerate(vocab)}},
        "added_tokens": [
            {"id": 100 + i, "content": t, "special": True} for i, t in enumerate(added)
        ],
    }


def test_tokenizer_json_counts_added_tokens_not_in_vocab(tmp_path: Path) -> None:
    # 5 base tokens; added: "<eos>" (new), "c" (already in vocab), "<pad>" (new) → 5 + 2.
    path = write(
        tmp_path / "tokenizer.json", bpe(["a", "b", "c", "d", "e"], ["<eos>", "c", "<pad>"])
    )
    assert vocab_size(path) == 7


def test_unigram_vocab_list(tmp_path: Path) -> None:
    data = {"model": {"type": "Unigram", "vocab": [["<unk>", 0.0], ["x", -1.0], ["y", -2.0]]},
            "added_tokens": [{"content": "<unk>"}, {"content": "<s>"}]}  # fmt: skip
    assert vocab_size(write(tmp_path / "t.json", data)) == 4


def test_model_directory_prefers_tokenizer_json(tmp_path: Path) -> None:
    write(tmp_path / "tokenizer.json", bpe(["a", "b"], ["<s>"]))
    write(tmp_path / "vocab.json", {"a": 0})
    assert vocab_size(tmp_path) == 3
    assert vocab_size(str(tmp_path)) == 3


def test_slow_tokenizer_directory(tmp_path: Path) -> None:
    write(tmp_path / "vocab.json", {"a": 0, "b": 1, "c": 2})
    write(tmp_path / "added_tokens.json", {"<x>": 3, "a": 0})
    write(
        tmp_path / "tokenizer_config.json",
        {"added_tokens_decoder": {"3": {"content": "<x>"}, "4": {"content": "<y>"}}},
    )
    assert vocab_size(tmp_path) == 5  # a b c + <x> <y>


def test_vocab_json_alone(tmp_path: Path) -> None:
    write(tmp_path / "vocab.json", {"a": 0, "b": 1})
    assert vocab_size(tmp_path) == 2


def test_errors_name_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(UsageError, match=str(missing)):
        vocab_size(missing)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match="no tokenizer.json or vocab.json"):
        vocab_size(empty)
    broken = tmp_path / "tokenizer.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=str(broken)):
        vocab_size(broken)
    novocab = write(tmp_path / "novocab.json", {"model": {"type": "BPE"}})
    with pytest.raises(InputError, match="model.vocab"):
        vocab_size(novocab)


VOCABS = st.lists(st.sampled_from(list("abcdefgh")), min_size=1, max_size=8, unique=True)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(teacher=VOCABS, student=VOCABS, shuffle=st.booleans())
def test_two_tokenizers_are_one_where_every_token_has_one_id(
    tmp_path: Path, teacher: list[str], student: list[str], shuffle: bool
) -> None:
    """Check 5 passes only where each token has the same id in both files; equal sizes of
    other tokens (Llama 2 and Mistral 7B: 32000 each) or the same tokens under other ids
    fail it. The truth: a plain comparison of the two {token: id} maps."""
    if shuffle:
        student = list(reversed(teacher))
    t_map = {t: i for i, t in enumerate(teacher)}
    s_map = {t: i for i, t in enumerate(student)}
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    t_path = write(folder / "teacher.json", {"model": {"vocab": t_map}})
    s_path = write(folder / "student.json", {"model": {"vocab": s_map}})
    assert vocabulary(t_path) == t_map
    teacher = cast(Any, object())  # check 5 asks only whether a teacher was given
    options = RouteOptions(teacher=teacher, teacher_tokenizer=t_path, student_tokenizer=s_path)
    got = tokenizer(teacher, options, teacher_cleared=True)
    assert (got.status == Status.PASS) == (t_map == s_map)
    assert _mismatch(got) == (t_map != s_map)


@pytest.mark.parametrize("bad", [-1, 1e308, 2**40, True, "3", None, 1.5])
def test_a_token_id_that_is_no_id_is_refused_naming_it(tmp_path: Path, bad: object) -> None:
    path = write(tmp_path / "tokenizer.json", {"model": {"vocab": {"a": 0, "b": bad}}})
    with pytest.raises(InputError, match="token id"):
        vocab_size(path)
