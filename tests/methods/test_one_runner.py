"""One runner validates: each method declares what it needs as data (``Needs``), the runner
(:class:`whilecli.methods.twostep.TwoStep`) checks a batch against it once per optimizer
batch, and no method module checks anything itself.

- no module under ``methods/`` but the runner and the checks' own module calls a check
  (an AST walk, as ``tests/test_one_json_parser.py`` does for JSON);
- for every registered method, a batch without one of its declared fields, or with a bad
  entry in a list it declares, is refused by the runner naming that field and row;
- a valid batch split into any micro-batches is checked exactly once.
"""

from __future__ import annotations

import ast
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whilecli.errors import InputError, UsageError
from whilecli.methods import twostep
from whilecli.methods.batch import Batch
from whilecli.methods.registry import METHODS, make_method
from whilecli.methods.validate import FIELD_NAMES, Needs, check_batch

METHODS_DIR = Path(__file__).resolve().parents[2] / "src" / "whilecli" / "methods"
TRAINERS_DIR = METHODS_DIR.parent / "trainers"
#: The checks, and the helpers they replaced (Batch.check_*, groups.check_*, require_field,
#: require_task_ids, sao.check_values, BPCO._check_range).
CHECKS = {
    "check_batch",
    "_check_task_ids",
    "_check_rewards",
    "_check_logprobs",
    "_check_values",
    "check_logprobs",
    "check_rewards",
    "check_values",
    "require",
    "require_field",
    "require_task_ids",
    "_check_range",
}
#: The runner and the checks' own module: the only places a check is called.
RUNNER = {"twostep.py", "validate.py"}
#: Every variant of a method whose knobs change what it needs.
VARIANTS: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in METHODS] + [
    ("grpo", {"beta": 0.05}),
    ("max_rl", {"beta": 0.05}),
    ("rae", {"beta": 0.05}),
    ("bpco", {"reward_range": (0.0, 2.0)}),
]


def _check_calls(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in CHECKS:
                found.append((node.lineno, name))
    return found


def test_no_method_module_checks_its_input() -> None:
    found = {
        path.name: calls
        for path in sorted(METHODS_DIR.glob("*.py"))
        if path.name not in RUNNER and (calls := _check_calls(path))
    }
    assert found == {}


def test_the_trainer_plugins_check_through_the_runner() -> None:
    found = {
        path.name: calls
        for path in sorted(TRAINERS_DIR.glob("*.py"))
        if (calls := _check_calls(path))
    }
    assert found == {}


def test_the_walk_sees_a_check(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from x import check_batch\n\ncheck_batch(b, n, 'm')\nbatch.require('values', 'm')\n",
        encoding="utf-8",
    )
    assert _check_calls(module) == [(3, "check_batch"), (4, "require")]


def test_only_the_runner_calls_the_checks() -> None:
    assert _check_calls(METHODS_DIR / "twostep.py")  # the walk would see the runner's calls


@st.composite
def batches(draw: st.DrawFn) -> Batch:
    """A batch every method accepts: 2-3 rows per task, observation tokens, every row with an
    action token, rewards in [0, 1], values in [0, 1], every optional list present."""
    sizes = [draw(st.integers(2, 3)) for _ in range(draw(st.integers(1, 3)))]
    tasks = [f"t{k}" for k, n in enumerate(sizes) for _ in range(n)]
    b = len(tasks)
    t = draw(st.integers(1, 5))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    lengths = torch.randint(1, t + 1, (b,), generator=g)
    mask = torch.arange(t)[None, :] < lengths[:, None]
    action = mask & (torch.rand(b, t, generator=g) < 0.7)
    action[torch.arange(b), lengths - 1] = True

    def logprobs() -> torch.Tensor:
        return -torch.rand(b, t, generator=g, dtype=torch.float64) * 2 * mask

    rewards = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=b, max_size=b))
    return Batch.from_tensors(
        logprobs(),
        rewards=torch.tensor(rewards, dtype=torch.float64),
        mask=mask,
        action_mask=action,
        behavior_logprobs=logprobs(),
        ref_logprobs=logprobs(),
        teacher_logprobs=logprobs(),
        values=torch.rand(b, t, generator=g, dtype=torch.float64) * mask,
        truncated=torch.zeros(b, dtype=torch.bool),
        task_ids=tasks,
    )


def _refusal(method: Any, batch: Batch) -> InputError | UsageError:
    with pytest.raises((InputError, UsageError)) as err:
        method.update(batch)
    return err.value


def _first_action_token(batch: Batch, row: int) -> int:
    return int(batch.action_mask[row].nonzero()[0, 0])


