"""Zip archives are read into memory (inspect_ai ``.eval`` logs, ``torch.save`` files), so what
their members unpack to is bounded before anything is unpacked: a member hundreds of times its
packed size past 64 MB is a decompression bomb, refused at its member in one line in well under
a second (it once took 20 s and 5 GB, or exited 70 under a memory limit); all the members
together stay under the stream limit. A highly compressible member of ordinary size is still
read, and running out of memory inside a read is that input's located line."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.io.test_eval_zip import DEFLATED, STORED, ZSTD, make_zip
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.io.formats import zipped

HEADER = json.dumps({"eval": {"model": "org/model", "task": "quiz"}, "status": "success"})


def sample(i: int, pad: int) -> bytes:
    body = {"id": i, "epoch": 1, "input": "a" * pad, "scores": {"m": {"value": "C" if i else "I"}}}
    return json.dumps(body).encode()


def pt_bytes(pad: int, method: int) -> bytes:
    import pickle

    data = pickle.dumps({"rollout_id": 0, "samples": [{"group_index": 0, "pad": "a" * pad}]}, 2)
    return make_zip([("dump/data.pkl", data, method), ("dump/version", b"3\n", STORED)])


def route(path: Path, env: dict[str, str] | None = None) -> tuple[int, str, float]:
    start = time.perf_counter()
    result = CliRunner().invoke(app, ["route", str(path)], env=env)
    return result.exit_code, result.output, time.perf_counter() - start


@settings(max_examples=6, deadline=None)
@given(
    kind=st.sampled_from(["eval-header", "eval-sample", "pt"]),
    method=st.sampled_from([DEFLATED, ZSTD]),
    extra=st.integers(1, 8 << 20),
)
def test_a_decompression_bomb_is_refused_unread_at_its_member(
    tmp_path_factory: pytest.TempPathFactory, kind: str, method: int, extra: int
) -> None:
    pad = zipped.BOMB_FLOOR + extra
    folder = tmp_path_factory.mktemp("bomb")
    if kind == "pt":
        path, member = folder / "rollout_0.pt", "dump/data.pkl"
        path.write_bytes(pt_bytes(pad, method))
    else:
        header = HEADER.encode() + (b" " * pad if kind == "eval-header" else b"")
        members = [("header.json", header, method)]
        for i in range(3):
            body = sample(i, pad if kind == "eval-sample" and i == 1 else 8)
            members.append((f"samples/{i}_epoch_1.json", body, method))
        path = folder / "log.eval"
        path.write_bytes(make_zip(members))
        member = "header.json" if kind == "eval-header" else "samples/1_epoch_1.json"
    code, out, took = route(path)
    assert code == 2, out
    assert out.count("\n") == 1 and f"{path.name}: member {member}" in out, out
    assert "decompression bomb" in out
    assert took < 5.0, took  # refused from the directory, before any member is unpacked


@pytest.mark.parametrize("method", [DEFLATED, ZSTD])
def test_a_compressible_member_of_ordinary_size_is_read(tmp_path: Path, method: int) -> None:
    """Thousands to one, but a few megabytes: a reply repeating one token is read."""
    members = [("header.json", HEADER.encode(), method)]
    members += [
        (f"samples/{i}_epoch_1.json", sample(i, 4 << 20 if i == 1 else 8), method) for i in range(3)
    ]
    path = tmp_path / "log.eval"
    path.write_bytes(make_zip(members))
    code, out, _ = route(path)
    assert code in (0, 1), out


def test_members_together_past_the_stream_limit_say_how_to_raise_it(tmp_path: Path) -> None:
    members = [("header.json", HEADER.encode(), DEFLATED)]
    members += [(f"samples/{i}_epoch_1.json", sample(i, 600), DEFLATED) for i in range(4)]
    path = tmp_path / "log.eval"
    path.write_bytes(make_zip(members))
    code, out, _ = route(path, env={"WHILECLI_STREAM_LIMIT": "2K"})
    assert code == 2 and out.count("\n") == 1, out
    assert path.name in out and "WHILECLI_STREAM_LIMIT" in out
    code, out, _ = route(path, env={"WHILECLI_STREAM_LIMIT": "8K"})
    assert code in (0, 1), out


@pytest.mark.parametrize(
    "where", ["whilecli.io.formats.inspect_ai._rows", "whilecli.io.read._read_source"]
)
def test_running_out_of_memory_is_the_input_s_located_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    members = [("header.json", HEADER.encode(), DEFLATED)]
    members += [(f"samples/{i}_epoch_1.json", sample(i, 8), DEFLATED) for i in range(3)]
    path = tmp_path / "log.eval"
    path.write_bytes(make_zip(members))

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(where, exhausted)
    code, out, _ = route(path)
    assert code == 2 and out.count("\n") == 1, out
    assert out.startswith(f"whilecli: error: {path}") and "ran out of memory" in out, out
