"""Which model a model string names: one rule for every reader of model names.

People and tools write one model many ways: a Hub id (``Qwen/Qwen3-8B``), a bare name
(``Qwen3-8B``, any case), vf-eval's folder spelling (``Qwen--Qwen3-8B``) and lm-eval's
(``Qwen__Qwen3-8B``, its ``model_name_sanitized``), a local directory
(``/models/Qwen3-8B/``), a training checkpoint under it (``/models/Qwen3-8B/checkpoint-100``,
verl's ``…/global_step_100/actor/huggingface``) or a Hugging Face cache snapshot
(``~/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/<sha>``). :func:`model_identity`
turns each into one :class:`ModelId`: the organisation where the string says it, the model's
name, the size its name states and the training step a checkpoint folder states. Two strings
name the same model when their :attr:`ModelId.match` agree (the name, case-insensitively,
without the organisation, an API's snapshot date (``gpt-4o-2024-08-06`` is ``gpt-4o``), the
engine that served it (``-hf``, ``-vllm``), and however its parts are separated:
``Qwen2.5 7B Instruct``, ``qwen2_5-7b-instruct``, ``qwen2p5-7b-instruct``); nothing else is
forgiven (``Qwen3-8B-Base`` is another model, as is ``Qwen3-1.7B`` beside ``Qwen3-17B``).
After a ``:``, Ollama's size and precision tags are part of the name (``qwen3:8b``), while a provider's
routing variant (``qwen/qwen3-8b:free``) and a Hub revision (``:main``) name the model
itself; a Hub id written with ``_`` for its ``/`` (``Qwen_Qwen3-8B``) is the Hub id. A step
at the end of a name (``my-org/qwen3-8b-grpo-checkpoint-100``, ``…-step-200``, a W&B alias
``qwen3-8b-grpo:v3``) is that run's step, as a checkpoint folder's is.

A string that names no model (:func:`names_model`: blank, ``None``, ``N/A``) is read as no
model at all. The reading layer names each row's model with it
(:func:`whilecli.io.facts.model_name`), and
the route's checks, the size read from a name and ``config`` compare with it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from whilecli.io.aliases import word
from whilecli.io.versions import INNER as _INNER
from whilecli.io.versions import STEP_DIR as _STEP_DIR
from whilecli.io.versions import STEP_WORDS as _STEP_WORDS
from whilecli.io.words import NO_VALUE

#: The engine a name says its model was served or converted by, at its end: OpenCompass'
#: model abbrs (``qwen2.5-7b-instruct-hf``, ``-vllm``, ``-turbomind``, ``-lmdeploy``) and
#: Meta's own ``Llama-2-7b-hf`` (the Hugging Face conversion of ``Llama-2-7b``). The weights
#: are the model's own: one model.
_SERVED = re.compile(r"(?i)[-_](?:hf|vllm|turbomind|lmdeploy|sglang|tgi)$")
#: A harness's label at a name's end for a hybrid model run with its thinking off
#: (``qwen3-8b-nothink``, ``Qwen3-8B (non-thinking)``, ``qwen3_8b_no_think``): the model's
#: own weights, one model. No model is released under such a name.
_NO_THINK = re.compile(
    r"(?i)(?:[-_.\s]+\(?|\s*\()(?:no|non|without)[-_\s]?think(?:ing)?(?:[-_\s]?mode)?\)?$"
)
#: The same label with thinking on (``Qwen3-8B-thinking``, ``Qwen3-8B (thinking)``): a
#: hybrid model's mode, or a model released as its Thinking build (``Kimi-K2-Thinking``,
#: ``Qwen3-Next-80B-A3B-Thinking``), so beside the name without it neither the same model nor
#: another (:func:`weights_relation`: unsure). A release's date after it
#: (``Qwen3-4B-Thinking-2507``) makes it a model's own name.
_THINK = re.compile(r"(?i)(?:[-_.\s]+\(?|\s*\()think(?:ing)?(?:[-_\s]?mode)?\)?$")
#: A decimal point written ``p`` between digits (Fireworks' ``qwen2p5-7b``, ``1p5b``), or a
#: version's written ``_`` (OpenCompass' ``llama-3_1-8b``, InternLM's ``internlm2_5-7b-chat``):
#: ``.``. Not a ``_`` before a size (``qwen3_8b``: version 3, 8B; ``qwen2_0.5b``), which
#: :data:`_SIZE` reads itself (``stablelm-2-1_6b``).
_VERSION_MARK = re.compile(r"(?<=\d)(?:p|_(?=\d+(?![\d.bm])))(?=\d)")
#: What a name's spellings differ by and the model does not (:attr:`ModelId.match`): the
#: separators ``-``, ``_`` and blanks (``Qwen3 8B``, ``qwen3_8b``, ``qwen-3-8b``), a ``v``
#: before a version (Fireworks' ``llama-v3p1-8b-instruct``, ``Mistral-7B-Instruct-v0.3``), and
#: Meta's ``Meta-`` before ``Llama`` (``Meta-Llama-3.1-8B-Instruct``, since renamed
#: ``Llama-3.1-8B-Instruct``).
_SEPARATORS = re.compile(r"[-_\s\u2010-\u2015\u2212]+")  # a typeset dash or minus too
_V_BEFORE_VERSION = re.compile(r"(?:^|(?<=[-_\s\u2010-\u2015\u2212]))v(?=\d)")
_META = re.compile(r"^meta[-_\s\u2010-\u2015\u2212]*(?=llama)")


def _canonical(name: str) -> str:
    """A name as :attr:`ModelId.key` writes it: lower case, without :data:`_SERVED` or a
    thinking-off label (:data:`_NO_THINK`), a version's ``_`` or ``p`` a ``.``
    (:data:`_VERSION_MARK`)."""
    return _VERSION_MARK.sub(".", _SERVED.sub("", _NO_THINK.sub("", name.strip())).lower())


def _squashed(key: str, size: float | None) -> str:
    """A key as :attr:`ModelId.match` compares it: without Meta's prefix, a version's ``v``,
    the separators (:data:`_SEPARATORS`) or its dots, with the size the name states after it
    (``~0.6``), so a size's point tells ``Qwen3-1.7B`` from a ``Qwen3-17B`` and ``qwen3-0_6b``
    is ``Qwen3-0.6B``."""
    plain = _SEPARATORS.sub("", _V_BEFORE_VERSION.sub("", _META.sub("", key))).replace(".", "")
    return plain if size is None else f"{plain}~{size:g}"


#: Billions of parameters in a name, with the decimal separators Hub names use: ``0.6B``,
#: ``8b``, ``1_6b`` (StabilityAI's ``stablelm-2-1_6b``; not in a name joined by ``_``
#: throughout, ``llama_3_8b``, whose ``_`` before the size is a separator), ``1p5b``;
#: ``30B`` of ``30B-A3B`` (the ``A3B`` after it is the active share, preceded by a letter, so
#: never read as the size). A number after a letter or a dot (``Qwen2.5``, ``Llama-3.1``) is a
#: version, never a size.
_SIZE = re.compile(
    r"(?<![A-Za-z0-9.])(\d+)(?:(?:[.pP]|(?<!_\d)(?<!_\d\d)(?<!_\d\d\d)_)(\d+))?[bB](?![A-Za-z0-9])"
)
#: An API model's snapshot at the end of its name: OpenAI's date (``gpt-4o-2024-08-06``),
#: Anthropic's (``claude-3-5-sonnet-20241022``), or ``-latest``: the API serves the model
#: its name without them names (what a response's ``model`` writes for the alias asked).
#: A date is one snapshot: two dates are two models (``gpt-4o-2024-05-13``,
#: ``gpt-4o-2024-08-06``), and beside the undated name it is that alias's snapshot only on an
#: API's model (:data:`_API_FAMILIES`, :func:`same_model`); on an open model's name
#: (``Qwen3-8B-20250601``) it is a build's, which may or may not hold the release's weights
#: (:func:`weights_relation`: unsure). ``-latest`` is the alias itself.
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|20\d{6}|latest)$", re.IGNORECASE)
_DATED = re.compile(r"[-_.](\d{4})-?(\d{2})-?(\d{2})$")
_LATEST = re.compile(r"(?i)-latest$")
#: Experts times billions: ``8x7B`` (Mixtral, ``Nous-Hermes-2-Mixtral-8x7B-DPO``).
_EXPERTS = re.compile(r"(?<![A-Za-z0-9.])(\d+)[xX](\d+)(?:[._pP](\d+))?[bB](?![A-Za-z0-9])")
#: Millions, with two digits or more (``135M``, ``360m``, ``500M``; a ``1M`` is a context
#: length, as in ``Qwen2.5-7B-Instruct-1M``).
_MILLIONS = re.compile(r"(?<![A-Za-z0-9.])(\d{2,4})(?:[._pP](\d+))?[mM](?![A-Za-z0-9])")
#: Quantization a name states at its end, one word or several joined by ``-``, ``_`` or ``.``
#: (``Qwen3-8B-AWQ``, ``Qwen2.5-7B-Instruct-GPTQ-Int4``, ``Llama-3.1-8B-Instruct-FP8-dynamic``,
#: ``Meta-Llama-3.1-8B-Instruct-quantized.w4a16``, ``Qwen3-8B-MLX-4bit``,
#: ``Qwen3-8B-unsloth-bnb-4bit``, ``Qwen3-8B-GGUF``, ``Qwen3-8B-NVFP4``): at least one word
#: that says a precision (:data:`_PRECISION`); the others only accompany one
#: (:data:`_WITH_PRECISION`). The words are each quantizer's own: llama.cpp's file types
#: (``Q4_K_M``, ``Q8_0``, ``IQ4_XS``, ``IQ1_S``, ``Q4_K_XL``, ``TQ1_0``; unsloth's dynamic
#: ``UD-``; a ``.gguf`` file), exllama's bits per weight (``exl2-4.0bpw``, ``6bpw-h6``),
#: GPTQ's and AWQ's group sizes (``gptq-4bit-128g``, ``g128``), bitsandbytes' (``nf4``,
#: ``fp4``, ``int8``, ``4bit``), MLC's (``q4f16_1``, ``q0f16``), AQLM, HQQ, EETQ, SpQR,
#: QuIP#, Marlin, torchao (``int4wo``, ``float8dq``) and compressed-tensors (``w8a8``,
#: ``w4a16``): each names the model's own weights at a lower precision.
_PRECISION = (
    r"awq|gptq|gguf|ggml|exl[23]|bnb|bf16|fp16|fp32|f16|f32|fp8|fp6|fp4|nf4|nvfp4|mxfp4"
    r"|int[248]|int[48](?:wo|dq)|float8(?:wo|dq)?|w\d{1,2}a\d{1,2}|\d{1,2}[-_]?bits?"
    r"|quantized|quant|[it]?q[1-8](?:_k)?(?:_(?:xxs|xs|s|m|l|xl|nl|\d))*"
    r"|q\d{1,2}f\d{2}(?:_\d)?|\d{1,2}(?:\.\d{1,2})?bpw|aqlm|hqq|eetq|spqr|quip#?|quipsharp"
    r"|marlin|torchao|compressed[-_]tensors|squeezellm|autoround|auto[-_]round|omniquant"
)
_WITH_PRECISION = (
    r"dynamic|static|g\d{2,3}|\d{2,3}g|gs\d{2,3}|mlx|mlc|unsloth|ud|imat|imatrix|sym|asym"
    r"|e4m3|e5m2|kv|h\d|act[-_]?order|desc[-_]?act|\d+x\d+|e8p|\d{5}-of-\d{5}"
)
#: One word of a quantization tail, at a name's end after ``-``, ``_``, ``.`` or a blank,
#: peeled off one at a time (:func:`_precision`).
_QUANT_END = re.compile(rf"(?i)[-_.\s]({_PRECISION}|{_WITH_PRECISION})$")
_QUANT_WORD = re.compile(rf"(?i)^(?:{_PRECISION})$")
#: A string that is a path, not a Hub id: absolute, relative to here or home, or Windows.
_PATH = re.compile(r"^(?:/|\./|\.\./|~|[A-Za-z]:[\\/])")


@dataclass(frozen=True)
class ModelId:
    """What a model string names."""

    name: str  # the model's name as written (``Qwen3-8B``), without organisation or path
    org: str | None = None  # ``Qwen`` of ``Qwen/Qwen3-8B``, where the string says it
    size_b: float | None = None  # billions of parameters the name states
    step: int | None = None  # the training step a checkpoint folder or the name's end states
    path: bool = False  # the string was a local path
    #: A provider's or Ollama's build of an open model (:data:`_PROVIDER_TAIL`,
    #: :data:`_OLLAMA_TAG`): ``ollama``, ``bedrock``, the word the name ended with
    #: (``turbo``, ``instant``), or ``hosted`` (a hosted provider's endpoint,
    #: :data:`_HOSTED_PREFIXES`, :data:`_ROUTING_TAGS`), read off :attr:`name`; the weights at
    #: a precision the name does not state, of a variant it may not state
    #: (:func:`weights_relation`).
    build: str | None = None

    @property
    def key(self) -> str:
        """What two strings naming one model share: the name, lower case, without ``-latest``
        (:data:`_LATEST`), without the engine it was served or converted by
        (:data:`_SERVED`), a version's ``_`` read as its ``.`` (:func:`_canonical`). A
        snapshot's date stays (:data:`_SNAPSHOT`: two dates are two models)."""
        return _LATEST.sub("", _canonical(self.name))

    @property
    def snapshot(self) -> str | None:
        """The date a snapshot's name ends with, as ``YYYYMMDD`` (``gpt-4o-2024-08-06``,
        ``claude-3-5-sonnet-20241022``); None where it ends with none."""
        found = _DATED.search(self.key)
        return "".join(found.groups()) if found and found.group(1).startswith("20") else None

    @property
    def undated(self) -> ModelId:
        """The name without its snapshot's date (:attr:`snapshot`)."""
        if self.snapshot is None:
            return self
        found = _DATED.search(_LATEST.sub("", self.name.strip()))
        return replace(self, name=self.name.strip()[: found.start()]) if found else self

    @property
    def match(self) -> str:
        """What two spellings of one model agree on (:func:`same_model`): :attr:`key` without
        its separators, dots, a version's ``v`` or Meta's ``Meta-``, with its stated size
        (:func:`_squashed`): ``Qwen2.5 7B Instruct``, ``qwen2_5-7b-instruct-hf`` and ``Qwen/Qwen2.5-7B-Instruct``
        are one model; ``Qwen2.5-7B-Instruct-AWQ``, ``-Base`` or ``Qwen2.5-14B`` another."""
        plain = _squashed(self.key, _size(self.key))
        plain = plain if self.build is None else f"{plain}~{self.build}"
        return plain if self.step is None else f"{plain}@{self.step}"

    @property
    def weights_match(self) -> str:
        """:attr:`weights_key` as :attr:`match` compares it."""
        return _squashed(_LATEST.sub("", self.weights_key), _size(self.weights_key))

    @property
    def precision(self) -> str | None:
        """The quantization the name states at its end (``FP8-dynamic`` of
        ``Llama-3.1-8B-Instruct-FP8-dynamic``, ``AWQ`` of ``Qwen3-8B-AWQ``), as written."""
        return _precision(self.name)[1]

    @property
    def weights_key(self) -> str:
        """The key of the model whose weights the name holds, at whatever precision: a
        quantized copy (``Qwen3-8B-AWQ``) shares it with its model (``Qwen3-8B``)."""
        return _canonical(_precision(self.name)[0])

    @property
    def anonymous(self) -> bool:
        """A name that states no model: a local path whose folder names a run, not a model
        (``/ckpt/run7/step_100``: no organisation, no size), or a bare label (``my-finetune``,
        ``policy-v2``, a server's ``--served-model-name``: no organisation, no size, no model
        family, :data:`_FAMILY`). Which model's weights it holds cannot be read from it."""
        if self.org is not None or self.size_b is not None:
            return False
        return self.path or (self.build is None and _family(self.name) is None)

    @property
    def display(self) -> str:
        """The model as a report names it: ``Org/Name``, or ``Name``."""
        return f"{self.org}/{self.name}" if self.org else self.name


