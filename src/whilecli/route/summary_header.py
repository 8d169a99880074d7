"""The header of a summary: what it records besides its counts, and how headers combine.

The header is the Parquet key-value metadata entry :data:`HEADER_KEY` of a summary (see
:mod:`whilecli.route.summary` and ``docs/scale.md``), a JSON object: ``format_version``,
``pass_threshold``, ``threshold_explicit``, ``format``, ``paths``, ``sources``, ``rows``,
``tasks``, ``partial_rows``, ``has_logprobs``, ``has_values``, ``facts`` and ``warnings``
(the row facts of every input added up, and what they change: derived, for a reader of the
file; the route recomputes them from the entries) and ``inputs``, one entry per summarised
read (its paths, format, sources, reader notes and row facts). Summaries read together
recombine their entries exactly as :func:`whilecli.io.read.read_rows` combines the files
it reads: formats joined, a source that differs named per file, notes prefixed with their
file when there are several, the partial-reward note recomputed from the totals.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import polars as pl

from whilecli import jsonout
from whilecli.errors import InputError, UsageError
from whilecli.fileio import reader_source
from whilecli.io.sources import literal
from whilecli.route.model import Rows

FORMAT_VERSION = 1
HEADER_KEY = "whilecli.summary"
#: The task ids whose prompt key a header records (:attr:`Entry.prompts`).
PROMPT_SAMPLE = 1000


@dataclass
class Entry:
    """One summarised read (``read_rows`` over some paths), as the header records it."""

    paths: list[str]
    format: str
    sources: dict[str, str]
    notes: list[str] = field(default_factory=list)
    judged: int | None = None  # rows an LLM judge graded; None: not scanned (stdin, older)
    #: What reading found (:class:`whilecli.io.facts.Facts` as a dict); None: not recorded.
    facts: dict[str, Any] | None = None
    #: The lowest and highest graded reward (:attr:`Rows.reward_range`); None: none read (a
    #: pass given by a column, or an older summary).
    reward_range: list[float] | None = None
    #: The one evaluation the read's sidecars name (:attr:`Rows.evaluation`); None: none,
    #: several, or an older summary.
    evaluation: str | None = None
    #: The prompt key (hex) of the read's first :data:`PROMPT_SAMPLE` task ids, in id order,
    #: where its rows carry prompts: summaries of different evaluations whose ids meet under
    #: different prompts are keyed apart by it (:func:`whilecli.io.read.prompt_groups`).
    #: None: no prompts read, or an older summary.
    prompts: dict[str, str] | None = None

    def label(self) -> str:
        """What keys this read's tasks apart from another evaluation's, as a pooled read of
        its files keys them (:func:`whilecli.io.read.evaluations`): its evaluation, else its
        one path."""
        return self.evaluation or (self.paths[0] if len(self.paths) == 1 else "")


@dataclass
class Header:
    """What a summary records besides its counts (the Parquet metadata, see module doc)."""

    pass_threshold: float | None  # None: a header-less summary, threshold unknown
    threshold_explicit: bool
    inputs: list[Entry]
    has_logprobs: bool | None = False  # None: unknown (a header-less summary was merged in)
    has_values: bool | None = False
    format_version: int = FORMAT_VERSION

    def to_json(self, *, rows: int, tasks: int, partial_rows: int) -> str:
        """The header as written: the recorded fields, the totals, and the combined view of
        the inputs."""
        paths, fmt, sources, _ = combine(self.inputs, self.pass_threshold)
        found = facts_of(self.inputs)
        facts = found.to_dict()
        facts.pop("repeated_share", None)  # derived
        return jsonout.dumps(
            {
                "format_version": self.format_version,
                "pass_threshold": self.pass_threshold,
                "threshold_explicit": self.threshold_explicit,
                "format": fmt,
                "paths": paths,
                "sources": sources,
                "rows": rows,
                "tasks": tasks,
                "partial_rows": partial_rows,
                "has_logprobs": self.has_logprobs,
                "has_values": self.has_values,
                "facts": facts,
                "warnings": found.warnings(),
                "inputs": [asdict(e) for e in self.inputs],
            },
            ensure_ascii=False,
        )


@dataclass(frozen=True)
class Footer:
    """What a Parquet footer says that a summary needs: the column names and the key-value
    metadata (where :data:`HEADER_KEY` lives)."""

    names: list[str]
    metadata: dict[str, str]


def parquet_footer(path: str | os.PathLike[str]) -> Footer | None:
    """The column names and key-value metadata at ``path``, from the footer alone (polars:
    routing a Parquet file does not load pyarrow); None when it is not a readable Parquet
    file."""
    try:
        names = list(pl.read_parquet_schema(reader_source(path, literal(path))))
        metadata = pl.read_parquet_metadata(reader_source(path))
    except (OSError, ValueError, pl.exceptions.PolarsError):
        return None
    return Footer(names, dict(metadata))


def partial_note(partial: int, rows: int, threshold: float) -> str:
    """The note :func:`whilecli.io.read.read_rows` appends for partial rewards."""
    return (
        f"{partial} of {rows} rows have a reward strictly between 0 and 1:"
        f" a row passes at reward ≥ {threshold:g}"
    )


def header_of(rows: Rows, n_rows: int) -> Header:
    """The header of a summary of ``rows`` (``n_rows`` of them); the partial-reward note is
    left out, recomputed from the totals on read."""
    notes = list(rows.notes)
    if notes and notes[-1] == partial_note(rows.partial_rows, n_rows, rows.pass_threshold):
        notes.pop()
    judged = None if rows.judge is None else int(rows.judge.judged)
    found = rows.facts.to_dict()
    found.pop("repeated_share", None)  # derived
    span = None if rows.reward_range is None else [float(x) for x in rows.reward_range]
    entry = Entry(list(rows.paths), rows.format, dict(rows.sources), notes, judged, found, span)
    entry.evaluation = rows.evaluation
    entry.prompts = _prompt_sample(rows.prompts)
    return Header(
        pass_threshold=rows.pass_threshold,
        threshold_explicit=rows.threshold_explicit,
        inputs=[entry],
        has_logprobs=rows.has_logprobs,
        has_values=rows.has_values,
    )


def _prompt_sample(prompts: pl.DataFrame | None) -> dict[str, str] | None:
    """The first :data:`PROMPT_SAMPLE` task ids' prompt keys, as :attr:`Entry.prompts`."""
    if prompts is None:
        return None
    known = prompts.filter(pl.col("task_id").is_not_null() & pl.col("prompt").is_not_null())
    first = known.sort("task_id").head(PROMPT_SAMPLE)
    return {t: format(p, "x") for t, p in first.iter_rows()} or None


