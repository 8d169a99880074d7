"""`whilecli.emit.prime_rl`: configs prime-rl accepts and can run, checked against a schema
table transcribed from ``spec/prime-rl.md`` (``tests/support/prime_rl_schema.py``)."""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prime_rl_schema import header_problems, problems, roundtrip
from whilecli.emit.knobs import METHODS
from whilecli.emit.prime_rl import prime_rl_config
from whilecli.errors import UsageError

GOLDEN = Path(__file__).parents[1] / "golden"
TEACHER = "Qwen/Qwen3-32B@http://127.0.0.1:8001/v1"
BASE: dict[str, Any] = {"model": "Qwen/Qwen3-8B", "env": "reverse-text"}
#: one golden TOML per method and per correction
CASES: dict[str, dict[str, Any]] = {
    "grpo": {"method": "grpo"},
    "max_rl": {"method": "max_rl"},
    "rae": {"method": "rae"},
    "opd": {"method": "opd", "teacher": TEACHER},
    "opsd": {"method": "opsd", "privileged": "reference"},
    "grpo_ipo": {"method": "grpo", "async_": True, "correction": "ipo"},
    "grpo_icepop": {"method": "grpo", "async_": True, "correction": "icepop"},
    "grpo_tis": {"method": "grpo", "async_": True, "correction": "tis"},
}


def build(**kw: Any):
    method = kw.pop("method")
    return prime_rl_config(method, **{**BASE, **kw})


