"""Recognise a file that is not plain JSON Lines and convert it to rows (DESIGN section 1).

:func:`open_source` looks at a file's first bytes and first line:

- a zip archive: an inspect_ai ``.eval`` log, or a ``torch.save`` file (slime's rollout dumps);
- a ``.csv`` / ``.tsv`` name: CSV or TSV rows;
- content that is one JSON document (an array, or an object spread over lines): an array of
  row objects (tau-bench results, HELM ``per_instance_stats.json``, any rows), an inspect_ai
  EvalLog, or an object holding a list of samples; any other document is refused with
  "this is one JSON document, not JSON Lines" and what its top level holds;
- JSON Lines whose rows keep their grade inside a list (EvalScope reviews, Atropos groups,
  ROLL's rollout dumps) or in events among other events (OpenAI evals logs), or whose task or
  version sits in the file's path (OpenRLHF's eval samples, AReaL's rollout dumps): converted
  row by row;
- a sidecar another tool writes beside its rows (an lm-eval results file, an EvalScope
  report): skipped inside a directory, refused when named.

Anything else is returned as it is, for the streaming reader.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

from whilecli import jsonout
from whilecli.errors import InputError
from whilecli.io.aliases import REWARD_ALIASES, TASK_ALIASES
from whilecli.io.formats import (
    Converted,
    aider,
    alpaca_eval,
    anthropic_batch,
    areal,
    arena_hard,
    art,
    atropos,
    bedrock_batch,
    bfcl,
    braintrust,
    browsergym,
    deepeval,
    entries,
    evalchemy,
    evalscope,
    fastchat,
    harbor,
    helm,
    hf_datasets,
    hle,
    inspect_ai,
    langfuse,
    langsmith,
    livebench,
    livecodebench,
    lm_eval,
    matharena,
    mle_bench,
    nemo_rl,
    open_instruct,
    openai_batch,
    openai_eval_runs,
    openai_evals,
    opencompass,
    openrlhf,
    opik,
    osworld,
    phoenix,
    prime_rl,
    promptfoo,
    rllm,
    roll,
    skythought,
    slime,
    swebench,
    tables,
    tau2,
    tinker,
    verl,
    vertex_batch,
    vlmevalkit,
    wandb_weave,
)

#: Keys of an object that may hold the rows of a one-document file.
SAMPLE_KEYS = ("samples", "rows", "records", "results", "data", "instances", "items")
#: Keys of an object that may hold rows under their task ids (OpenCompass, EvalPlus).
KEYED_KEYS = ("details", "eval")


class Sidecar(Exception):
    """The file is another tool's sidecar, not rows (the message says whose)."""

    def refusal(self) -> str:
        """What refusing it, named on its own, says."""
        return f"{self}, not rows: pass the rows file"


class NotRows(InputError):
    """One JSON document that holds no rows and is no known tool's file (a trainer's
    ``config.json``, ``trainer_state.json``): refused when named, left out of a folder."""


class Summary(Sidecar):
    """The file sums an evaluation up and holds no per-sample grade (the message says what)."""

    def refusal(self) -> str:
        return f"{self}: nothing to route"


