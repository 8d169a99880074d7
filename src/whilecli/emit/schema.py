"""The prime-rl config keys whilecli may write (RL and SFT), with their types, and the checks.

Every key is one that ``spec/prime-rl.md`` documents for prime-rl ``559b447`` (configs
v0.4.0): :data:`KEYS` for ``RLConfig`` (§2-§7), :data:`SFT_KEYS` for ``SFTConfig`` (§11). prime-rl forbids unknown keys (except under ``[inference.vllm]``, passed to vLLM),
so a key outside this table is refused before it reaches a file. Keys of a discriminated
table (``type = ...``) are valid only for the variants listed.

Paths are dotted; ``[]`` marks an element of an array of tables; ``*`` under a path accepts
any key below it (vLLM arguments, env vars, a taskset's own knobs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from whilecli.errors import UsageError

#: The prime-rl commit whose config schema this table follows (``spec/prime-rl.md``).
PRIME_RL_COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"
PRIME_RL_CONFIGS = "0.4.0"
#: The first line of every emitted TOML: the schema it was checked against.
HEADER = (
    f"# schema: prime-rl {PRIME_RL_COMMIT} (prime-rl-configs v{PRIME_RL_CONFIGS})\n"
    "# written by `whilecli config`; every key was checked against that schema"
)


def header(routed: list[str]) -> str:
    """:data:`HEADER`, then what the route said when the config was routed from rows (one
    comment paragraph each: the verdict with its qualifiers, what reading found)."""
    from whilecli.emit.tomlout import comments

    said = comments(routed)
    return f"{HEADER}\n{said}" if said else HEADER


#: The type names a key may hold. ``float`` accepts integers; ``none`` is the string "None",
#: which prime-rl's loader turns into null (TOML has no null).
TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "bool": (bool,),
    "table": (dict,),
    "list": (list,),
    "aot": (list,),
}


@dataclass(frozen=True)
class Range:
    """The interval a numeric key's value must lie in, as prime-rl's field declares it
    (pydantic ``ge``/``gt``/``le``/``lt``): ``low ≤ x`` (``low < x`` when ``low_open``) and
    ``x ≤ high`` (``x < high`` when ``high_open``); None leaves that side unbounded."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def contains(self, x: float) -> bool:
        """Whether ``x`` lies in the interval (NaN never does)."""
        if self.low is not None and not (x > self.low if self.low_open else x >= self.low):
            return False
        if self.high is not None and not (x < self.high if self.high_open else x <= self.high):
            return False
        return x == x

    def text(self) -> str:
        """``>= 1``, ``> 0`` or ``in [0, 1)``, as an error message says it."""
        if self.high is None:
            return f"{'>' if self.low_open else '>='} {self.low:g}"
        if self.low is None:
            return f"{'<' if self.high_open else '<='} {self.high:g}"
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"in {left}{self.low:g}, {self.high:g}{right}"


#: The ranges ``spec/prime-rl.md`` states for the keys whilecli may write, and those of the
#: keys ``whilecli config``'s options write (``--steps``, ``--seq-len``, ``--max-tokens``,
#: ``--lr``): an option and its ``--set`` key are checked against the one range declared here.
AT_LEAST_0, AT_LEAST_1, ABOVE_0 = Range(0), Range(1), Range(0, low_open=True)
TEMPERATURE = Range(0, 2)
#: A learning rate (``--lr``, ``trainer.optim.lr``): 0 trains nothing, and 1 or more is not one.
LEARNING_RATE = Range(0, 1, low_open=True, high_open=True)


@dataclass(frozen=True)
class Key:
    """One documented key: the types it accepts and, in a discriminated table, its variants;
    a numeric key's :class:`Range` where prime-rl declares one."""

    types: tuple[str, ...]
    variants: tuple[str, ...] = ()  # valid only when the sibling ``type`` is one of these
    choices: tuple[Any, ...] = ()
    nullable: bool = False
    range: Range | None = None
    #: The key must be present in its table (in a discriminated table: when the table is one
    #: of ``variants``), as prime-rl requires it (a custom loss's ``import_path``).
    required: bool = False
    #: The key names a model: checked as every model-name option is
    #: (:func:`whilecli.io.modelid.check_model_option`).
    model: bool = False