def _number(whole: str, fraction: str | None) -> float:
    """``1`` and ``6`` of ``1_6b`` → 1.6."""
    return float(f"{whole}.{fraction}") if fraction else float(whole)


def _size(name: str) -> float | None:
    """Billions of parameters the name states, as its total: what the route's 7B rule reads.

    The rule (OPSD, or SFT from a stronger model, under about 7B: DESIGN section 2, check 3)
    asks whether the model knows enough to use a privileged hint, and what a model knows
    grows with the parameters it holds, not with the share one token runs through: a
    mixture of experts is read by its total. ``Qwen3-30B-A3B`` is 30 (``A3B``, the active
    share, is not a size), ``OLMoE-1B-7B`` (active, then total) the larger number, 7;
    ``gpt-oss-20b`` 20 (21B total, 3.6B active). ``Mixtral-8x22B`` does not state its total:
    the experts share attention and embeddings, so 8 × 22 = 176 overstates it (Mistral gives
    141B total, 39B active; 46.7B for ``8x7B``). What the name guarantees is that the total is
    at least one expert's model, 22, which is what is returned: never a total it could
    exceed, and on the right side of 7B wherever the expert is. ``Llama-4-Scout-17B-16E``
    (17B active, 16 experts) is 17 on the same ground. A name that states no size
    (``phi-2``, ``DeepSeek-V3``, ``Qwen1.5-MoE-A2.7B``, which states only the active share)
    is None: unknown, never a guess. ``135M`` and ``500M`` are 0.135 and 0.5. A name that
    states the sizes of two models (a distillation's: ``Qwen3-0.6B-distill-from-70B``,
    ``qwen3-0.6b-sft-on-qwen2.5-72b-traces``) says which it holds no more than it says the
    active share: None, but for the pair written ``1B-7B`` (active, then total). No model has
    0 parameters: ``run_0b`` states no size.
    """
    stated: dict[float, tuple[int, int]] = {}  # each size the name states: where it is written
    for found in _EXPERTS.finditer(name):
        stated.setdefault(_number(found.group(2), found.group(3)), found.span())
    for found in _SIZE.finditer(name):
        if not any(a <= found.start() < b for a, b in stated.values()):
            stated.setdefault(_number(found.group(1), found.group(2)), found.span())
    for found in _MILLIONS.finditer(name):
        stated.setdefault(_number(found.group(1), found.group(2)) / 1000, found.span())
    stated.pop(0.0, None)
    if len(stated) == 1:
        return next(iter(stated))
    if len(stated) == 2:
        (first, (_, end)), (second, (start, _)) = sorted(stated.items(), key=lambda s: s[1])
        if name[end:start] == "-" and first < second:  # OLMoE-1B-7B: active, then total
            return second
    return None


