"""slime's ``torch.save`` rollout dumps are read as plain data, never as code.

The layouts and their neighbours are generated in ``tests/io/test_tools.py`` (the ``slime``
tool); here: files torch itself writes, and pickles that name code, which must be refused
without running it.
"""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.io.test_tools import torch_zip
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.errors import InputError
from whilecli.io.read import read_rows
from whilecli.route.pool import Counts, summarize


def _samples(groups: int, k: int) -> list[dict[str, Any]]:
    return [
        {
            "group_index": g,
            "index": g * k + j,
            "prompt": f"problem {g}",
            "response": f"answer {j}",
            "reward": float((g + j) % 2),
            "status": "completed",
            "weight_versions": ["3"],
            "rollout_log_probs": [-0.5, -0.25, -0.125],
        }
        for g in range(groups)
        for j in range(k)
    ]


#: Callables a pickle may name to run code on load.
CODE = [("os", "system"), ("builtins", "eval"), ("builtins", "exec"), ("subprocess", "call")]


class _Reduce:
    def __init__(self, module: str, name: str, arg: str) -> None:
        self.module, self.name, self.arg = module, name, arg

    def __reduce__(self) -> tuple[Any, ...]:
        import importlib

        return getattr(importlib.import_module(self.module), self.name), (self.arg,)


@settings(max_examples=12, deadline=None)
@given(
    code=st.sampled_from(CODE),
    where=st.sampled_from(["sample", "reward", "top", "metadata"]),
)
def test_a_pickle_that_names_code_is_refused_and_never_run(
    tmp_path_factory: pytest.TempPathFactory, code: tuple[str, str], where: str
) -> None:
    folder = tmp_path_factory.mktemp("evil")
    marker = folder / "ran"
    arg = f"touch {marker}" if code[1] in ("system", "call") else f"open({str(marker)!r}, 'w')"
    evil = _Reduce(code[0], code[1], arg)
    samples: list[Any] = _samples(3, 2)
    doc: dict[str, Any] = {"rollout_id": 1, "samples": samples}
    if where == "sample":
        samples[1] = evil
    elif where == "reward":
        samples[0]["reward"] = evil
    elif where == "metadata":
        samples[0]["metadata"] = {"extra": evil}
    else:
        doc["config"] = evil
    path = folder / "rollout_data_1.pt"
    path.write_bytes(torch_zip(doc, "rollout_data_1"))
    with pytest.raises(InputError, match=r"names the class .*only plain data") as err:
        read_rows([str(path)])
    assert "\n" not in str(err.value) and str(path) in str(err.value)
    assert not marker.exists()