def load_document(data: bytes, name: str) -> Any:
    """The whole file as one JSON value; errors name the line and column."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 (byte {err.start + 1})", file=name, line=line) from None
    try:
        return jsonout.parse(text, pairs=jsonout.one_value_per_key)
    except jsonout.RepeatedKey as err:
        one_line = "\n" not in text.strip()  # a document written on one line: line 1
        raise InputError(str(err), file=name, line=1 if one_line else None, field=err.key) from None
    except jsonout.TooDeep as err:
        raise InputError(str(err), file=name, line=err.line) from None
    except json.JSONDecodeError as err:
        if cr_alone(text):
            raise InputError(CR_ALONE, file=name, line=1) from None
        if err.msg == "Extra data" and "\n" in text[: err.pos].strip():
            raise InputError(
                "the file holds several JSON values, each written over several lines"
                " (pretty-printed): the next begins here; JSON Lines needs one object per"
                " line (jq -c . FILE writes it so)",
                file=name,
                line=err.lineno,
            ) from None
        if err.msg == "Extra data" and (hint := line_end_hint(text, err.pos)) is not None:
            raise InputError(hint, file=name, line=err.lineno) from None
        if err.msg == "Extra data" and (found := _first_not_object(text)) is not None:
            raise InputError(not_a_row(found[1]), file=name, line=found[0]) from None
        raise InputError(
            f"not valid JSON (column {err.colno}: {err.msg})", file=name, line=err.lineno
        ) from None


#: What a file whose lines end in a carriage return alone (classic Mac OS) is told.
CR_ALONE = (
    "the file's lines end in CR alone (classic Mac OS line ends), not LF, so it reads as one"
    " line: convert them (tr '\\r' '\\n' < FILE > FIXED.jsonl)"
)


#: Line ends JSON Lines does not split at, each with its name: a row after one reads as
#: extra data on the line before.
OTHER_LINE_ENDS = {
    "\r": "CR alone (classic Mac OS line ends)",
    "\x85": "U+0085 (NEL, a mainframe line end)",
    "\u2028": "U+2028 (LINE SEPARATOR)",
    "\u2029": "U+2029 (PARAGRAPH SEPARATOR)",
}


def line_end_hint(text: str, pos: int) -> str | None:
    """What to say where JSON text holds extra data at ``pos`` after a line end that is no
    LF (a CR alone, NEL, U+2028, U+2029): rows whose lines end so, in part of a file or all
    of it, read as one line. None where no such line end comes before ``pos``."""
    start = pos
    while start > 0 and text[start - 1] in " \t\r\n":  # the JSON whitespace before it
        start -= 1
    at = text[pos : pos + 1]
    if at in ("\x85", "\u2028", "\u2029"):
        found = at
    elif "\r" in text[start:pos].replace("\r\n", ""):
        found = "\r"
    else:
        return None
    fix = "tr '\\r' '\\n'" if found == "\r" else "replace them with LF"
    return (
        f"a row ends in {OTHER_LINE_ENDS[found]}, not LF, so the next row reads as more of"
        f" this line: JSON Lines ends each line in LF ({fix})"
    )


def cr_alone(text: str) -> bool:
    """Whether ``text`` splits into lines at carriage returns alone: one inside it, and no
    line feed."""
    inner = text.strip("\r\n")
    return "\r" in inner and "\n" not in inner


def not_a_row(value: Any) -> str:
    """What a line of JSON Lines that holds a JSON value other than an object is told (a list
    of rows on one line named as such)."""
    what = type(value).__name__
    if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        what += (
            f" of {len(value)} objects: JSON Lines holds one row per line (a file of one"
            " such list, alone, is read as its rows)"
        )
    return f"a row must be a JSON object, found {what}"


def _first_not_object(text: str) -> tuple[int, Any] | None:
    """The first line (1-based) and value of JSON Lines text whose line holds a JSON value
    other than an object: None where a line before it is no JSON (or every line is an
    object)."""
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = jsonout.parse(line)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return lineno, value
    return None


def describe(doc: Any) -> str:
    """What a JSON document's top level holds, in a few words."""
    if isinstance(doc, dict):
        keys = list(doc)
        shown = ", ".join(keys[:8]) + (", ..." if len(keys) > 8 else "")
        return f"an object with keys {shown}" if keys else "an empty object"
    if isinstance(doc, list):
        kinds = sorted({type(x).__name__ for x in doc})
        return f"an array of {len(doc)} {'/'.join(kinds) or 'values'}"
    return f"a single {type(doc).__name__}"


def is_sidecar(doc: Any) -> str | None:
    """Whose sidecar a JSON document is, or None."""
    if not isinstance(doc, dict):
        return None
    if (
        "results" in doc
        and isinstance(doc["results"], dict)
        and ("configs" in doc or "model_name" in doc or "config" in doc or "versions" in doc)
    ):
        return "an lm-eval results file (it names the model and metrics of the samples beside it)"
    if "dataset_name" in doc and "model_name" in doc and "metrics" in doc:
        return "an EvalScope report (it names the model of the reviews beside it)"
    if "adapter_spec" in doc and "scenario_spec" in doc:
        return "a HELM run_spec.json (read with the per_instance_stats.json beside it)"
    if "env_id" in doc or ("env" in doc and "model" in doc and "num_examples" in doc):
        return "a vf-eval metadata.json (read with the results.jsonl beside it)"
    run = doc.get("run")
    if len(doc) == 1 and isinstance(run, dict) and "base_model" in run:
        return "a Prime RFT metadata.json (it names the base model of the results.jsonl beside it)"
    if isinstance(doc.get("results_jsonl_path"), str) and "run_id" in doc:
        return "a run manifest (it names the results.jsonl beside it and how it was run)"
    if harbor.is_job(doc):
        return "a Harbor job summary (its trials' result.json files beside it are the rows)"
    if rllm.is_batch_summary(doc):
        return "an rLLM batch_summary.json (the episode files beside it are the rows)"
    if skythought.is_summary(doc):
        return "a SkyThought summary.json (it names the model of the results.json beside it)"
    exported = opik.sidecar(doc)
    if exported is not None:
        return exported
    saved = hf_datasets.sidecar(doc)
    if saved is not None:
        return saved
    if doc and all("/" in k and isinstance(v, (int, float)) for k, v in doc.items()):
        # SkyRL's aggregated_results.jsonl, a trainer's logged metrics: eval/<data>/avg_score
        return "a summary of metrics (numbers named like eval/DATA/METRIC), not graded rows"
    return summary_of(doc)