@lru_cache(maxsize=4096)
def _precision(name: str) -> tuple[str, str | None]:
    """``name`` without the quantization its end states, and that quantization (None: the
    name states none, and is returned whole). The words are peeled from the end, each the
    longest a quantizer writes (``Q4_K_XL``, ``4.0bpw``, ``q4f16_1``), while one is found;
    the tail is a quantization where one of them says a precision (:data:`_QUANT_WORD`)."""
    rest, stated = name, False
    while True:
        found = _QUANT_END.search(rest)
        if found is None or found.start() == 0:
            break
        stated = stated or bool(_QUANT_WORD.match(found.group(1)))
        rest = rest[: found.start()]
    if not stated or rest == name:
        return name, None
    return rest, name[len(rest) + 1 :]


#: What a ``:tag`` after a model's name says beside Ollama's size or precision (``qwen3:8b``,
#: ``:8b-q4_K_M``), which is read into the name (:func:`_tagged`). ``:latest`` and a Hub
#: revision, a branch (``:main``, ``:master``) or a commit (:data:`_COMMIT`), name one
#: repository's weights: nothing more. A provider's routing variant of one model
#: (:data:`_ROUTING_TAGS`) names the model too, served by a hosted provider.
_SAME_WEIGHTS = frozenset({"latest", "main", "master"})
#: OpenRouter's routing variants (``:free``, ``:nitro``, ``:beta``, ``:extended``,
#: ``:thinking``, ``:floor``, ``:online``, ``:exacto``): the named model, served by whichever
#: provider the route picks, at a precision the name does not state (the build ``hosted``
#: on an open family's name, as a LiteLLM prefix says, :data:`_HOSTED_PREFIXES`).
_ROUTING_TAGS = frozenset(
    {"free", "nitro", "beta", "extended", "thinking", "floor", "online", "exacto"}
)
_COMMIT = re.compile(r"(?i)^[0-9a-f]{7,40}$")
#: A W&B artifact's version alias (``qwen3-8b-grpo:v3``): the run's model at that version.
_ALIAS_STEP = re.compile(r"(?i)^v(\d+)$")
#: A training step stated at the end of a model's name, after one of the words a checkpoint
#: folder is named with (:data:`whilecli.io.versions.STEP_WORDS`):
#: ``my-org/qwen3-8b-grpo-checkpoint-100``, ``…-step-200``, ``…-global_step300``, ``…-ckpt-5``.
_NAME_STEP = re.compile(rf"(?i)[-_.]{_STEP_WORDS}(\d+)$")


def _tagged(name: str) -> tuple[str, int | None]:
    """A name with its ``:tag`` read (:data:`_SAME_WEIGHTS`), and the step the tag states.

    Ollama's tags are read into the name: ``qwen3:8b`` is ``qwen3-8b``, ``qwen3:8b-q4_K_M``
    ``qwen3-8b-q4_K_M``, ``Qwen3-8B-GGUF:Q4_K_M`` ``Qwen3-8B-GGUF-Q4_K_M``. A routing
    variant, ``:latest`` or a Hub revision names nothing more than the name
    (``qwen/qwen3-8b:free`` is ``qwen/qwen3-8b``); a W&B alias ``:v3`` is the name at step 3.
    """
    head, colon, tag = name.partition(":")
    if not colon or not head or not tag:
        return name, None
    if tag.lower() in _SAME_WEIGHTS or tag.lower() in _ROUTING_TAGS or _COMMIT.match(tag):
        return head, None
    found = _ALIAS_STEP.match(tag)
    if found is not None:
        return head, int(found.group(1))
    return f"{head}-{tag}", None


def _stepped(name: str) -> tuple[str, int | None]:
    """A name without the training step its end states (:data:`_NAME_STEP`), and that step:
    ``qwen3-8b-grpo-checkpoint-100`` is ``qwen3-8b-grpo`` at step 100, as the local folder
    ``/runs/qwen3-8b-grpo/checkpoint-100`` is. A name that is only a step word and its
    number (``step-3``) is a name."""
    found = _NAME_STEP.search(name)
    if found is None or found.start() == 0:
        return name, None
    return name[: found.start()], int(found.group(1))


#: How a folder or file name joins a Hub id's organisation and name, where a ``/`` cannot
#: stand: vf-eval's ``org--name`` (and the Hugging Face cache's ``models--org--name``), and
#: lm-eval's ``org__name`` (its ``model_name_sanitized``, the folder it writes results in).
ORG_JOINS = ("--", "__")


def _split_org(part: str) -> tuple[str | None, str]:
    """A name spelled ``org--name`` or ``org__name`` (:data:`ORG_JOINS`), or with the ``/``
    of a Hub id written ``_`` (``Qwen_Qwen3-8B``, :func:`_underscored`): its organisation
    and name; else no organisation."""
    for join in ORG_JOINS:
        if join in part:
            org, name = part.split(join, 1)
            if org and name:
                return org, name
    return _underscored(part)


