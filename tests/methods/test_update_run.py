"""`while update` over `run_update`: one knob declaration, names as displayed, failing fast,
hostile batches, and the coefficients the prime-rl losses give."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli import knobs as declared
from whilecli.cli import app
from whilecli.commands.update import update_command
from whilecli.errors import InputError, UsageError
from whilecli.knobs import Knob
from whilecli.methods import batch as batch_mod
from whilecli.methods import registry
from whilecli.methods.run import UpdateResult, run_update

DATA = Path(__file__).parents[1] / "data" / "batch_single.jsonl"
GROUPED = str(Path(__file__).parents[2] / "examples" / "data" / "grouped_batch.jsonl")
SRC = str(Path(__file__).parents[2] / "src")


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def grouped_rows() -> list[dict]:
    """Two tasks of two rows; row 1 and 3 fail (A < 0) with ratios far above the tis cap."""
    return [
        {"task_id": "a", "reward": 1.0, "logprobs": [-0.5, -0.4], "behavior_logprobs": [-0.6, -0.3]},
        {"task_id": "a", "reward": 0.0, "logprobs": [-0.2, -0.1, -0.3],
         "behavior_logprobs": [-1.5, -0.2, -1.4]},
        {"task_id": "b", "reward": 1.0, "logprobs": [-0.7], "behavior_logprobs": [-0.7]},
        {"task_id": "b", "reward": 0.5, "logprobs": [-0.3, -0.9], "behavior_logprobs": [-1.3, -0.8]},
    ]  # fmt: skip


# ---------------------------------------------------------------- A. one declaration per knob


def test_range_text_and_check() -> None:
    assert declared.DECAY.range_text() == "in [0, 1)"
    assert declared.TIS_CAP.range_text() == "≥ 1"
    assert declared.IPO_EPS.range_text() == "in (0, 1]"
    assert declared.TRUST.range_text() == "in (0, ∞]"
    assert declared.TRUST.check(math.inf) == math.inf
    with pytest.raises(
        UsageError, match=r"^--decay must be in \[0, 1\) \(default 0.95\), got 1.0$"
    ):
        declared.DECAY.check(1.0)
    for bad in (True, "0.5", math.nan, None):
        with pytest.raises(UsageError, match="--tis-cap"):
            declared.TIS_CAP.check(bad)


@given(
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.booleans(),
)
def test_contains_is_the_stated_inequality(x: float, low_open: bool, high_open: bool) -> None:
    knob = Knob("k", 0.5, low=0.0, high=1.0, low_open=low_open, high_open=high_open)
    above = x > 0 if low_open else x >= 0
    below = x < 1 if high_open else x <= 1
    assert knob.contains(x) == (above and below)


def test_every_default_lies_in_its_range() -> None:
    for knob in declared.all_knobs():
        assert knob.contains(knob.default), knob.name


def test_defaults_are_read_from_the_declarations() -> None:
    from whilecli.emit import losses, prime_rl
    from whilecli.emit.knobs import Settings
    from whilecli.methods.grpo import RAE
    from whilecli.methods.surrogate import ClippedPolicyGradient
    from whilecli.methods.twostep import apply_correction

    fields = Settings.__dataclass_fields__
    assert fields["decay"].default == declared.DECAY.default == RAE().decay
    assert fields["icepop_band"].default == declared.ICEPOP_BAND == prime_rl.ICEPOP_BAND
    assert (losses.ICEPOP_LOW, losses.ICEPOP_HIGH) == declared.ICEPOP_BAND
    assert fields["tis_cap"].default == declared.TIS_CAP.default == losses.TIS_CAP
    assert fields["ipo_threshold"].default == declared.IPO_EPS.default == prime_rl.IPO_EPS
    assert ClippedPolicyGradient().clip == declared.CLIP.default
    import inspect

    kw = inspect.signature(apply_correction).parameters
    assert kw["eps"].default == declared.IPO_EPS.default
    assert kw["band"].default == declared.ICEPOP_BAND
    assert kw["cap"].default == declared.TIS_CAP.default


def _range_text(message: str) -> str:
    found = re.search(r"must be (.*?) \(default", message)
    assert found, message
    return found.group(1)


@pytest.mark.parametrize(
    ("update_args", "config_args"),
    [
        (
            ["--method", "rae", "--decay", "1.0"],
            ["--method", "rae", "--set", "orchestrator.algo.decay=1.0"],
        ),
        (
            ["--method", "rae", "--decay", "-0.5"],
            ["--method", "rae", "--set", "orchestrator.algo.decay=-0.5"],
        ),
        (
            ["--method", "grpo", "--correction", "tis", "--tis-cap", "0.5"],
            ["--method", "grpo", "--async", "--correction", "tis", "--set",
             "trainer.loss.kwargs.cap=0.5"],
        ),
        (
            ["--method", "grpo", "--correction", "icepop", "--icepop-band", "0.5,0.9"],
            ["--method", "grpo", "--async", "--correction", "icepop", "--set",
             "trainer.loss.kwargs.high=0.9"],
        ),
    ],
)  # fmt: skip
def test_update_and_config_refuse_the_same_values_alike(
    tmp_path: Path, update_args: list[str], config_args: list[str]
) -> None:
    code_u, _, err_u = cli("update", *update_args, str(DATA))
    code_c, _, err_c = cli("config", *config_args, "-o", str(tmp_path / "rl.toml"))
    assert code_u == code_c == 2, (err_u, err_c)
    assert _range_text(err_u) == _range_text(err_c)
    assert err_u.count("\n") == err_c.count("\n") == 1


# ---------------------------------------------------------------- registry and protocol


def test_registry_declares_what_the_constructors_take() -> None:
    for key, spec in registry.SPECS.items():
        if spec.family == "rowwise":
            continue
        cls = registry.method_class(key)
        assert set(spec.knobs) <= registry.accepted_knobs(cls), key
        assert isinstance(cls(), registry.Method), key
        assert set(declared.METHOD_KNOBS.get(key, {})) <= set(spec.knobs), key


@pytest.mark.parametrize(
    ("typed", "key"),
    [
        ("FlashReinforce", "flash_reinforce"),
        ("flash-reinforce", "flash_reinforce"),
        ("GRPO", "grpo"),
        ("MaxRL", "max_rl"),
        ("GroupwiseGrading", "groupwise"),
        ("prime-rl rae", "rae"),
    ],
)
def test_method_names_as_displayed(typed: str, key: str) -> None:
    assert registry.resolve(typed) == key


def test_update_takes_the_displayed_name(tmp_path: Path) -> None:
    code, out, err = cli("update", "--method", "FlashReinforce", str(DATA), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["method"] == "flash_reinforce"
    rows = write(
        tmp_path / "g.jsonl",
        [{"task_id": "a", "reward": 1, "factor": 0.5}, {"task_id": "a", "reward": 0}],
    )
    code, out, err = cli("update", "--method", "GroupwiseGrading", str(rows), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["method"] == "groupwise"


def test_help_lists_choices_and_panels() -> None:
    code, out, _ = cli("update", "--help")
    assert code == 0
    for choices in (
        "[flash_reinforce|sao|bpco|grpo|max_rl|rae|opd|opsd|dpo|sft|groupwise|rm]",
        "[ipo|icepop|tis]",
        "[grpo|bnpo|dr_grpo]",
        "[mask|zero]",
        "[cpu|cuda|auto]",
        "[float64|float32]",
        "[text|json]",
        "[reward|advantage]",
    ):
        assert choices in out
    rich_app = typer.Typer(rich_markup_mode="rich")
    rich_app.command()(update_command)
    text = CliRunner().invoke(rich_app, ["--help"], terminal_width=200).output
    for panel in (
        "Inputs",
        "Output",
        "Single rollout: FlashReinforce, SAO, BPCO",
        "Grouped: GRPO, MaxRL, RAE",
        "Corrections",
        "Rowwise: GroupwiseGrading, RM",
    ):
        assert panel in text, panel


def test_choices_are_case_insensitive() -> None:
    code, out, err = cli(
        "update", "--method", "SAO", str(DATA), "--format", "JSON", "--device", "CPU"
    )
    assert code == 0, err
    assert json.loads(out)["device"] == "cpu"


# ---------------------------------------------------------------- B. failing fast

_PROBE = """
import runpy, sys
sys.argv = ["while", *sys.argv[1:]]
try:
    runpy.run_module("whilecli", run_name="__main__")