#: What names an aggregate in a summary: a flat object of numbers with one of these in a key
#: (simple-evals' ``score:std``, lm-eval's ``_stderr``, ``pass@k``, a mean); a flat row of
#: scores (``chosen_score``, ``rejected_score``) is a row.
METRIC_WORDS = (":std", "_std", "stderr", "pass@", "mean", "avg", "accuracy")


def summary_of(doc: Any) -> str | None:
    """What a JSON document that sums an evaluation up holds, where it holds no per-sample
    grade: simple-evals' ``<eval>_<model>.json`` (``{"score": ..., "chars": ...}``) and
    ``_allresults.json`` (``score``, ``metrics``, ``htmls``, ``convos``; openai/simple-evals
    ``simple_evals.py``), bigcode-evaluation-harness ``evaluation_results.json``
    (``{task: {"pass@1": ...}, "config": {...}}``; ``main.py``), or any object of numbers
    alone that names an aggregate."""
    if not isinstance(doc, dict) or not doc:
        return None
    if {"schema_version", "route", "method", "checks", "evidence"} <= set(doc):
        return (
            "a whilecli route report (route --format json): the verdict and its evidence, no"
            " rows; pass the graded rows it was routed from"
        )
    if {"score", "htmls", "convos"} <= set(doc):
        return (
            "simple-evals' all-results file: the mean score, its HTML reports and the"
            " conversations, no grade per example"
        )
    config = doc.get("config")
    scores = [v for k, v in doc.items() if k != "config"]
    if (
        isinstance(config, dict)
        and scores
        and all(isinstance(v, dict) and any(str(m).startswith("pass@") for m in v) for v in scores)
    ):
        return (
            "a bigcode-evaluation-harness evaluation_results.json: pass@k per task, no grade"
            " per sample (its generations.json holds the samples, ungraded)"
        )
    keys = {alias.split(".")[0] for alias in TASK_ALIASES}
    if (
        not keys & set(doc)
        and any(word in key.lower() for key in doc for word in METRIC_WORDS)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in doc.values())
    ):
        shown = ", ".join(list(doc)[:4]) + (", ..." if len(doc) > 4 else "")
        return f"a summary of metrics ({shown}), no grade per sample"
    return None


