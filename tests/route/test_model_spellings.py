"""One model, every spelling: a Hub id, a bare name, vf-eval's ``org--name``, lm-eval's
``org__name`` (alone, or as the folder it writes results in), a local model
folder, a training checkpoint under it, a Hugging Face cache snapshot, a trailing slash, any
case. Each names the same model (one :func:`whilecli.io.modelid.model_identity`), with the
size its name states and the step its checkpoint folder states; another name or size is
another model. The route's checks 4 and 6, the size the route reads from a name, ``config``'s
size and the reading layer's model column all take that one answer.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from whilecli.cli import app
from whilecli.emit.models import is_thinking
from whilecli.emit.models import size_from_name as config_size
from whilecli.io.aliases import PLACEHOLDER_MODELS
from whilecli.io.modelid import model_identity, without_step
from whilecli.io.read import read_rows
from whilecli.route import run_route
from whilecli.route.identity import same_model, size_from_name, step_from_name

ORGS = st.sampled_from(["Qwen", "meta-llama", "allenai", "deepseek-ai", "my_lab"])
FAMILIES = st.sampled_from(["Qwen3", "Llama-3.1", "OLMo-2", "gemma-3", "Mistral"])
SIZES = st.sampled_from(["0.6", "1.7", "4", "7", "8", "14", "32", "70"])
SUFFIXES = st.sampled_from(["", "-Instruct", "-Base", "-A3B", "-it"])
SHA = st.text("0123456789abcdef", min_size=8, max_size=40)
STEPS = st.integers(0, 10**6)


@st.composite
def models(draw: st.DrawFn) -> tuple[str, str, float]:
    """(organisation, name, size in billions)."""
    size = draw(SIZES)
    name = f"{draw(FAMILIES)}-{size}B{draw(SUFFIXES)}"
    return draw(ORGS), name, float(size)


def _case(draw: st.DrawFn, text: str) -> str:
    return draw(st.sampled_from([text, text.lower(), text.upper()]))


@st.composite
def spellings(draw: st.DrawFn, org: str, name: str) -> tuple[str, int | None]:
    """One way of writing the model, and the checkpoint step it states (None: none)."""
    step = draw(STEPS)
    slash = draw(st.sampled_from(["", "/"]))
    kinds = ["hub", "bare", "vf", "lm-eval", "lm-eval-dir", "dir", "checkpoint", "verl", "cache"]
    kind = draw(st.sampled_from(kinds))
    if kind == "hub":
        return _case(draw, f"{org}/{name}"), None
    if kind == "bare":
        return _case(draw, name), None
    if kind == "vf":
        return _case(draw, f"{org}--{name}"), None
    if kind == "lm-eval":  # lm-eval's model_name_sanitized
        return _case(draw, f"{org}__{name}"), None
    root = draw(st.sampled_from(["/models", "/data/run 1", "./out", "~/ckpt", "../x/y"]))
    if kind == "lm-eval-dir":  # the folder lm-eval writes an evaluation's results in
        return f"{root}/{_case(draw, f'{org}__{name}')}{slash}", None
    if kind == "dir":
        return f"{root}/{_case(draw, name)}{slash}", None
    if kind == "checkpoint":
        return f"{root}/{name}/checkpoint-{step}{slash}", step
    if kind == "verl":
        return f"{root}/{name}/global_step_{step}/actor/huggingface{slash}", step
    hub = draw(st.sampled_from(["~/.cache/huggingface/hub", "/root/.cache/huggingface/hub"]))
    return f"{hub}/models--{org}--{name}/snapshots/{draw(SHA)}{slash}", None


@settings(max_examples=150)
@given(data=st.data(), model=models())
def test_every_spelling_is_one_model(data: st.DataObject, model: tuple[str, str, float]) -> None:
    org, name, size = model
    written = [data.draw(spellings(org, name)) for _ in range(4)]
    keys = {model_identity(text).key for text, _ in written}
    assert keys == {name.lower()}, written
    for text, step in written:
        assert size_from_name(text) == config_size(text) == size, text
        assert step_from_name(text) == step, text
        assert is_thinking(text) == is_thinking(f"{org}/{name}"), text
    (a, step_a), (b, step_b) = written[:2]
    # a checkpoint is a step of a run, not the release: one model's only at one step
    assert same_model(a, b) == (step_a == step_b), (a, b)
    assert same_model(without_step(a), without_step(b))


@settings(max_examples=100)
@given(data=st.data(), one=models(), other=models())
def test_other_names_and_sizes_stay_other_models(
    data: st.DataObject, one: tuple[str, str, float], other: tuple[str, str, float]
) -> None:
    if one[1].lower() == other[1].lower():
        return
    a, _ = data.draw(spellings(one[0], one[1]))
    b, _ = data.draw(spellings(other[0], other[1]))
    assert not same_model(a, b), (a, b)


def _rows(path: Path, model_of: Any, k: int = 4, tasks: int = 12, drawn: bool = False) -> Path:
    """Rows of ``tasks`` tasks × ``k`` each, half passing in a fixed pattern, or (``drawn``)
    drawn at each task's own rate, seeded: independent draws, as a pool of 40 tasks needs to
    read as one (a fixed pattern's counts are too even: ``even_counts``)."""
    lines = []
    for t in range(tasks):
        rate = random.Random(t).random()
        for j in range(k):
            grade = random.Random(f"{t}.{j}").random() < rate if drawn else (t + j) % 2
            row = {"task_id": f"t{t}", "completion": f"a{t}.{j}", "reward": float(grade)}
            row["model"] = model_of(t)
            lines.append(json.dumps(row) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _check(route: Any, key: str) -> Any:
    return next(c for c in route.checks if c.key == key)


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), model=models())
def test_the_route_knows_the_model_in_every_spelling(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, model: tuple[str, str, float]
) -> None:
    org, name, size = model
    tmp = tmp_path_factory.mktemp("spell")
    row_spelling, row_step = data.draw(spellings(org, name))
    flag, flag_step = data.draw(spellings(org, name))
    teacher, _ = data.draw(spellings(org, name))
    rows = _rows(tmp / "rows.jsonl", lambda t: row_spelling)
    teacher_rows = _rows(tmp / "teacher.jsonl", lambda t: teacher)
    read = read_rows([str(rows)])
    assert {model_identity(m).key for m in read.writer_rows["model"]} == {name.lower()}
    route = run_route([str(rows)], teacher=[str(teacher_rows)], model=flag)
    on_policy = _check(route, "on_policy")
    if flag_step is not None and row_step is None:  # a checkpoint trained, rows of no version
        assert on_policy.status.value == "unknown" and "carry no version" in on_policy.why
    elif flag_step is None and row_step is not None:  # a checkpoint wrote, the release trained
        assert on_policy.status.value == "unknown" and "training checkpoint" in on_policy.why
    else:
        assert on_policy.status.value in ("pass", "fail"), on_policy.why
    assert "another model" not in on_policy.why, (row_spelling, flag, on_policy.why)
    if model_identity(teacher).step == flag_step:  # another step is not the student's weights
        assert _check(route, "teacher").measured.get("teacher_is_student") is True, (flag, teacher)
    assert route.to_dict()["needs"] is not None
    from whilecli.route.decide import _size_from_names

    assert _size_from_names(route_pool(rows), options(flag)) == size