except SystemExit as exit_:
    code = exit_.code
print("EXIT", code, "torch" in sys.modules, "polars" in sys.modules, file=sys.stderr)
"""


def _probe(*args: str, prelude: str = "") -> tuple[list[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", prelude + _PROBE, "update", *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    lines = done.stderr.strip().splitlines()
    return lines[-1].split(), "\n".join(lines[:-1])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--method", "nope", "x.jsonl"], "unknown method 'nope'"),
        (["--method", "grpo", "missing.jsonl"], "missing.jsonl: no such file or directory"),
        (["--method", "sao", "--trust", "1", str(DATA)], "--trust does not apply to sao"),
        (["--method", "rae", "--decay", "2", str(DATA)], "--decay must be in [0, 1)"),
        (["--method", "sao", "--state", "s.json", str(DATA)], "--state does not apply to sao"),
        (["--method", "sao", "--tis-cap", "3", str(DATA)], "--tis-cap needs --correction"),
    ],
)
def test_refused_before_torch_is_imported(args: list[str], says: str) -> None:
    (_, code, torch_loaded, polars_loaded), err = _probe(*args)
    assert code == "2" and says in err and err.count("\n") == 0, err
    assert torch_loaded == "False"
    assert polars_loaded == "False"


def test_without_torch_update_says_how_to_install_it() -> None:
    (_, code, _, _), err = _probe(
        "--method", "grpo", str(DATA), prelude="import sys\nsys.modules['torch'] = None\n"
    )
    assert code == "2", err
    assert err.count("\n") == 0 and "pip install -e '" in err and "[torch]'" in err, err


# ---------------------------------------------------------------- D. --compile


def test_compile_refused_by_a_method_that_does_not_take_it(monkeypatch) -> None:
    class Plain:
        name = "sft"
        requires: frozenset[str] = frozenset()

        def __init__(self, pass_threshold: float = 1.0) -> None:
            self.pass_threshold = pass_threshold

    class Compiled(Plain):
        def __init__(self, pass_threshold: float = 1.0, compile: bool = False) -> None:
            super().__init__(pass_threshold)
            self.compile = compile

    monkeypatch.setattr(registry, "method_class", lambda name: Plain)
    with pytest.raises(UsageError, match="^--compile: sft does not take compile yet"):
        registry.make_method("sft", {"compile": True})
    assert isinstance(registry.make_method("sft", {"compile": False}), Plain)
    monkeypatch.setattr(registry, "method_class", lambda name: Compiled)
    assert registry.make_method("sft", {"compile": True}).compile is True


def test_compile_flag_reaches_the_method() -> None:
    cls = registry.method_class("flash_reinforce")
    code, out, err = cli("update", "--method", "flash_reinforce", "--compile", str(DATA))
    if "compile" in registry.accepted_knobs(cls):
        assert code == 0, err
    else:
        assert code == 2 and "--compile: flash_reinforce does not take compile yet" in err
        assert err.count("\n") == 1


# ---------------------------------------------------------------- E. hostile batches


def test_padding_that_would_not_fit_is_refused_before_allocating(
    tmp_path: Path, monkeypatch
) -> None:
    rows = [{"reward": 1.0, "logprobs": [-0.1]} for _ in range(40)]
    rows.append({"reward": 0.0, "logprobs": [-0.1] * 3000})
    path = write(tmp_path / "long.jsonl", rows)
    monkeypatch.setattr(batch_mod, "CHECK_ABOVE", 0)
    monkeypatch.setattr(batch_mod, "available_memory", lambda device="cpu": 1_000_000)
    code, _, err = cli("update", "--method", "flash_reinforce", str(path))
    assert code == 2 and err.count("\n") == 1, err
    need = 41 * 3000 * 8 * (1 + batch_mod.OUTPUT_TENSORS)
    assert f"would need {need / 1e9:.3g} GB" in err
    assert "split the batch" in err and "by length" in err and str(path) in err
    monkeypatch.setattr(batch_mod, "available_memory", lambda device="cpu": 10 * need)
    code, _, err = cli("update", "--method", "flash_reinforce", str(path))
    assert code == 0, err


def test_available_memory_is_known_here() -> None:
    free = batch_mod.available_memory("cpu")
    assert free is None or free > 0


def test_grouped_errors_name_the_file_and_line(tmp_path: Path) -> None:
    rows = [dict(r, task_id=f"t{i}") for i, r in enumerate(grouped_rows())]
    path = write(tmp_path / "single.jsonl", rows)
    code, _, err = cli("update", "--method", "grpo", str(path))
    assert code == 2
    assert f"{path}:1: field 'task_id': grpo needs at least 2 rows per task" in err
    rows[2].pop("task_id")
    path = write(tmp_path / "no_task.jsonl", rows)
    code, _, err = cli("update", "--method", "max_rl", str(path))
    assert code == 2 and f"{path}:3: field 'task_id'" in err, err


def test_an_error_without_a_row_names_the_file(tmp_path: Path) -> None:
    from whilecli.io.batch import read_batch
    from whilecli.methods.run import _located

    cols = read_batch(DATA)
    err = _located(InputError("something is off", field="task_id"), cols)
    assert str(err).startswith(f"{DATA}: field 'task_id': something is off")


# ---------------------------------------------------------------- F. dr_grpo's L_max, tis


def test_dr_grpo_note_says_where_l_max_came_from(tmp_path: Path) -> None:
    path = write(tmp_path / "g.jsonl", grouped_rows())
    code, out, err = cli("update", "--method", "grpo", "--loss-type", "dr_grpo", str(path),
                         "--format", "json")  # fmt: skip
    assert code == 0, err
    notes = " ".join(json.loads(out)["notes"])
    assert "L_max defaulted to the longest row (3 action tokens)" in notes
    assert "--max-len = your max_tokens" in notes
    code, out, _ = cli("update", "--method", "grpo", "--loss-type", "dr_grpo", "--max-len", "8",
                       str(path), "--format", "json")  # fmt: skip
    assert "L_max defaulted" not in " ".join(json.loads(out)["notes"])


def test_grpo_tis_through_the_cli_equals_tis_loss(tmp_path: Path) -> None:
    """prime-rl's call shape: one sample per row, per-token A and loss weights w_i = 1/(T_i B).

    c from the loss is −∂loss/∂trainer_logprobs; on the tokens where GRPO's clip does not bite
    it must equal the CLI's coefficient, and the cap must bite somewhere.
    """
    from whilecli.emit.losses import tis_loss

    rows = grouped_rows()
    path = write(tmp_path / "g.jsonl", rows)
    out = tmp_path / "c.jsonl"
    code, _, err = cli("update", "--method", "grpo", "--correction", "tis", str(path),
                       "-o", str(out))  # fmt: skip
    assert code == 0, err
    got = [json.loads(line) for line in out.read_text().splitlines()]
    b = len(rows)
    capped = 0
    for row, back in zip(rows, got, strict=True):
        lp = torch.tensor(row["logprobs"], dtype=torch.float64, requires_grad=True)
        mu = torch.tensor(row["behavior_logprobs"], dtype=torch.float64)
        adv = torch.tensor(back["advantages"], dtype=torch.float64)
        t = len(row["logprobs"])
        inputs = {
            "trainer_logprobs": lp,
            "inference_logprobs": mu,
            "ref_logprobs": None,
            "advantages": adv,
            "loss_mask": torch.ones(t, dtype=torch.bool),
            "loss_weights": torch.full((t,), 1.0 / (t * b), dtype=torch.float64),
        }
        tis_loss(inputs, kl_tau=0.0).loss.backward()
        assert lp.grad is not None
        want = -lp.grad
        rho = torch.exp(lp.detach() - mu)
        unclipped = ((adv > 0) & (rho <= 1.2)) | ((adv < 0) & (rho >= 0.8))
        c = torch.tensor(back["coefficients"], dtype=torch.float64)
        torch.testing.assert_close(c[unclipped], want[unclipped], rtol=1e-12, atol=1e-15)
        assert torch.all(c[~unclipped] == 0)
        capped += int((unclipped & (rho > 2)).sum())
    assert capped >= 2


def test_run_update_is_the_library_call(tmp_path: Path) -> None:
    path = write(tmp_path / "g.jsonl", grouped_rows())
    result = run_update(path, "GRPO", {"loss_type": "bnpo"}, correction="icepop",
                        correction_knobs={"icepop_band": (0.6, 4.0)})  # fmt: skip
    assert isinstance(result, UpdateResult)
    doc = result.to_dict()
    assert doc["knobs"] == {"loss_type": "bnpo", "correction": "icepop", "band": [0.6, 4.0]}
    assert result.update.coefficients.shape == (4, 3)
    with pytest.raises(UsageError, match="--ipo-eps does not apply to --correction tis"):
        run_update(path, "grpo", correction="tis", correction_knobs={"ipo_eps": 0.2})


# --- lists a method does not read ---------------------------------------------------------


def _single(values: list[object] | None, **extra: object) -> dict:
    out: dict = {"reward": 1.0, "logprobs": [-0.5, -0.3], "behavior_logprobs": [-0.4, -0.3]}
    if values is not None:
        out["values"] = values
    return {**out, **extra}


@pytest.mark.parametrize(
    "first",
    [[math.nan, 0.2], [math.inf, 0.2], [7.0, -3.0], None],
    ids=["nan", "inf", "out-of-range", "absent-on-one-row"],
)
def test_a_list_the_method_does_not_read_is_ignored_with_a_note(tmp_path: Path, first) -> None:
    """FlashReinforce reads no critic values: whatever ``values`` holds (NaN, ∞, a value
    outside any range, present on some rows only), the update is the one without them, with
    a note saying they were ignored and why. Lengths are still checked (DESIGN section 3)."""
    rows = [_single(first), _single([0.3, 0.4], reward=0.0)]
    clean = run_update(write(tmp_path / "clean.jsonl", [_single(None), _single(None, reward=0.0)]),
                       "flash_reinforce")  # fmt: skip
    got = run_update(write(tmp_path / "rows.jsonl", rows), "flash_reinforce")
    assert torch.equal(got.update.coefficients, clean.update.coefficients)
    assert got.batch.values is None
    held = 1 if first is None else 2
    assert (
        f"'values' on {held} of 2 trajectories ignored: flash_reinforce does not read it, so "
        "its entries were not checked."
    ) in got.update.notes
    short = [_single([0.1]), _single([0.3, 0.4], reward=0.0)]
    with pytest.raises(InputError, match="'values': has 1 entries but logprobs has 2"):
        run_update(write(tmp_path / "short.jsonl", short), "flash_reinforce")


def test_the_lists_a_method_reads_come_from_its_declaration() -> None:
    from whilecli.methods.registry import make_method
    from whilecli.methods.validate import correction_needs

    def reads(name: str, knobs: dict | None = None, corr: str | None = None) -> set[str]:
        return set((make_method(name, knobs or {}).needs | correction_needs(corr)).reads)

    base = {"logprobs", "action_mask", "behavior_logprobs"}
    assert reads("flash_reinforce") == base
    assert reads("sao") == reads("bpco") == base | {"values"}
    assert reads("grpo") == base and reads("grpo", {"beta": 0.1}) == base | {"ref_logprobs"}
    assert reads("sft") == {"logprobs", "action_mask"}
    assert reads("sft", corr="tis") == {"logprobs", "action_mask", "behavior_logprobs"}
    assert "teacher_logprobs" in reads("opd") and "values" not in reads("opd")


@pytest.mark.parametrize("method", ["sao", "bpco"])
@pytest.mark.parametrize("junk", [math.nan, math.inf, 5.0, -3.0])
def test_a_value_on_an_environment_token_is_never_read_nor_refused(
    tmp_path: Path, method: str, junk: float
) -> None:
    """SAO and BPCO bootstrap over an observation token (action_mask false) without reading
    its value: any number there (NaN, ∞, outside BPCO's reward_range) gives the same update."""

    def rows(v: float) -> list[dict]:
        return [
            {"reward": 1.0, "logprobs": [-0.7, -1.2, -1.6], "behavior_logprobs": [-0.9, -1.2, -1.4],
             "action_mask": [1, 0, 1], "values": [0.1, v, 0.2]},
            {"reward": 0.0, "logprobs": [-0.5, -1.2], "behavior_logprobs": [-0.5, -1.6],
             "action_mask": [1, 1], "values": [0.3, 0.4]},
        ]  # fmt: skip

    want = run_update(write(tmp_path / "clean.jsonl", rows(0.5)), method)
    got = run_update(write(tmp_path / "junk.jsonl", rows(junk)), method)
    for name in ("coefficients", "advantages", "admitted", "value_targets"):
        assert torch.equal(getattr(got.update, name), getattr(want.update, name)), name
    if method == "bpco" or not math.isfinite(junk):  # on an action token it is read: refused
        bad = rows(0.5)
        bad[0]["values"][0] = junk
        with pytest.raises(InputError, match=r"bad.jsonl:1: field 'values': token 0 is"):
            run_update(write(tmp_path / "bad.jsonl", bad), method)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_a_knob_given_where_it_does_nothing_is_refused(data: st.DataObject) -> None:
    """Every knob declared to act only under some settings of another (``--max-len``: only
    with ``--loss-type dr_grpo``) is refused under any other setting, naming both flags, for
    every method that takes it; under its settings it is read."""
    from whilecli.methods.surrogate import LOSS_TYPES

    knob, (other, settings_, _) = data.draw(
        st.sampled_from(sorted(registry.APPLIES_ONLY_WHEN.items()))
    )
    method = data.draw(st.sampled_from([k for k, s in registry.SPECS.items() if knob in s.knobs]))
    setting = data.draw(st.sampled_from([None, *(t for t in LOSS_TYPES if t not in settings_)]))
    knobs = {knob: 3, **({other: setting} if setting else {})}
    with pytest.raises(UsageError, match=f"applies only with {registry.flag(other)}"):
        run_update(GROUPED, method, knobs)
    fine = run_update(GROUPED, method, {knob: 3, other: settings_[0]})
    assert isinstance(fine, UpdateResult)