def convert_document(doc: Any, path: Any, name: str) -> Converted:
    """Rows from one JSON document, or a refusal that says what it holds."""
    if bfcl.is_score(doc):  # a score file with no failure: its summary line alone
        return bfcl.convert(iter([(1, doc)]), path, name)
    if isinstance(doc, dict):
        line = _judged_lines(doc, lambda: iter([(1, doc)]), name)
        if line is not None:
            return line
    if helm.is_display_predictions(doc):
        raise helm.refuse_display_predictions(path, name)
    if helm.is_instance_stats(doc):
        return helm.convert(doc, path, name)
    if inspect_ai.is_log(doc):
        return inspect_ai.from_log(doc, name)
    if tau2.is_results(doc):
        return tau2.convert(doc, path, name)
    if tau2.is_simulation(doc):
        return tau2.convert_simulation(doc, path, name)
    if harbor.is_trial(doc):
        return harbor.convert(doc, name)
    if browsergym.is_summary(doc, path):
        return browsergym.convert(doc, path, name)
    if rllm.is_episode(doc):
        return rllm.convert(doc, name)
    if nemo_rl.is_eval(doc):
        return nemo_rl.convert_eval(doc, path)
    if aider.is_result(doc) or aider.is_exception(doc, path):
        return aider.convert(doc, path, name)
    if mle_bench.is_report(doc):
        return mle_bench.convert(doc, name)
    if skythought.is_results(doc):
        return skythought.convert(doc, path, name)
    if matharena.is_runs(doc):
        return matharena.convert([("", doc)], name)
    if hle.is_judged(doc):
        return hle.convert(doc, name)
    if hle.is_predictions(doc):
        raise Sidecar(hle.PREDICTIONS)
    if opik.is_experiment(doc):
        return opik.convert(doc, path, name)
    if (exported := opik.sidecar(doc)) is not None:  # a dataset export's items are no rows
        raise Sidecar(exported)
    if swebench.is_report(doc):
        return swebench.convert(doc, name)
    if swebench.is_instance_report(doc):
        return swebench.convert_instance(doc, path, name)
    if promptfoo.is_output(doc):
        return promptfoo.from_output(doc)
    if deepeval.is_run(doc):
        return deepeval.convert(doc)
    if braintrust.is_export(doc):
        return braintrust.from_document(doc, name)
    if langsmith.is_document(doc):
        return langsmith.from_document(doc, name)
    if evalchemy.is_results(doc):
        return evalchemy.convert(doc, name)
    if wandb_weave.is_results(doc):
        return wandb_weave.convert(doc, name)
    if phoenix.is_runs(doc):
        return phoenix.convert(doc, name)
    if anthropic_batch.is_result(doc):  # a results file of one line
        return anthropic_batch.convert(iter([({"line": 1}, doc)]), name)
    if anthropic_batch.is_listing(doc):
        return anthropic_batch.convert(zip(entries(len(doc)), doc, strict=True), name)
    if openai_batch.is_output(doc):  # an output file of one line
        return openai_batch.convert(iter([({"line": 1}, doc)]), name)
    if openai_batch.is_listing(doc):
        return openai_batch.convert(zip(entries(len(doc)), doc, strict=True), name)
    if vertex_batch.is_prediction(doc):  # an output file of one line
        return vertex_batch.convert(iter([({"line": 1}, doc)]), name)
    if vertex_batch.is_listing(doc):
        return vertex_batch.convert(zip(entries(len(doc)), doc, strict=True), name)
    if bedrock_batch.is_record(doc):  # an output file of one line
        return bedrock_batch.convert(iter([({"line": 1}, doc)]), name)
    if bedrock_batch.is_listing(doc):
        return bedrock_batch.convert(zip(entries(len(doc)), doc, strict=True), name)
    if langfuse.is_row(doc):  # an export of one row
        return langfuse.convert(iter([({"line": 1}, doc)]), name)
    if langfuse.is_listing(doc):
        return langfuse.from_document(doc, name)
    if langfuse.is_run_item(doc) or (
        isinstance(doc, list) and bool(doc) and langfuse.is_run_item(doc[0])
    ):
        raise Summary(langfuse.RUN_ITEMS)
    if openai_eval_runs.is_page(doc):
        items, key = openai_eval_runs.page_rows(doc)
        if not all(isinstance(x, dict) for x in items):
            _refuse_row_list(doc, name)
        places = entries(len(items), key)
        return openai_eval_runs.convert(zip(places, items, strict=True), name)
    if alpaca_eval.is_annotations(doc):
        return alpaca_eval.convert(doc, name)
    if isinstance(doc, list) and doc and all(isinstance(x, dict) for x in doc):
        if livecodebench.is_eval_all(doc):
            return livecodebench.convert(doc, path)
        first = doc[0]
        if {"task_id", "reward", "traj"} <= set(first) or {"task_id", "reward", "trial"} <= set(
            first
        ):
            origins = {
                "task_id": "task_id (trials are rollouts)",
                "reward": "reward",
                "model": "not recorded (tau-bench keeps it in the file name: pass --model)",
            }
            return Converted("tau-bench", doc, origins, positions=entries(len(doc)))
        return Converted("json", doc, {}, positions=entries(len(doc)))
    split = _split_table(doc)
    if split is not None:
        return split
    if isinstance(doc, dict) and (lists := _row_lists(doc)):
        key = _widest(doc, lists)
        rows = doc[key]
        notes = [f"rows read from the document's {key!r} list"]
        for other in (k for k in lists if k != key):
            if _within(doc[other], rows):
                notes.append(
                    f"the document's {other!r} list ({len(doc[other])} rows) repeats rows of"
                    f" {key!r} (a preview or a subset) and is left aside"
                )
                continue
            if set(doc[other][0]) == set(rows[0]):
                raise InputError(
                    f"the document holds two lists of rows alike, {key!r} ({len(rows)}) and"
                    f" {other!r} ({len(doc[other])}): which are the rollouts cannot be told;"
                    " keep one list in the file",
                    file=name,
                )
            notes.append(f"the document's {other!r} list ({len(doc[other])} objects) left aside")
        model, where = _document_model(doc) or (None, "")
        if model is not None:
            rows = [r if "model" in r else {**r, "model": model} for r in rows]
        origins = {"model": f"the document's {where}"} if model else {}
        return Converted("json", rows, origins, notes, positions=entries(len(rows), key))
    summary = summary_of(doc) or swebench.swe_agent_file(doc)
    if summary is not None:
        raise Summary(summary)
    whose = is_sidecar(doc)
    if whose is not None:
        raise Sidecar(whose)
    if opencompass.is_predictions(doc, path):
        raise Summary(opencompass.PREDICTIONS)
    keyed = _keyed_rows(doc, name) if isinstance(doc, dict) else None
    if keyed is not None:
        return opencompass.named(keyed, path)
    _refuse_row_list(doc, name)
    raise NotRows(
        f"this is one JSON document, not JSON Lines: {describe(doc)}, and no list of row objects"
        f" (looked for an array of objects, or an object with {', '.join(SAMPLE_KEYS[:3])})",
        file=name,
    )