def route_pool(path: Path) -> Any:
    from whilecli.route.pool import Counts, summarize

    return summarize(read_rows([str(path)], aggregate=Counts()))


def options(model: str) -> Any:
    from whilecli.route.options import RouteOptions

    return RouteOptions(model=model)


def test_a_checkpoint_step_is_a_version(tmp_path: Path) -> None:
    """Rows written by two checkpoints of one model: the older one's rows are stale under
    ``--model`` naming the newer checkpoint, by path or by Hub id and version; under the
    release's name (no step) neither checkpoint is its weights: unknown."""
    rows = _rows(
        tmp_path / "rows.jsonl", lambda t: f"/models/Qwen3-8B/checkpoint-{100 * (1 + t % 2)}"
    )
    done = CliRunner().invoke(
        app, ["route", str(rows), "--model", "Qwen/Qwen3-8B", "--format", "json"]
    )
    on_policy = next(c for c in json.loads(done.stdout)["checks"] if c["key"] == "on_policy")
    assert on_policy["status"] == "unknown" and "training checkpoint" in on_policy["why"]
    for flag in ("/models/Qwen3-8B/checkpoint-200", "Qwen/Qwen3-8B@200"):
        done = CliRunner().invoke(app, ["route", str(rows), "--model", flag, "--format", "json"])
        report = json.loads(done.stdout)
        on_policy = next(c for c in report["checks"] if c["key"] == "on_policy")
        assert on_policy["measured"]["stale_rows"] == 24, on_policy
        assert on_policy["measured"]["models"] == {"Qwen3-8B": 48}
        assert "an older copy of Qwen" in on_policy["why"] and "/models/" not in on_policy["why"]
        assert "async" in report["plan"]
    done = CliRunner().invoke(
        app, ["route", str(rows), "--model", "/models/Qwen3-8B/checkpoint-300", "--format", "json"]
    )
    on_policy = next(c for c in json.loads(done.stdout)["checks"] if c["key"] == "on_policy")
    assert on_policy["measured"]["stale_rows"] == 48