def assert_valid(cfg) -> dict[str, Any]:
    """The config passes the spec table, opens with the prime-rl commit its schema follows,
    and survives a TOML round trip unchanged."""
    assert problems(cfg.config) == []
    assert header_problems(cfg.to_toml()) == []
    parsed = roundtrip(cfg.to_toml())
    assert parsed == cfg.config
    return parsed


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str) -> None:
    cfg = build(**CASES[name])
    assert_valid(cfg)
    path = GOLDEN / f"{name}.toml"
    if os.environ.get("WHILECLI_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(cfg.to_toml(), encoding="utf-8")
    assert path.read_text(encoding="utf-8") == cfg.to_toml()
    assert problems(roundtrip(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize("method", METHODS)
def test_every_method_starts_a_policy_server_and_counts_rollouts(method: str) -> None:
    extra = {"teacher": TEACHER} if method == "opd" else {}
    cfg = prime_rl_config(method, env="reverse-text", prompts=12, gpus=4, **extra)
    c = assert_valid(cfg)
    assert "inference" in c and "trainer" in c and "orchestrator" in c
    group = c["orchestrator"]["group_size"]
    assert c["orchestrator"]["batch_size"] == 12 * group
    assert c["deployment"] == {"num_train_gpus": 2, "num_infer_gpus": 2}
    assert c["orchestrator"]["algo"]["type"] == method
    assert cfg.command == "uv run rl @ rl.toml"


@pytest.mark.parametrize(
    ("method", "group", "max_tokens"),
    [("grpo", 8, 4096), ("max_rl", 8, 4096), ("rae", 1, 4096), ("opd", 4, 8192), ("opsd", 1, 4096)],
)
def test_seed_defaults(method: str, group: int, max_tokens: int) -> None:
    extra = {"teacher": TEACHER} if method == "opd" else {}
    c = prime_rl_config(method, **extra).config
    assert c["orchestrator"]["group_size"] == group
    sampling = c["orchestrator"]["train"]["sampling"]
    assert sampling == {"temperature": 1.0, "max_completion_tokens": max_tokens}
    assert c["model"]["name"] == "Qwen/Qwen3-0.6B"
    if method == "rae":
        assert c["orchestrator"]["algo"]["decay"] == 0.95
    if method == "opsd":
        assert c["orchestrator"]["algo"]["demo_key"] == "demonstration"
    assert "loss" not in c["trainer"]
    assert c["orchestrator"]["max_off_policy_steps"] == 1


def test_gpu_split_odd_count() -> None:
    c = prime_rl_config("grpo", gpus=5).config
    assert c["deployment"] == {"num_train_gpus": 3, "num_infer_gpus": 2}


def test_design_card_example_without_env_or_model() -> None:
    cfg = prime_rl_config("opsd", privileged="reference")
    c = assert_valid(cfg)
    assert "source" not in c["orchestrator"]["train"]
    assert c["orchestrator"]["algo"] == {"type": "opsd", "demo_key": "reference"}
    text = " ".join(cfg.warnings)
    assert "--env ID" in text
    assert "Qwen/Qwen3-0.6B" in text
    assert 'field "reference"' in text
    assert "7B" in text  # OPSD under 7B
    assert "thinks" in text  # Qwen3 thinks by default


def test_corrections() -> None:
    ipo = build(method="grpo", async_=True).config  # ipo is the seed's default correction
    assert ipo["trainer"]["loss"] == {"type": "ipo", "ipo_threshold": 0.3}
    assert ipo["orchestrator"]["max_off_policy_steps"] == 8
    ice = build(method="max_rl", async_=True, correction="icepop", off_policy_steps=3).config
    assert ice["trainer"]["loss"]["kwargs"] == {"low": 0.5, "high": 5.0}
    assert ice["orchestrator"]["max_off_policy_steps"] == 3
    tis = build(method="rae", async_=True, correction="tis").config
    assert tis["trainer"]["loss"]["kwargs"] == {"cap": 2.0}


@pytest.mark.parametrize("correction", ["icepop", "tis"])
def test_custom_loss_import_path_resolves_with_its_kwargs(correction: str) -> None:
    loss = build(method="grpo", async_=True, correction=correction).config["trainer"]["loss"]
    assert loss["type"] == "custom"
    module, _, name = loss["import_path"].rpartition(".")
    fn = getattr(importlib.import_module(module), name)
    inspect.signature(fn).bind(object(), **loss["kwargs"])  # kwargs are the function's


def test_ipo_report_says_which_threshold() -> None:
    cfg = build(method="grpo", async_=True, correction="ipo")
    line = next(n.note for n in cfg.reads if n.knob.startswith("correction"))
    assert "0.3" in line and "0.1" in line


@pytest.mark.parametrize("method", ["opd", "opsd"])
@pytest.mark.parametrize("correction", ["ipo", "icepop", "tis"])
def test_correction_on_distillation_refused(method: str, correction: str) -> None:
    extra = {"teacher": TEACHER} if method == "opd" else {}
    with pytest.raises(UsageError, match="ignores \\[trainer.loss\\]"):
        prime_rl_config(method, async_=True, correction=correction, **extra)


def test_async_distillation_reports_correction_ignored() -> None:
    cfg = build(method="opsd", async_=True)
    assert "loss" not in cfg.config["trainer"]
    assert any(n.knob == "correction" for n in cfg.ignored)


@pytest.mark.parametrize("method", ["flash_reinforce", "sao", "bpco", "FlashReinforce"])
def test_single_rollout_family_refused(method: str) -> None:
    with pytest.raises(UsageError) as err:
        prime_rl_config(method)
    msg = str(err.value)
    assert err.value.exit_code == 2
    assert "lacks" in msg and "whilecli update" in msg and "rae" in msg


@pytest.mark.parametrize(
    ("method", "lack"),
    [("flash_reinforce", "batch-mean baseline"), ("sao", "value model"), ("bpco", "clip")],
)
def test_refusal_names_what_prime_rl_lacks(method: str, lack: str) -> None:
    with pytest.raises(UsageError, match=lack):
        prime_rl_config(method)


def test_unknown_method_lists_known() -> None:
    with pytest.raises(UsageError) as err:
        prime_rl_config("ppo")
    assert all(m in str(err.value) for m in METHODS)


@pytest.mark.parametrize(
    "teacher",
    [
        "T@http://127.0.0.1:8000/v1",
        "T@http://localhost:8000",
        "T@http://10.0.0.5:8000/v1",
    ],
)
def test_teacher_on_policy_port_refused(teacher: str) -> None:
    with pytest.raises(UsageError, match="port 8000"):
        prime_rl_config("opd", teacher=teacher)


def test_teacher_port_checked_against_moved_policy_port() -> None:
    ok = prime_rl_config(
        "opd", teacher="T@http://localhost:8000/v1", overrides=["inference.server.port=9000"]
    )
    assert problems(ok.config) == []
    assert ok.config["orchestrator"]["model"]["client"]["base_url"] == "http://localhost:9000/v1"
    with pytest.raises(UsageError, match="port 9000"):
        prime_rl_config(
            "opd", teacher="T@http://h:9000/v1", overrides=["inference.server.port=9000"]
        )


def test_teacher_parsing() -> None:
    c = prime_rl_config("opd", teacher="org/m@https://teacher.example").config
    assert c["orchestrator"]["algo"]["teacher"] == {
        "name": "org/m",
        "base_url": "https://teacher.example/v1",
    }
    for bad in ("no-url", "@http://h:8001", "m@ftp://h:1"):
        with pytest.raises(UsageError, match="NAME@URL"):
            prime_rl_config("opd", teacher=bad)
    with pytest.raises(UsageError, match="needs --teacher"):
        prime_rl_config("opd")
    with pytest.raises(UsageError, match="opd's teacher"):
        prime_rl_config("grpo", teacher=TEACHER)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"gpus": 1}, "at least 2"),
        ({"gpus": 16}, "one node"),
        ({"steps": 0}, "--steps"),
        ({"prompts": 0}, "--prompts"),
        ({"group_size": 0}, "--group-size"),
        ({"lr": 0.0}, "--lr"),
        ({"temperature": 2.5}, "--temperature"),
        ({"max_tokens": 9000, "seq_len": 8192}, "no room"),
        ({"correction": "ipo"}, "--async"),
        ({"off_policy_steps": 2}, "--async"),
        ({"async_": True, "correction": "cispo"}, "--correction"),
        ({"async_": True, "off_policy_steps": -1}, "--off-policy-steps"),
        ({"privileged": "reference"}, "opsd"),
        ({"model": "  "}, "empty"),
    ],
)
def test_knob_refusals(kw: dict[str, Any], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        prime_rl_config("grpo", **kw)


def test_privileged_must_look_like_a_field() -> None:
    assert (
        prime_rl_config("opsd", privileged="info.answer").config["orchestrator"]["algo"]["demo_key"]
        == "info.answer"
    )
    with pytest.raises(UsageError, match="field"):
        prime_rl_config("opsd", privileged="two words")


@pytest.mark.parametrize(
    ("override", "match"),
    [
        ("trainer.optim.eps=0.1", "no key"),
        ("trainer.loss.eps=0.3", "no key"),
        ("orchestrator.max_async_level=2", "no key"),
        ("trainer.loss.ipo_threshold=0.2", "type = 'ipo'"),
        ("orchestrator.algo.decay=0.9", "type = 'rae'"),
        ("orchestrator.group_size=3", "multiple of group_size 3"),
        ("orchestrator.group_size=true", "takes int"),
        ("trainer.max_steps=50", "differ"),
        ("orchestrator.algo.type=sft", "--method"),
        ("orchestrator.train.source.ratio=2", "pass --env"),
        ("nokey", "dotted.key=value"),
        ("a..b=1", "empty part"),
        ("weight_broadcast.type=nccl", "LoRA"),
        ("orchestrator.concurrency.max_inflight=4", "max_inflight"),
    ],
)
def test_override_refusals(override: str, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        prime_rl_config("grpo", overrides=[override])


def test_overrides_parsed_as_toml_and_reported() -> None:
    cfg = prime_rl_config(
        "grpo",
        env="reverse-text",
        overrides=[
            "trainer.optim.lr=3e-6",
            "orchestrator.train.source.ratio=2",
            "model.name=Qwen/Qwen3-4B",
            'run.name="exp 1"',
            "trainer.max_steps=100",
            "inference.vllm.enforce_eager=true",
            "trainer.model.lora={rank = 8, alpha = 16}",
        ],
    )
    c = assert_valid(cfg)
    assert c["trainer"]["optim"]["lr"] == 3e-6
    assert c["orchestrator"]["train"]["source"][0]["ratio"] == 2
    assert c["model"]["name"] == "Qwen/Qwen3-4B"
    assert c["run"]["name"] == "exp 1"
    assert c["inference"]["vllm"]["enforce_eager"] is True
    assert c["trainer"]["model"]["lora"] == {"rank": 8, "alpha": 16}
    assert sum(n.knob.startswith("--set ") for n in cfg.reads) == 7
    assert (
        prime_rl_config("grpo", overrides={"trainer.optim.lr": 2e-6}).config["trainer"]["optim"][
            "lr"
        ]
        == 2e-6
    )


def test_ipo_threshold_override_on_ipo() -> None:
    c = build(method="grpo", async_=True, overrides=["trainer.loss.ipo_threshold=0.1"]).config
    assert c["trainer"]["loss"]["ipo_threshold"] == 0.1


@pytest.mark.parametrize(
    ("model", "renderer"),
    [
        ("Qwen/Qwen3-8B", None),
        ("Qwen/Qwen3.5-9B", None),
        ("meta-llama/Llama-3.2-3B-Instruct", None),
        ("meta-llama/Llama-3.2-3B", "default"),
        ("my-org/qwen3-ft-7b", "default"),
        ("/local/checkpoint", "default"),
    ],
)
def test_renderer_rule(model: str, renderer: str | None) -> None:
    cfg = prime_rl_config("grpo", model=model)
    assert cfg.config["orchestrator"].get("renderer", {}).get("name") == renderer
    assert any("renderer" in w for w in cfg.warnings) == (renderer is not None)
    assert_valid(cfg)


def test_renderer_override_wins() -> None:
    cfg = prime_rl_config("grpo", model="org/x", overrides=["orchestrator.renderer.name=qwen3"])
    assert cfg.config["orchestrator"]["renderer"] == {"name": "qwen3"}
    assert not any("renderer" in w for w in cfg.warnings)


def test_full_fine_tuning_has_no_lora_table() -> None:
    c = prime_rl_config("grpo", lora=False).config
    assert "model" not in c["trainer"]
    assert c["trainer"]["optim"]["lr"] == 1e-6
    assert prime_rl_config("grpo").config["trainer"]["model"]["lora"] == {"rank": 16, "alpha": 32}


@pytest.mark.parametrize(
    ("kw", "needle", "present"),
    [
        ({"method": "grpo", "group_size": 1}, "group_size 1", True),
        ({"method": "max_rl", "group_size": 1}, "group_size 1", True),
        ({"method": "rae"}, "moving average", True),
        ({"method": "grpo"}, "moving average", False),
        ({"method": "opsd", "model": "Qwen/Qwen3-32B"}, "7B or more", False),
        ({"method": "opsd", "model": "org/custom"}, "--size-b", True),
        ({"method": "opsd", "model": "org/custom", "size_b": 3}, "is 3B", True),
        ({"method": "opsd", "model": "meta-llama/Llama-3.1-70B-Instruct"}, "thinks", False),
        ({"method": "opsd", "model": "Qwen/QwQ-32B"}, "thinks", True),
        ({"method": "opd", "teacher": TEACHER}, "one tokenizer", True),
        ({"method": "opd", "teacher": TEACHER}, "does not start the teacher", True),
        ({"method": "grpo", "async_": True, "correction": "tis"}, "install whilecli", True),
        ({"method": "grpo", "env": "owner/my-env@0.1"}, "`my_env`", True),
    ],
)
def test_warnings(kw: dict[str, Any], needle: str, present: bool) -> None:
    cfg = prime_rl_config(kw.pop("method"), **kw)
    assert any(needle in w for w in cfg.warnings) == present, cfg.warnings


@pytest.mark.parametrize("method", METHODS)
def test_knob_report_covers_the_seed(method: str) -> None:
    extra = {"teacher": TEACHER} if method == "opd" else {}
    cfg = prime_rl_config(method, **extra)
    reads = " ".join(f"{n.knob} {n.note}" for n in cfg.reads)
    ignored = " ".join(f"{n.knob} {n.note}" for n in cfg.ignored)
    for where in (
        "orchestrator.group_size",
        "temperature",
        "max_completion_tokens",
        "trainer.optim.lr",
    ):
        assert where in reads
    expected_ignored = {
        "grpo": ["clip", "β"],
        "max_rl": ["clip", "β"],
        "rae": ["clip", "β"],
        "opd": ["top_k", "full vocabulary"],
        "opsd": ["anchor", "live policy"],
    }[method]
    for needle in expected_ignored:
        assert needle in ignored
    assert cfg.refused
    d = cfg.to_dict()
    assert set(d) >= {"config", "toml", "reads", "ignored", "warnings", "command"}
    assert d["reads"][0].keys() == {"knob", "where"}


def test_emitter_does_not_import_torch() -> None:
    code = (
        "import sys; from whilecli.emit.prime_rl import prime_rl_config;"
        "prime_rl_config('grpo', async_=True, correction='icepop').to_toml();"
        "import whilecli.commands.config; assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@st.composite
def knob_sets(draw):
    method = draw(st.sampled_from(METHODS))
    kw: dict[str, Any] = {
        "gpus": draw(st.integers(2, 8)),
        "steps": draw(st.integers(1, 10_000)),
        "prompts": draw(st.none() | st.integers(1, 256)),
        "group_size": draw(st.none() | st.integers(1, 32)),
        "lora": draw(st.booleans()),
        "lr": draw(st.none() | st.floats(1e-8, 1e-3)),
        "temperature": draw(st.none() | st.floats(0.0, 2.0)),
        "model": draw(
            st.none()
            | st.sampled_from(["Qwen/Qwen3-4B", "org/x-7B", "meta-llama/Llama-3.2-1B-Instruct"])
        ),
        "env": draw(st.none() | st.sampled_from(["reverse-text", "owner/math@1.0"])),
    }
    if method == "opd":
        port = draw(st.integers(1, 65535).filter(lambda p: p != 8000))
        kw["teacher"] = f"T@http://127.0.0.1:{port}/v1"
    if method == "opsd":
        kw["privileged"] = draw(st.sampled_from(["reference", "demonstration", "hint", "answer"]))
    if draw(st.booleans()):
        kw["async_"] = True
        kw["off_policy_steps"] = draw(st.none() | st.integers(0, 16))
        if method not in ("opd", "opsd"):
            kw["correction"] = draw(st.none() | st.sampled_from(["ipo", "icepop", "tis"]))
    return method, kw


@settings(max_examples=80, deadline=None)
@given(knob_sets())
def test_any_valid_knobs_give_a_config_the_spec_accepts(case) -> None:
    method, kw = case
    cfg = prime_rl_config(method, **kw)
    c = assert_valid(cfg)
    orch = c["orchestrator"]
    assert orch["batch_size"] % orch["group_size"] == 0
    if kw.get("prompts"):
        assert orch["batch_size"] == kw["prompts"] * orch["group_size"]
    dep = c["deployment"]
    assert dep["num_train_gpus"] + dep["num_infer_gpus"] == kw["gpus"]
    assert dep["num_infer_gpus"] == kw["gpus"] // 2
    assert c["max_steps"] == kw["steps"]
    assert ("source" in orch["train"]) == (kw["env"] is not None)


def _reference_sdk_mistakes() -> list[tuple[str, Any]]:
    """The reference emitter's faults (issue 4), each applied to a valid config."""
    return [
        ("trainer.loss", {"type": "ipo", "eps": 0.3}),
        ("trainer.loss", {"type": "icepop"}),
        ("orchestrator.max_async_level", 2),
        (
            "orchestrator.algo",
            {"type": "opd", "teacher": {"name": "T", "base_url": "http://localhost:8000/v1"}},
        ),
    ]


@pytest.mark.parametrize(("path", "value"), _reference_sdk_mistakes())
def test_both_tables_catch_the_reference_emitters_mistakes(path: str, value: Any) -> None:
    from whilecli.emit.validate import check_config

    c = build(method="grpo").config
    node = c
    *parents, last = path.split(".")
    for p in parents:
        node = node[p]
    node[last] = value
    assert problems(c)
    with pytest.raises(UsageError):
        check_config(c)


def test_spec_table_flags_a_config_without_inference() -> None:
    c = build(method="grpo").config
    del c["inference"]
    assert any("inference" in p for p in problems(c))
    c = build(method="grpo").config
    c["orchestrator"]["batch_size"] = 100
    assert any("divisible" in p for p in problems(c))


@pytest.mark.parametrize(
    ("name", "size", "thinking"),
    [
        ("Qwen/Qwen3-0.6B", 0.6, True),
        ("Qwen/Qwen3-30B-A3B", 30.0, True),
        ("Qwen/Qwen3-4B-Instruct-2507", 4.0, False),
        ("Qwen/Qwen3-4B-Thinking-2507", 4.0, True),
        ("meta-llama/Llama-3.1-8B-Instruct", 8.0, False),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", 7.0, True),
        ("openai/gpt-oss-20b", 20.0, True),
        ("org/model", None, False),
    ],
)
def test_model_name_reading(name: str, size: float | None, thinking: bool) -> None:
    from whilecli.emit.models import is_thinking, size_from_name

    assert size_from_name(name) == size
    assert is_thinking(name) is thinking


_keys = st.text(alphabet="abcxyz_-. 0", min_size=1, max_size=6)
_scalars = st.one_of(
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.text(max_size=8),
    st.lists(st.integers(0, 9), max_size=3),
)
_tables = st.recursive(
    st.dictionaries(_keys, _scalars, max_size=3),
    lambda inner: st.dictionaries(
        _keys, st.one_of(_scalars, inner, st.lists(inner, min_size=1, max_size=2)), max_size=3
    ),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(_tables)
def test_toml_layout_round_trips(doc: dict[str, Any]) -> None:
    """Headers for tables and arrays of tables, quoted keys: tomllib reads back the same dict."""
    from whilecli.emit.tomlout import dumps

    assert roundtrip(dumps(doc)) == doc


def _variant_switches() -> list[tuple[str, str]]:
    """Every ``TABLE.type=V`` the schema declares a variant V of, for a table whilecli
    writes keys of another variant in."""
    from whilecli.emit import schema

    out: set[tuple[str, str]] = set()
    for pattern, key in schema.KEYS.items():
        if "[]" in pattern or "*" in pattern or pattern.count(".") < 1:
            continue
        table = pattern.rsplit(".", 1)[0]
        out.update((table, v) for v in key.variants)
    return sorted(out)


@pytest.mark.parametrize(("table", "variant"), _variant_switches())
def test_a_set_variant_takes_whilecli_own_keys_of_the_old_one_away(
    table: str, variant: str
) -> None:
    """``--set deployment.type=multi_node`` was refused for ``deployment.num_train_gpus``, a
    key whilecli wrote, not the user: the written keys of the old variant leave with it, so
    the config either passes prime-rl's schema facts or is refused for a reason that names
    nothing whilecli wrote on its own."""
    from whilecli.emit import schema

    written = prime_rl_config("grpo", env="reverse-text").config
    if not isinstance(schema.get(written, table), dict):
        return
    try:
        cfg = prime_rl_config("grpo", env="reverse-text", overrides=[f'{table}.type="{variant}"'])
    except UsageError as err:
        assert "exists only with" not in str(err), err
        return
    assert schema.get(cfg.config, f"{table}.type") == variant
    assert problems(cfg.config) == []


def test_a_key_the_user_sets_for_the_old_variant_is_still_refused() -> None:
    with pytest.raises(UsageError, match="num_train_gpus' exists only with"):
        prime_rl_config(
            "grpo",
            overrides=['deployment.type="multi_node"', "deployment.num_train_gpus=2"],
        )


@pytest.mark.parametrize("depth", [101, 500, 2000, 20000])
@pytest.mark.parametrize(
    ("opener", "closer"), [("[", "]"), ("{a=", "}"), ("[{a=", "}]"), ("{a=[", "]}")]
)
@pytest.mark.parametrize("key", ["orchestrator.train.sampling.temperature", "x"])
def test_set_value_nested_too_deeply_is_one_usage_error(
    depth: int, opener: str, closer: str, key: str
) -> None:
    value = opener * depth + "1" + closer * depth
    with pytest.raises(UsageError, match=f"--set {key}: the value is nested too deeply"):
        prime_rl_config("grpo", overrides=[f"{key}={value}"])


#: Characters no URL, taskset id or field name holds: every C0 control, DEL, C1 controls, the
#: blanks (NBSP, the Unicode spaces, line and paragraph separators).
_NOT_IN_A_TOKEN = st.sampled_from(
    [chr(c) for c in (*range(0x20), 0x20, 0x7F, 0x85, 0xA0, 0x2028, 0x2029, 0x3000, 0x200B)]
)


@settings(max_examples=60, deadline=None)
@given(bad=_NOT_IN_A_TOKEN, where=st.integers(min_value=8, max_value=30))
def test_teacher_url_with_a_blank_or_control_character_is_refused(bad: str, where: int) -> None:
    url = "http://teacher.example:8001/v1"
    where = min(where, len(url) - 1)
    cut = url[:where] + bad + url[where:]
    with pytest.raises(UsageError, match="--teacher takes a URL"):
        prime_rl_config("opd", teacher=f"org/m@{cut}")


@settings(max_examples=40, deadline=None)
@given(bad=_NOT_IN_A_TOKEN, where=st.integers(min_value=0, max_value=11))
def test_text_options_with_a_blank_or_control_character_are_refused(bad: str, where: int) -> None:
    if bad.strip() == "" and where in (0, 11):
        where = 5  # --env takes surrounding blanks as a blank id: interior ones are the class
    env = "reverse-text"
    field = "info.answer"
    with pytest.raises(UsageError, match="--env"):
        prime_rl_config("grpo", env=env[:where] + bad + env[where:])
    with pytest.raises(UsageError, match="--privileged"):
        prime_rl_config("opsd", privileged=field[:where] + bad + field[where:])
    if where and where < len(field):
        with pytest.raises(UsageError, match="--privileged"):
            prime_rl_config("opsd", privileged=field + bad)
