"""inspect_ai ``.eval`` logs as inspect writes them: zip members stored, deflated or compressed
with zstd (method 93, inspect's current default), read by zip entry (a sample stored twice is
two rollouts), from a file or a stream; a corrupt archive or member is one located line."""

from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError
from whilecli.io.read import read_rows

STORED, DEFLATED, ZSTD = 0, 8, 93


def packed(data: bytes, method: int) -> bytes:
    if method == DEFLATED:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()
    if method == ZSTD:
        return bytes(pa.compress(data, codec="zstd", asbytes=True))
    return data


def make_zip(members: list[tuple[str, bytes, int]]) -> bytes:
    """A zip archive written field by field (Python's zipfile cannot write zstd members)."""
    out, central = bytearray(), bytearray()
    for name, data, method in members:
        comp, crc, raw = packed(data, method), zlib.crc32(data), name.encode()
        offset = len(out)
        out += struct.pack(
            "<4s5H3L2H", b"PK\x03\x04", 63, 0, method, 0, 33, crc, len(comp), len(data), len(raw), 0
        )
        out += raw + comp
        central += struct.pack(
            "<4s6H3L5H2L",
            b"PK\x01\x02",
            63,
            63,
            0,
            method,
            0,
            33,
            crc,
            len(comp),
            len(data),
            len(raw),
            0,
            0,
            0,
            0,
            0,
            offset,
        )
        central += raw
    start = len(out)
    out += central
    out += struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), start, 0
    )
    return bytes(out)


sample = st.fixed_dictionaries(
    {
        "id": st.integers(0, 4),
        "epoch": st.integers(1, 3),
        "value": st.sampled_from(["C", "I", "P", 1, 0, True]),
        "method": st.sampled_from([STORED, DEFLATED, ZSTD]),
    }
)
VALUE = {"C": 1.0, "I": 0.0, "P": 0.5}


def log(samples: list[dict[str, Any]], header_method: int = ZSTD) -> bytes:
    header = {"eval": {"model": "org/model", "task": "quiz"}, "status": "success"}
    members = [("header.json", json.dumps(header).encode(), header_method)]
    for s in samples:
        body = {"id": s["id"], "epoch": s["epoch"], "scores": {"match": {"value": s["value"]}}}
        members.append(
            (f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(body).encode(), s["method"])
        )
    return make_zip(members)


@settings(max_examples=20, deadline=None)
@given(st.lists(sample, min_size=1, max_size=10), st.sampled_from([STORED, DEFLATED, ZSTD]))
def test_eval_members_read_by_entry_whatever_their_compression(
    tmp_path_factory: pytest.TempPathFactory, samples: list[dict[str, Any]], header_method: int
) -> None:
    path = tmp_path_factory.mktemp("eval") / "log.eval"
    path.write_bytes(log(samples, header_method))
    rows = read_rows([str(path)], pass_threshold=1.0)
    frame = rows.frame.collect()
    assert rows.format == "inspect-ai"
    # a slow loop: every entry one rollout (duplicates included), in (id, epoch) order
    want = sorted(
        ((str(s["id"]), s["epoch"], float(VALUE.get(s["value"], s["value"]))) for s in samples),
        key=lambda t: (t[0], t[1]),
    )
    assert sorted(zip(frame["task_id"], frame["reward"], strict=True)) == sorted(
        (t, r) for t, _, r in want
    )
    assert frame.height == len(samples)
    assert set(frame["model"]) == {"org/model"}
    again = read_rows(["-"], stdin=io.BytesIO(path.read_bytes()), pass_threshold=1.0)
    assert again.frame.collect()["reward"].sort().to_list() == frame["reward"].sort().to_list()


@settings(max_examples=30, deadline=None)
@example(  # a flipped byte in a central-directory version field: zipfile's NotImplementedError
    [
        {"id": 0, "epoch": 1, "value": "C", "method": 0},
        {"id": 0, "epoch": 1, "value": 1, "method": 93},
        {"id": 0, "epoch": 1, "value": True, "method": 93},
        {"id": 1, "epoch": 1, "value": 0, "method": 8},
    ],
    1680,
    "flip",
)
@given(
    st.lists(sample, min_size=1, max_size=4),
    st.integers(0, 10_000),
    st.sampled_from(["flip", "cut"]),
)
def test_a_corrupt_archive_or_member_is_one_located_line(
    tmp_path_factory: pytest.TempPathFactory, samples: list[dict[str, Any]], at: int, how: str
) -> None:
    data = bytearray(log(samples))
    i = at % len(data)
    if how == "flip":
        data[i] ^= 0xFF
    else:
        del data[i:]
    path = tmp_path_factory.mktemp("bad") / "log.eval"
    path.write_bytes(bytes(data))
    try:
        read_rows([str(path)], pass_threshold=1.0).frame.collect()
    except InputError as err:
        text = str(err)
        assert "\n" not in text and text.startswith(str(path)), text


def test_a_member_that_lies_about_its_bytes_is_named(tmp_path: Path) -> None:
    good = log([{"id": 1, "epoch": 1, "value": "C", "method": ZSTD}])
    body = b'{"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}}}'
    bad = good.replace(packed(body, ZSTD), packed(body.replace(b"C", b"I"), ZSTD))
    path = tmp_path / "log.eval"
    path.write_bytes(bad)
    with pytest.raises(InputError, match=r"member samples/1_epoch_1.json: corrupt member"):
        read_rows([str(path)])