#: A run's or a served model's own name: no organisation, no size (``run_1b`` states one).
RUNS = st.from_regex(r"(run|exp|policy|grpo)[-_]?[a-z0-9]{0,6}", fullmatch=True).filter(
    lambda run: model_identity(run).size_b is None
)
#: A label a server or a team gives a model (``--served-model-name``): no organisation, no
#: size, no model family; not a placeholder read as no model at all (``policy``, ``default``).
LABELS = st.one_of(
    RUNS,
    st.from_regex(
        r"(my|our|team|prod)[-_](finetune|sft|rl|agent|policy)([-_]v[0-9])?", fullmatch=True
    ),
).filter(lambda label: label.lower() not in PLACEHOLDER_MODELS)


@st.composite
def run_paths(draw: st.DrawFn) -> str:
    """A local checkpoint path whose folders name a run, not a model (no size, no org)."""
    root = draw(st.sampled_from(["/ckpt", "./outputs", "~/runs", "/data/x"]))
    run = draw(RUNS)
    step = draw(STEPS)
    slash = draw(st.sampled_from(["", "/"]))
    inner = draw(
        st.sampled_from(["", f"/checkpoint-{step}", f"/step_{step}", f"/global_step_{step}/actor"])
    )
    return f"{root}/{run}{inner}{slash}"


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), model=models(), path=run_paths())
def test_a_path_that_names_no_model_is_not_another_model(
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    model: tuple[str, str, float],
    path: str,
) -> None:
    """Rows written by ``/ckpt/run7/step_100`` may be a checkpoint of the model you train:
    check 6 says unknown, never "another model" (which routes SFT, firm)."""
    assert model_identity(path).anonymous
    flag, _ = data.draw(spellings(model[0], model[1]))
    assert not model_identity(flag).anonymous
    rows = _rows(tmp_path_factory.mktemp("run") / "rows.jsonl", lambda t: path)
    route = run_route([str(rows)], model=flag)
    on_policy = _check(route, "on_policy")
    assert on_policy.status.value == "unknown", on_policy.why
    assert "another model" not in on_policy.why and route.plan[0] != "sft"
    same = run_route([str(rows)], model=path)  # the same run named by its own path
    assert _check(same, "on_policy").status.value in ("pass", "fail")
    assert "another model" not in _check(same, "on_policy").why


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), model=models(), label=LABELS, share=st.sampled_from([1.0, 0.5]))
def test_a_label_that_names_no_model_is_not_another_model(
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    model: tuple[str, str, float],
    label: str,
    share: float,
) -> None:
    """Rows written by a server's served name (``my-finetune``, ``policy-v2``) beside a
    ``--model`` that names a model may be that model's: check 6 says unknown, never "another
    model" (a firm SFT before). The label given as ``--model`` is the rows' own model, and
    another label given as ``--model`` is another model: the user's own names, compared as
    written."""
    org, name, _ = model
    assert model_identity(label).anonymous, label
    flag, _ = data.draw(spellings(org, name))
    tmp = tmp_path_factory.mktemp("label")
    rows = _rows(tmp / "rows.jsonl", lambda t: label if t < 12 * share else f"{org}/{name}")
    on_policy = _check(run_route([str(rows)], model=flag), "on_policy")
    assert on_policy.status.value == "unknown", on_policy.why
    assert on_policy.measured["unnamed_labels"] == [label]
    assert "another model" not in on_policy.why
    assert _check(run_route([str(rows)], model=label), "on_policy").status.value != "unknown"
    alone = _rows(tmp / "alone.jsonl", lambda t: label)
    assert _check(run_route([str(alone)], model=label), "on_policy").status.value == "pass"
    # another label (never ``run--other``: a trailing dash makes vf-eval's org--name)
    other = _check(run_route([str(alone)], model=f"other-{label.strip('-_')}"), "on_policy")
    assert other.status.value == "fail" and "another model" in other.why