#: Default ``type`` of each discriminated table (used when the table does not name one).
DISCRIMINATOR_DEFAULTS: dict[str, str] = {
    "trainer.optim": "adamw",
    "trainer.scheduler": "constant",
    "trainer.loss": "default",
    "orchestrator.algo": "grpo",
    "orchestrator.train.source[].algo": "grpo",
    "deployment": "single_node",
    "weight_broadcast": "auto",
    "rollout_transport": "zmq",
}

ALGOS = ("grpo", "max_rl", "rae", "hierarchical_grpo", "opd", "opsd", "sft", "echo")

_I, _F, _S, _B, _T = ("int",), ("float",), ("str",), ("bool",), ("table",)


def _algo_keys(prefix: str) -> dict[str, Key]:
    keys = {
        prefix: Key(_T),
        f"{prefix}.type": Key(_S, choices=ALGOS),
        f"{prefix}.sampling": Key(_T),
        f"{prefix}.sampling.source": Key(("str", "table")),
        f"{prefix}.sampling.source.name": Key(_S),
        f"{prefix}.sampling.source.base_url": Key(_S),
        f"{prefix}.length_penalty": Key(_T, variants=("grpo", "echo"), nullable=True),
        f"{prefix}.length_penalty.type": Key(_S, choices=("linear",)),
        f"{prefix}.length_penalty.num_output_tokens_weight": Key(_F),
        f"{prefix}.length_penalty.num_input_tokens_weight": Key(_F),
        f"{prefix}.length_penalty.num_turns_weight": Key(_F),
        f"{prefix}.decay": Key(_F, variants=("rae",)),
        f"{prefix}.episode_agents": Key(("list",), variants=("hierarchical_grpo",), required=True),
        f"{prefix}.teacher": Key(_T, variants=("opd",), required=True),
        f"{prefix}.teacher.name": Key(_S, required=True, model=True),
        f"{prefix}.teacher.base_url": Key(_S, required=True),
        f"{prefix}.teacher.api_key_var": Key(_S),
        f"{prefix}.teacher.headers": Key(_T),
        f"{prefix}.teacher.headers.*": Key(_S),
        f"{prefix}.demo_key": Key(_S, variants=("opsd",)),
        f"{prefix}.template": Key(_S, variants=("opsd",)),
        f"{prefix}.renderer": Key(_S, variants=("opsd",)),
        f"{prefix}.roles": Key(("list",), variants=("echo",)),
        f"{prefix}.filter": Key(_T, variants=("echo",)),
        f"{prefix}.filter.import_path": Key(_S),
        f"{prefix}.filter.kwargs": Key(_T),
        f"{prefix}.filter.kwargs.*": Key(()),
    }
    return keys


def _sampling(prefix: str, *, eval_: bool) -> dict[str, Key]:
    keys = {
        prefix: Key(_T),
        f"{prefix}.temperature": Key(_F, nullable=eval_, range=None if eval_ else TEMPERATURE),
        f"{prefix}.max_completion_tokens": Key(_I, nullable=True, range=ABOVE_0),
    }
    if eval_:
        for k in ("top_p", "min_p"):
            keys[f"{prefix}.{k}"] = Key(_F, nullable=True)
        keys[f"{prefix}.top_k"] = Key(_I, nullable=True)
        keys[f"{prefix}.reasoning_effort"] = Key(_S, nullable=True)
    else:
        keys[f"{prefix}.extra_body"] = Key(_T)
        keys[f"{prefix}.extra_body.*"] = Key(())
    return keys


def _env(prefix: str) -> dict[str, Key]:
    return {
        f"{prefix}.env": Key(_T),
        f"{prefix}.env.taskset": Key(_T),
        f"{prefix}.env.taskset.id": Key(_S),
        f"{prefix}.env.taskset.*": Key(()),
        f"{prefix}.env.*": Key(()),
        f"{prefix}.serve": Key(_T),
        f"{prefix}.serve.address": Key(_S),
    }