def read_header(path: str | os.PathLike[str]) -> Header | None:
    """The header of the summary at ``path``; None when it has none.

    Every field is checked for its type (a threshold that is a finite number or null,
    flags that are booleans, ``inputs`` a list of ``{paths, format, sources, notes}``): a
    header that is not one is refused in one line naming the file and the field.
    """
    footer = parquet_footer(path)
    raw = footer.metadata.get(HEADER_KEY) if footer is not None else None
    if raw is None:
        return None
    name = str(path)

    def bad(key: str, what: str) -> InputError:
        return InputError(f"unreadable summary header ({HEADER_KEY}): {what}", file=name, field=key)

    try:
        data = jsonout.loads(raw, what="header JSON")
    except InputError as err:  # not JSON, not UTF-8, or nested past the guard
        raise bad(HEADER_KEY, str(err)) from None
    if not isinstance(data, dict):
        raise bad(HEADER_KEY, f"a JSON object expected, got {type(data).__name__}")
    for key in ("format_version", "pass_threshold", "threshold_explicit", "inputs"):
        if key not in data:
            raise bad(key, "missing")
    version = data["format_version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise bad("format_version", f"a positive integer expected, got {version!r}")
    if version > FORMAT_VERSION:
        raise InputError(
            f"summary format version {version} is newer than this while reads"
            f" ({FORMAT_VERSION}): upgrade whilecli",
            file=name,
        )
    threshold = data["pass_threshold"]
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not math.isfinite(threshold)
    ):
        raise bad("pass_threshold", f"a finite number or null expected, got {threshold!r}")
    flags = {}
    for key in ("threshold_explicit", "has_logprobs", "has_values"):
        value = data.get(key, False)
        unknown_ok = key != "threshold_explicit"
        if not isinstance(value, bool) and not (unknown_ok and value is None):
            expected = "true, false or null" if unknown_ok else "true or false"
            raise bad(key, f"{expected} expected, got {value!r}")
        flags[key] = value
    inputs = data["inputs"]
    if not isinstance(inputs, list):
        raise bad("inputs", f"a list expected, got {type(inputs).__name__}")
    entries = [_entry(e, f"inputs[{i}]", bad) for i, e in enumerate(inputs)]
    return Header(
        pass_threshold=None if threshold is None else float(threshold),
        threshold_explicit=flags["threshold_explicit"] is True,
        inputs=entries,
        has_logprobs=flags["has_logprobs"],
        has_values=flags["has_values"],
        format_version=version,
    )


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _entry(e: object, at: str, bad: Callable[[str, str], InputError]) -> Entry:
    """One ``inputs`` entry of a header, its types checked."""
    if not isinstance(e, dict):
        raise bad(at, f"an object expected, got {type(e).__name__}")
    known = {
        "paths",
        "format",
        "sources",
        "notes",
        "judged",
        "facts",
        "reward_range",
        "evaluation",
        "prompts",
    }
    unknown = set(e) - known
    if unknown:
        raise bad(at, f"unknown keys {sorted(unknown)}")
    if not _strings(e.get("paths")):
        raise bad(f"{at}.paths", "a list of strings expected")
    if not isinstance(e.get("format"), str):
        raise bad(f"{at}.format", "a string expected")
    sources = e.get("sources")
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        raise bad(f"{at}.sources", "an object of strings expected")
    notes = e.get("notes", [])
    if not _strings(notes):
        raise bad(f"{at}.notes", "a list of strings expected")
    judged = e.get("judged")
    if judged is not None and (
        not isinstance(judged, int) or isinstance(judged, bool) or judged < 0
    ):
        raise bad(f"{at}.judged", "a count of rows (an integer >= 0) or null expected")
    found = e.get("facts")
    if found is not None:
        _check_facts(found, f"{at}.facts", bad)
    span = e.get("reward_range")
    if span is not None and not (
        isinstance(span, list)
        and len(span) == 2
        and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            for x in span
        )
        and span[0] <= span[1]
    ):
        raise bad(f"{at}.reward_range", "[lowest, highest] finite numbers or null expected")
    evaluation = e.get("evaluation")
    if evaluation is not None and not isinstance(evaluation, str):
        raise bad(f"{at}.evaluation", "a name or null expected")
    entry = Entry(list(e["paths"]), e["format"], dict(sources), list(notes), judged, found, span)
    entry.evaluation = evaluation
    prompts = e.get("prompts")
    if prompts is not None and not (
        isinstance(prompts, dict) and all(isinstance(v, str) for v in prompts.values())
    ):
        raise bad(f"{at}.prompts", "an object of task id to prompt key (text) or null expected")
    entry.prompts = prompts
    return entry