@pytest.mark.parametrize("name", ["gpt-4o-mini", "claude-sonnet-4", "text-davinci-003", "o3"])
def test_an_api_models_name_is_another_model(tmp_path: Path, name: str) -> None:
    """A name of a model nobody trains here is another model's, not a label."""
    assert not model_identity(name).anonymous
    rows = _rows(tmp_path / "rows.jsonl", lambda t: name)
    on_policy = _check(run_route([str(rows)], model="Qwen/Qwen3-8B"), "on_policy")
    assert on_policy.status.value == "fail" and "another model" in on_policy.why


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    given_as=st.sampled_from(["@", "checkpoint", "verl"]),
    step=st.integers(1, 5000),
    rows=st.sampled_from(["none", "same", "older"]),
)
def test_a_version_you_train_against_rows_of_no_version_is_unknown(
    tmp_path_factory: pytest.TempPathFactory, given_as: str, step: int, rows: str
) -> None:
    """``--model`` naming a version (``M@v``, a checkpoint folder's step) beside rows that
    carry none: whether that copy wrote them or the base did is unknown (check 6 passed
    firmly: base rows read as the step-1000 checkpoint's); rows of that version pass, of
    another version fail (Async)."""
    tmp = tmp_path_factory.mktemp("versions")
    flag = {
        "@": f"Qwen/Qwen3-8B@{step}",
        "checkpoint": f"/ckpt/Qwen3-8B/checkpoint-{step}",
        "verl": f"/ckpt/Qwen3-8B/global_step_{step}/actor/huggingface",
    }[given_as]
    version = {"none": None, "same": step, "older": max(0, step - 1)}[rows]
    path = _rows(tmp / "rows.jsonl", lambda t: "Qwen/Qwen3-8B")
    if version is not None:
        lines = [json.loads(line) | {"policy_version": version} for line in path.open()]
        path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    on_policy = _check(run_route([str(path)], model=flag), "on_policy")
    want = {"none": "unknown", "same": "pass", "older": "fail"}[rows]
    assert on_policy.status.value == want, on_policy.why


#: Quantizations as Hub names write them after the model's name.
QUANTS = st.sampled_from(
    ["AWQ", "FP8", "FP8-dynamic", "GPTQ-Int4", "GPTQ-Int8", "W4A16", "W8A8", "bnb-4bit",
     "unsloth-bnb-4bit", "MLX-4bit", "4bit", "GGUF", "NVFP4", "Q4_K_M", "quantized.w4a16",
     "AWQ-4bit", "int4"]
)  # fmt: skip