def _build() -> dict[str, Key]:
    k: dict[str, Key] = {
        # top level (spec §2)
        "trainer": Key(_T),
        "orchestrator": Key(_T),
        "inference": Key(_T),
        "max_steps": Key(_I, nullable=True, range=ABOVE_0),
        "seq_len": Key(_I, nullable=True, range=ABOVE_0),
        "model": Key(_T),
        "model.name": Key(_S, model=True),
        "model.vlm": Key(("bool", "table")),
        "tokenizer": Key(_T),
        "tokenizer.name": Key(_S, model=True),
        "tokenizer.trust_remote_code": Key(_B),
        "tokenizer.chat_template": Key(_S),
        "ckpt": Key(_T),
        "ckpt.interval": Key(_I),
        "ckpt.keep_last": Key(_I),
        "ckpt.keep_interval": Key(_I),
        "ckpt.output_dir": Key(_S),
        "resume": Key(_T),
        "resume.step": Key(_I),
        "resume.dir": Key(_S),
        "monitors": Key(_T),
        "monitors.wandb": Key(_T),
        "monitors.wandb.offline": Key(_B, choices=(False,)),
        "monitors.file": Key(_T),
        "monitors.prime": Key(_T),
        "log": Key(_T),
        "log.level": Key(_S, nullable=True),
        "log.json_logging": Key(_B),
        "run": Key(_T),
        "run.name": Key(_S),
        "clean": Key(_B),
        "dry_run": Key(_B),
        "env_vars": Key(_T),
        "env_vars.*": Key(_S),
        "weight_broadcast": Key(_T),
        "weight_broadcast.type": Key(_S, choices=("filesystem", "nccl", "nixl")),
        "rollout_transport": Key(_T),
        "rollout_transport.type": Key(_S, choices=("zmq", "filesystem")),
        "deployment": Key(_T),
        "deployment.type": Key(_S, choices=("single_node", "multi_node")),
        "deployment.num_train_gpus": Key(_I, variants=("single_node",)),
        "deployment.num_infer_gpus": Key(_I, variants=("single_node",)),
        "deployment.gpus_per_node": Key(_I),
        "deployment.num_train_nodes": Key(_I, variants=("multi_node",)),
        "slurm": Key(_T),
        "slurm.*": Key(()),
        # trainer (spec §3)
        "trainer.max_steps": Key(_I, nullable=True, range=ABOVE_0),
        "trainer.optim": Key(_T),
        "trainer.optim.type": Key(_S, choices=("adamw", "sgd", "muon", "sign_sgd")),
        "trainer.optim.lr": Key(_F, range=LEARNING_RATE),
        "trainer.optim.weight_decay": Key(_F),
        "trainer.optim.max_norm": Key(_F, nullable=True),
        "trainer.optim.betas1": Key(_F, variants=("adamw", "muon")),
        "trainer.optim.betas2": Key(_F, variants=("adamw", "muon")),
        "trainer.optim.momentum": Key(_F, variants=("sgd",)),
        "trainer.optim.nesterov": Key(_B, variants=("sgd",)),
        "trainer.optim.mu": Key(_F, variants=("muon",)),
        "trainer.scheduler": Key(_T),
        "trainer.scheduler.type": Key(_S, choices=("constant", "linear", "cosine")),
        "trainer.scheduler.warmup_steps": Key(_I, variants=("linear", "cosine")),
        "trainer.scheduler.decay_steps": Key(_I, variants=("linear",)),
        "trainer.scheduler.min_lr": Key(_F, variants=("linear", "cosine")),
        "trainer.loss": Key(_T),
        "trainer.loss.type": Key(_S, choices=("default", "ipo", "custom")),
        "trainer.loss.dppo_mask_low": Key(_F, variants=("default",)),
        "trainer.loss.dppo_mask_high": Key(_F, variants=("default",)),
        "trainer.loss.adv_tau": Key(_F, variants=("default", "ipo")),
        "trainer.loss.kl_tau": Key(_F, variants=("default", "ipo")),
        "trainer.loss.ipo_threshold": Key(_F, variants=("ipo",), range=AT_LEAST_0),
        "trainer.loss.import_path": Key(_S, variants=("custom",), required=True),
        "trainer.loss.kwargs": Key(_T, variants=("custom",)),
        "trainer.loss.kwargs.*": Key(()),
        "trainer.model": Key(_T),
        "trainer.model.seq_len": Key(_I, range=ABOVE_0),
        "trainer.model.impl": Key(_S),
        "trainer.model.attn": Key(_S),
        "trainer.model.optim_cpu_offload": Key(_B),
        "trainer.model.ac": Key(("bool", "table")),
        "trainer.model.compile": Key(("bool", "table")),
        "trainer.model.cp": Key(_I),
        "trainer.model.ep": Key(("int", "str")),
        "trainer.model.lora": Key(_T),
        "trainer.model.lora.rank": Key(_I, range=AT_LEAST_1),
        "trainer.model.lora.alpha": Key(_F),
        "trainer.model.lora.dropout": Key(_F),
        "trainer.model.lora.target_modules": Key(("list",)),
        "trainer.model.lora.modules_to_save": Key(("list",)),
        # orchestrator (spec §4)
        "orchestrator.batch_size": Key(_I, range=AT_LEAST_1),
        "orchestrator.token_batch_size": Key(_I),
        "orchestrator.group_size": Key(_I, range=AT_LEAST_1),
        "orchestrator.max_off_policy_steps": Key(_I, range=AT_LEAST_0),
        "orchestrator.seq_len": Key(_I, range=ABOVE_0),
        "orchestrator.max_steps": Key(_I, nullable=True, range=ABOVE_0),
        "orchestrator.tasks_per_minute": Key(_F, nullable=True),
        "orchestrator.env_server_base_port": Key(_I),
        "orchestrator.num_train_workers": Key(_I),
        "orchestrator.concurrency": Key(_T),
        "orchestrator.concurrency.max_inflight": Key(_I),
        "orchestrator.concurrency.min_inflight": Key(_I),
        "orchestrator.concurrency.initial_inflight": Key(_I),
        "orchestrator.model": Key(_T),
        "orchestrator.model.name": Key(_S, model=True),
        "orchestrator.model.client": Key(_T),
        "orchestrator.model.client.base_url": Key(_S),
        "orchestrator.model.client.api_key_var": Key(_S),
        "orchestrator.model.client.headers": Key(_T),
        "orchestrator.model.client.headers.*": Key(_S),
        "orchestrator.model.client.wait_for_ready_timeout": Key(_I),
        "orchestrator.renderer": Key(_T),
        "orchestrator.renderer.name": Key(_S),
        "orchestrator.renderer.tool_parser": Key(_S),
        "orchestrator.renderer.reasoning_parser": Key(_S),
        "orchestrator.train": Key(_T),
        "orchestrator.train.filter_zero_advantages": Key(_B),
        "orchestrator.train.source": Key(("aot",)),
        "orchestrator.train.source[].name": Key(_S),
        "orchestrator.train.source[].ratio": Key(_F, range=ABOVE_0),
        "orchestrator.train.source[].group_size": Key(_I, range=AT_LEAST_1),
        "orchestrator.train.source[].curriculum": Key(_T),
        "orchestrator.train.source[].curriculum.*": Key(()),
        "orchestrator.eval": Key(_T),
        "orchestrator.eval.interval": Key(_I),
        "orchestrator.eval.num_examples": Key(_I),
        "orchestrator.eval.group_size": Key(_I),
        "orchestrator.eval.skip_first_step": Key(_B),
        "orchestrator.eval.source": Key(("aot",)),
        "orchestrator.eval.source[].name": Key(_S),
        "orchestrator.eval.source[].num_examples": Key(_I),
        "orchestrator.eval.source[].group_size": Key(_I),
        "orchestrator.eval.source[].interval": Key(_I),
        # inference (spec §7)
        "inference.server": Key(_T),
        "inference.server.port": Key(_I),
        "inference.server.backend_port": Key(_I),
        "inference.server.router": Key(_S),
        "inference.vllm": Key(_T),
        "inference.vllm.*": Key(()),
    }
    k.update(_algo_keys("orchestrator.algo"))
    k.update(_algo_keys("orchestrator.train.source[].algo"))
    k.update(_sampling("orchestrator.train.sampling", eval_=False))
    k.update(_sampling("orchestrator.train.source[].sampling", eval_=False))
    k.update(_sampling("orchestrator.eval.sampling", eval_=True))
    k.update(_sampling("orchestrator.eval.source[].sampling", eval_=True))
    k.update(_env("orchestrator.train.source[]"))
    k.update(_env("orchestrator.eval.source[]"))
    return k