#: Hub organisations whose name is not their models' family (``deepseek-ai`` of
#: ``DeepSeek-R1``): read as an organisation before an ``_`` (:func:`_underscored`).
_HUB_ORGS = frozenset(
    {"deepseek-ai", "mistralai", "google", "microsoft", "allenai", "nvidia", "ibm-granite"}
    | {"01-ai", "thudm", "zai-org", "moonshotai", "huggingfacetb", "tiiuae", "openai", "qwen"}
    | {"meta-llama", "unsloth", "nousresearch", "internlm", "baichuan-inc", "minimaxai"}
)


def _underscored(part: str) -> tuple[str | None, str]:
    """``Qwen_Qwen3-8B``, ``meta-llama_Llama-3.1-8B``: a Hub id whose ``/`` a script wrote
    ``_``. It splits at the first ``_`` whose right side begins with a model family's name
    (:data:`_FAMILY`) and whose left side is an organisation: one that names the same
    family and no number (``Qwen``, ``meta-llama``: :func:`_family_org`) or a known Hub
    organisation (:data:`_HUB_ORGS`). Any other ``_`` is the name's own (``qwen3_8b``,
    ``grpo_Qwen3-8B``, ``stablelm-2-1_6b``, ``Qwen3-1B_on_Qwen3-8B``): a run's prefix is not
    an organisation."""
    for at in (i for i, ch in enumerate(part) if ch == "_"):
        org, name = part[:at], part[at + 1 :]
        family = _family(name) if _FAMILY.match(name) else None
        if family and (org.lower() in _HUB_ORGS or _family_org(org, family)):
            return org, name
    return None, part


def _family_org(org: str, family: str) -> bool:
    """Whether ``org`` is an organisation named after ``family`` (``Qwen``, ``meta-llama``):
    it names the family and states no number, so never a model (``Qwen3-1B``)."""
    return not any(ch.isdigit() for ch in org) and _family(org) == family


#: How a harness names a provider before a model, with a ``:`` (promptfoo's
#: ``ollama:chat:llama3.1:8b``, ``openai:gpt-4o``, ``bedrock:meta.llama3-1-8b-instruct-v1:0``):
#: the provider and the API it calls, then the model. Not an Ollama tag after a name that
#: is also a provider's (``mistral:7b`` is Ollama's Mistral 7B).
_PROVIDER_PREFIX = re.compile(
    r"(?i)^(openai|anthropic|ollama|vllm|bedrock|vertex|azure|azureopenai|groq|together"
    r"|togetherai|mistral|huggingface|hf|openrouter|fireworks|deepseek|litellm|replicate"
    r"|perplexity|cohere|google|watsonx|localai|cloudflare-ai|sagemaker)"
    r"(?::(?:chat|completion|completions|messages|responses|text-generation|text))?:(?=.)"
)
#: Ollama's tag after a model's name: its size first (``:8b``, ``:0.6b``,
#: ``:8b-instruct-q4_K_M``, ``:8b-text``). An Ollama build is GGUF, at 4 bits unless the tag
#: says another precision, of the model's chat build unless the tag says ``text`` (its base).
_OLLAMA_TAG = re.compile(r"(?i)^\d+(?:\.\d+)?[bm](?:[-_].*)?$")
_OLLAMA_ORGS = frozenset({"ollama", "ollama_chat"})
#: Amazon Bedrock's model ids: the provider, a dot, the model, its API version
#: (``meta.llama3-1-8b-instruct-v1:0``; a cross-region profile's ``us.`` before).
_BEDROCK = re.compile(
    r"(?i)^(?:(?:us|eu|apac|global)\.)?(?:meta|mistral|amazon|cohere|ai21|deepseek|qwen"
    r"|writer|anthropic)\.(.+?)-v\d+:\d+$"
)
#: Words a provider ends an open model's name with for the build it serves, not another
#: model: Together's ``-Turbo`` (FP8), Groq's ``-instant``, ``-versatile`` and ``-specdec``,
#: Vertex AI's ``-maas``, Nebius' ``-fast``: the named model's weights, at a precision the
#: name does not state. Read on an open family's name only (``gpt-4-turbo`` is a model).
_PROVIDER_TAIL = re.compile(r"(?i)[-_](turbo|instant|versatile|specdec|maas|fast)$")
#: LiteLLM's prefixes for a hosted provider's endpoint (``together_ai/Qwen/Qwen3-8B``,
#: ``openrouter/qwen/qwen3-8b``, ``fireworks_ai/accounts/fireworks/models/qwen3-8b``): the
#: named model's weights served by the provider, at a precision the name does not state
#: (providers serve FP8 or lower as often as bf16): the build ``hosted``, unsure beside the
#: model (:func:`weights_relation`). Read on an open family's name only.
_HOSTED_PREFIXES = frozenset(
    {"together_ai", "together", "fireworks_ai", "fireworks", "deepinfra", "openrouter"}
    | {"anyscale", "perplexity", "replicate", "nebius", "novita", "hyperbolic", "lambda_ai"}
    | {"sambanova", "cerebras", "friendliai", "nscale", "featherless_ai", "baseten"}
    | {"nvidia_nim", "huggingface", "vertex_ai", "bedrock", "sagemaker", "azure", "azure_ai"}
    | {"watsonx", "cloudflare", "oci"}
)
#: LiteLLM's prefixes for a server the user runs (``hosted_vllm/Qwen/Qwen3-8B``, ``openai/``
#: for any OpenAI-compatible endpoint): the model itself, the prefix no part of its name;
#: read before a Hub id only (``openai/gpt-oss-20b`` is itself one).
_LOCAL_PREFIXES = frozenset(
    {"hosted_vllm", "openai", "vllm", "sglang", "lm_studio", "litellm_proxy"}
)
#: The builds whose model is a chat build their name does not say: Ollama's (``llama3.1:8b``
#: is Llama-3.1-8B-Instruct), Groq's (``llama-3.1-8b-instant`` is too).
_CHAT_BUILDS = frozenset({"ollama", "instant", "versatile", "specdec"})
#: The words that name a model's variant: a chat build (``-Instruct``, ``-it``, ``-chat``) or
#: its base (``-Base``, Ollama's ``-text``).
_CHAT_WORD = re.compile(r"(?i)(?:^|[-_.\s])(?:instruct|it|chat)(?=$|[-_.\s])")
_BASE_WORD = re.compile(r"(?i)(?:^|[-_.\s])(?:base|text)(?=$|[-_.\s])")


def _provider_prefix(part: str) -> tuple[str, str | None]:
    """``part`` without a harness's ``provider:`` (:data:`_PROVIDER_PREFIX`), and
    ``ollama`` where that provider is Ollama."""
    found = _PROVIDER_PREFIX.match(part)
    if found is None or _OLLAMA_TAG.match(part[found.end() :]):
        return part, None
    return part[found.end() :], "ollama" if found.group(1).lower() == "ollama" else None


def _bedrock(part: str) -> tuple[str, str | None]:
    found = _BEDROCK.match(part)
    return (found.group(1), "bedrock") if found else (part, None)


def _provider_tail(part: str) -> tuple[str, str | None]:
    found = _PROVIDER_TAIL.search(part)
    if found is None or found.start() == 0:
        return part, None
    return part[: found.start()], found.group(1).lower()


def _variant(found: ModelId) -> str | None:
    """Which build of a model a name names: ``chat``, ``base``, or None where it says
    neither (``Qwen3-8B`` is a chat model, ``Llama-3.1-8B`` a base one: the name cannot
    tell). A build that implies its chat model (:data:`_CHAT_BUILDS`) names ``chat``."""
    if _BASE_WORD.search(found.name):
        return "base"
    if _CHAT_WORD.search(found.name) or found.build in _CHAT_BUILDS:
        return "chat"
    return None


def _plain(found: ModelId) -> str:
    """The model a name names without its size, variant or precision words: what a build
    and a model it may serve must agree on."""
    bare = _CHAT_WORD.sub("-", _BASE_WORD.sub("-", _SIZE.sub("-", found.weights_key)))
    return _squashed(_SNAPSHOT.sub("", bare), None)


#: How two model names' weights relate (:func:`weights_relation`).
SAME, COPY, UNSURE, OTHER = "same", "copy", "unsure", "other"