def _split_table(doc: Any) -> Converted | None:
    """Rows of a table written column names apart from their values: ``{"columns": [...],
    "data": [[...], ...]}`` (pandas ``DataFrame.to_json(orient="split")``, with ``index``;
    MLflow's ``eval_results_table.json``, ``mlflow.log_table`` as ``mlflow.evaluate`` writes
    its per-row results: ``inputs``, ``outputs``, ``<metric>/score``, the one 0/1 metric the
    grade; W&B's ``*.table.json``, TRL's GRPO ``completions`` table among them: ``step``,
    ``prompt``, ``completion``, a column per reward function, ``advantage``, read as TRL's
    completion tables are). Each list of ``data`` is one row, its values named by ``columns``
    in order; else None."""
    if not isinstance(doc, dict):
        return None
    columns, data = doc.get("columns"), doc.get("data")
    if not (isinstance(columns, list) and columns and isinstance(data, list) and data):
        return None
    if not all(isinstance(c, str) for c in columns):
        return None
    if not all(isinstance(r, list) and len(r) == len(columns) for r in data):
        return None
    rows = [dict(zip(columns, values, strict=True)) for values in data]
    notes = ["rows read from the document's table (columns and data: one row per list)"]
    if {"step", "prompt", "completion"} <= set(columns) and not set(columns) & set(TASK_ALIASES):
        # TRL's completions table as W&B saves it (media/table/completions_*.table.json)
        return Converted("trl", rows, {}, notes, positions=entries(len(rows), "data"))
    origins: dict[str, str] = {}
    metrics = [c for c in columns if c.endswith("/score")]
    binary = [c for c in metrics if _pass_fail(r[c] for r in rows)]
    if len(binary) == 1 and not any(c in REWARD_ALIASES for c in columns):
        for row in rows:
            row["reward"] = row[binary[0]]
        origins["reward"] = f"{binary[0]} (mlflow.evaluate's per-row metric" + (
            f"; the only 0/1 one of {len(metrics)})" if len(metrics) > 1 else ")"
        )
        if len(metrics) > 1:
            notes.append(
                f"{len(metrics)} metric columns: {binary[0]} grades, the only one that is 0 or 1;"
                " --map reward=COLUMN picks another"
            )
    spelled = {"reward": binary[0]} if "reward" in origins else {}
    return Converted(
        "json", rows, origins, notes, positions=entries(len(rows), "data"), spelled=spelled
    )


def _pass_fail(values: Any) -> bool:
    """Whether a metric column is a pass/fail: every value set is 0 or 1 (booleans too) and
    one is 0 (a 1-to-5 judge's scale, all at its lowest, is not read as all passing)."""
    found = [v for v in values if v is not None]
    numbers = [float(v) for v in found if isinstance(v, (bool, int, float))]
    return (
        bool(numbers)
        and len(numbers) == len(found)
        and set(numbers) <= {0.0, 1.0}
        and (0.0 in numbers)
    )


#: Where a document of rows names its model: at its top level, or in a header object
#: (reasoning-gym ``metadata.model``, a run's ``config``).
MODEL_KEYS = ("model", "model_name")
HEADER_KEYS = ("metadata", "config", "spec", "run")


def _document_model(doc: dict[str, Any]) -> tuple[str, str] | None:
    """The model a document of rows names, and where (``top-level model``, ``metadata.model``)."""
    for at in (None, *HEADER_KEYS):
        header = doc if at is None else doc.get(at)
        if isinstance(header, dict):
            for key in MODEL_KEYS:
                if isinstance(header.get(key), str):
                    return header[key], f"top-level {key}" if at is None else f"{at}.{key}"
    return None