def reward_range_of(inputs: list[Entry]) -> tuple[float, float] | None:
    """The reward range of summarised reads together, as the read of all their rows finds
    it (the lowest low, the highest high); None when any read recorded none."""
    spans = [e.reward_range for e in inputs]
    if not spans or any(s is None for s in spans):
        return None
    return min(s[0] for s in spans if s), max(s[1] for s in spans if s)


def _check_facts(found: object, at: str, bad: Callable[[str, str], InputError]) -> None:
    """An entry's ``facts``: the fields of :class:`whilecli.io.facts.Facts`, each typed."""
    from whilecli.io.facts import Facts

    fields = {f.name: f.type for f in dataclasses.fields(Facts)}
    if not isinstance(found, dict) or set(found) - set(fields):
        raise bad(at, "an object of the row facts expected")
    for key, value in found.items():
        kind = str(fields[key])
        if key == "coverage":
            ok = isinstance(value, dict) and all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value.values()
            )
        elif "list[int]" in kind:
            ok = (value is None and "None" in kind) or (
                isinstance(value, list)
                and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
            )
        elif "str" in kind:
            ok = isinstance(value, str) or (value is None and "None" in kind)
        elif "float" in kind:  # a token cap: a positive finite number
            number = isinstance(value, int | float) and not isinstance(value, bool)
            ok = (value is None and "None" in kind) or (number and 0 < value < math.inf)
        else:
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        if not ok:
            raise bad(f"{at}.{key}", f"not a {kind}: {value!r}")