KEYS: dict[str, Key] = _build()

#: ``[data]`` of an SFT config is discriminated on ``type`` (spec §11).
SFT_DISCRIMINATOR_DEFAULTS: dict[str, str] = {
    "optim": "adamw",
    "scheduler": "constant",
    "data": "sft",
    "deployment": "single_node",
    "weight_broadcast": "auto",
}
_SFT_SHARED: tuple[str, ...] = (
    "max_steps",
    "model",
    "model.name",
    "tokenizer",
    "ckpt",
    "resume",
    "monitors",
)
_SFT_SHARED += ("log", "run", "clean", "weight_broadcast", "deployment")


def _build_sft() -> dict[str, Key]:
    """``SFTConfig``'s keys (spec §11): the shared top-level tables of the RL config, the
    optimizer and scheduler at the top (``[optim]``, not ``[trainer.optim]``) and ``[data]``."""
    k: dict[str, Key] = {}
    for name, key in KEYS.items():
        top = name.split(".", 1)[0]
        if name in _SFT_SHARED or (top in _SFT_SHARED and top != "model"):
            k[name] = key
        elif top == "trainer" and name.split(".")[1:2] in (["optim"], ["scheduler"]):
            k[name.removeprefix("trainer.")] = key
    k.update(
        {
            "output_dir": Key(_S),
            "renderer": Key(_T),
            "renderer.name": Key(_S),
            "renderer.tool_parser": Key(_S),
            "renderer.reasoning_parser": Key(_S),
            "val": Key(_T),
            "val.*": Key(()),
            "eval": Key(_T),
            "eval.*": Key(()),
            "inference": Key(_T),
            "inference.*": Key(()),
            "data": Key(_T),
            "data.type": Key(_S, choices=("sft", "fake")),
            "data.name": Key(_S, variants=("sft",)),
            "data.subsets": Key(("list",), variants=("sft",), nullable=True),
            "data.splits": Key(("list",), variants=("sft",), nullable=True),
            "data.probabilities": Key(("list",), variants=("sft",), nullable=True),
            "data.stopping_strategy": Key(_S, variants=("sft",)),
            "data.shuffle": Key(_B, variants=("sft",)),
            "data.seed": Key(_I, variants=("sft",)),
            "data.loss_mask": Key(_T, variants=("sft",)),
            "data.batch_size": Key(_I, range=AT_LEAST_1),
            "data.seq_len": Key(_I),
            "data.micro_batch_size": Key(_I),
            "data.num_workers": Key(_I),
        }
    )
    for role in ("system", "user", "assistant", "tool"):
        k[f"data.loss_mask.{role}"] = Key(_B)
    return k