def test_a_corrupt_pickle_is_one_line(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("r/data.pkl", pickle.dumps({"samples": _samples(3, 2)})[:40])
    path = tmp_path / "rollout_data_0.pt"
    path.write_bytes(buf.getvalue())
    result = CliRunner().invoke(app, ["route", str(path)])
    assert result.exit_code == 2 and "corrupt PyTorch pickle" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_file_torch_writes_is_read_with_its_tensors_left_out(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    samples = _samples(40, 4)
    for sample in samples[:8]:  # tensors where slime keeps extra data: read as nothing
        sample["metadata"] = {"scores": torch.tensor([1.0, 2.0])}
        sample["multimodal_train_inputs"] = {"pixel_values": torch.zeros(2, 2)}
    path = tmp_path / "rollout_data_3.pt"
    torch.save({"rollout_id": 3, "samples": samples}, path)
    pool = summarize(read_rows([str(path)], aggregate=Counts()))
    assert pool.rows == 160 and pool.tasks.height == 40
    assert int(pool.tasks["passes"].sum()) == sum(int(s["reward"]) for s in samples)
    result = CliRunner().invoke(app, ["route", str(path), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.output)
    assert report["checks"][1]["measured"]["sampler_logprobs"] is True
    # a checkpoint beside it is no rollout dump: refused in one line
    state = tmp_path / "model.pt"
    torch.save({"layer.weight": torch.zeros(3, 3)}, state)
    refused = CliRunner().invoke(app, ["route", str(state)])
    assert refused.exit_code == 2 and "no samples list" in refused.output


def test_update_reads_a_dump_with_its_log_probs(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    path = tmp_path / "rollout_data_5.pt"
    path.write_bytes(torch_zip({"rollout_id": 5, "samples": _samples(6, 4)}, "rollout_data_5"))
    out = tmp_path / "coefficients.jsonl"
    result = CliRunner().invoke(app, ["update", str(path), "--method", "grpo", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 24 and all(len(r["coefficients"]) == 3 for r in rows)


def _odd(kind: str) -> Any:
    """A value a pickle holds and JSON cannot, or can only in part."""
    if kind == "itself":
        loop: list[Any] = [1]
        loop.append(loop)
        return loop
    if kind == "deep":
        deep: list[Any] = []
        for _ in range(400):  # past MAX_DEPTH, within what pickle itself writes
            deep = [deep]
        return deep
    return {
        "tuple-key": {(1, 2): 0.5},
        "int-key": {1: "a", None: "b", 2.5: "c"},
        "set": {1, 2, 3},
        "bytes": b"\x00\xff",
        "list-status": ["completed"],
        "int": 7,
    }[kind]


ODD = ["itself", "deep", "tuple-key", "int-key", "set", "bytes", "list-status", "int"]


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(ODD),
    field=st.sampled_from(["metadata", "status", "reward", "group_index", "prompt", "label"]),
    where=st.integers(0, 5),
)
def test_a_sample_holding_what_json_cannot_is_read_or_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, kind: str, field: str, where: int
) -> None:
    samples = _samples(3, 2)
    samples[where][field] = _odd(kind)
    path = tmp_path_factory.mktemp("odd") / "rollout_data_2.pt"
    path.write_bytes(torch_zip({"rollout_id": 2, "samples": samples}, "rollout_data_2"))
    summary = str(path.with_suffix(".summary.parquet"))
    for command in (["route"], ["check"], ["summarize", "-o", summary, "--force"], ["ada"]):
        result = CliRunner().invoke(app, [command[0], str(path), *command[1:]])
        assert result.exit_code in (0, 1, 2), (command, result.output)
        assert not isinstance(result.exception, Exception) or isinstance(
            result.exception, SystemExit
        ), (command, repr(result.exception))
        if result.exit_code == 2:
            said = result.stderr.strip()
            assert len(said.splitlines()) == 1 and str(path) in said, said
            assert "internal error" not in said, said


@settings(max_examples=8, deadline=None)
@given(
    branch=st.integers(2, 30),
    leaf=st.sampled_from(["x", "y" * 1000, 7, [1.5, 2.5]]),
    field=st.sampled_from(["blob", "prompt", "metadata"]),
)
def test_an_expansion_bomb_is_refused_at_its_place_in_a_moment(
    tmp_path_factory: pytest.TempPathFactory, branch: int, leaf: Any, field: str
) -> None:
    """A list of references to a list of references ... (a pickle names an object once and
    refers to it again by its memo): billions of values from a few hundred bytes, refused at
    the sample that holds it, well before it is walked (it once ran past two minutes)."""
    nested: Any = leaf
    depth = 0
    while branch**depth < 10**9:
        nested, depth = [nested] * branch, depth + 1
    samples = _samples(3, 2)
    samples[1][field] = nested
    path = tmp_path_factory.mktemp("bomb") / "rollout_data_0.pt"
    path.write_bytes(torch_zip({"rollout_id": 0, "samples": samples}, "rollout_data_0"))
    assert path.stat().st_size < 50_000
    with pytest.raises(InputError, match="expansion bomb") as refused:
        read_rows([str(path)])
    assert f"samples[1].{field}" in str(refused.value)


def test_a_prompt_shared_by_its_group_is_no_bomb(tmp_path: Path) -> None:
    """slime's samples of one prompt share its object (pickled once, referred to again): a
    long prompt shared by 64 samples is read."""
    prompt = [{"role": "user", "content": "p" * 20_000}]
    samples = _samples(4, 64)
    for sample in samples:
        sample["prompt"] = prompt
        sample["tokens"] = list(range(300))
    path = tmp_path / "rollout_data_1.pt"
    path.write_bytes(torch_zip({"rollout_id": 1, "samples": samples}, "rollout_data_1"))
    pool = summarize(read_rows([str(path)], aggregate=Counts()))
    assert pool.rows == 256 and pool.tasks.height == 4
