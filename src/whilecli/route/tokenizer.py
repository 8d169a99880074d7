"""Vocabulary size of a tokenizer on disk, without loading any tokenizer library.

The size is what ``len(tokenizer)`` reports in Hugging Face ``transformers``: the base
vocabulary plus the added tokens that are not already in it. Distillation needs teacher
and student to share it, since the supervision is per token (OPD; Lambert 2025, chapter
Synthetic Data and Distillation).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whilecli import jsonout
from whilecli.errors import InputError, UsageError


def _load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=str(path)) from None
    return jsonout.loads(text, file=str(path))


def _size(base: Iterable[str], added: Iterable[str]) -> int:
    """Base vocabulary plus the added tokens it does not already hold."""
    tokens = set(base)
    return len(tokens) + len(set(added) - tokens)


def _base_vocab(model: Any, path: Path) -> list[str]:
    """Tokens of ``model.vocab``: a ``{token: id}`` map (BPE, WordPiece, WordLevel) or a
    ``[[token, score], ...]`` list (Unigram)."""
    vocab = model.get("vocab") if isinstance(model, dict) else None
    if isinstance(vocab, dict):
        return [str(token) for token in vocab]
    if isinstance(vocab, list):
        out = []
        for entry in vocab:
            if isinstance(entry, (list, tuple)) and entry:
                out.append(str(entry[0]))
            elif isinstance(entry, str):
                out.append(entry)
            else:
                raise InputError("model.vocab holds an entry that is no token", file=str(path))
        return out
    raise InputError("has no model.vocab (a map or a list of tokens)", file=str(path))


def vocab_size_from_tokenizer_json(path: Path) -> int:
    """``len(model.vocab ∪ added_tokens[].content)`` of a ``tokenizer.json``."""
    data = _load_json(path)
    if not isinstance(data, dict):
        raise InputError("is not a tokenizer.json object", file=str(path))
    base = _base_vocab(data.get("model"), path)
    added_list = data.get("added_tokens") or []
    if not isinstance(added_list, list):
        raise InputError("added_tokens is not a list", file=str(path))
    added = [str(t["content"]) for t in added_list if isinstance(t, dict) and "content" in t]
    return _size(base, added)


def _added_from_directory(directory: Path) -> list[str]:
    """Added tokens of a slow-tokenizer directory: ``added_tokens.json`` ({token: id}) and
    ``tokenizer_config.json``'s ``added_tokens_decoder`` ({id: {content: ...}})."""
    added: list[str] = []
    added_json = directory / "added_tokens.json"
    if added_json.is_file():
        data = _load_json(added_json)
        if not isinstance(data, dict):
            raise InputError("is not a {token: id} object", file=str(added_json))
        added.extend(str(token) for token in data)
    config = directory / "tokenizer_config.json"
    if config.is_file():
        data = _load_json(config)
        decoder = data.get("added_tokens_decoder") if isinstance(data, dict) else None
        if isinstance(decoder, dict):
            for entry in decoder.values():
                if isinstance(entry, dict) and "content" in entry:
                    added.append(str(entry["content"]))
    return added


def vocab_size(path: str | Path) -> int:
    """Vocabulary size of a ``tokenizer.json`` or of a local model directory.

    A directory is read from its ``tokenizer.json``; without one, from ``vocab.json`` plus
    ``added_tokens.json`` and ``tokenizer_config.json``'s ``added_tokens_decoder``.
    Every error names the path.
    """
    target = Path(path)
    if not target.exists():
        raise UsageError(f"{target}: no such tokenizer file or model directory")
    if target.is_file():
        return vocab_size_from_tokenizer_json(target)
    fast = target / "tokenizer.json"
    if fast.is_file():
        return vocab_size_from_tokenizer_json(fast)
    vocab_json = target / "vocab.json"
    if vocab_json.is_file():
        data = _load_json(vocab_json)
        if not isinstance(data, dict):
            raise InputError("is not a {token: id} object", file=str(vocab_json))
        return _size((str(t) for t in data), _added_from_directory(target))
    raise UsageError(
        f"{target}: no tokenizer.json or vocab.json in this directory "
        "(pass --teacher-vocab/--student-vocab instead)"
    )
