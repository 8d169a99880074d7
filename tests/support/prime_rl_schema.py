"""Independent tables of prime-rl's RL and SFT config keys, transcribed from ``spec/prime-rl.md``
(§2-§7 for ``RLConfig``, §11 for ``SFTConfig``), and the header every emitted TOML opens with.

It is kept apart from :mod:`whilecli.emit.schema` on purpose: every config the emitter writes is
checked against this table, so a key the library table lets through by mistake is still caught.
Each entry is ``dotted.path: type`` (``[]`` = an element of an array of tables; a trailing
``.*`` = anything below is passed through: vLLM arguments, env vars, a taskset's knobs).
Variant-only keys carry the ``type`` values of their table that allow them.
"""

from __future__ import annotations

import tomllib
from typing import Any
from urllib.parse import urlsplit

T, I, F, S, B, L, AOT, ANY = "table", "int", "float", "str", "bool", "list", "aot", "any"  # noqa: E741

# §2 top level
SPEC: dict[str, str] = {
    "trainer": T,
    "orchestrator": T,
    "inference": T,
    "max_steps": I,
    "seq_len": I,
    "model": T,
    "model.name": S,
    "model.vlm": ANY,
    "tokenizer": T,
    "tokenizer.name": S,
    "tokenizer.trust_remote_code": B,
    "tokenizer.chat_template": S,
    "ckpt": T,
    "ckpt.interval": I,
    "ckpt.keep_last": I,
    "ckpt.keep_interval": I,
    "ckpt.output_dir": S,
    "resume": T,
    "resume.step": I,
    "resume.dir": S,
    "monitors": T,
    "monitors.wandb": T,
    "monitors.wandb.offline": B,
    "monitors.file": T,
    "monitors.prime": T,
    "log": T,
    "log.level": S,
    "log.json_logging": B,
    "run": T,
    "run.name": S,
    "clean": B,
    "dry_run": B,
    "env_vars": T,
    "env_vars.*": S,
    "weight_broadcast": T,
    "weight_broadcast.type": S,
    "rollout_transport": T,
    "rollout_transport.type": S,
    "deployment": T,
    "deployment.type": S,
    "deployment.num_train_gpus": I,
    "deployment.num_infer_gpus": I,
    "deployment.gpus_per_node": I,
    "deployment.num_train_nodes": I,
    "slurm": T,
    "slurm.*": ANY,
}
# §3 trainer
SPEC |= {
    "trainer.max_steps": I,
    "trainer.optim": T,
    "trainer.optim.type": S,
    "trainer.optim.lr": F,
    "trainer.optim.weight_decay": F,
    "trainer.optim.max_norm": F,
    "trainer.optim.betas1": F,
    "trainer.optim.betas2": F,
    "trainer.optim.momentum": F,
    "trainer.optim.nesterov": B,
    "trainer.optim.mu": F,
    "trainer.scheduler": T,
    "trainer.scheduler.type": S,
    "trainer.scheduler.warmup_steps": I,
    "trainer.scheduler.decay_steps": I,
    "trainer.scheduler.min_lr": F,
    "trainer.loss": T,
    "trainer.loss.type": S,
    "trainer.loss.dppo_mask_low": F,
    "trainer.loss.dppo_mask_high": F,
    "trainer.loss.adv_tau": F,
    "trainer.loss.kl_tau": F,
    "trainer.loss.ipo_threshold": F,
    "trainer.loss.import_path": S,
    "trainer.loss.kwargs": T,
    "trainer.loss.kwargs.*": ANY,
    "trainer.model": T,
    "trainer.model.seq_len": I,
    "trainer.model.lora": T,
    "trainer.model.lora.rank": I,
    "trainer.model.lora.alpha": F,
    "trainer.model.lora.dropout": F,
    "trainer.model.lora.target_modules": L,
    "trainer.model.lora.modules_to_save": L,
}
# §4 orchestrator, §5 algo, §6 sources
SPEC |= {
    "orchestrator.batch_size": I,
    "orchestrator.token_batch_size": I,
    "orchestrator.group_size": I,
    "orchestrator.max_off_policy_steps": I,
    "orchestrator.seq_len": I,
    "orchestrator.max_steps": I,
    "orchestrator.concurrency": T,
    "orchestrator.concurrency.max_inflight": I,
    "orchestrator.model": T,
    "orchestrator.model.name": S,
    "orchestrator.model.client": T,
    "orchestrator.model.client.base_url": S,
    "orchestrator.renderer": T,
    "orchestrator.renderer.name": S,
    "orchestrator.renderer.tool_parser": S,
    "orchestrator.renderer.reasoning_parser": S,
    "orchestrator.train": T,
    "orchestrator.train.sampling": T,
    "orchestrator.train.sampling.temperature": F,
    "orchestrator.train.sampling.max_completion_tokens": I,
    "orchestrator.train.filter_zero_advantages": B,
    "orchestrator.train.source": AOT,
    "orchestrator.train.source[].name": S,
    "orchestrator.train.source[].ratio": F,
    "orchestrator.train.source[].group_size": I,
    "orchestrator.train.source[].env": T,
    "orchestrator.train.source[].env.taskset": T,
    "orchestrator.train.source[].env.taskset.id": S,
    "orchestrator.train.source[].env.taskset.*": ANY,
    "orchestrator.train.source[].env.agent": T,
    "orchestrator.train.source[].env.agent.harness": T,
    "orchestrator.train.source[].env.agent.harness.id": S,
    "orchestrator.train.source[].env.agent.runtime": T,
    "orchestrator.train.source[].env.agent.runtime.type": S,
    "orchestrator.algo": T,
    "orchestrator.algo.type": S,
    "orchestrator.algo.decay": F,
    "orchestrator.algo.teacher": T,
    "orchestrator.algo.teacher.name": S,
    "orchestrator.algo.teacher.base_url": S,
    "orchestrator.algo.demo_key": S,
    "orchestrator.algo.template": S,
    "inference.server": T,
    "inference.server.port": I,
    "inference.server.backend_port": I,
    "inference.vllm": T,
    "inference.vllm.*": ANY,
}