def weights_relation(a: str, b: str) -> str:
    """How the weights two names name relate: :data:`SAME` model (:func:`same_model`);
    a :data:`COPY` of one model's weights at another precision (a quantized copy,
    ``Qwen3-8B-AWQ`` of ``Qwen3-8B``; a provider's or Ollama's build of it,
    ``llama3.1:8b`` or ``Meta-Llama-3.1-8B-Instruct-Turbo`` of ``Llama-3.1-8B-Instruct``);
    :data:`UNSURE` where a build's name leaves out what would tell (``llama3.1:8b``, a chat
    build, beside ``Llama-3.1-8B``, which may be a base model; ``ollama/llama3.1`` states no
    size; a hosted provider's endpoint, ``together_ai/Qwen/Qwen3-8B``, OpenRouter's
    ``qwen/qwen3-8b:free``, whose Hub name, compared as written, is the model's or a
    quantized copy's, at a precision it does not state); :data:`UNSURE` too where one name
    is the other with a thinking label at its end (:data:`_THINK`: a hybrid model's mode, or
    its Thinking release); else :data:`OTHER`."""
    return _relation(model_identity(a), model_identity(b))


def _relation(x: ModelId, y: ModelId) -> str:
    """:func:`weights_relation` of two names read. A training checkpoint (a step its folder
    or its name states, :attr:`ModelId.step`) is not the weights of the name without one, nor
    of another step: of one model's names, it is :data:`UNSURE` (the run it is a step of may
    start from the model, or be the model's own name for its run)."""
    if _same(x, y):
        return SAME
    if x.step != y.step:
        runs = _relation(replace(x, step=None), replace(y, step=None))
        return UNSURE if runs in (SAME, COPY) else runs
    if _dated_build(x, y) or _dated_build(y, x):
        return UNSURE
    if _adapter_of(x, y) or _adapter_of(y, x):
        return UNSURE
    for hosted, model in ((x, y), (y, x)):
        if hosted.build == "hosted":  # a Hub name as written, served at an unstated precision
            bare = replace(hosted, build=None)
            same = bare.match == model.match or bare.weights_match == model.weights_match
            chat = _chat_labelled(bare, model) or _chat_labelled(model, bare)
            return UNSURE if same or chat else OTHER
    for labelled, model in ((x, y), (y, x)):
        plain = _THINK.sub("", labelled.name)
        if plain != labelled.name and replace(labelled, name=plain).match == model.match:
            return UNSURE
    for build, model in ((x, y), (y, x)):
        if build.build is not None:
            return _build_relation(build, model)
    if x.weights_match == y.weights_match:
        return COPY
    if _chat_labelled(x, y) or _chat_labelled(y, x):
        return UNSURE
    return OTHER


#: Families that release their base model under the plain name (``Llama-3.1-8B``,
#: ``Qwen2.5-7B``, ``gemma-2-9b``, ``Mistral-7B-v0.3``) and their chat model with a label
#: (``-Instruct``, ``-it``): there the label names another model's weights.
_PLAIN_IS_BASE = re.compile(
    r"(?i)^(?:meta-)?(?:llama|codellama|mistral|mixtral|qwen(?:1\.5|2(?:\.5)?)(?![\d.])|gemma"
    r"|olmo|smollm|yi|falcon|internlm|baichuan)(?![a-z])"
)


def _chat_labelled(labelled: ModelId, plain: ModelId) -> bool:
    """Whether ``labelled`` is ``plain`` with a chat label (``qwen3-8b-instruct`` beside
    ``Qwen3-8B``) where ``plain`` states no variant and its family is not one known to
    release its base model under the plain name (:data:`_PLAIN_IS_BASE`): ``Qwen3-8B`` is
    Qwen's chat model, so the label may name it or another build."""
    if _variant(labelled) != "chat" or _variant(plain) is not None:
        return False
    if _PLAIN_IS_BASE.match(plain.key):
        return False
    bare = _CHAT_WORD.sub("", labelled.name)
    return bool(bare) and replace(labelled, name=bare).weights_match == plain.weights_match


def unsure_reason(names: Sequence[str], model: str) -> str:
    """Why names :func:`weights_relation` reads as :data:`UNSURE` beside ``model`` leave its
    weights unknown, in words a report can follow a list of them with: a thinking label
    (:data:`_THINK`) where every one carries one, else a provider's or Ollama's build."""
    label = [n for n in names if _THINK.search(model_identity(n).name)]
    if names and len(label) == len(names) and not _THINK.search(model_identity(model).name):
        return (
            "a thinking label: a hybrid model's thinking mode (its own weights) or a model"
            " released as its Thinking build (another model's)"
        )
    mine = model_identity(model)
    steps = [n for n in names if model_identity(n).step != mine.step]
    if names and len(steps) == len(names):
        return (
            "a training checkpoint: a step of a run, not the released weights (the run may start"
            " from the model or be another's)"
        )
    adapters = [n for n in names if _adapter_of(model_identity(n), mine) or _adapter_of(mine, model_identity(n))]  # fmt: skip
    if names and len(adapters) == len(names):
        return (
            "a LoRA adapter's name: a build tuned from the model, whose weights are not the"
            " model's own unless the adapter is empty"
        )
    dated = [n for n in names if _dated_build(model_identity(n), mine) or _dated_build(mine, model_identity(n))]  # fmt: skip
    if names and len(dated) == len(names):
        return (
            "a date at the end of an open model's name, a build's (not an API's snapshot),"
            " which may or may not hold the release's weights"
        )
    labelled = [
        n
        for n in names
        if _written_chat(n, model)
        and (_chat_labelled(model_identity(n), mine) or _chat_labelled(mine, model_identity(n)))
    ]
    if names and len(labelled) == len(names):
        return (
            "a chat label beside a name that states no variant: some families name their chat"
            " model so (Qwen3-8B), others their base model (Llama-3.1-8B)"
        )
    if names and all(model_identity(n).build == "hosted" for n in names):
        return (
            "a hosted provider's endpoint, which serves the model at a precision the name"
            " does not state (FP8 or lower as often as bf16)"
        )
    return (
        "a provider's or Ollama's build whose name does not say which model's weights it"
        " serves (it leaves out the variant or the size)"
    )


def _written_chat(a: str, b: str) -> bool:
    """Whether either name writes a chat label (``-Instruct``, ``-it``, ``-chat``), not only
    implies one (Ollama's ``qwen3:8b`` writes none)."""
    return any(_CHAT_WORD.search(model_identity(n).name) for n in (a, b))


def _build_relation(build: ModelId, model: ModelId) -> str:
    mine, theirs = _plain(build), _plain(model)
    if build.size_b is not None and model.size_b is not None and build.size_b != model.size_b:
        return OTHER
    if mine != theirs:
        return UNSURE if mine and theirs.startswith(mine) else OTHER
    said, named = _variant(build), _variant(model)
    if said is not None and named is not None and said != named:
        return OTHER
    if None in (said, named, build.size_b, model.size_b):
        return UNSURE
    return COPY


#: A model's page on a hub, as a browser shows it: ``https://huggingface.co/Qwen/Qwen3-8B``,
#: ``…/tree/main``, ``…/blob/<sha>/config.json``, ``hf://Qwen/Qwen3-8B``, ModelScope's
#: ``modelscope.cn/models/Qwen/Qwen3-8B``: the org, the name, and the revision where one is in it.
_HUB_URL = re.compile(
    r"(?i)^(?:hf://|(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co|modelscope\.cn)/)"
    r"(?:models/)?([^/\s?#]+)/([^/\s?#]+)(?:/(?:tree|blob|resolve|commit)/([^/\s?#]+))?"
    r"(?:[/?#].*)?$"
)


def _from_url(raw: str) -> str:
    """A hub page's address as the Hub id it shows (``Qwen/Qwen3-8B``, with ``:revision``
    where it names one); any other text as it is."""
    found = _HUB_URL.match(raw)
    if found is None:
        return raw
    org, name, revision = found.groups()
    return f"{org}/{name}" + (f":{revision}" if revision else "")