def facts_of(inputs: list[Entry]) -> Any:
    """The row facts of every entry added up (:class:`whilecli.io.facts.Facts`); entries
    that recorded none add nothing."""
    from whilecli.io.facts import Facts

    total = Facts()
    for entry in inputs:
        if entry.facts is not None:
            total.add(Facts(**{k: v for k, v in entry.facts.items() if k != "missing"}))
            total.missing = str(entry.facts.get("missing", total.missing))
    return total


def one_pass_threshold(graded: list[tuple[str, float | None]], what: str) -> float | None:
    """Refuse inputs graded at different pass thresholds (DESIGN section 1, "passed": one
    rule for every count that is added or compared), naming each threshold with its files.
    ``graded``: (file, threshold) pairs, None where a file does not say; ``what``: the
    inputs and what cannot be done with them (``summaries made … cannot be merged``).
    Returns the one threshold (None where no file says)."""
    thresholds: dict[float, list[str]] = {}
    for name, threshold in graded:
        if threshold is not None:
            files = thresholds.setdefault(threshold, [])
            if name not in files:
                files.append(name)
    if len(thresholds) > 1:
        made = "; ".join(f"{', '.join(files)} at {t:g}" for t, files in thresholds.items())
        raise UsageError(
            f"{what} ({made}): summarise them again, or read the rows, with one --pass-threshold"
        )
    return next(iter(thresholds), None)


def merge_headers(names: list[str], headers: list[Header | None]) -> Header:
    """One header for summaries read together; different pass thresholds are refused
    (:func:`one_pass_threshold`)."""
    threshold = one_pass_threshold(
        [
            (name, h.pass_threshold if h is not None else None)
            for name, h in zip(names, headers, strict=True)
        ],
        "summaries made with different pass thresholds cannot be merged",
    )
    inputs = [e for h in headers if h is not None for e in h.inputs]
    bare = [name for name, h in zip(names, headers, strict=True) if h is None]
    if bare:  # one entry for them all: an engine may write hundreds of parts
        which = f" ({len(bare)} files: {bare[0]}, ...)" if len(bare) > 1 else ""
        note = (
            f"a summary without a whilecli header{which}: its pass threshold, input format"
            " and source columns are unknown"
        )
        inputs.append(Entry(bare, "summary", {}, [note]))
    known = [h for h in headers if h is not None]
    return Header(
        pass_threshold=threshold,
        threshold_explicit=any(h.threshold_explicit for h in known),
        inputs=inputs,
        has_logprobs=_any_known([h.has_logprobs for h in known], unknown=bool(bare)),
        has_values=_any_known([h.has_values for h in known], unknown=bool(bare)),
    )


def _any_known(flags: list[bool | None], *, unknown: bool) -> bool | None:
    """True when some summary says so; else None when one cannot say (no header, or its
    flag is unknown); else False."""
    if any(flag is True for flag in flags):
        return True
    return None if unknown or any(flag is None for flag in flags) else False


def _joined(values: list[str]) -> str:
    seen = list(dict.fromkeys(values))
    return seen[0] if len(seen) == 1 else " + ".join(seen)


def combine(
    inputs: list[Entry], threshold: float | None
) -> tuple[list[str], str, dict[str, str], list[str]]:
    """Paths, format, sources and notes of several reads, as one read of all their files
    would give them (:func:`whilecli.io.read.read_rows`): formats joined, a source that
    differs named per file, and notes prefixed with their file when there are several."""
    if len(inputs) == 1:
        e = inputs[0]
        return list(e.paths), e.format, dict(e.sources), list(e.notes)
    names = [", ".join(e.paths) for e in inputs]
    passed = "unknown" if threshold is None else f"reward ≥ {threshold:g}"
    sources: dict[str, str] = {}
    keys = dict.fromkeys(["passed", *(k for e in inputs for k in e.sources)])
    for key in keys:
        default = passed if key == "passed" else "none"
        seen = [e.sources.get(key, default) for e in inputs]
        if len(set(seen)) == 1:
            sources[key] = seen[0]
        else:
            sources[key] = "; ".join(f"{n}: {v}" for n, v in zip(names, seen, strict=True))
    notes = [
        note if len(e.paths) > 1 else f"{name}: {note}"
        for e, name in zip(inputs, names, strict=True)
        for note in e.notes
    ]
    paths = [p for e in inputs for p in e.paths]
    return paths, _joined([e.format for e in inputs]), sources, notes
