"""The vocabulary of a tokenizer on disk, without loading any tokenizer library.

Its tokens with their ids; its size is what ``len(tokenizer)`` reports in Hugging Face
``transformers``: the base vocabulary plus the added tokens that are not already in it. Two
tokenizers are one where each token has the same id in both, not where the sizes agree
(Llama 2 and Mistral 7B both hold 32000 tokens). Distillation needs teacher
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


#: The largest token id read (a vocabulary past 2**31 tokens is no tokenizer's).
MAX_TOKEN_ID = 2**31 - 1

#: A vocabulary: each token with its id (None: a file that names the token, not its id).
Vocab = dict[str, "int | None"]


def _token_id(value: Any, path: Path, where: str) -> int:
    """A token id as written at ``where``: a whole number in [0, :data:`MAX_TOKEN_ID`]."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKEN_ID:
        shown = jsonout.dumps(value)[:40]
        raise InputError(
            f"a token id must be a whole number in [0, {MAX_TOKEN_ID}], got {shown}",
            file=str(path),
            field=where,
        )
    return value


def _one_token_per_id(ids: dict[str, int], path: Path, where: str | None) -> Vocab:
    """A ``{token: id}`` map in which no two tokens share an id (a tokenizer decodes an id to
    one token): two that do are refused, naming the file and both tokens."""
    seen: dict[int, str] = {}
    for token, tid in ids.items():
        other = seen.setdefault(tid, token)
        if other != token:
            raise InputError(
                f"tokens {jsonout.dumps(other)[:40]} and {jsonout.dumps(token)[:40]} share the"
                f" id {tid}: a tokenizer gives each id one token",
                file=str(path),
                field=where,
            )
    return dict(ids)


def _merged(base: Vocab, added: Iterable[tuple[str, int | None]]) -> Vocab:
    """Base vocabulary plus the added tokens it does not already hold (``len(tokenizer)``)."""
    out = dict(base)
    for token, tid in added:
        out.setdefault(token, tid)
    return out


def _base_vocab(model: Any, path: Path) -> Vocab:
    """``model.vocab``: a ``{token: id}`` map (BPE, WordPiece, WordLevel) or a
    ``[[token, score], ...]`` list (Unigram, whose ids are the positions)."""
    vocab = model.get("vocab") if isinstance(model, dict) else None
    if isinstance(vocab, dict):
        ids = {str(t): _token_id(i, path, f"model.vocab.{t}") for t, i in vocab.items()}
        return _one_token_per_id(ids, path, "model.vocab")
    if isinstance(vocab, list):
        out: Vocab = {}
        for position, entry in enumerate(vocab):
            if isinstance(entry, (list, tuple)) and entry:
                out[str(entry[0])] = position
            elif isinstance(entry, str):
                out[entry] = position
            else:
                raise InputError("model.vocab holds an entry that is no token", file=str(path))
        return out
    raise InputError("has no model.vocab (a map or a list of tokens)", file=str(path))


def vocabulary_of_tokenizer_json(path: Path) -> Vocab:
    """``model.vocab ∪ added_tokens[]`` of a ``tokenizer.json``, each token with its id."""
    data = _load_json(path)
    if not isinstance(data, dict):
        raise InputError("is not a tokenizer.json object", file=str(path))
    base = _base_vocab(data.get("model"), path)
    added_list = data.get("added_tokens") or []
    if not isinstance(added_list, list):
        raise InputError("added_tokens is not a list", file=str(path))
    added = [
        (str(t["content"]), None if "id" not in t else _token_id(t["id"], path, "added_tokens.id"))
        for t in added_list
        if isinstance(t, dict) and "content" in t
    ]
    return _merged(base, added)


def vocab_size_from_tokenizer_json(path: Path) -> int:
    """``len(model.vocab ∪ added_tokens[].content)`` of a ``tokenizer.json``."""
    return len(vocabulary_of_tokenizer_json(path))


