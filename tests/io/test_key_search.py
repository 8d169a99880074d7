"""The byte search for keys a JSONL sample lacks, beside the depth guard.

Past the first :data:`~whilecli.io.read.SAMPLE_ROWS` rows, the reader looks for the
top-level keys of optional fields the sample never carried in the file's bytes
(:class:`~whilecli.io.sources.KeySearch`, in the depth guard's walk) and has polars read
them only when some line may hold one. The search must never miss a key a JSON parser reads
there (written as itself or spelled with escapes, on any line, across any chunk boundary),
and the reading must be the one polars' own probe of every key gives.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io import read, sources
from whilecli.io.read import SAMPLE_ROWS, read_rows
from whilecli.io.sources import KeySearch, Source

KEYS = ("logprobs", "behavior_logprobs", "values")


def _escaped(key: str, which: int) -> str:
    """``key`` as a JSON string with the characters of the bits of ``which`` written as
    ``\\u00XX`` escapes (a JSON parser reads the same key)."""
    return (
        '"'
        + "".join(f"\\u{ord(ch):04x}" if which >> i & 1 else ch for i, ch in enumerate(key))
        + '"'
    )


PIECES = [
    b"\n",
    b"\n\n",
    b" ",
    b'{"a": 1}',
    b'"logprobs"',
    b'"behavior_logprobs"',
    b'"values"',
    b'"xlogprobs"',
    b'logprobs"',
    b'"value"',
    b'"\\u006cogprobs"',
    b'"logprobs"\n',
    b'"values":[]\n',
    b'"\\u006cogprobs"\n',
    b'"\\u0076alues"',
    b'"caf\\u00e9"',
    b'"\\u001b[0m"',
    b"\\",
    b"abc" * 5,
]


def _slow_found(data: bytes, keys: tuple[str, ...], after: int) -> set[str]:
    """What the search finds, the slow way: per line past ``after``, each key quoted as
    itself, and every key where an escape spells one of their characters."""
    letters = {ch for key in keys for ch in key}
    escape = re.compile(
        rb"(?i)\\u00(?:%s)" % b"|".join(b"%02x" % ord(ch) for ch in sorted(letters))
    )
    found: set[str] = set()
    for n, line in enumerate(data.split(b"\n"), 1):
        if n <= after:
            continue
        found.update(k for k in keys if json.dumps(k).encode() in line)
        if escape.search(line):
            found.update(keys)
    return found


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join),
    st.integers(1, 40),
    st.integers(0, 6),
    st.lists(st.sampled_from(KEYS), min_size=1, max_size=3, unique=True).map(tuple),
)
def test_the_key_search_finds_what_a_slow_split_finds(
    data: bytes, chunk: int, after: int, keys: tuple[str, ...]
) -> None:
    """Whatever the chunk boundaries (a key cut between two reads, a long line gathered
    from many), the keys found past ``after`` are those a line-by-line search finds."""
    source = Source(name="mem", kind="jsonl", data=data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sources, "BRACKET_CHUNK", chunk)
        assert read.refuse_deep(source, after, keys) == _slow_found(data, keys, after)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from((*KEYS, "other", "model")),
            st.integers(0, 2**17),
            st.sampled_from([None, 1, "logprobs", [0.5], {"values": 2}]),
        ),
        max_size=4,
    ),
    st.integers(1, 64),
)
def test_no_key_a_json_parser_reads_is_missed(
    fields: list[tuple[str, int, Any]], chunk: int
) -> None:
    """Every top-level key of :data:`KEYS` a row holds (written as itself or with escapes,
    beside keys and values that merely look like them) is found."""
    members = [f"{_escaped(key, which)}: {json.dumps(value)}" for key, which, value in fields]
    line = "{" + ", ".join(members) + "}"
    data = f'{{"a": 1}}\n{line}\n'.encode()
    want = set(json.loads(line)) & set(KEYS)
    source = Source(name="mem", kind="jsonl", data=data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sources, "BRACKET_CHUNK", chunk)
        assert want <= read.refuse_deep(source, 1, KEYS)


def _every_key(self: KeySearch, head: bytes, chunk: bytes, base: int) -> None:
    """The search as if every key were spelled past the sample: polars probes them all."""
    self.found.update(self.quoted)


def _read(path: Path) -> dict[str, Any]:
    try:
        rows = read_rows([str(path)])
    except InputError as err:
        return {"refused": str(err)}
    return {
        "sources": rows.sources,
        "logprobs": rows.has_logprobs,
        "values": rows.has_values,
        "facts": rows.facts,
        "notes": rows.notes,
        "frame": rows.frame.collect().to_dicts(),
    }


@settings(max_examples=12, deadline=None)
@given(
    late=st.lists(
        st.tuples(
            st.integers(0, 59),  # one of the 60 lines past the sample
            st.sampled_from([*KEYS, "is_truncated", "completion_logprobs"]),
            st.integers(0, 2**17),
            st.sampled_from([None, [-0.5, -0.25], "text", True]),
        ),
        max_size=3,
    ),
    decoy=st.sampled_from(["", "logprobs", "values", "\u00e9"]),
)
def test_the_read_is_the_one_every_key_probed_gives(
    tmp_path_factory: pytest.TempPathFactory,
    late: list[tuple[int, str, int, Any]],
    decoy: str,
) -> None:
    """Keys first written past the sample (as themselves or with escapes, null or not, or
    only as a value's text): the rows, fields, coverage and notes read are those of the read
    that has polars probe every key the sample lacks in every row."""
    lines = [
        json.dumps({"task_id": f"t{i // 4}", "reward": float(i % 2), "completion": f"a {decoy}"})
        for i in range(SAMPLE_ROWS + 60)
    ]
    for at, key, which, value in late:
        row = lines[SAMPLE_ROWS + at]
        lines[SAMPLE_ROWS + at] = row[:-1] + f", {_escaped(key, which)}: {json.dumps(value)}}}"
    path = tmp_path_factory.mktemp("late") / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n")
    found = _read(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(KeySearch, "feed", _every_key)
        assert _read(path) == found