def _mostly(values: list[Any], kind: Any) -> bool:
    """Whether at least half of ``values`` are of ``kind`` (a predicate): a tool's table with
    a broken entry is still that tool's, and the entry is named (:func:`_broken_entry`)."""
    return bool(values) and 2 * sum(map(kind, values)) >= len(values)


def _row_object(value: Any) -> bool:
    return isinstance(value, dict)


def _row_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, dict) for x in value)


def _abbr_entry(value: Any) -> bool:
    return isinstance(value, dict) and "example_abbr" in value


def _broken_entry(name: str, at: str, value: Any, want: str) -> InputError:
    return InputError(
        f"must be {want}, as the other entries are; found {describe(value)}", file=name, at=at
    )


def _keyed_rows(doc: dict[str, Any], name: str) -> Converted | None:
    """Rows kept in an object under their ids: OpenCompass results (``details: {"0": {...}}``),
    EvalPlus results (``eval: {"HumanEval/0": [{...}, ...]}``: each element a rollout). The key
    is the task id where a row names none. An entry of another kind among them is named."""
    listed = _replica_rows(doc, name)
    if listed is not None:
        return listed
    for key in KEYED_KEYS:
        table = doc.get(key)
        if not isinstance(table, dict) or not table:
            continue
        values = list(table.values())
        single = _mostly(values, _row_object)  # one row a key, else a list of rollouts
        if not single and not _mostly(values, _row_list):
            continue
        fits, want = (_row_object, "a row object") if single else (_row_list, "a list of rows")
        for task, value in table.items():
            if not fits(value):
                raise _broken_entry(name, f"{key}[{task!r}]", value, want)
        groups = [(k, [v]) for k, v in table.items()] if single else list(table.items())
        rows: list[dict[str, Any]] = []
        positions: list[dict[str, Any]] = []
        for task, group in groups:
            for i, row in enumerate(group):
                rows.append(row if "task_id" in row else {"task_id": str(task), **row})
                positions.append({"at": f"{key}[{task!r}]" + (f"[{i}]" if len(group) > 1 else "")})
        graded = _status_grades(rows)
        model, where = _document_model(doc) or (None, "")
        if model is not None:
            rows = [r if "model" in r else {**r, "model": model} for r in rows]
        origins = {"task_id": f"the keys of the document's {key!r} object"}
        if graded is not None:
            rows, origins["reward"] = graded
        if model is not None:
            origins["model"] = f"the document's {where}"
        notes = [f"rows read from the document's {key!r} object, keyed by task"]
        return Converted("json", rows, origins, notes, positions=positions)
    return None


#: OpenCompass' per-replica verdicts in a ``details`` list entry (``n`` runs: one per run).
REPLICA_GRADES = ("correct", "is_correct", "cascade_correct")


def _replica_rows(doc: dict[str, Any], name: str) -> Converted | None:
    """OpenCompass results as its current evaluator writes them (``BaseEvaluator.evaluate``:
    ``details`` a list, each entry an ``example_abbr`` with a verdict per run, ``correct:
    [b1, ..., bn]``, and the replies ``pred: [...]``): one row per run, the entry's
    ``example_abbr`` its task. None where ``details`` is not such a list."""
    table = doc.get("details")
    if not isinstance(table, list) or not table:
        return None
    if not _mostly(table, _abbr_entry):
        return None
    for at, entry in enumerate(table):
        if not _abbr_entry(entry):
            raise _broken_entry(name, f"details[{at}]", entry, "an entry with its example_abbr")
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for at, entry in enumerate(table):
        grade = next((g for g in REPLICA_GRADES if g in entry), None)
        verdicts = entry.get(grade) if grade is not None else None
        runs = verdicts if isinstance(verdicts, list) else [verdicts]
        preds = entry.get("pred")
        for i, verdict in enumerate(runs):
            reply = preds[i] if isinstance(preds, list) and i < len(preds) else preds
            row = {"task_id": str(entry["example_abbr"]), "reward": verdict, "completion": reply}
            rows.append(row)
            positions.append({"at": f"details[{at}]" + (f".{grade}[{i}]" if len(runs) > 1 else "")})
    origins = {
        "task_id": "details[].example_abbr",
        "reward": f"details[].{next((g for g in REPLICA_GRADES if g in table[0]), 'correct')}"
        " (one per run)",
    }
    notes = ["rows read from the document's 'details' list: one per run of each example"]
    return Converted("json", rows, origins, notes, positions=positions)


