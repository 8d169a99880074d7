"""Hostile tokenizers: a vocabulary that gives two tokens one id is refused naming the file
(it was read, and two tokenizers compared as different); a FIFO given as a tokenizer is
named as one, never looked into as a folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError, UsageError
from whilecli.route.tokenizer import vocabulary


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    size=st.integers(2, 40),
    dup=st.one_of(st.none(), st.tuples(st.integers(0, 39), st.integers(0, 39))),
    as_vocab_json=st.booleans(),
)
def test_two_tokens_sharing_an_id_are_refused_naming_the_file(
    tmp_path_factory: pytest.TempPathFactory,
    size: int,
    dup: tuple[int, int] | None,
    as_vocab_json: bool,
) -> None:
    vocab = {f"tok{i}": i for i in range(size)}
    clash = dup is not None and dup[0] % size != dup[1] % size
    if dup is not None:
        vocab[f"tok{dup[0] % size}"] = dup[1] % size
    folder = tmp_path_factory.mktemp("tok")
    if as_vocab_json:
        (folder / "vocab.json").write_text(json.dumps(vocab))
    else:
        doc = {"model": {"type": "BPE", "vocab": vocab}, "added_tokens": []}
        (folder / "tokenizer.json").write_text(json.dumps(doc))
    if clash:
        with pytest.raises(InputError, match=r"(vocab|tokenizer)\.json.*share the id"):
            vocabulary(folder)
    else:
        assert vocabulary(folder) == vocab


def test_a_fifo_given_as_a_tokenizer_is_named_as_one(tmp_path: Path) -> None:
    fifo = tmp_path / "tokenizer.json"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match=r"tokenizer\.json: it is a pipe \(FIFO\), not a file"):
        vocabulary(fifo)