def _added_from_directory(directory: Path) -> list[tuple[str, int | None]]:
    """Added tokens of a slow-tokenizer directory: ``added_tokens.json`` ({token: id}) and
    ``tokenizer_config.json``'s ``added_tokens_decoder`` ({id: {content: ...}})."""
    added: list[tuple[str, int | None]] = []
    added_json = directory / "added_tokens.json"
    if added_json.is_file():
        data = _load_json(added_json)
        if not isinstance(data, dict):
            raise InputError("is not a {token: id} object", file=str(added_json))
        added.extend((str(t), _token_id(i, added_json, str(t))) for t, i in data.items())
    config = directory / "tokenizer_config.json"
    if config.is_file():
        data = _load_json(config)
        decoder = data.get("added_tokens_decoder") if isinstance(data, dict) else None
        if isinstance(decoder, dict):
            for key, entry in decoder.items():
                if isinstance(entry, dict) and "content" in entry:
                    tid = int(key) if str(key).isdigit() else None
                    added.append((str(entry["content"]), tid))
    return added


def vocab_size(path: str | Path) -> int:
    """Vocabulary size of a ``tokenizer.json`` or of a local model directory
    (:func:`vocabulary`)."""
    return len(vocabulary(path))


def vocabulary(path: str | Path) -> Vocab:
    """The tokens and their ids of a ``tokenizer.json`` or of a local model directory.

    A directory is read from its ``tokenizer.json``; without one, from ``vocab.json`` plus
    ``added_tokens.json`` and ``tokenizer_config.json``'s ``added_tokens_decoder``.
    Every error names the path.
    """
    target = Path(path)
    if not target.exists():
        raise UsageError(f"{target}: no such tokenizer file or model directory")
    if target.is_file():
        return vocabulary_of_tokenizer_json(target)
    if not target.is_dir():  # a FIFO, a device: no file to read, no folder to look in
        from whilecli.fileio import file_kind

        raise UsageError(f"{target}: it is {file_kind(target.stat().st_mode)}, not a file")
    fast = target / "tokenizer.json"
    if fast.is_file():
        return vocabulary_of_tokenizer_json(fast)
    vocab_json = target / "vocab.json"
    if vocab_json.is_file():
        data = _load_json(vocab_json)
        if not isinstance(data, dict):
            raise InputError("is not a {token: id} object", file=str(vocab_json))
        base = _one_token_per_id(
            {str(t): _token_id(i, vocab_json, str(t)) for t, i in data.items()}, vocab_json, None
        )
        return _merged(base, _added_from_directory(target))
    raise UsageError(
        f"{target}: no tokenizer.json or vocab.json in this directory "
        "(pass --teacher-vocab/--student-vocab instead)"
    )


def embedding_size(path: str | Path) -> int | None:
    """``vocab_size`` of the model config beside a tokenizer (``config.json`` in a model
    directory, or beside a ``tokenizer.json``; a multimodal config's ``text_config``): the
    rows of the embedding, which models pad past ``len(tokenizer)`` (Qwen3's 151669 tokens in
    151936 rows; Qwen2.5-7B's 152064). A bare ``--student-vocab N`` is usually this number,
    so it is compared with this, not with the tokenizer's length. None where no config
    says it."""
    target = Path(path)
    config = (target if target.is_dir() else target.parent) / "config.json"
    if not config.is_file():
        return None
    data = _load_json(config)
    if not isinstance(data, dict):
        return None
    size = data.get("vocab_size")
    if size is None and isinstance(data.get("text_config"), dict):
        size = data["text_config"].get("vocab_size")
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        return None
    return size


#: How far apart (as a share of the larger) two sizes may lie and still be one tokenizer's
#: length beside an embedding padded past it, or two paddings of it: Qwen2.5's 151665 tokens
#: sit in 151936 rows (1.5B) and in 152064 (7B), 0.3% apart; Llama 2's 32000 and Mistral
#: v0.3's 32768 lie 2.3% apart.
PADDING_SHARE = 0.01
#: The multiple a padded embedding's rows are rounded up to (at least).
PADDING_MULTIPLE = 64


def padded_apart(a: int, b: int) -> bool:
    """Whether two different vocabulary sizes differ only as padding can: the larger a
    multiple of :data:`PADDING_MULTIPLE` and the two within :data:`PADDING_SHARE` of it.
    Sizes alone cannot then tell one tokenizer from two (check 5 is unknown, not failed)."""
    high, low = max(a, b), min(a, b)
    return high != low and high % PADDING_MULTIPLE == 0 and high - low <= PADDING_SHARE * high