def _status_grades(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str] | None:
    """Rows graded by a status word, with their reward set: EvalPlus ``eval_results.json``
    (``evalplus/evaluate.py``: ``base_status`` and ``plus_status``, each ``pass``, ``fail`` or
    ``timeout``; ``plus_status`` null with ``--base-only``): a pass passes the base tests and,
    where they were run, the plus tests (HumanEval+ / MBPP+); BigCodeBench
    ``*_eval_results.json`` (``status``). None where the rows carry a grade of their own or
    no status."""
    if any(alias in row for row in rows for alias in REWARD_ALIASES):
        return None
    if all("base_status" in row for row in rows):
        out = []
        for row in rows:
            base, plus = row.get("base_status"), row.get("plus_status")
            grade = None if base is None else base == "pass" and plus in (None, "pass")
            out.append({**row, "reward": grade})
        plus_run = any(row.get("plus_status") is not None for row in rows)
        return out, (
            "base_status and plus_status == 'pass' (EvalPlus: base and plus tests)"
            if plus_run
            else "base_status == 'pass' (EvalPlus, base tests only)"
        )
    if all(isinstance(row.get("status"), str) for row in rows) and all(
        row["status"] in STATUS_WORDS for row in rows
    ):
        # the verdict becomes the reward; a test's ``timeout`` is the model's failure, not a
        # request's status (aliases.STATUS_ALIASES)
        graded = [
            {**{k: v for k, v in row.items() if k != "status"}, "reward": row["status"] == "pass"}
            for row in rows
        ]
        return graded, "status == 'pass'"
    return None


#: The status words of a code harness's verdict (EvalPlus, BigCodeBench).
STATUS_WORDS = frozenset({"pass", "fail", "timeout"})


def _row_lists(doc: dict[str, Any]) -> list[str]:
    """The keys of :data:`SAMPLE_KEYS` (in that order) whose value is a list of objects."""
    return [
        key
        for key in SAMPLE_KEYS
        if isinstance(rows := doc.get(key), list)
        and rows
        and all(isinstance(x, dict) for x in rows)
    ]


def _widest(doc: dict[str, Any], lists: list[str]) -> str:
    """The list the others' rows are all found in (a preview, a subset of failures beside
    every row), where there is one; else the first of :data:`SAMPLE_KEYS`."""
    for key in sorted(lists, key=lambda k: -len(doc[k])):
        if all(_within(doc[other], doc[key]) for other in lists if other != key):
            return key
    return lists[0]


def _within(part: list[dict[str, Any]], whole: list[dict[str, Any]]) -> bool:
    """Whether every row of ``part`` is a row of ``whole`` (compared as canonical JSON)."""
    if len(part) > len(whole):
        return False
    seen = {_canonical(r) for r in whole}
    return all(_canonical(r) in seen for r in part)


