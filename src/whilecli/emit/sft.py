"""prime-rl SFT configs (``uv run sft @ FILE``, ``prime_rl.configs.sft.SFTConfig``).

The file follows ``spec/prime-rl.md`` §11 and its example (``examples/basic/reverse-text/
sft.toml``): ``max_steps``, ``[model] name``, ``[data] name / seq_len / batch_size``,
``[optim] lr`` and ``[deployment]``, every key in :data:`whilecli.emit.schema.SFT_KEYS`.
With no ``[eval]`` block it writes no ``[inference]`` (prime-rl refuses one there). The loss
is prime-rl's default: the assistant tokens only (``[data] loss_mask``), the seed's
L = −Σ_i Σ_t log π_θ(a_i,t | h_i,t) over the rows of the dataset (DESIGN §3 ``sft``: c = 1
on the reply's tokens of passing rows) — so the dataset must hold only the passes, which
:mod:`whilecli.emit.sft_data` writes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from whilecli.emit import schema, tomlout
from whilecli.emit.knobs import Note, report_dict
from whilecli.emit.models import DEFAULT_MODEL, family_renderer, renderer_known
from whilecli.emit.overrides import apply_overrides, parse_override
from whilecli.errors import UsageError

if TYPE_CHECKING:
    from whilecli.emit.sft_data import SFTData

#: The example file's values (spec §11): prime-rl's own defaults are seq_len 128 and
#: batch_size 128, too short for a chat and larger than a small dataset.
SEQ_LEN = 4096
BATCH_SIZE = 32
LR = 2e-5
#: prime-rl's default dataset (``[data] name``), written when none is named.
DEFAULT_DATASET = "PrimeIntellect/Reverse-Text-SFT"
#: Keys ``--set`` may not change: what whilecli derives from the rows.
RESERVED = {"data.name": "the dataset is --data (or the rows of --from)"}


@dataclass
class PrimeSFTConfig:
    """A prime-rl SFT config, its dataset (when built from rows) and the knob report."""

    config: dict[str, Any]
    reads: list[Note]
    ignored: list[Note]
    warnings: list[str]
    file: str = "sft.toml"
    data: SFTData | None = None
    data_path: str | None = None  # the Parquet file written, when built from rows
    refused: list[Note] = field(default_factory=list)
    method: str = "sft"
    #: What the route said (``config --from``), as :attr:`PrimeRLConfig.routed`.
    routed: list[str] = field(default_factory=list)

    @property
    def command(self) -> str:
        """How to launch it: ``uv run sft @ FILE``, the name shell-quoted (a space, a newline or
        ``$(...)`` in it is a word, never a second command, when the line is pasted)."""
        from whilecli.emit.prime_rl import shell_word

        return f"uv run sft @ {shell_word(self.file)}"

    def to_toml(self) -> str:
        """The config as TOML text, opening with the prime-rl commit its schema follows and
        the route's verdict it was written from."""
        return tomlout.dumps(self.config, header=schema.header(self.routed))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, as :meth:`PrimeRLConfig.to_dict`, plus the dataset written."""
        out = report_dict(self)
        if self.data is not None:
            out["dataset"] = {"path": self.data_path, **self.data.to_dict()}
        return out


#: Options of ``while config`` an SFT config has no place for, and why.
NOT_SFT = {
    "--env": "an RL train source; SFT reads a dataset (--data or --from ROWS)",
    "--group-size": "rollouts per prompt; SFT samples nothing",
    "--temperature": "a sampling knob; SFT samples nothing",
    "--max-tokens": "a sampling knob; SFT samples nothing (--seq-len caps an example)",
    "--teacher": "opd's teacher",
    "--privileged": "opsd's demo key",
    "--async": "off-policy RL; SFT has no rollouts to be stale",
    "--off-policy-steps": "off-policy RL; SFT has no rollouts to be stale",
    "--correction": "an RL loss; SFT's loss is the log-likelihood",
}


def refuse_rl_options(given: Mapping[str, Any]) -> None:
    """Refuse the RL-only options that were given (not None / False) for an SFT config."""
    for option, value in given.items():
        if value not in (None, False) and option in NOT_SFT:
            raise UsageError(f"{option} does not apply to sft: it is {NOT_SFT[option]}")


def _check(gpus: int, steps: int, batch: int | None, seq_len: int | None, lr: float | None) -> None:
    for name, value in (("--steps", steps), ("--prompts", batch), ("--seq-len", seq_len)):
        if value is not None and (isinstance(value, bool) or value < 1):
            raise UsageError(f"{name} must be > 0, got {value}")
    if lr is not None and not (math.isfinite(lr) and 0 < lr < 1):
        raise UsageError(f"--lr {lr:g} is not a learning rate (they lie in (0, 1))")
    if not 1 <= gpus <= schema.GPUS_PER_NODE:
        raise UsageError(
            f"--gpus must be 1 to {schema.GPUS_PER_NODE} (one node) for SFT, got {gpus}"
        )


def check_sft_config(config: Mapping[str, Any]) -> None:
    """What ``SFTConfig`` refuses (spec §11), checked before anything is written: the keys,
    ``[inference]`` only beside ``[eval]``, ``batch_size`` a multiple of ``micro_batch_size``,
    and the GPUs within one node."""
    from whilecli.emit.validate import check_finite, check_scheduler

    check_finite(config, "")
    schema.check_sft_keys(config)
    check_scheduler(config.get("scheduler") or {}, config.get("max_steps"), "scheduler")
    if "inference" in config and "eval" not in config:
        raise UsageError(
            "[inference] is only used for online evals in an SFT config: add an [eval] block "
            "or remove it"
        )
    batch = schema.get(config, "data.batch_size", 128)
    micro = schema.get(config, "data.micro_batch_size", 1)
    for name, value in (("data.batch_size", batch), ("data.micro_batch_size", micro)):
        if value < 1:
            raise UsageError(f"{name} must be >= 1, got {value}")
    if batch % micro:
        raise UsageError(
            f"data.batch_size {batch} must be divisible by data.micro_batch_size {micro}"
        )
    if schema.get(config, "data.seq_len", 128) < 1:
        raise UsageError("data.seq_len must be >= 1")
    dep = config.get("deployment", {})
    if dep.get("type", "single_node") == "single_node":
        per_node = dep.get("gpus_per_node", schema.GPUS_PER_NODE)
        used = dep.get("num_train_gpus", 1) + dep.get("num_infer_gpus", 0)
        if used > per_node:
            raise UsageError(f"[deployment] asks for {used} GPUs on one node of {per_node}")


def _renderer(config: dict[str, Any], warnings: list[str]) -> None:
    """``[renderer] name = "default"`` for a model the renderer map is not known to hold."""
    model = schema.get(config, "model.name", DEFAULT_MODEL)
    if schema.get(config, "renderer.name") is not None or renderer_known(model):
        return
    config.setdefault("renderer", {})["name"] = "default"
    family = family_renderer(model)
    hint = (
        f"; the {family!r} family renderer may fit: --set renderer.name={family}" if family else ""
    )
    warnings.append(
        f"{model} is not a model prime-rl's renderer map is known to hold, so [renderer] "
        f'name = "default" is written{hint}'
    )


def sft_config(
    *,
    model: str | None = None,
    data: SFTData | None = None,
    dataset: str | None = None,
    data_path: str | None = None,
    gpus: int = 2,
    steps: int = 100,
    batch_size: int | None = None,
    seq_len: int | None = None,
    lr: float | None = None,
    lora: bool = True,
    overrides: Mapping[str, Any] | list[str] | tuple[str, ...] = (),
    file: str = "sft.toml",
) -> PrimeSFTConfig:
    """A prime-rl SFT config training ``model`` on ``dataset`` (a Hub name or a local folder).

    ``data`` is the dataset built from rows (written by the caller to ``data_path``, whose
    folder ``dataset`` names). Raises :class:`UsageError` for a knob out of range or a config
    ``SFTConfig`` would refuse.
    """
    from whilecli.io.modelid import check_model_option

    check_model_option(model, "--model")
    _check(gpus, steps, batch_size, seq_len, lr)
    name = dataset or DEFAULT_DATASET
    batch = batch_size or BATCH_SIZE
    rate = LR if lr is None else float(lr)
    length = seq_len or SEQ_LEN
    config: dict[str, Any] = {
        "max_steps": steps,
        "model": {"name": model or DEFAULT_MODEL},
        "data": {"name": name, "seq_len": length, "batch_size": batch},
        "optim": {"lr": rate},
        "deployment": {"num_train_gpus": gpus},
    }
    pairs = (
        list(overrides.items())
        if isinstance(overrides, Mapping)
        else [parse_override(o) for o in overrides]
    )
    for key, _ in pairs:
        if key in RESERVED:
            raise UsageError(f"--set {key} is refused: {RESERVED[key]}")
    applied = apply_overrides(config, pairs, schema.SFT_KEYS)
    warnings: list[str] = []
    _renderer(config, warnings)
    check_sft_config(config)
    where = data_path or name
    reads = [
        Note(f"max_steps = {steps}", "max_steps (optimizer steps)"),
        Note(f"model = {schema.get(config, 'model.name', DEFAULT_MODEL)}", "[model] name"),
        Note(f"dataset = {where}", "[data] name (load_dataset: a Hub name or a local folder)"),
        Note(f"examples per step = {batch}", "[data] batch_size (--prompts)"),
        Note(f"seq_len = {length}", "[data] seq_len (a longer example is cut)"),
        Note(f"lr = {rate:g}", "[optim] lr (AdamW)"),
        Note(f"GPUs = {gpus}", "[deployment] num_train_gpus (SFT has no inference server)"),
        Note(
            "loss on assistant tokens only",
            "[data] loss_mask (prime-rl's default: c = 1 on the reply, 0 on the prompt)",
        ),
    ]
    reads += [Note(f"--set {k} = {v!r}", k) for k, v in applied]
    ignored = [
        Note("reward", "prime-rl's SFT trainer does not read rewards: only passes are written"),
    ]
    if lora:
        ignored.append(
            Note(
                "LoRA",
                "not written: prime-rl's SFT config has no LoRA table, so this is full "
                "fine-tuning (--full says so)",
            )
        )
    if model is None:
        warnings.insert(0, f"no --model: prime-rl's default model {DEFAULT_MODEL} is written")
    if data is None and dataset is None:
        warnings.append(
            f"no --data: prime-rl's default dataset {DEFAULT_DATASET} is written; pass --data "
            "NAME|FOLDER, or --from ROWS to build one from passing rows"
        )
    if data is not None:
        warnings.append(
            f"dataset: {data.frame.height} passing rows of {data.rows} (prompt from "
            f"{data.prompt_field}, completion from {data.completion_field}) in {where}"
        )
        warnings += data.notes
        steps_per_epoch = max(1, math.ceil(data.frame.height / batch))
        if steps > 4 * steps_per_epoch:
            warnings.append(
                f"max_steps {steps} is {steps / steps_per_epoch:.0f} passes over "
                f"{data.frame.height} examples at batch_size {batch}: fine-tuning that long "
                "memorises them; fewer --steps, or more rows"
            )
    return PrimeSFTConfig(
        config=config,
        reads=reads,
        ignored=ignored,
        warnings=warnings,
        file=file,
        data=data,
        data_path=data_path,
    )