#: keys allowed only for some values of their table's ``type`` (and that table's default type)
VARIANTS: dict[str, tuple[str, set[str]]] = {
    "trainer.loss.dppo_mask_low": ("default", {"default"}),
    "trainer.loss.dppo_mask_high": ("default", {"default"}),
    "trainer.loss.adv_tau": ("default", {"default", "ipo"}),
    "trainer.loss.kl_tau": ("default", {"default", "ipo"}),
    "trainer.loss.ipo_threshold": ("default", {"ipo"}),
    "trainer.loss.import_path": ("default", {"custom"}),
    "trainer.loss.kwargs": ("default", {"custom"}),
    "orchestrator.algo.decay": ("grpo", {"rae"}),
    "orchestrator.algo.teacher": ("grpo", {"opd"}),
    "orchestrator.algo.demo_key": ("grpo", {"opsd"}),
    "orchestrator.algo.template": ("grpo", {"opsd"}),
}
LOSS_TYPES = {"default", "ipo", "custom"}
ALGO_TYPES = {"grpo", "max_rl", "rae", "hierarchical_grpo", "opd", "opsd", "sft", "echo"}
PY = {
    T: (dict,),
    I: (int,),
    F: (int, float),
    S: (str,),
    B: (bool,),
    L: (list,),
    AOT: (list,),
}


def _entry(pattern: str, spec: dict[str, str]) -> str | None:
    if pattern in spec:
        return spec[pattern]
    parts = pattern.split(".")
    for i in range(len(parts) - 1, 0, -1):
        star = ".".join(parts[:i]) + ".*"
        if star in spec:
            return "wild"
    return None


def _walk(
    node: dict[str, Any],
    pattern: str,
    shown: str,
    problems: list[str],
    spec: dict[str, str] = SPEC,
    variants: dict[str, tuple[str, set[str]]] = VARIANTS,
) -> None:
    for key, value in node.items():
        p = f"{pattern}.{key}" if pattern else key
        d = f"{shown}.{key}" if shown else key
        kind = _entry(p, spec)
        if kind is None:
            problems.append(f"unknown key {d}")
            continue
        if kind in ("wild", ANY):
            continue
        ok = isinstance(value, PY[kind]) and not (isinstance(value, bool) and kind != B)
        if not ok:
            problems.append(f"{d}: expected {kind}, got {type(value).__name__}")
            continue
        if p in variants:
            default, allowed = variants[p]
            actual = node.get("type", default)
            if actual not in allowed:
                problems.append(f"{d} is not a key of type {actual!r}")
        if kind == AOT:
            for i, item in enumerate(value):
                _walk(item, p + "[]", f"{d}[{i}]", problems, spec, variants)
        elif kind == T:
            _walk(value, p, d, problems, spec, variants)


def _port(url: str) -> int | None:
    parts = urlsplit(url)
    return parts.port or {"http": 80, "https": 443}.get(parts.scheme)