def _canonical(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def _refuse_row_list(doc: Any, name: str) -> None:
    """A list of rows that is empty, or holds something other than an object among its
    objects: refused naming the list and the entry."""
    lists: list[tuple[str | None, list[Any]]]
    if isinstance(doc, list):
        lists = [(None, doc)]
    elif isinstance(doc, dict):
        lists = [(key, doc[key]) for key in SAMPLE_KEYS if isinstance(doc.get(key), list)]
    else:
        return
    for key, rows in lists:
        where = "the document" if key is None else f"the document's {key!r} list"
        if not rows:
            raise InputError(f"no rows: {where} is empty", file=name, field=key)
        i = next((i for i, x in enumerate(rows) if not isinstance(x, dict)), None)
        if i is not None and any(isinstance(x, dict) for x in rows):
            raise InputError(
                f"a row must be a JSON object, found {type(rows[i]).__name__} in {where}",
                file=name,
                at=f"entry {i}" if key is None else f"{key}[{i}]",
            )


def convert_lines(first: dict[str, Any], rows: Any, path: Any, name: str) -> Converted | None:
    """Rows from JSON Lines whose rows are another tool's (EvalScope, Atropos), else None;
    :class:`Summary` for lines that grade no single sample (FastChat's pairwise judgments)."""
    if prime_rl.in_layout(path) or prime_rl.looks_like(first):
        return prime_rl.convert(rows(), path, name)
    if bfcl.is_score(first):
        return bfcl.convert(rows(), path, name)
    if evalscope.layout(first) is not None:
        return evalscope.convert(rows(), path, name)
    if atropos.is_group(first):
        return atropos.convert(rows(), name)
    if art.is_group(first):
        return art.convert(rows(), path, name)
    if browsergym.is_summary(first, path):  # a summary written on one line
        return browsergym.convert(first, path, name)
    if osworld.is_traj(first, path):
        if not osworld.graded(path):
            raise Sidecar(osworld.UNGRADED)
        return osworld.convert(rows(), path, name)
    if aider.is_result(first) or aider.is_exception(first, path):
        return aider.from_lines(rows(), path, name)
    if openai_evals.is_log(first):
        return openai_evals.convert(rows(), name)
    if openai_eval_runs.is_item(first):
        return openai_eval_runs.convert(((({"line": n}), r) for n, r in rows()), name)
    if anthropic_batch.is_result(first):
        return anthropic_batch.convert((({"line": n}, r) for n, r in rows()), name)
    if openai_batch.is_output(first):
        return openai_batch.convert((({"line": n}, r) for n, r in rows()), name)
    if vertex_batch.is_prediction(first):
        return vertex_batch.convert((({"line": n}, r) for n, r in rows()), name)
    if bedrock_batch.is_record(first):
        return bedrock_batch.convert((({"line": n}, r) for n, r in rows()), name)
    if langfuse.is_row(first):
        return langfuse.convert((({"line": n}, r) for n, r in rows()), name)
    if langfuse.is_run_item(first):
        raise Summary(langfuse.RUN_ITEMS)
    if open_instruct.is_trace(first):
        return open_instruct.convert(rows(), name)
    if promptfoo.is_result(first):
        return promptfoo.from_lines(rows())
    if tinker.is_summary(first):
        return tinker.convert(rows(), path)
    if braintrust.is_event(first):
        return braintrust.from_lines(rows(), name)
    if langsmith.is_run(first) or langsmith.is_flat(first):
        return langsmith.from_lines(first, rows(), name)
    if openrlhf.is_sample(first):
        return openrlhf.convert(rows(), path, name)
    if areal.is_dump(first):
        return areal.convert(rows(), path, name)
    if roll.is_dump(first):
        return roll.convert(rows(), name)
    if lm_eval.needs_conversion(first, path):
        return lm_eval.convert(rows(), path, name)
    if matharena.is_runs_line(first):  # a problem's runs written on one line
        return matharena.convert(((f"line {n}: ", doc) for n, doc in rows()), name)
    if hle.is_judged(first):  # a judged file written on one line
        return hle.convert(first, name)
    if hle.is_predictions(first):
        raise Sidecar(hle.PREDICTIONS)
    return _judged_lines(first, rows, name)


def _judged_lines(first: dict[str, Any], rows: Any, name: str) -> Converted | None:
    """Rows from verl dumps and LLM-judge judgments (FastChat, Arena-Hard), one object a
    line, else None; :class:`Summary` for FastChat's pairwise judgments. A file of one such
    line is read as that line, not as a document (:func:`convert_document`)."""
    if verl.is_dump(first):
        return verl.convert(rows(), name)
    if fastchat.is_single(first):
        return fastchat.convert(rows(), name)
    if livebench.is_judgment(first):
        return livebench.convert(rows(), name)
    if arena_hard.is_judgment(first):
        return arena_hard.convert(rows(), name)
    if fastchat.is_pair(first):
        raise Summary(fastchat.PAIR)
    return None


def convert_table(data: bytes, name: str, separator: str) -> Converted:
    """Rows of a CSV or TSV file; a LangSmith results table (``to_pandas().to_csv()``)
    converted from its flattened columns."""
    table = tables.convert(data, name, separator)
    if table.rows and langsmith.is_flat(table.rows[0]):
        return langsmith.from_flat(zip(table.positions, table.rows, strict=True), name)
    if table.rows and phoenix.is_table(table.rows[0]):
        return phoenix.from_table(list(zip(table.positions, table.rows, strict=True)), name)
    if table.rows and vlmevalkit.is_result(table.rows[0]):
        return vlmevalkit.convert(table, name)
    if table.rows and vlmevalkit.is_accuracy(table.rows[0]):
        raise vlmevalkit.refuse_accuracy(name)
    return table


def convert_zip(archive: str | bytes, name: str) -> Converted:
    """Rows from a zip: a ``torch.save`` file (slime's rollout dumps), else an inspect_ai
    ``.eval`` log (whose reader names any other zip for what it is)."""
    if slime.is_torch_zip(_zip_names(archive)):
        return slime.convert(archive, name)
    return inspect_ai.from_zip(archive, name)


def _zip_names(archive: str | bytes) -> list[str]:
    """A zip's member names; none where it cannot be listed (the log reader says why)."""
    try:
        source = io.BytesIO(archive) if isinstance(archive, bytes) else archive
        with zipfile.ZipFile(source) as opened:
            return opened.namelist()
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        OSError,
        EOFError,
        ValueError,
        NotImplementedError,  # zipfile's word for an entry that claims a version it lacks
        RuntimeError,
    ):
        return []
