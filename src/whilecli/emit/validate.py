"""Whole-config checks: what prime-rl's loader (and its launcher) would refuse, caught first.

Keys and types come from :mod:`whilecli.emit.schema`; the cross-field rules are those of
``spec/prime-rl.md`` §2-§7 and the runtime traps of §9 that a file can avoid.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from whilecli.emit.schema import GPUS_PER_NODE, POLICY_PORT, check_keys, get, url_port
from whilecli.errors import UsageError
from whilecli.knobs import DECAY, ICEPOP_HIGH, ICEPOP_LOW, TIS_CAP


def check_config(config: Mapping[str, Any]) -> None:
    """Everything prime-rl's loader (and its launcher) would refuse, checked here first.

    Keys and types (:func:`check_keys`), the required ``[trainer]`` and ``[orchestrator]``,
    the batch counted in rollouts and divisible by the group size, equal step counts, the
    trainer's sequence length at least the orchestrator's, the GPU split within one node,
    LoRA with a filesystem weight broadcast, and an opd teacher off the policy's port.
    """
    check_finite(config, "")
    check_keys(config)
    for table in ("trainer", "orchestrator"):
        if not isinstance(config.get(table), dict):
            raise UsageError(f"[{table}] is required by prime-rl")
    orch = config["orchestrator"]
    group = orch.get("group_size", 1)
    if group < 1:
        raise UsageError(f"orchestrator.group_size must be >= 1, got {group}")
    if "batch_size" in orch and "token_batch_size" in orch:
        raise UsageError("set orchestrator.batch_size or token_batch_size, not both")
    batch = orch.get("batch_size", 128 if "token_batch_size" not in orch else None)
    if batch is not None and (batch < 1 or batch % group):
        raise UsageError(
            f"orchestrator.batch_size counts rollouts and must be a positive multiple of "
            f"group_size {group}, got {batch}"
        )
    inflight = get(orch, "concurrency.max_inflight", 1024)
    if inflight < group:
        raise UsageError(f"orchestrator.concurrency.max_inflight {inflight} < group_size {group}")
    _check_shared(config)
    _check_deployment(config)
    _check_algo(config)


#: The integers TOML holds (its spec: 64-bit signed; larger ones must be refused).
INT64 = (-(2**63), 2**63 - 1)


def check_finite(node: Any, at: str) -> None:
    """Refuse NaN and infinities anywhere (``--set trainer.optim.lr=nan``): TOML can spell
    them, but no prime-rl knob means anything by them; and integers past 64 bits, which a
    TOML reader must refuse (``--steps 10**23``)."""
    if isinstance(node, float) and not math.isfinite(node):
        raise UsageError(f"{at or 'the config'} must be a finite number, got {node}")
    if isinstance(node, int) and not isinstance(node, bool) and not INT64[0] <= node <= INT64[1]:
        raise UsageError(f"{at}: {node} does not fit a TOML integer (64 bits)")
    if isinstance(node, Mapping):
        for key, value in node.items():
            check_finite(value, f"{at}.{key}" if at else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            check_finite(value, f"{at}[{i}]")


def _check_shared(config: Mapping[str, Any]) -> None:
    for shared, paths in (
        ("max_steps", ("trainer.max_steps", "orchestrator.max_steps")),
        ("model.name", ("orchestrator.model.name",)),
    ):
        top = get(config, shared)
        values = {p: get(config, p) for p in paths if get(config, p) is not None}
        if top is not None:
            values[shared] = top
        if len(set(map(str, values.values()))) > 1:
            raise UsageError(f"{' and '.join(values)} differ ({values}); prime-rl refuses that")
    top_seq = get(config, "seq_len")
    t_seq = get(config, "trainer.model.seq_len", top_seq if top_seq is not None else 2048)
    o_seq = get(config, "orchestrator.seq_len", top_seq if top_seq is not None else 2048)
    if t_seq < o_seq:
        raise UsageError(f"trainer.model.seq_len {t_seq} < orchestrator.seq_len {o_seq}")
    seq_name = (
        "orchestrator.seq_len" if get(config, "orchestrator.seq_len") is not None else "seq_len"
    )
    samplings = [("orchestrator.train.sampling", get(config, "orchestrator.train.sampling"))]
    for i, src in enumerate(get(config, "orchestrator.train.source", []) or []):
        samplings.append((f"orchestrator.train.source[{i}].sampling", get(src, "sampling")))
    for where, sampling in samplings:
        tokens = get(sampling or {}, "max_completion_tokens")
        if isinstance(tokens, int) and not isinstance(tokens, bool):
            check_room(tokens, o_seq, f"{where}.max_completion_tokens", seq_name)
    if "eval" in config["orchestrator"] and not get(config, "orchestrator.eval.source"):
        raise UsageError("[orchestrator.eval] needs at least one [[orchestrator.eval.source]]")
    for split in ("train", "eval"):
        for i, src in enumerate(get(config, f"orchestrator.{split}.source", []) or []):
            if not str(get(src, "env.taskset.id", "")).strip():
                raise UsageError(f"orchestrator.{split}.source[{i}] has no env.taskset.id")
    check_scheduler(
        get(config, "trainer.scheduler", {}) or {},
        get(config, "trainer.max_steps", get(config, "max_steps")),
        "trainer.scheduler",
    )


def check_room(max_tokens: int, seq_len: int, tokens_name: str, seq_name: str) -> None:
    """A completion cap must leave room for the prompt in the sequence: ``max_tokens <
    seq_len``. ``tokens_name`` and ``seq_name`` are what the user wrote (``--max-tokens`` and
    ``--seq-len``, or the config's keys)."""
    if max_tokens >= seq_len:
        raise UsageError(
            f"{tokens_name} {max_tokens} leaves no room for the prompt in {seq_name} {seq_len}"
        )


def check_scheduler(sched: Mapping[str, Any], steps: Any, where: str) -> None:
    """spec §3: ``linear`` with ``decay_steps > 0`` needs ``max_steps`` and
    ``warmup_steps + decay_steps ≤ max_steps``; ``cosine`` needs ``max_steps > warmup_steps``
    (defaults: ``warmup_steps`` 10, ``decay_steps`` 10). ``steps``: the run's max_steps
    (None, or the string "None", for none)."""
    kind = sched.get("type", "constant")
    if kind not in ("linear", "cosine"):
        return
    warmup = sched.get("warmup_steps", 10)
    decay = sched.get("decay_steps", 10) if kind == "linear" else 0
    steps = None if steps == "None" else steps
    if kind == "cosine" and (steps is None or steps <= warmup):
        raise UsageError(f"a cosine {where} needs max_steps > warmup_steps {warmup}, got {steps}")
    if kind == "linear" and decay > 0 and (steps is None or warmup + decay > steps):
        raise UsageError(
            f"a linear {where} needs warmup_steps + decay_steps ({warmup} + {decay}) "
            f"<= max_steps, got {steps}"
        )


def _check_deployment(config: Mapping[str, Any]) -> None:
    dep = config.get("deployment", {})
    if dep.get("type", "single_node") != "single_node":
        if "slurm" not in config:
            raise UsageError("a multi_node deployment needs [slurm]")
        return
    train, infer = dep.get("num_train_gpus", 1), dep.get("num_infer_gpus", 1)
    per_node = dep.get("gpus_per_node", GPUS_PER_NODE)
    if train < 1 or infer < 0 or train + infer > per_node:
        raise UsageError(
            f"deployment: {train} train + {infer} inference GPUs do not fit gpus_per_node "
            f"{per_node}"
        )
    lora = get(config, "trainer.model.lora") is not None
    broadcast = get(config, "weight_broadcast.type")
    if lora and broadcast in ("nccl", "nixl"):
        raise UsageError(f"LoRA forces a filesystem weight broadcast; {broadcast!r} is refused")
    if broadcast == "nccl" and train + infer < 2:
        raise UsageError("an nccl weight broadcast needs at least 2 GPUs")


def policy_port(config: Mapping[str, Any]) -> int:
    """The port of the policy server the orchestrator talks to."""
    url = get(config, "orchestrator.model.client.base_url")
    if url is not None:
        port = url_port(url)
        if port is not None:
            return port
    return int(get(config, "inference.server.port", POLICY_PORT))


def _algos(config: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """Every ``algo`` table with where it sits: the top-level one and each train source's."""
    found = [("orchestrator.algo", get(config, "orchestrator.algo", {}) or {})]
    for i, src in enumerate(get(config, "orchestrator.train.source", []) or []):
        if isinstance(src.get("algo"), Mapping):
            found.append((f"orchestrator.train.source[{i}].algo", src["algo"]))
    return found


def _check_sampling_source(where: str, algo: Mapping[str, Any]) -> None:
    """spec §5: an algo samples from ``"policy"``; only ``sft`` may name a frozen model
    ``{name, base_url}``."""
    source = get(algo, "sampling.source")
    kind = algo.get("type", "grpo")
    if source is None or source == "policy":
        return
    if isinstance(source, str):
        raise UsageError(
            f'{where}.sampling.source is "policy" or a frozen model {{name, base_url}}, '
            f"got {source!r}"
        )
    if kind != "sft":
        raise UsageError(
            f"{where}.sampling.source: only type = 'sft' may sample from a frozen model; "
            f"{kind} samples from the policy (leave sampling.source out)"
        )
    if not source.get("name") or not source.get("base_url"):
        raise UsageError(f"{where}.sampling.source needs name and base_url")


def _check_algo(config: Mapping[str, Any]) -> None:
    for where, table in _algos(config):
        _check_sampling_source(where, table)
        if table.get("type", "grpo") == "rae" and "decay" in table:
            DECAY.check(table["decay"], f"{where}.decay")
    algo = get(config, "orchestrator.algo", {}) or {}
    kind = algo.get("type", "grpo")
    if kind == "rae":
        DECAY.check(algo.get("decay", DECAY.default), "orchestrator.algo.decay")
    _check_loss_kwargs(get(config, "trainer.loss", {}) or {})
    if kind == "opd":
        teacher = algo.get("teacher") or {}
        if not teacher.get("name") or not teacher.get("base_url"):
            raise UsageError("opd needs orchestrator.algo.teacher with name and base_url")
        port = url_port(teacher["base_url"])
        if port == policy_port(config):
            raise UsageError(
                f"the opd teacher {teacher['base_url']} is on the policy server's port {port}; "
                "serve the teacher on another port"
            )
    if config.get("inference") is not None:
        url = get(config, "orchestrator.model.client.base_url")
        server = int(get(config, "inference.server.port", POLICY_PORT))
        if url is not None and url_port(url) != server:
            raise UsageError(
                f"orchestrator.model.client.base_url {url} is not on inference.server.port "
                f"{server}; the launcher refuses that"
            )


#: The kwargs of whilecli's custom losses that carry a declared knob: import path → {kwarg: Knob}.
_LOSS_KWARGS = {
    "whilecli.emit.losses.icepop_loss": {"low": ICEPOP_LOW, "high": ICEPOP_HIGH},
    "whilecli.emit.losses.tis_loss": {"cap": TIS_CAP},
}


def _check_loss_kwargs(loss: Mapping[str, Any]) -> None:
    """Refuse a custom loss's band or cap outside the range ``while update`` refuses too."""
    if loss.get("type") != "custom":
        return
    declared = _LOSS_KWARGS.get(str(loss.get("import_path")), {})
    kwargs = loss.get("kwargs") or {}
    for key, knob in declared.items():
        if key in kwargs:
            knob.check(kwargs[key], f"trainer.loss.kwargs.{key}")