@settings(max_examples=60)
@given(data=st.data(), model=models(), quant=QUANTS)
def test_a_quantized_copy_holds_the_models_weights(
    data: st.DataObject, model: tuple[str, str, float], quant: str
) -> None:
    """``Name-AWQ`` is ``Name``'s weights at another precision: not the same model, not
    another (its size is the model's), and no other model's name shares its weights."""
    from whilecli.route.identity import same_weights

    org, name, size = model
    sep = data.draw(st.sampled_from(["-", "_", "."])) if quant[0].isalpha() else "-"
    copy = f"{org}/{name}{sep}{quant}"
    spelled = without_step(data.draw(spellings(org, name))[0])  # a checkpoint: not the release
    assert not same_model(copy, spelled) and same_weights(copy, spelled), (copy, spelled)
    assert model_identity(copy).precision == quant
    assert size_from_name(copy) == size
    other = f"{name}-Base" if not name.endswith("-Base") else name[: -len("-Base")]
    assert not same_weights(f"{org}/{other}{sep}{quant}", spelled)


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), model=models(), quant=QUANTS, share=st.sampled_from([1, 2, 3]))
def test_rows_of_a_quantized_copy_route_to_async_not_sft(
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    model: tuple[str, str, float],
    quant: str,
    share: int,
) -> None:
    """A sampler serving ``M-FP8`` while ``M`` is trained wrote the rows of the model you
    train at another precision (firm SFT, "another model", before): check 6 sends the method
    to Async with a correction, as for an older copy; a teacher that is the student's
    quantized copy is the student."""
    org, name, _ = model
    tmp = tmp_path_factory.mktemp("quant")
    copy = f"{org}/{name}-{quant}"
    flag, _ = data.draw(spellings(org, name))
    # tasks t with t % 3 < share are sampled by the copy, the others by the model itself
    rows = _rows(tmp / "rows.jsonl", lambda t: copy if t % 3 < share else f"{org}/{name}")
    route = run_route([str(rows)], model=flag)
    on_policy = _check(route, "on_policy")
    assert on_policy.status.value == "fail" and not on_policy.decides, on_policy.why
    assert "at another precision" in on_policy.why and "another model" not in on_policy.why
    assert on_policy.measured["quantized_rows"] == 4 * sum(t % 3 < share for t in range(12))
    assert route.method != "sft" and route.route != "off-policy"
    assert "a copy at another precision wrote rows (Async)" in route.headline
    teacher = _rows(tmp / "teacher.jsonl", lambda t: copy)
    taught = run_route([str(rows)], teacher=[str(teacher)], model=flag)
    assert _check(taught, "teacher").measured.get("teacher_is_student") is True


@settings(max_examples=60)
@given(model=models(), step=STEPS, root=st.sampled_from(["", "outputs/", "runs/a/"]))
def test_a_relative_checkpoint_folder_is_a_path(
    model: tuple[str, str, float], step: int, root: str
) -> None:
    """``Qwen3-8B/checkpoint-500`` (one slash, no ``./``) is the model's checkpoint, not
    the model ``checkpoint-500`` of an organisation ``Qwen3-8B`` (a firm SFT before);
    ``outputs/checkpoint-500`` names no model."""
    _, name, size = model
    kind = f"checkpoint-{step}"
    found = model_identity(f"{root}{name}/{kind}")
    assert (found.key, found.step, found.size_b, found.path) == (name.lower(), step, size, True)
    bare = model_identity(f"outputs/{kind}")
    assert bare.anonymous and bare.step == step