#: A hosted provider's id scheme around a model's name: Fireworks'
#: ``accounts/<account>/models/<model>`` (with or without LiteLLM's ``fireworks_ai/``),
#: Cloudflare Workers AI's ``@cf/<org>/<model>`` and ``@hf/<org>/<model>``, Vertex AI's
#: ``[projects/<p>/locations/<l>/]publishers/<org>/models/<model>[@version]``, Azure ML's
#: ``azureml://registries/<registry>/models/<model>[/versions/<v>]``. What the provider serves
#: is the named model's weights at a precision the id does not state (the build ``hosted``);
#: an API's model (``gemini-1.5-pro-002`` on Vertex, :data:`_API_FAMILIES`) is itself.
_PROVIDER_IDS = (
    re.compile(r"(?i)^(?:[\w.-]+/)?accounts/[^/]+/models/([^/@:]+)$"),
    re.compile(r"(?i)^@(?:cf|hf)/(.+)$"),
    re.compile(
        r"(?i)^(?:projects/[^/]+/locations/[^/]+/)?publishers/([^/]+/models/[^/@]+)(?:@.*)?$"
    ),
    re.compile(r"(?i)^azureml://registries/[^/]+/models/([^/]+)(?:/versions/[^/]+)?/?$"),
)
#: Amazon Bedrock's ARNs: a foundation model's or an inference profile's holds the model's
#: Bedrock id (``arn:aws:bedrock:us-east-1::foundation-model/meta.llama3-1-8b-instruct-v1:0``),
#: read as that id; a provisioned, custom or imported model's holds an id of the account's
#: own, which names no model.
_BEDROCK_ARN = re.compile(
    r"(?i)^arn:aws[\w-]*:bedrock:[^:]*:[^:]*:(foundation-model|inference-profile"
    r"|application-inference-profile|provisioned-model|custom-model|imported-model)/(.+)$"
)
#: Cloudflare's model ids begin with ``@`` (``@cf/meta/llama-3.1-8b-instruct``): not the
#: ``@`` before a version (:func:`version_split`).
CLOUDFLARE = r"(?i)^@(?:cf|hf)/"


def version_split(text: str) -> tuple[str, str | None]:
    """A recorded ``model@version``'s model and version; None where ``text`` states no version:
    no ``@`` after its first character past Cloudflare's ``@cf/`` (:data:`CLOUDFLARE`), or an
    ``@`` before a quantization (LM Studio's ``qwen/qwen3-8b@q4_k_m``, a precision the model
    is run at, read into the name by :func:`model_identity`, not a policy's version)."""
    lead = re.match(CLOUDFLARE, text)
    at = text.find("@", lead.end() if lead else 0)
    if at < 0:
        return text, None
    if _quantization(text[at + 1 :]):
        return text, None
    return text[:at], text[at + 1 :]


def _quantization(tag: str) -> bool:
    """Whether ``tag`` is only a quantization's words (``q4_k_m``, ``8bit``, ``mlx-4bit``)."""
    return bool(tag) and _precision(f"m-{tag}") == ("m", tag)


def _provider_id(raw: str) -> ModelId | None:
    """The model a hosted provider's id names (:data:`_PROVIDER_IDS`, :data:`_BEDROCK_ARN`),
    as a hosted build where its name is an open model's; None where ``raw`` is no such id."""
    arn = _BEDROCK_ARN.match(raw)
    if arn is not None:
        kind, held = arn.group(1).lower(), arn.group(2)
        if kind in ("foundation-model", "inference-profile"):
            return model_identity(held)
        return ModelId(held, path=True)  # the account's own id: it names no model
    for scheme in _PROVIDER_IDS:
        found = scheme.match(raw)
        if found is not None:
            inner = found.group(1).replace("/models/", "/")
            named = model_identity(inner)
            if (_family(named.name) or _family(_canonical(named.name))) not in _API_FAMILIES:
                return replace(named, build=named.build or "hosted", path=False)
            return replace(named, path=False)
    return None


@lru_cache(maxsize=4096)
def model_identity(text: str) -> ModelId:
    """The model ``text`` names (see the module doc); an empty string names ``""``."""
    raw = _from_url(text.strip())
    provided = _provider_id(raw)
    if provided is not None:
        return provided
    head, version = version_split(raw)
    if version is None and head.find("@", 1) > 0:  # LM Studio's model@quantization
        at = head.find("@", 1)
        raw = f"{head[:at]}-{head[at + 1 :]}"
    is_path = bool(_PATH.match(raw)) or raw.replace("\\", "/").count("/") >= 2
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in ("", ".")]
    cached = [i for i, p in enumerate(parts) if p.lower().startswith("models--")]
    if cached:  # a Hugging Face cache: models--Org--Name/snapshots/<sha>
        org, name = _split_org(parts[cached[-1]][len("models--") :])
        return ModelId(name, org, _size(name), None, True)
    if not parts:
        return ModelId(raw)
    parts[0], build = _provider_prefix(parts[0])
    if parts[0].lower() in _OLLAMA_ORGS and len(parts) == 2:
        parts, build = parts[1:], "ollama"
    hosted = None
    if len(parts) >= 2 and not _PATH.match(raw):  # LiteLLM's provider/model
        head = parts[0].lower()
        if head in _HOSTED_PREFIXES or (head in _LOCAL_PREFIXES and len(parts) >= 3):
            hosted = "hosted" if head in _HOSTED_PREFIXES else None
            parts = parts[1:]
            if len(parts) > 2 and parts[0].lower() == "accounts" and "models" in parts:
                parts = parts[-1:]  # Fireworks' accounts/<account>/models/<name>
            if len(parts) <= 2:
                is_path = False
    tag = parts[-1].partition(":")[2]
    if tag.lower() in _ROUTING_TAGS:  # OpenRouter's routing variant: a hosted provider's
        parts[-1], hosted = parts[-1].partition(":")[0], "hosted"
    if (_OLLAMA_TAG.match(tag) and not _COMMIT.match(tag)) or (
        tag.lower() == "latest" and len(parts) == 1
    ):
        build = "ollama"
    last, bedrock = _bedrock(parts[-1])
    last, served = _provider_tail(_tagged(last)[0] if build == "ollama" else last)
    build = build or bedrock or served or hosted
    if build is not None and _open_family(last):
        return replace(model_identity("/".join([*parts[:-1], last])), build=build)
    if bedrock is not None:  # an API's model on Bedrock: the model its name names
        parts[-1] = _bedrock(parts[-1])[0]
    parts[-1], tagged = _tagged(parts[-1])
    if not is_path and any(_STEP_DIR.match(p) for p in parts):
        is_path = True  # a relative checkpoint folder: ``Qwen3-8B/checkpoint-500``
    if not is_path:  # a Hub id or a bare name (vf-eval's org--name, lm-eval's org__name)
        org, name = (parts[0], parts[1]) if len(parts) == 2 else _split_org(parts[-1])
        # a quantizer's upload named after the Hub id: ``bartowski/Qwen_Qwen3-8B-GGUF``
        if len(parts) == 2:
            inner_org, inner = _underscored(name)
            org, name = (inner_org, inner) if inner_org is not None else (org, name)
        name, stated = _stepped(name)
        step = tagged if tagged is not None else stated
        return ModelId(name, org, _size(name), step)
    step = tagged
    while True:  # strip a checkpoint folder and the folders inside it (verl's actor/huggingface)
        at = len(parts) - 1
        while at > 0 and parts[at].lower() in _INNER:
            at -= 1
        found = _STEP_DIR.match(parts[at]) if at > 0 else None
        if found is None:
            break
        step = int(found.group(1)) if step is None else step
        del parts[at:]
    org, name = _split_org(parts[-1])
    name, stated = _stepped(name)
    return ModelId(name, org, _size(name), step if step is not None else stated, True)


def names_model(text: str) -> bool:
    """Whether a recorded model string names a model: its name (the part before any ``@``)
    is not blank nor a missing value's text (``None``, ``null``, ``N/A``, ``unknown``, any
    case: :data:`whilecli.io.words.NO_VALUE`). ``""``, ``"  "`` and ``"@4"`` name none; the
    reading layer reads them as null (:func:`whilecli.io.facts.named_model`)."""
    return word(version_split(text)[0]) not in NO_VALUE