SFT_KEYS: dict[str, Key] = _build_sft()

#: prime-rl's policy server port (``inference.server.port``) and client URL defaults.
POLICY_PORT = 8000
POLICY_BASE_URL = "http://localhost:8000/v1"
GPUS_PER_NODE = 8


def _pattern(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def _wildcard(pattern: str, keys: Mapping[str, Key]) -> Key | None:
    """The ``*`` entry that covers ``pattern``, if any ancestor declares one."""
    parts = pattern.split(".")
    for i in range(len(parts) - 1, 0, -1):
        key = keys.get(".".join(parts[:i]) + ".*")
        if key is not None:
            return key
    return None


def lookup(pattern: str, keys: Mapping[str, Key] | None = None) -> Key | None:
    """The schema entry for a dotted key pattern (``[]`` for array elements), or None."""
    table = KEYS if keys is None else keys
    return table.get(pattern) or _wildcard(pattern, table)


def _type_ok(key: Key, value: Any) -> bool:
    if not key.types:
        return True
    if key.nullable and value == "None":
        return True
    if isinstance(value, bool):
        return "bool" in key.types
    return any(isinstance(value, TYPES[t]) for t in key.types)


def check_value(
    pattern: str,
    display: str,
    value: Any,
    *,
    variant: str | None,
    keys: Mapping[str, Key] | None = None,
) -> Key:
    """Check one key's value against the table; return its entry or raise :class:`UsageError`."""
    key = lookup(pattern, keys)
    if key is None:
        raise UsageError(f"prime-rl has no key '{display}' (unknown keys are errors in prime-rl)")
    if key.variants and variant is not None and variant not in key.variants:
        kinds = " or ".join(f"type = {v!r}" for v in key.variants)
        where = display.rsplit(".", 1)[0]
        raise UsageError(f"'{display}' exists only with {kinds} in [{where}], not {variant!r}")
    if not _type_ok(key, value):
        raise UsageError(
            f"'{display}' takes {' or '.join(key.types)}, got {type(value).__name__} {value!r}"
        )
    if key.choices and value not in key.choices:
        raise UsageError(f"'{display}' must be one of {list(key.choices)}, got {value!r}")
    if key.model and isinstance(value, str):
        from whilecli.io.modelid import check_model_option

        check_model_option(value, f"'{display}'")
    if key.range is not None and _numeric(value) and not key.range.contains(value):
        if not math.isfinite(value):  # as :func:`whilecli.emit.validate.check_config` says it
            raise UsageError(f"{display} must be a finite number, got {value}")
        raise UsageError(f"{display} must be {key.range.text()}, got {value!r}")
    return key


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_keys(config: Mapping[str, Any]) -> None:
    """Refuse any key, type or variant the RL table does not allow, anywhere in ``config``."""
    _walk(config, "", "", KEYS, DISCRIMINATOR_DEFAULTS)


def check_sft_keys(config: Mapping[str, Any]) -> None:
    """Refuse any key, type or variant ``SFTConfig`` (spec §11) does not allow."""
    _walk(config, "", "", SFT_KEYS, SFT_DISCRIMINATOR_DEFAULTS)


def _walk(
    node: Mapping[str, Any],
    pattern: str,
    display: str,
    keys: Mapping[str, Key],
    defaults: Mapping[str, str],
) -> None:
    variant = node.get("type", defaults.get(pattern)) if pattern else None
    for name, value in node.items():
        p, d = _pattern(pattern, name), _pattern(display, name)
        kind = variant if isinstance(variant, str) else None
        key = check_value(p, d, value, variant=kind, keys=keys)
        if keys.get(p) is None:
            continue  # under a wildcard: passed through as given
        if "aot" in key.types:
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    raise UsageError(f"'{d}' is an array of tables; item {i} is not a table")
                _walk(item, f"{p}[]", f"{d}[{i}]", keys, defaults)
        elif isinstance(value, dict):
            _walk(value, p, d, keys, defaults)
    _check_required(node, pattern, display, variant, keys)


def _check_required(
    node: Mapping[str, Any],
    pattern: str,
    display: str,
    variant: Any,
    keys: Mapping[str, Key],
) -> None:
    """Refuse a table without a key prime-rl requires of it (of its variant, in a
    discriminated table): ``[trainer.loss] type = "custom"`` without ``import_path``."""
    if not pattern:
        return
    prefix = pattern + "."
    for name, key in keys.items():
        if not key.required or not name.startswith(prefix) or "." in name[len(prefix) :]:
            continue
        if key.variants and variant not in key.variants:
            continue
        child = name[len(prefix) :]
        if child not in node:
            kind = f" type = {variant!r}" if key.variants else ""
            raise UsageError(
                f"[{display}]{kind} needs {child} (prime-rl requires it; set {display}.{child})"
            )


def get(config: Mapping[str, Any], dotted: str, default: Any = None) -> Any:
    """Read a dotted path from a nested mapping."""
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return node


def url_port(url: str) -> int | None:
    """The TCP port of ``url`` (the scheme's default when none is written), or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # an unclosed IPv6 bracket, a port out of range
        return None
    if port is not None:
        return port
    return {"http": 80, "https": 443}.get(parts.scheme)