@settings(max_examples=60)
@given(model=models(), quant=st.sampled_from(["q4_K_M", "Q8_0", "fp16", "bf16"]))
def test_ollama_tags_and_precisions(model: tuple[str, str, float], quant: str) -> None:
    """Ollama's ``family:size`` (a tag that begins with the size) is Ollama's build: GGUF, of
    the chat model unless the tag says ``base``/``text``: a copy of a model whose name states
    that variant, unsure beside a name that states none (``Qwen3-8B`` is a chat model,
    ``Llama-3.1-8B`` a base one). A tag that does not begin with a size (``llama:3.1-8b``) is
    the name's; ``:latest`` after a Hub id adds nothing; a tag or suffix of a precision
    (``:8b-q4_K_M``, ``-GGUF:Q4_K_M``, ``-bf16``) is its weights at another one."""
    from whilecli.io.modelid import COPY, SAME, UNSURE, weights_relation
    from whilecli.route.identity import same_weights

    org, name, _ = model
    family, _, rest = name.partition("-")
    tagged = f"{family.lower()}:{rest.lower()}"
    ollama = rest[0].isdigit() and "-" not in family + rest.split("B")[0]
    states = any(w in name for w in ("-Instruct", "-it", "-Base"))
    build = (COPY if states else UNSURE) if ollama else SAME
    assert weights_relation(tagged, f"{org}/{name}") == build, tagged
    assert same_model(f"{org}/{name}:latest", name)
    assert weights_relation(f"{tagged}-{quant}", f"{org}/{name}") == (
        COPY if build == SAME else build
    )
    for copy in (f"hf.co/{org}/{name}-GGUF:{quant}", f"{org}/{name}-{quant}"):
        assert same_weights(copy, f"{org}/{name}") and not same_model(copy, name), copy


@pytest.mark.parametrize(
    ("rows_name", "option"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("openai/gpt-4o-2024-08-06", "gpt-4o"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet-latest"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
    ],
)
def test_an_api_snapshot_names_its_model(rows_name: str, option: str) -> None:
    """What an API's response names for an alias asked (its dated snapshot) is the model the
    alias names; another model (``gpt-4o-mini``) stays another."""
    from whilecli.io.modelid import same_model

    assert same_model(rows_name, option)
    assert not same_model(rows_name, option + "-mini")


#: A training run's tags as run folders and Hub uploads end a model's name.
TAGS = st.lists(
    st.sampled_from(["grpo", "GRPO", "sft", "dpo", "rl", "ppo", "lora", "merged", "v2", "run3"]),
    min_size=1,
    max_size=2,
)
#: What a release names, not a run: another model for check 6, firmly.
RELEASES = st.sampled_from(["Base", "Instruct-2507", "AWQ-v2x", "Math"])


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    model=models(),
    tags=TAGS,
    sep=st.sampled_from(["-", "_"]),
    where=st.sampled_from(["hub", "bare", "checkpoint", "verl"]),
    step=st.integers(1, 5000),
)
def test_a_name_with_a_training_runs_tags_leaves_sft_provisional(
    tmp_path_factory: pytest.TempPathFactory,
    model: tuple[str, str, float],
    tags: list[str],
    sep: str,
    where: str,
    step: int,
) -> None:
    """``/ckpt/Qwen3-8B-grpo/checkpoint-100`` beside ``--model Qwen/Qwen3-8B``: a model
    trained from it (another model's rows, SFT) or a checkpoint of the run you train (its own
    rows). Check 6 still reads another model (a firm SFT before); the verdict is provisional
    (``model_tuned``), and naming the run as ``--model`` reads the rows as its own."""
    org, name, _ = model
    tuned = name + "".join(sep + t for t in tags)
    written = {
        "hub": f"my_lab/{tuned}",
        "bare": tuned,
        "checkpoint": f"/ckpt/{tuned}/checkpoint-{step}",
        "verl": f"/ckpt/{tuned}/global_step_{step}/actor/huggingface",
    }[where]
    rows = _rows(
        tmp_path_factory.mktemp("tuned") / "rows.jsonl", lambda t: written, tasks=40, drawn=True
    )
    route = run_route([str(rows)], model=f"{org}/{name}")
    if tags[0] == "lora":  # a LoRA adapter of the model itself: a tuned build of it, unsure
        assert _check(route, "on_policy").status.value == "unknown", route.headline
        assert route.provisional and route.method != "sft", route.headline
    else:
        assert route.method == "sft" and route.provisional, route.headline
        assert "model_tuned" in [f.kind for f in route.data_quality]
    own = _check(run_route([str(rows)], model=written), "on_policy")
    assert own.status.value == "pass" or "another model" not in own.why, own.why