@pytest.mark.parametrize(("name", "knobs"), VARIANTS, ids=[f"{n}{k or ''}" for n, k in VARIANTS])
@settings(max_examples=10, deadline=None)
@given(batch=batches(), data=st.data())
def test_every_declared_need_is_enforced_by_the_runner(
    name: str, knobs: dict[str, Any], batch: Batch, data: st.DataObject
) -> None:
    method = make_method(name, knobs)
    needs: Needs = method.needs
    method.update(batch)  # the batch as drawn is valid
    for field in needs.fields:
        shown = FIELD_NAMES.get(field, field)
        err = _refusal(method, replace(batch, **{field: None}))
        assert f"field '{shown}'" in str(err) and str(err).count("\n") == 0
        assert getattr(err, "field", shown) == shown
    row = data.draw(st.integers(0, batch.size - 1))
    for field in needs.logprobs:
        for bad in (math.nan, 0.5, -math.inf):
            broken = replace(batch, **{field: getattr(batch, field).clone()})
            token = _first_action_token(batch, row)
            getattr(broken, field)[row, token] = bad
            err = _refusal(method, broken)
            assert (err.row, err.field) == (row, field), str(err)  # type: ignore[union-attr]
            assert f"token {token} " in str(err)
    if needs.reward:
        rewards = batch.rewards.clone()
        rewards[row] = math.nan
        err = _refusal(method, replace(batch, rewards=rewards))
        assert (err.row, err.field) == (row, "reward")  # type: ignore[union-attr]
    if needs.values is not None:
        values = batch.values.clone()  # type: ignore[union-attr]
        values[row, _first_action_token(batch, row)] = math.inf
        err = _refusal(method, replace(batch, values=values))
        assert (err.row, err.field) == (row, "values")  # type: ignore[union-attr]
    for field in ("values", "ref_logprobs", "teacher_logprobs"):
        if field not in needs.fields and field not in needs.logprobs:  # not read: not checked
            junk = torch.full_like(batch.logprobs, math.nan)
            method.update(replace(batch, **{field: junk}))


@st.composite
def parts(draw: st.DrawFn, b: int) -> list[list[int]]:
    order = draw(st.permutations(range(b)))
    cuts = sorted(draw(st.sets(st.integers(1, b - 1), max_size=b - 1))) if b > 1 else []
    bounds = [0, *cuts, b]
    return [list(order[bounds[k] : bounds[k + 1]]) for k in range(len(bounds) - 1)]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each call of the runner's check, by method name."""
    calls: list[str] = []
    real = twostep.check_batch

    def counting(batch: Batch, needs: Needs, method: str) -> None:
        calls.append(method)
        real(batch, needs, method)

    monkeypatch.setattr(twostep, "check_batch", counting)
    return calls


@pytest.mark.parametrize("name", list(METHODS))
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_batch_in_micro_batches_is_checked_once(
    name: str, data: st.DataObject, counted: list[str]
) -> None:
    batch = data.draw(batches())
    method = make_method(name, {})
    counted.clear()
    stats = method.batch_stats(batch)
    for rows in data.draw(parts(batch.size)):
        method.coefficients(batch.select(rows), stats)
    assert counted == [name]
    counted.clear()
    method = make_method(name, {})
    method.update(batch, correction="tis")  # the method and its correction: one check
    assert counted == [name]


def test_a_correction_is_checked_with_the_method() -> None:
    batch = Batch.from_rows([{"reward": 1.0, "logprobs": [-0.2, -0.1]}])
    sft = make_method("sft", {})
    with pytest.raises(UsageError, match="--correction tis needs .*'behavior_logprobs'"):
        sft.update(batch, correction="tis")
    with pytest.raises(UsageError, match="unknown correction 'clip'.*ipo, icepop, tis"):
        sft.update(batch, correction="clip")
    stale = Batch.from_rows(
        [{"reward": 1.0, "logprobs": [-0.2, -0.1], "behavior_logprobs": [-0.3, math.nan]}],
        logprob_fields=(),
    )
    sft.update(stale)  # sft reads no behaviour log-probs
    with pytest.raises(InputError, match=r"row 0: field 'behavior_logprobs': token 1 "):
        sft.update(stale, correction="ipo")
    with pytest.raises(InputError, match=r"row 0: field 'behavior_logprobs': token 1 "):
        twostep.apply_correction(sft.update(stale), stale, "ipo")


def test_one_wording_per_refusal() -> None:
    """The same fault reads the same for every method that refuses it."""
    rows = [
        {"task_id": "a", "reward": r, "logprobs": [-0.2, 0.4], "behavior_logprobs": [-0.2, -0.3],
         "values": [0.5, 0.5], "ref_logprobs": [-0.2, -0.3], "teacher_logprobs": [-0.2, -0.3]}
        for r in (1.0, 0.0)
    ]  # fmt: skip
    texts = set()
    for name in METHODS:
        with pytest.raises(InputError) as err:
            make_method(name, {}).update(Batch.from_rows(rows, logprob_fields=()))
        texts.add(str(err.value))
    assert texts == {"row 0: field 'logprobs': token 1 is 0.4 > 0; pass log p, not p"}
    direct = Needs(fields=("values",))
    with pytest.raises(InputError, match=r"^field 'values': missing: sao needs it"):
        check_batch(Batch.from_rows([{"reward": 1.0, "logprobs": [-0.1]}]), direct, "sao")
