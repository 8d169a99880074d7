"""One model as tools and people spell it is one model (check 6, the writers of a pool, the
teacher-is-the-student rule): the separators between its parts, a typeset dash among them
(``Qwen2.5-7B-Instruct``, ``Qwen2.5 7B Instruct``, ``qwen2_5-7b-instruct``), a version's
``p`` or ``_`` for its ``.`` (Fireworks' ``qwen2p5-7b-instruct``), a ``v`` before the version
(``llama-v3p1-8b-instruct``), Meta's ``Meta-`` before ``Llama``, the engine that served it
(``-hf``, ``-vllm``), case and organisation. Another size, another version, ``-Base`` or a
quantized copy is another model.

The generator composes a name from its parts (family, version, size, tier) and spells it
each way; the truth is the parts, never the rule under test. A pool whose rows spell the
trained model so routes on-policy, never SFT."""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from whilecli.io.modelid import same_model
from whilecli.route import run_route
from whilecli.route.model import Route

FAMILIES = ("Qwen", "Llama", "gemma", "Mistral", "internlm", "phi")
VERSIONS = ("2", "2.5", "3", "3.1", "3.2")
SIZES = ("0.5", "1.5", "7", "8", "14", "70")
TIERS = ("", "Instruct", "Chat", "it")


def _spell(family: str, version: str, size: str, tier: str, how: dict[str, object]) -> str:
    sep = str(how["sep"])
    mark = str(how["mark"])
    written_version = version.replace(".", mark)
    head = f"{family}{sep if how['split_family'] else ''}"
    if how["v"] and how["split_family"]:  # llama-v3p1: a v after a separator
        head += "v"
    parts = [head + written_version, f"{size}B" if how["upper"] else f"{size}b"]
    if tier:
        parts.append(tier)
    name = sep.join(parts)
    if how["meta"] and family == "Llama":
        name = "Meta-" + name
    name += str(how["served"])
    if how["lower"]:
        name = name.lower()
    return f"{how['org']}{name}"


SPELLINGS = st.fixed_dictionaries(
    {
        "sep": st.sampled_from(("-", "_", " ", "\u2010", "\u2013")),  # typeset dashes too
        "mark": st.sampled_from((".", "p", "_")),
        "split_family": st.booleans(),
        "v": st.booleans(),
        "upper": st.booleans(),
        "meta": st.booleans(),
        "served": st.sampled_from(("", "-hf", "-vllm")),
        "lower": st.booleans(),
        # a provider's id (Fireworks' accounts/<a>/models/) is a hosted build, not the model
        # itself (tests/io/test_model_provider_ids.py)
        "org": st.sampled_from(("", "org/")),
    }
)
PLAIN = {"sep": "-", "mark": ".", "split_family": False, "v": False, "upper": True}
PLAIN |= {"meta": False, "served": "", "lower": False, "org": ""}


#: A model's parts, drawn: the truth both tests compare against.
PARTS = {
    "family": st.sampled_from(FAMILIES),
    "version": st.sampled_from(VERSIONS),
    "size": st.sampled_from(SIZES),
    "tier": st.sampled_from(TIERS),
}


@settings(max_examples=300)
@given(**PARTS, how=SPELLINGS)
def test_spellings_of_one_model_are_one_model(
    family: str, version: str, size: str, tier: str, how: dict[str, object]
) -> None:
    written = _spell(family, version, size, tier, how)
    assert same_model(written, _spell(family, version, size, tier, PLAIN)), written


@settings(max_examples=300)
@given(**PARTS, how=SPELLINGS, change=st.sampled_from(("size", "version", "base", "awq", "family")))
def test_another_part_is_another_model(
    family: str, version: str, size: str, tier: str, how: dict[str, object], change: str
) -> None:
    written = _spell(family, version, size, tier, how)
    if change == "size":
        other = _spell(family, version, SIZES[(SIZES.index(size) + 1) % len(SIZES)], tier, PLAIN)
    elif change == "version":
        bumped = VERSIONS[(VERSIONS.index(version) + 1) % len(VERSIONS)]
        other = _spell(family, bumped, size, tier, PLAIN)
    elif change == "family":
        other = _spell(FAMILIES[(FAMILIES.index(family) + 1) % len(FAMILIES)], version, size, tier, PLAIN)  # fmt: skip
    else:
        suffix = "-Base" if change == "base" else "-AWQ"
        other = _spell(family, version, size, tier, PLAIN) + suffix
    assert not same_model(written, other), (written, other)


def test_rows_spelling_the_trained_model_route_on_policy(tmp_path: Path) -> None:
    rng = random.Random(5)
    spellings = ["Qwen2.5 7B Instruct", "qwen2_5-7b-instruct-hf", "Qwen/Qwen2.5-7B-Instruct"]
    rows = []
    for task in range(150):
        rate = rng.random()
        for draw in range(8):
            rows.append(
                {
                    "task_id": f"t{task}",
                    "reward": float(rng.random() < rate),
                    "completion": f"reply {task}.{draw}",
                    "finish_reason": "stop",
                    "model": spellings[draw % len(spellings)],
                }
            )
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    route = run_route(str(path), model="Qwen/Qwen2.5-7B-Instruct")
    assert isinstance(route, Route)
    on_policy = next(c for c in route.checks if c.key == "on_policy")
    assert on_policy.status.value == "pass", route.why
    assert route.method == "grpo" and "several_models" not in [f.kind for f in route.data_quality]


#: A model's page on a hub as a browser shows it: the address, the tree of a revision, a file
#: of a revision, a download link, ``hf://``, ModelScope's.
PAGES = (
    "https://huggingface.co/{id}",
    "https://huggingface.co/{id}/tree/{rev}",
    "huggingface.co/{id}/blob/{rev}/config.json",
    "https://hf.co/{id}/resolve/{rev}/model.safetensors",
    "hf://{id}",
    "https://www.modelscope.cn/models/{id}",
    "https://huggingface.co/{id}?library=transformers",
)


@settings(max_examples=60, deadline=None)
@given(
    family=st.sampled_from(FAMILIES),
    version=st.sampled_from(VERSIONS),
    size=st.sampled_from(SIZES),
    tier=st.sampled_from(TIERS),
    page=st.sampled_from(PAGES),
    rev=st.sampled_from(["main", "a1b2c3d4e5f6a7b8c9d0"]),
    other=st.sampled_from(SIZES),
)
def test_a_models_hub_page_names_the_model(
    family: str, version: str, size: str, tier: str, page: str, rev: str, other: str
) -> None:
    name = "-".join(p for p in (f"{family}{version}", f"{size}B", tier) if p)
    hub_id = f"org/{name}"
    assert same_model(page.format(id=hub_id, rev=rev), hub_id)
    if other != size:
        elsewhere = hub_id.replace(f"-{size}B", f"-{other}B")
        assert not same_model(page.format(id=elsewhere, rev=rev), hub_id)
