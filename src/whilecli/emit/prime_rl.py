"""prime-rl RL configs for the methods prime-rl can run: grpo, max_rl, rae, opd, opsd.

The file is one that prime-rl's loader accepts (``spec/prime-rl.md``; every key is in
:mod:`whilecli.emit.schema`) and that ``uv run rl @ FILE`` can run: it always carries
``[inference]`` so ``rl`` starts the policy server, counts ``orchestrator.batch_size`` in
rollouts (prompts × group size), splits the GPUs between inference and training, and puts an
opd teacher on a port other than the policy's. The seed's defaults
(``seeds/methods-in-symbols.md``, ``spec/reference-sdk.md`` §(e)) are written where prime-rl
has the knob; :mod:`whilecli.emit.knobs` says, for every other knob, why it is not.

This module does not import torch: the custom losses are named by import path only.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from whilecli import knobs as declared
from whilecli.emit import schema, tomlout
from whilecli.emit.advice import broken_reasons, method_warnings
from whilecli.emit.inputs import check_env, check_knobs, parse_teacher
from whilecli.emit.knobs import (
    METHODS,
    RL_LOSS_METHODS,
    Note,
    Settings,
    knob_report,
    report_dict,
)
from whilecli.emit.models import DEFAULT_MODEL, family_renderer, renderer_known
from whilecli.emit.overrides import apply_overrides, parse_override
from whilecli.emit.validate import check_config, check_room
from whilecli.errors import UsageError

#: The single-rollout family prime-rl cannot run, and what it lacks for each.
UNSUPPORTED: dict[str, str] = {
    "flash_reinforce": "a batch-mean baseline and a sequence trust gate (FlashReinforce's "
    "per-trajectory Bernoulli-KL gate)",
    "sao": "a value model trained beside the policy (SAO's critic, with its ratio band)",
    "bpco": "a bounded critic and a probability-scaled clip (BPCO's ε/μ clip range)",
}
#: Where the single-rollout family runs instead (whilecli.trainers).
RUN_ELSEWHERE: dict[str, str] = {
    "flash_reinforce": "Train it in verl with whilecli's plug-in "
    "(VERL_USE_EXTERNAL_MODULES=whilecli.trainers.verl, algorithm.adv_estimator and "
    "policy_loss.loss_mode whilecli_flash_reinforce) or in TRL with "
    "whilecli.trainers.trl.FlashReinforceTrainer",
    "sao": "Train it in your own loop with whilecli.methods.SAO (batch_stats once per "
    "optimizer batch, coefficients per micro-batch); verl's estimator hook carries no critic "
    "values, so the verl plug-in refuses it",
    "bpco": "Train it in your own loop with whilecli.methods.BPCO (batch_stats once per "
    "optimizer batch, coefficients per micro-batch); verl's estimator hook carries no critic "
    "values, so the verl plug-in refuses it",
}
_ALIASES = {
    "flashreinforce": "flash_reinforce",
    "flash-reinforce": "flash_reinforce",
    "max-rl": "max_rl",
    "maxrl": "max_rl",
}

#: Per-method seed defaults: rollouts per prompt, completion cap, learning rates.
SEED_DEFAULTS: dict[str, dict[str, float]] = {
    "grpo": {"group_size": 8, "max_tokens": 4096, "lr_lora": 1e-5, "lr_full": 1e-6},
    "max_rl": {"group_size": 8, "max_tokens": 4096, "lr_lora": 1e-5, "lr_full": 1e-6},
    "rae": {"group_size": 1, "max_tokens": 4096, "lr_lora": 1e-5, "lr_full": 1e-6},
    "opd": {"group_size": 4, "max_tokens": 8192, "lr_lora": 1e-4, "lr_full": 1e-6},
    "opsd": {"group_size": 1, "max_tokens": 4096, "lr_lora": 5e-6, "lr_full": 5e-6},
}
TEMPERATURE = 1.0
ROLLOUTS_PER_STEP = 128  # prime-rl's own default batch_size, when --prompts is not given
SEQ_LEN = 12288
RAE_DECAY = declared.DECAY.default
LORA = {"rank": 16, "alpha": 32}
ASYNC_OFF_POLICY_STEPS = 8
SYNC_OFF_POLICY_STEPS = 1
IPO_EPS = declared.IPO_EPS.default
ICEPOP_BAND = declared.ICEPOP_BAND
TIS_CAP = declared.TIS_CAP.default
LOSS_PATHS = {
    "icepop": "whilecli.emit.losses.icepop_loss",
    "tis": "whilecli.emit.losses.tis_loss",
}


@dataclass
class PrimeRLConfig:
    """A prime-rl RL config and what prime-rl does with each of the method's knobs."""

    method: str
    config: dict[str, Any]
    reads: list[Note]
    ignored: list[Note]
    refused: list[Note]
    warnings: list[str]
    settings: Settings
    file: str = "rl.toml"
    overrides: list[str] = field(default_factory=list)
    #: Why prime-rl would fail running this file though its loader accepts it (a group of one
    #: for grpo): ``whilecli config`` refuses to write it without ``--force``.
    broken: list[str] = field(default_factory=list)
    #: What the route said, written as comments under the header (``config --from``): the
    #: verdict with every qualifier (provisional, the Async plan, what reading found).
    routed: list[str] = field(default_factory=list)

    @property
    def command(self) -> str:
        """How to launch it: ``uv run rl @ FILE``, the name shell-quoted (a space, a newline or
        ``$(...)`` in it is a word, never a second command, when the line is pasted)."""
        return f"uv run rl @ {shell_word(self.file)}"

    def to_toml(self) -> str:
        """The config as TOML text, opening with the prime-rl commit its schema follows and
        the route's verdict it was written from."""
        return tomlout.dumps(self.config, header=schema.header(self.routed))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: config, TOML text, knob report, warnings and command."""
        return report_dict(self)


def shell_word(text: str) -> str:
    """``text`` as one shell word on one line: :func:`shlex.quote`, or bash's ``$'...'`` where
    it holds a control character (a newline, a tab), written as its escape, so a printed
    command copies whole and runs the one file it names."""
    if not any(ord(c) < 32 or ord(c) == 127 for c in text):
        return shlex.quote(text)
    body = "".join(
        {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c)
        or (f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c)
        for c in text
    )
    return f"$'{body}'"


def normalize_method(method: str) -> str:
    """Resolve ``method`` to one prime-rl runs, or refuse it with the reason and alternatives."""
    m = method.strip().lower()
    m = _ALIASES.get(m, m)
    if m in UNSUPPORTED:
        raise UsageError(
            f"prime-rl cannot run {m}: it lacks {UNSUPPORTED[m]}. {RUN_ELSEWHERE[m]} "
            f"(`whilecli update --method {m}` writes the per-token coefficients of a batch "
            "file); or train with prime-rl's rae (`whilecli config --method rae`), the "
            "baseline that stands at one rollout per prompt"
        )
    if m not in METHODS:
        raise UsageError(
            f"unknown method {method!r}; prime-rl configs exist for {', '.join(METHODS)} "
            f"(refused: {', '.join(UNSUPPORTED)})"
        )
    return m


def _settings(method: str, **kw: Any) -> Settings:
    d = SEED_DEFAULTS[method]
    group = kw["group_size"] or int(d["group_size"])
    prompts = kw["prompts"] or max(1, ROLLOUTS_PER_STEP // group)
    gpus = kw["gpus"]
    infer = gpus // 2
    max_tokens = kw["max_tokens"] or int(d["max_tokens"])
    seq_len = kw["seq_len"] or max(SEQ_LEN, max_tokens + 1024)
    check_room(max_tokens, seq_len, "--max-tokens", "--seq-len")
    lr = kw["lr"] if kw["lr"] is not None else d["lr_lora" if kw["lora"] else "lr_full"]
    correction = kw["correction"]
    if kw["async_"] and correction is None and method in RL_LOSS_METHODS:
        correction = "ipo"
    off = kw["off_policy_steps"]
    if off is None:
        off = ASYNC_OFF_POLICY_STEPS if kw["async_"] else SYNC_OFF_POLICY_STEPS
    name, url = parse_teacher(kw["teacher"]) if kw["teacher"] is not None else (None, None)
    return Settings(
        method=method,
        model=kw["model"] or DEFAULT_MODEL,
        env=kw["env"],
        gpus=gpus,
        train_gpus=gpus - infer,
        infer_gpus=infer,
        steps=kw["steps"],
        prompts=prompts,
        group_size=group,
        lora=kw["lora"],
        lr=float(lr),
        temperature=TEMPERATURE if kw["temperature"] is None else float(kw["temperature"]),
        max_tokens=max_tokens,
        seq_len=seq_len,
        teacher_name=name,
        teacher_url=url,
        privileged=(kw["privileged"] or "demonstration") if method == "opsd" else None,
        decay=RAE_DECAY,
        async_=kw["async_"],
        off_policy_steps=off,
        correction=correction,
        ipo_threshold=IPO_EPS,
        icepop_band=ICEPOP_BAND,
        tis_cap=TIS_CAP,
    )


def _source(env: str) -> dict[str, Any]:
    """One train source for taskset ``env`` (a local id or a hub ``owner/name@version``)."""
    name = env.rsplit("/", 1)[-1].split("@", 1)[0]
    return {
        "name": name,
        "env": {
            "taskset": {"id": env},
            "agent": {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}},
        },
    }


def _loss(s: Settings) -> dict[str, Any] | None:
    if s.correction == "ipo":
        return {"type": "ipo", "ipo_threshold": s.ipo_threshold}
    if s.correction == "icepop":
        lo, hi = s.icepop_band
        return {
            "type": "custom",
            "import_path": LOSS_PATHS["icepop"],
            "kwargs": {"low": lo, "high": hi},
        }
    if s.correction == "tis":
        return {"type": "custom", "import_path": LOSS_PATHS["tis"], "kwargs": {"cap": s.tis_cap}}
    return None


def build_config(s: Settings) -> dict[str, Any]:
    """The config dict for resolved settings, before overrides."""
    trainer: dict[str, Any] = {"optim": {"lr": s.lr}}
    if s.lora:
        trainer["model"] = {"lora": dict(LORA)}
    loss = _loss(s)
    if loss is not None:
        trainer["loss"] = loss
    algo: dict[str, Any] = {"type": s.method}
    if s.method == "rae":
        algo["decay"] = s.decay
    elif s.method == "opd":
        algo["teacher"] = {"name": s.teacher_name, "base_url": s.teacher_url}
    elif s.method == "opsd":
        algo["demo_key"] = s.privileged
    train: dict[str, Any] = {
        "sampling": {"temperature": s.temperature, "max_completion_tokens": s.max_tokens}
    }
    if s.env:
        train["source"] = [_source(s.env)]
    orchestrator: dict[str, Any] = {
        "batch_size": s.prompts * s.group_size,
        "group_size": s.group_size,
        "max_off_policy_steps": s.off_policy_steps,
        "algo": algo,
        "train": train,
    }
    return {
        "max_steps": s.steps,
        "seq_len": s.seq_len,
        "model": {"name": s.model},
        "deployment": {"num_train_gpus": s.train_gpus, "num_infer_gpus": s.infer_gpus},
        "trainer": trainer,
        "orchestrator": orchestrator,
        "inference": {},
    }


def _renderer(config: dict[str, Any], warnings: list[str]) -> None:
    """Write ``[orchestrator.renderer] name = "default"`` for a model ``auto`` cannot find."""
    model = schema.get(config, "model.name", DEFAULT_MODEL)
    if schema.get(config, "orchestrator.renderer.name") is not None or renderer_known(model):
        return
    config["orchestrator"].setdefault("renderer", {})["name"] = "default"
    family = family_renderer(model)
    hint = (
        f"; the {family!r} family renderer may fit: --set orchestrator.renderer.name={family}"
        if family
        else ""
    )
    warnings.append(
        f"{model} is not a model prime-rl's renderer map is known to hold, so "
        f'[orchestrator.renderer] name = "default" is written (auto would fail validation){hint}'
    )


def _policy_client(config: dict[str, Any]) -> None:
    """Point the orchestrator at the policy server when its port was moved by an override."""
    port = schema.get(config, "inference.server.port")
    if port is None or schema.get(config, "orchestrator.model.client.base_url") is not None:
        return
    if port != schema.POLICY_PORT:
        model = config["orchestrator"].setdefault("model", {})
        model.setdefault("client", {})["base_url"] = f"http://localhost:{port}/v1"


def prime_rl_config(
    method: str,
    *,
    model: str | None = None,
    env: str | None = None,
    gpus: int = 2,
    steps: int = 100,
    prompts: int | None = None,
    group_size: int | None = None,
    lora: bool = True,
    lr: float | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    seq_len: int | None = None,
    teacher: str | None = None,
    privileged: str | None = None,
    async_: bool = False,
    off_policy_steps: int | None = None,
    correction: str | None = None,
    size_b: float | None = None,
    overrides: Mapping[str, Any] | list[str] | tuple[str, ...] = (),
    file: str = "rl.toml",
) -> PrimeRLConfig:
    """A prime-rl RL config for ``method`` with its usual defaults, checked against the schema.

    ``overrides`` is a mapping of dotted keys to values, or ``KEY=VALUE`` strings (values
    parsed as TOML); each must be a key prime-rl has. Raises :class:`UsageError` for a method
    prime-rl cannot run, a knob out of range, or a config prime-rl would refuse.
    """
    m = normalize_method(method)
    from whilecli.io.modelid import check_model_option

    check_model_option(model, "--model")
    knobs: dict[str, Any] = dict(
        gpus=gpus,
        steps=steps,
        prompts=prompts,
        group_size=group_size,
        lr=lr,
        temperature=temperature,
        max_tokens=max_tokens,
        seq_len=seq_len,
        teacher=teacher,
        privileged=privileged,
        async_=async_,
        off_policy_steps=off_policy_steps,
        correction=correction,
    )
    check_knobs(m, **knobs)
    check_env(env)
    s = _settings(m, model=model, env=env, lora=lora, **knobs)
    config = build_config(s)
    pairs = (
        list(overrides.items())
        if isinstance(overrides, Mapping)
        else [parse_override(o) for o in overrides]
    )
    applied = apply_overrides(config, pairs)
    warnings: list[str] = []
    _policy_client(config)
    _renderer(config, warnings)
    check_config(config)
    reads, ignored, refused = knob_report(s)
    reads += [Note(f"--set {k} = {v!r}", k) for k, v in applied]
    warnings = method_warnings(s, config, model_given=model is not None, size_b=size_b) + warnings
    return PrimeRLConfig(
        method=m,
        config=config,
        reads=reads,
        ignored=ignored,
        refused=refused,
        warnings=warnings,
        settings=s,
        file=file,
        overrides=[k for k, _ in applied],
        broken=broken_reasons(s, config),
    )