@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=models(), release=RELEASES)
def test_a_releases_name_is_another_model_firmly(
    tmp_path_factory: pytest.TempPathFactory, model: tuple[str, str, float], release: str
) -> None:
    org, name, _ = model
    other = f"{org}/{name}-{release}"
    rows = _rows(
        tmp_path_factory.mktemp("release") / "rows.jsonl", lambda t: other, tasks=40, drawn=True
    )
    route = run_route([str(rows)], model=f"{org}/{name}")
    assert route.method == "sft" and not route.provisional, route.headline
    assert "model_tuned" not in [f.kind for f in route.data_quality]


#: Words a served alias or a run writes beside a model's name (``local-qwen3-8b``,
#: ``Qwen3-8B-server``): none names another model.
ALIAS_WORDS = st.lists(
    st.sampled_from(["local", "my", "server", "prod", "served", "endpoint", "Team", "LOCAL"]),
    min_size=1,
    max_size=2,
)


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    model=models(),
    words=ALIAS_WORDS,
    where=st.sampled_from(["before", "after", "both"]),
    sep=st.sampled_from(["-", "_"]),
)
def test_a_name_with_words_beside_it_is_never_firmly_another_model(
    tmp_path_factory: pytest.TempPathFactory,
    model: tuple[str, str, float],
    words: list[str],
    where: str,
    sep: str,
) -> None:
    """``local-qwen3-8b`` beside ``--model Qwen/Qwen3-8B``: the model served under an alias,
    a checkpoint of the run, or a model trained from it; the name cannot tell, so a firm SFT
    (another model wrote every row) is never the answer."""
    org, name, _ = model
    if where == "both":  # a word on each side
        words = [words[0], words[-1]]
    before = sep.join(words if where == "before" else words[:1]) + sep if where != "after" else ""
    after = sep + sep.join(words if where == "after" else words[1:]) if where != "before" else ""
    written = f"{before}{name}{after}"
    rows = _rows(
        tmp_path_factory.mktemp("alias") / "rows.jsonl", lambda t: written, tasks=40, drawn=True
    )
    route = run_route([str(rows)], model=f"{org}/{name}")
    assert not (route.method == "sft" and not route.provisional), (written, route.headline)
    if route.method == "sft":
        assert "model_tuned" in [f.kind for f in route.data_quality]


@pytest.mark.parametrize(
    ("written", "model", "firm_other"),
    [
        ("qwen3-8b-instruct", "Qwen/Qwen3-8B", False),  # Qwen3 names its chat model plainly
        ("Qwen/Qwen3-8B-Chat", "Qwen/Qwen3-8B", False),
        ("Qwen/Qwen3-8B", "my_lab/qwen3-8b-it", False),
        ("phi-4-instruct", "microsoft/phi-4", False),
        ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B", True),  # a base's
        ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B", True),
        ("google/gemma-2-9b-it", "google/gemma-2-9b", True),
        ("Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-4B", True),  # a release's own name
        ("Qwen/Qwen3-8B-Base", "Qwen/Qwen3-8B", True),
    ],
)
def test_a_chat_label_beside_a_plain_name(
    tmp_path: Path, written: str, model: str, firm_other: bool
) -> None:
    """A chat label beside a ``--model`` that states no variant: in a family that names its
    base model plainly it is another model (firm SFT); elsewhere the plain name may be the
    chat model itself, so check 6 is unknown and the verdict provisional."""
    rows = _rows(tmp_path / "rows.jsonl", lambda t: written, tasks=40, drawn=True)
    route = run_route([str(rows)], model=model)
    on_policy = _check(route, "on_policy")
    if firm_other:
        assert route.method == "sft" and not route.provisional, route.headline
    else:
        assert on_policy.status.value == "unknown", on_policy.why
        assert "chat label" in on_policy.why
        assert route.provisional, route.headline