def problems(config: dict[str, Any]) -> list[str]:
    """Everything in ``config`` that ``spec/prime-rl.md`` says prime-rl (or its launcher) refuses,
    plus the runtime traps of §9 a config writer must avoid."""
    out: list[str] = []
    _walk(config, "", "", out)
    for table in ("trainer", "orchestrator"):
        if table not in config:
            out.append(f"[{table}] missing")
    if "inference" not in config:
        out.append("[inference] missing: rl would not start the policy server")
    orch = config.get("orchestrator", {})
    group = orch.get("group_size", 1)
    batch = orch.get("batch_size", 128)
    if batch % group:
        out.append(f"batch_size {batch} not divisible by group_size {group}")
    algo = orch.get("algo", {})
    if algo.get("type", "grpo") not in ALGO_TYPES:
        out.append(f"unknown algo {algo.get('type')}")
    loss = config.get("trainer", {}).get("loss", {})
    if loss.get("type", "default") not in LOSS_TYPES:
        out.append(f"unknown loss type {loss.get('type')}")
    if algo.get("type") == "opd":
        teacher = algo.get("teacher", {})
        if "name" not in teacher or "base_url" not in teacher:
            out.append("opd teacher needs name and base_url")
        policy = config.get("inference", {}).get("server", {}).get("port", 8000)
        if _port(teacher.get("base_url", "")) == policy:
            out.append("opd teacher on the policy's port")
    steps = {
        p: v
        for p, v in (
            ("max_steps", config.get("max_steps")),
            ("trainer.max_steps", config.get("trainer", {}).get("max_steps")),
            ("orchestrator.max_steps", orch.get("max_steps")),
        )
        if v is not None
    }
    if len(set(steps.values())) > 1:
        out.append(f"max_steps differ: {steps}")
    dep = config.get("deployment", {})
    if dep.get("num_train_gpus", 1) + dep.get("num_infer_gpus", 1) > dep.get("gpus_per_node", 8):
        out.append("more GPUs than gpus_per_node")
    return out


def roundtrip(text: str) -> dict[str, Any]:
    """Parse TOML text the way prime-rl's loader does (tomllib)."""
    return tomllib.loads(text)


# §11 SFTConfig (``uv run sft @ FILE``): its own top level; optimizer and scheduler at the top.
SFT_SPEC: dict[str, str] = {
    "max_steps": I,
    "output_dir": S,
    "clean": B,
    "model": T,
    "model.name": S,
    "tokenizer": T,
    "tokenizer.name": S,
    "renderer": T,
    "renderer.name": S,
    "val": T,
    "val.*": ANY,
    "eval": T,
    "eval.*": ANY,
    "inference": T,
    "inference.*": ANY,
    "weight_broadcast": T,
    "weight_broadcast.type": S,
    "optim": T,
    "optim.type": S,
    "optim.lr": F,
    "optim.weight_decay": F,
    "optim.max_norm": F,
    "scheduler": T,
    "scheduler.type": S,
    "scheduler.warmup_steps": I,
    "ckpt": T,
    "ckpt.interval": I,
    "resume": T,
    "log": T,
    "log.level": S,
    "monitors": T,
    "run": T,
    "run.name": S,
    "deployment": T,
    "deployment.type": S,
    "deployment.num_train_gpus": I,
    "deployment.num_infer_gpus": I,
    "data": T,
    "data.type": S,
    "data.name": S,
    "data.subsets": L,
    "data.splits": L,
    "data.probabilities": L,
    "data.stopping_strategy": S,
    "data.shuffle": B,
    "data.seed": I,
    "data.loss_mask": T,
    "data.loss_mask.system": B,
    "data.loss_mask.user": B,
    "data.loss_mask.assistant": B,
    "data.loss_mask.tool": B,
    "data.batch_size": I,
    "data.seq_len": I,
    "data.micro_batch_size": I,
    "data.num_workers": I,
}
SFT_VARIANTS: dict[str, tuple[str, set[str]]] = {
    f"data.{k}": ("sft", {"sft"})
    for k in ("name", "subsets", "splits", "probabilities", "stopping_strategy", "shuffle")
    + ("seed", "loss_mask")
}


def sft_problems(config: dict[str, Any]) -> list[str]:
    """Everything in an SFT ``config`` that spec §11 says ``SFTConfig`` refuses."""
    out: list[str] = []
    _walk(config, "", "", out, SFT_SPEC, SFT_VARIANTS)
    if config.get("data", {}).get("type", "sft") not in ("sft", "fake"):
        out.append(f"unknown data type {config['data']['type']}")
    if "inference" in config and "eval" not in config:
        out.append("[inference] without [eval]")
    data = config.get("data", {})
    if data.get("batch_size", 128) % data.get("micro_batch_size", 1):
        out.append("data.batch_size not divisible by micro_batch_size")
    for table in ("trainer", "orchestrator"):
        if table in config:
            out.append(f"[{table}] is an RL table")
    return out


#: The commit spec/prime-rl.md describes ("Version described").
SPEC_COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"


def header_problems(text: str) -> list[str]:
    """The TOML must open with a comment naming the prime-rl commit its schema follows."""
    first = text.splitlines()[0] if text else ""
    if not first.startswith("#"):
        return ["the file does not open with a comment"]
    if SPEC_COMMIT not in first:
        return [f"the first comment does not name prime-rl {SPEC_COMMIT}: {first!r}"]
    return []