def check_model_option(value: str | None, option: str) -> None:
    """The one check of every option that names a model (``--model`` of route, check and
    config, the NAME of config's ``--teacher NAME@URL``, ``--set model.name=...``): a name
    that names no model (:func:`names_model`: blank, ``None``, ``N/A``) or that holds a
    control character (a newline, a tab) is refused in one line naming the option. Rows that
    name no model are read as no model; an option given one would otherwise decide a verdict
    on a name no row can match."""
    from whilecli.errors import UsageError

    if value is None:
        return
    if not names_model(value):
        what = "is empty" if not value.partition("@")[0].strip() else f"{value!r} names no model"
        raise UsageError(
            f"{option} {what}: give a Hub id or a local model folder (e.g. Qwen/Qwen3-8B)"
        )
    control = next((ch for ch in value if not ch.isprintable()), None)
    if control is not None:
        raise UsageError(
            f"{option} {value!r} holds a control character (U+{ord(control):04X}):"
            " a model name is one line of text"
        )


def model_key(text: str) -> str:
    """:attr:`ModelId.key` of ``text``."""
    return model_identity(text).key


def match_key(text: str) -> str:
    """:attr:`ModelId.match` of ``text``: equal for two spellings of one model."""
    return model_identity(text).match


def same_model(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` name one model: their :attr:`ModelId.match` agree, or one is an
    API's model at a dated snapshot and the other its undated alias (:func:`_alias_of`:
    ``gpt-4o-2024-08-06`` is what ``gpt-4o`` served; ``gpt-4o-2024-05-13`` is another)."""
    return _same(model_identity(a), model_identity(b))


def _same(x: ModelId, y: ModelId) -> bool:
    return x.match == y.match or _alias_of(x, y) or _alias_of(y, x)


def without_step(text: str) -> str:
    """``text`` as the run it is a checkpoint of, where it states a training step
    (``/ckpt/Qwen3-8B/checkpoint-500`` → ``Qwen3-8B``; ``qwen3-8b-grpo:v3`` →
    ``qwen3-8b-grpo``): what a checkpoint is compared by where its step is read as a policy
    version beside one the trained model states; any other name as written."""
    found = model_identity(text)
    return text if found.step is None else replace(found, step=None).display


def _alias_of(dated: ModelId, alias: ModelId) -> bool:
    """Whether ``dated`` is an API's model at a snapshot (:attr:`ModelId.snapshot`) and
    ``alias`` the undated name an API serves it under (:data:`_API_FAMILIES`)."""
    if dated.snapshot is None or alias.snapshot is not None:
        return False
    return _family(dated.name) in _API_FAMILIES and dated.undated.match == alias.match


#: A LoRA adapter's or PEFT build's word after a model's name, and what follows it (its
#: rank, its task: ``Qwen3-8B-lora-r16-math``, ``qwen3-8b-qlora``).
_ADAPTER = re.compile(r"(?i)[-_.](?:q?lora|adapters?|peft|dora)(?:[-_.].*)?$")


def _adapter_of(adapter: ModelId, model: ModelId) -> bool:
    """Whether ``adapter`` names ``model`` (or its quantized copy) with a LoRA adapter's word
    after it (:data:`_ADAPTER`): a build tuned from the model, whose weights the name cannot
    tell from the model's (an adapter may be merged, or served beside the base)."""
    found = _ADAPTER.search(adapter.name)
    if found is None or found.start() == 0:
        return False
    return _relation(replace(adapter, name=adapter.name[: found.start()]), model) in (SAME, COPY)


def _dated_build(dated: ModelId, plain: ModelId) -> bool:
    """Whether ``dated`` is ``plain`` with a date at its end that is no API's snapshot
    (``Qwen3-8B-20250601``, ``my-org/Qwen3-8B-2025-06-01``): a build's date, whose weights
    the name cannot tell from the release's."""
    if dated.snapshot is None or plain.snapshot is not None:
        return False
    bare = dated.undated
    return bare.match == plain.match or bare.weights_match == plain.weights_match


#: A training run's tags at a name's end: the method it was trained with, a run, seed or
#: version number (``Qwen3-8B-grpo``, ``qwen3_8b_rl_run3``, ``Qwen3-8B-sft-v2``,
#: ``Qwen3-8B-finetuned``). Not a variant a release names (``-Instruct``, ``-Base``), nor a
#: distilled model's (``R1-Distill-Qwen-7B``: another model's name inside).
_TRAINING_TAGS = re.compile(
    r"(?i)(?:[-_.](?:grpo|ppo|dpo|sft|rl|rlhf|rlvr|rlaif|ft|finetuned?|fine[-_]tuned?|tuned|trained"
    r"|lora|qlora|merged|orpo|kto|simpo|ipo|rloo|gspo|dapo|reinforce|opd|opsd|rae|run\d*"
    r"|exp\d*|seed\d+|v\d+|ckpt|final|best|latest))+$"
)


#: Words beside a model's name that name another model, not the same one under an alias: a
#: release's variant (:data:`_CHAT_WORD`, :data:`_BASE_WORD`, read apart), a modality, a
#: domain, a reward or guard model, a distilled or thinking build (``Qwen3-8B-VL``,
#: ``Skywork-Reward-Llama-3.1-8B``).
_MODEL_WORDS = frozenset(
    {
        *("instruct", "it", "chat", "base", "text", "vl", "vision", "audio", "omni", "coder"),
        *("code", "math", "guard", "reward", "rm", "prm", "orm", "embed", "embedding"),
        *("reranker", "distill", "distilled", "think", "thinking", "reasoning", "preview"),
        *("mini", "nano", "pro", "flash", "turbo", "moe", "draft", "eagle", "medusa", "judge"),
    }
)
#: How many words beside a name :func:`tuned_from` reads as an alias's or a run's.
_BESIDE_WORDS = 2


def tuned_from(a: str, b: str) -> bool:
    """Whether ``a`` names ``b`` with words beside its name that name no other model: a
    training run's tags at its end (:data:`_TRAINING_TAGS`: ``Qwen3-8B-grpo``,
    ``my-org/Qwen3-8B-sft-v2``, a checkpoint folder ``/ckpt/qwen3_8b_rl_run3/global_step_40``)
    or up to :data:`_BESIDE_WORDS` words of letters before or after it that are not a model's
    (:data:`_MODEL_WORDS`: ``local-qwen3-8b``, ``Qwen3-8B-server``): a model trained from
    ``b``, a checkpoint of the run that trains it, or ``b`` served under an alias, which the
    name alone cannot tell apart."""
    found = model_identity(a)
    plain = _TRAINING_TAGS.sub("", found.name)
    tagged = plain != found.name and bool(plain)
    if tagged and (same_model(plain, b) or same_model(replace(found, name=plain).display, b)):
        return True
    words = re.split(r"[-_\s]+", found.name.strip())
    for before in range(_BESIDE_WORDS + 1):
        for after in range(_BESIDE_WORDS + 1 - before):
            beside = words[:before] + words[len(words) - after :]
            if not beside or before + after >= len(words):
                continue
            if not all(w.isalpha() and w.lower() not in _MODEL_WORDS for w in beside):
                continue
            if same_model("-".join(words[before : len(words) - after]), b):
                return True
    return False


#: Words that begin a model's name, each followed by a version or size (``gpt-4o``,
#: ``Qwen3``, ``Llama-3.1``, ``gemma-2``) or by a tier word (``claude-sonnet``,
#: ``gemini-pro``, ``deepseek-coder``): what a folder or file name that names a model holds.
#: An API's families (:data:`_API_FAMILIES`) name models nobody trains here.
_API_FAMILIES = (
    *("gpt", "chatgpt", "davinci", "claude", "gemini", "grok", "o1", "o3", "o4", "sonar", "nova"),
)
_OPEN_FAMILIES = (
    *("qwen", "qwq", "llama", "codellama", "mistral", "mixtral", "ministral", "codestral"),
    *("deepseek", "phi", "gemma", "olmo", "olmoe", "nemotron", "granite", "yi", "glm"),
    *("chatglm", "kimi", "minimax", "falcon", "smollm", "internlm", "baichuan", "starcoder"),
    *("vicuna", "zephyr", "tulu", "hermes", "dbrx", "jamba", "exaone", "command-r"),
)
_TIERS = (
    "sonnet|opus|haiku|instant|pro|flash|ultra|nano|coder|math|chat|instruct|base|it|large"
    "|medium|small|tiny|mini|preview|turbo|plus|v\\d+|r\\d+"
)
_FAMILY = re.compile(
    r"(?i)(?<![a-z0-9])("
    + "|".join(sorted((*_API_FAMILIES, *_OPEN_FAMILIES), key=len, reverse=True))
    + rf")(?=[-_.]?\d|[-_.](?:{_TIERS})(?![a-z])|$|[-_.](?![a-z]))"
)
#: How many folders above a file its path is read for a model's name (the file's own name
#: first): ``runs/Qwen3-8B/step_100/rollouts.jsonl`` names it two folders up.
PATH_FOLDERS = 3


def _family(text: str) -> str | None:
    found = _FAMILY.search(text)
    return found.group(1).lower() if found else None


def _open_family(name: str) -> bool:
    """Whether ``name`` names an open model's family, as written or with a version's ``p``
    read as its point (Fireworks' ``llama-v3p1-8b-instruct``)."""
    return (_family(name) or _family(_canonical(name))) in _OPEN_FAMILIES


#: Words that say a path part names a model in another role than the writer's, or names a
#: dataset built with one (``judged_by_gpt-4o``, ``gpt-4o-judge``, ``math_gpt4o_labels``,
#: ``tulu-3-sft-mixture``, ``r1-distill-qwen-7b``, ``gsm8k-llama-3-format``).
_OTHER_ROLE = re.compile(
    r"(?i)(?<![a-z])(?:judge[ds]?|judging|grader|graded|grading|labels?|labeled|annotat\w*"
    r"|prompts?|data|dataset|mixture|sft|distill\w*|format|reference|teacher|tokenizer|rubric"
    r"|critic|rm)(?![a-z])"
)


def _names_a_writer(part: str) -> bool:
    """Whether a path part names a model that may have written the rows: a family word
    followed by a version or a size (``gpt-4o``, ``Qwen3-8B``, ``claude-sonnet-4``; not a
    bare ``deepseek_math`` or ``grok-math``), and no word of another role
    (:data:`_OTHER_ROLE`)."""
    found = _FAMILY.search(part)
    if found is None or _OTHER_ROLE.search(part):
        return False
    return bool(
        re.search(r"\d", part[found.end() : found.end() + 24]) or found.group(1)[-1].isdigit()
    )


def path_model(path: Path) -> str | None:
    """The first part of a file's path (its name first, then the folders above it, nearest
    first: at most :data:`PATH_FOLDERS`) that names a model that may have written the rows
    (:func:`_names_a_writer`: ``gpt-4o-airline.json``, ``Qwen__Qwen3-8B``,
    ``llama-3.1-8b-rollouts``; not ``judged_by_gpt-4o``); None where none does."""
    whole = path.absolute()
    for part in [whole.name, *(p.name for p in whole.parents)][: PATH_FOLDERS + 1]:
        if _names_a_writer(part):
            return part
    return None


#: The version written right after a family's word (``3`` of ``Qwen3-8B``, ``3.1`` of
#: ``Llama-3.1-8B``, ``4o`` of ``gpt-4o-airline``).
_VERSION = re.compile(r"[-_.]?v?(\d+(?:\.\d+)*[a-z]?)(?![0-9])", re.IGNORECASE)


def _family_version(part: str) -> str | None:
    found = _FAMILY.search(part)
    if found is None:
        return None
    version = _VERSION.match(part, found.end())
    return version.group(1).lower() if version else None


def parts_name_other_models(a: str, b: str) -> bool:
    """Whether two path parts that name a model (:func:`path_model`) name different ones:
    another family (``Qwen3-8B``, ``Llama-3.1-8B``), or the same family at another version
    or another stated size (``Qwen2.5-7B``, ``Qwen3-8B``, ``Qwen3-32B``). What the parts say
    besides (``gpt-4o-airline``, ``gpt-4o-retail``; a fine-tune's ``qwen3-8b-grpo``) names
    no other model: False, as where either part names no family."""
    mine, theirs = _family(a), _family(b)
    if mine is None or theirs is None:
        return False
    if mine != theirs:
        return True
    versions = _family_version(a), _family_version(b)
    if None not in versions and versions[0] != versions[1]:
        return True
    sizes = _size(a), _size(b)
    return None not in sizes and sizes[0] != sizes[1]


#: How a read's ``path_model`` fact writes a model a settings file names (``config.yaml:
#: model = gpt-4o``), and how it joins the writers of pooled reads that name different ones.
_SETTINGS_SAY, _WRITERS_JOIN = " = ", "; "
_SETTINGS_SAID = re.compile(r"[^/:;]+: [\w.]+" + re.escape(_SETTINGS_SAY) + r"(.+)")


def said_in_settings(where: str, model: str) -> str:
    """A ``path_model`` fact for a model a settings file names: ``where = model``."""
    return f"{where}{_SETTINGS_SAY}{model}"


def writer_named(path_model: str) -> str:
    """The model one read's ``path_model`` fact names: the name a settings file gives
    (:func:`said_in_settings`: ``config.yaml: model = gpt-4o`` names ``gpt-4o``), else the
    path part itself (``runs/Qwen3-8B/``)."""
    said = _SETTINGS_SAID.fullmatch(path_model)
    return said.group(1) if said else path_model


def joined_writers(mine: str | None, theirs: str | None) -> str | None:
    """The ``path_model`` fact of two reads pooled: each one's where they name different
    models (:func:`parts_name_other_models`), so no pooled writer goes unseen; else the
    first's."""
    if mine is None or theirs is None:
        return mine or theirs
    held = [writer_named(w) for w in mine.split(_WRITERS_JOIN)]
    new = [
        w
        for w in theirs.split(_WRITERS_JOIN)
        if all(parts_name_other_models(writer_named(w), h) for h in held)
    ]
    return _WRITERS_JOIN.join([mine, *new])


def writers_in(path_model: str) -> list[str]:
    """Each fact a pooled ``path_model`` holds (:func:`joined_writers`)."""
    return path_model.split(_WRITERS_JOIN)


def writers_named(named: Sequence[str | None]) -> tuple[list[str], list[str | None]]:
    """The different models path parts name (:func:`parts_name_other_models`), in the order
    first named, and each part's: the first of them it names no other model than; None for
    a part that names none. One rule for the rows a pool reads and the summaries routed
    together (:func:`whilecli.io.read.refuse_mixed_pool`, ``route.summary``)."""
    models: list[str] = []
    for name in named:
        if name is not None and all(parts_name_other_models(name, m) for m in models):
            models.append(name)
    each = [
        None if n is None else next(m for m in models if not parts_name_other_models(n, m))
        for n in named
    ]
    return models, each


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def names_other_model(part: str, model: str) -> bool:
    """Whether a path part that names a model (:func:`path_model`) names another than
    ``model``: it does not hold ``model``'s name (compared without case or separators:
    ``qwen3_8b`` holds ``Qwen/Qwen3-8B``), and it names an API's model (``gpt-4o``), or
    another family than ``model``'s, or the same family at another stated size. A part of
    ``model``'s family stating no size, or a ``model`` of no known family beside an open
    model's name (a fine-tune's own name), says nothing: False."""
    ident = model_identity(model)
    if _alnum(_SNAPSHOT.sub("", ident.weights_key)) in _alnum(part):
        return False
    theirs, mine = _family(part), _family(ident.name)
    if theirs is None:
        return False
    if theirs in _API_FAMILIES:
        return theirs != mine or _alnum(ident.key) not in _alnum(part)
    if mine is None:
        return False
    if theirs != mine:
        return True
    size = _size(part)
    return size is not None and ident.size_b is not None and size != ident.size_b
