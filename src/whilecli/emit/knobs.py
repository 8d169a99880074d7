"""For every knob a method has in the seed: read by prime-rl (and where), ignored (and why), or
refused.

The knobs and defaults are those of ``seeds/methods-in-symbols.md`` (GRPO, the group baselines
prime-rl runs, OPD, OPSD, Async) and ``spec/reference-sdk.md`` §(e); where prime-rl reads them
is ``spec/prime-rl.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from whilecli import knobs as declared
from whilecli.knobs import DECAY, ICEPOP_BAND, IPO_EPS, TIS_CAP

#: Methods prime-rl can run, and which loss component each uses (``spec/prime-rl.md`` §5).
RL_LOSS_METHODS = ("grpo", "max_rl", "rae")
DISTILL_METHODS = ("opd", "opsd")
METHODS = RL_LOSS_METHODS + DISTILL_METHODS
CORRECTIONS = declared.CORRECTIONS


class Note(NamedTuple):
    """One line of the knob report, a ``(knob, note)`` pair: the knob (with its value) and where
    prime-rl reads it, or why it does not."""

    knob: str
    note: str

    def to_dict(self, key: str) -> dict[str, str]:
        return {"knob": self.knob, key: self.note}


def report_dict(cfg: Any) -> dict[str, Any]:
    """The JSON form of a written config (RL or SFT): config, TOML text, the knob report,
    warnings and the launch command."""
    return {
        "method": cfg.method,
        "config": cfg.config,
        "toml": cfg.to_toml(),
        "reads": [n.to_dict("where") for n in cfg.reads],
        "ignored": [n.to_dict("why") for n in cfg.ignored],
        "refused": [n.to_dict("why") for n in cfg.refused],
        "warnings": list(cfg.warnings),
        "command": cfg.command,
    }


@dataclass(frozen=True)
class Settings:
    """The resolved knobs of one config (defaults filled in)."""

    method: str
    model: str
    env: str | None
    gpus: int
    train_gpus: int
    infer_gpus: int
    steps: int
    prompts: int
    group_size: int
    lora: bool
    lr: float
    temperature: float
    max_tokens: int
    seq_len: int
    teacher_name: str | None = None
    teacher_url: str | None = None
    privileged: str | None = None
    decay: float = DECAY.default
    async_: bool = False
    off_policy_steps: int = 1
    correction: str | None = None
    ipo_threshold: float = IPO_EPS.default
    icepop_band: tuple[float, float] = ICEPOP_BAND
    tis_cap: float = TIS_CAP.default


def _common(s: Settings) -> list[Note]:
    lr_src = "LoRA" if s.lora else "full fine-tuning"
    out = [
        Note(f"steps = {s.steps}", "max_steps (copied to trainer and orchestrator)"),
        Note(
            f"gpus = {s.gpus}",
            f"[deployment] num_train_gpus = {s.train_gpus}, num_infer_gpus = {s.infer_gpus}; "
            "[inference] starts the policy server",
        ),
        Note(
            f"prompts = {s.prompts} × group_size = {s.group_size}",
            f"orchestrator.batch_size = {s.prompts * s.group_size} (rollouts per step)",
        ),
        Note(f"temperature = {s.temperature:g}", "orchestrator.train.sampling.temperature"),
        Note(f"max_tokens = {s.max_tokens}", "orchestrator.train.sampling.max_completion_tokens"),
        Note(f"seq_len = {s.seq_len}", "seq_len (trainer.model.seq_len, orchestrator.seq_len)"),
        Note(f"learning_rate = {s.lr:g} ({lr_src})", "trainer.optim.lr"),
    ]
    if s.lora:
        out.append(Note("lora = rank 16, alpha 32", "trainer.model.lora (rank, alpha)"))
    else:
        out.append(Note("lora = off", "no [trainer.model.lora]: full fine-tuning"))
    if s.async_:
        out.append(
            Note(f"off_policy_steps = {s.off_policy_steps}", "orchestrator.max_off_policy_steps")
        )
    else:
        out.append(
            Note(
                f"off_policy_steps = {s.off_policy_steps} (not --async)",
                "orchestrator.max_off_policy_steps: the one step of overlap that costs nothing "
                "(Noukhovitch et al. 2024); --async raises it to 8",
            )
        )
    return out


def _group_baseline(s: Settings) -> tuple[list[Note], list[Note], list[Note]]:
    advantage = {
        "grpo": "A = R − mean_group R",
        "max_rl": "A = (R − mean_group R) / mean_group R",
        "rae": f"A = R − b_agent, b ← {s.decay:g} b + {1 - s.decay:.2g} R",
    }[s.method]
    reads = [Note(f"advantage: {advantage}", f'orchestrator.algo.type = "{s.method}"')]
    if s.method == "rae":
        reads.append(Note(f"decay = {s.decay:g}", "orchestrator.algo.decay"))
        reads.append(Note("agent", "the taskset's own seats (one baseline per agent)"))
        reads.append(Note(f"group_size = {s.group_size}", "orchestrator.group_size"))
    else:
        reads.append(Note(f"generations k = {s.group_size}", "orchestrator.group_size"))
    ignored = [
        Note(
            "clip ε = 0.2",
            "prime-rl does not clip the ratio: its default loss masks a token whose probability "
            "moved by more than dppo_mask_low/high = 0.2 in the direction its advantage pushes",
        ),
        Note(
            "β = 0 (KL to π_ref)",
            "prime-rl's rl loss has no frozen reference; its kl_tau = 1e-3 term is a squared "
            "log-ratio to the sampler",
        ),
        Note(
            "loss_type = grpo (w = 1/T_i)",
            "prime-rl sums each sample's token losses and divides by the global token count",
        ),
        Note(
            'truncated = "mask"',
            "prime-rl has no truncation knob: score a truncated reply as a failure in the "
            "taskset's reward",
        ),
    ]
    refused = [
        Note("β > 0", "prime-rl's rl loss has no KL to a frozen reference"),
        Note("loss_type = bnpo | dr_grpo", "prime-rl's length normalisation is fixed"),
    ]
    if s.method in ("grpo", "max_rl"):
        ignored.append(
            Note(
                "std normalisation",
                f"prime-rl's {s.method} advantage is the one above, without a standard deviation",
            )
        )
    return reads, ignored, refused


def _distill(s: Settings) -> tuple[list[Note], list[Note], list[Note]]:
    fixed = (
        "prime-rl's opd/opsd loss (ref_kl) is fixed in code: tokens whose probability dropped "
        "by more than 0.2 are masked, KL coefficient 1e-3; [trainer.loss] does not apply"
    )
    reads = [Note("divergence = reverse_kl", f'orchestrator.algo.type = "{s.method}" (ref_kl)')]
    ignored = [Note("trust region", fixed)]
    refused = [Note("divergence = forward_kl | jsd", "prime-rl's ref_kl loss is reverse KL only")]
    if s.method == "opd":
        reads += [
            Note(f"teacher = {s.teacher_name}", "orchestrator.algo.teacher.name"),
            Note(f"teacher url = {s.teacher_url}", "orchestrator.algo.teacher.base_url"),
            Note(f"samples = {s.group_size}", "orchestrator.group_size"),
        ]
        ignored += [
            Note("top_k = 32", "prime-rl's opd is reverse KL over the full vocabulary, no top-k"),
            Note(
                "teacher temperature = 1.0",
                "prime-rl scores the sampled tokens with the teacher's log-probs; the teacher "
                "has no temperature knob",
            ),
        ]
        refused.append(Note("teacher = policy", "opd's teacher cannot be the policy server"))
    else:
        reads += [
            Note(f"privileged = {s.privileged}", f'orchestrator.algo.demo_key = "{s.privileged}"'),
            Note(
                "template",
                "orchestrator.algo.template: prime-rl's default system message with "
                "{demonstration}, not written",
            ),
            Note(f"samples = {s.group_size}", "orchestrator.group_size"),
        ]
        ignored.append(
            Note(
                'anchor = "ema:0.01"',
                "prime-rl's opsd scores against the live policy: no EMA or initial-weights "
                'anchor ("live")',
            )
        )
        refused.append(Note('anchor = "initial"', "prime-rl has no frozen self-teacher"))
    return reads, ignored, refused


def _correction(s: Settings) -> tuple[list[Note], list[Note]]:
    """The staleness correction: where prime-rl reads it, or why it does not apply."""
    if s.method in DISTILL_METHODS:
        if s.async_:
            why = "prime-rl's ref_kl loss ignores [trainer.loss]; its fixed trust region applies"
            return [], [Note("correction", why)]
        return [], []
    if s.correction is None:
        return [
            Note(
                "sampler/trainer gap",
                'trainer.loss (prime-rl\'s type = "default": DPPO probability mask 0.2)',
            )
        ], []
    if s.correction == "ipo":
        return [
            Note(
                f"correction = ipo, ε = {s.ipo_threshold:g}",
                f'trainer.loss type = "ipo", ipo_threshold = {s.ipo_threshold:g} (Async\'s '
                "default, Yao et al. 2025; prime-rl's own default is 0.1)",
            )
        ], []
    if s.correction == "icepop":
        lo, hi = s.icepop_band
        return [
            Note(
                f"correction = icepop, band = ({lo:g}, {hi:g})",
                'trainer.loss type = "custom", import_path = "whilecli.emit.losses.icepop_loss", '
                f"kwargs = {{low = {lo:g}, high = {hi:g}}}",
            )
        ], []
    return [
        Note(
            f"correction = tis, cap = {s.tis_cap:g}",
            'trainer.loss type = "custom", import_path = "whilecli.emit.losses.tis_loss", '
            f"kwargs = {{cap = {s.tis_cap:g}}}",
        )
    ], []


def knob_report(s: Settings) -> tuple[list[Note], list[Note], list[Note]]:
    """``(reads, ignored, refused)`` for the method of ``s``."""
    if s.method in RL_LOSS_METHODS:
        reads, ignored, refused = _group_baseline(s)
    else:
        reads, ignored, refused = _distill(s)
    c_reads, c_ignored = _correction(s)
    return _common(s) + reads + c_reads, ignored + c_ignored, refused
