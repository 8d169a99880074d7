"""inspect_ai logs: a ``.eval`` zip (``header.json``, ``samples/<id>_epoch_<n>.json``,
``summaries.json``, ``reductions.json``) or a ``.json`` EvalLog (one object: ``eval``, ``plan``,
``results``, ``stats``, ``samples[]``).

Each sample is one rollout of task ``id``; its epochs are the rollouts of that task. The grade
is the first scorer's ``value`` (``scores.<scorer>.value``): ``C`` (correct) = 1, ``P``
(partial) = 0.5, ``I`` (incorrect) and ``N`` (no answer) = 0, as inspect's own
``value_to_float`` reads them; numbers and booleans as they are; a dict with one entry as that
entry. The model is the header's ``eval.model``; a reply is cut off when its
``stop_reason`` is ``max_tokens`` or ``model_length``, or when the sample was halted by its
token, message or context limit (``EvalSample.limit``, inspect >= 0.3.5x).
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from typing import Any, BinaryIO

from whilecli import jsonout
from whilecli.errors import InputError
from whilecli.io.aliases import cut_reason
from whilecli.io.formats import Converted, as_dict, first_assistant_cut, zipped
from whilecli.io.shape import kind_words

LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
WORDS = {"yes": 1.0, "true": 1.0, "correct": 1.0, "no": 0.0, "false": 0.0, "incorrect": 0.0}
#: Sample members too large or irrelevant to carry into rows.
HEAVY = ("events", "attachments", "store", "model_usage", "messages", "output")


def is_log(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("eval"), dict) and "samples" in doc


def score_value(value: Any) -> float | None:
    """An inspect score value as a number (None where it has none)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text in LETTERS:
            return LETTERS[text]
        if text.lower() in WORDS:
            return WORDS[text.lower()]
        try:
            return float(text)
        except ValueError:
            return None
    if isinstance(value, dict) and len(value) == 1:
        return score_value(next(iter(value.values())))
    return None


#: zip compression methods: stored, deflated, bzip2 and lzma (Python's zipfile) and zstd (93,
#: inspect_ai's current default, decoded with pyarrow's zstd codec: Python 3.11's standard
#: library has no zstd, and pyarrow is already what reads .zst files).
ZSTD_METHOD = 93
#: ``EvalSample.limit.type`` values (``inspect_ai/log/_log.py: EvalSampleLimit``) that halt a
#: sample at a length: its tokens, its turns, the model's context. Time, cost and the
#: operator's limits cut no reply short.
CUT_LIMITS = frozenset({"token", "message", "context"})
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def from_zip(archive_file: str | bytes, name: str) -> Converted:
    """Rows from a ``.eval`` log (a path, or the bytes of a stream). Members are read by zip
    entry, so a sample stored twice is two rollouts; zstd members are decompressed."""
    try:
        fh: BinaryIO = (
            io.BytesIO(archive_file)
            if isinstance(archive_file, bytes)
            else open(archive_file, "rb")  # noqa: SIM115 - closed by the with below
        )
        with fh, zipfile.ZipFile(fh) as archive:
            entries = archive.infolist()
            names = [e.filename for e in entries]
            if "header.json" not in names and "_journal/start.json" not in names:
                raise InputError(
                    "a zip archive that is not an inspect_ai log (no header.json inside)",
                    file=name,
                )
            header_name = "header.json" if "header.json" in names else "_journal/start.json"
            header_entry = next(e for e in entries if e.filename == header_name)
            wanted = [e for e in entries if e.filename.startswith("samples/")]
            wanted = [e for e in wanted if e.filename.endswith(".json")]
            zipped.refuse_bombs([header_entry, *wanted], name)
            header = _member_json(archive, fh, header_entry, name)
            samples = [(_member_json(archive, fh, e, name), f"member {e.filename}") for e in wanted]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as err:
        # NotImplementedError: zipfile's word for an entry that claims a zip version it lacks
        raise InputError(f"not a readable inspect_ai .eval log: {err}", file=name) from None
    except OSError as err:
        reason = err.strerror or str(err)
        raise InputError(f"cannot read the .eval log: {reason}", file=name) from None
    samples.sort(key=lambda s: (str(s[0].get("id")), _epoch(s[0].get("epoch"))))
    return _rows(header, samples, name, f"member {header_name}")


def _epoch(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _member_json(
    archive: zipfile.ZipFile, fh: BinaryIO, entry: zipfile.ZipInfo, name: str
) -> dict[str, Any]:
    """One zip entry parsed as a JSON object; a corrupt or unreadable member names itself."""
    where = f"{name}: member {entry.filename}"
    if entry.flag_bits & 0x1:
        raise InputError(
            "the member is encrypted (inspect_ai writes none): cannot read it", file=where
        )
    try:
        if entry.compress_type == ZSTD_METHOD:
            data = _zstd_member(fh, entry)
        else:
            with archive.open(entry) as member:
                data = member.read()
    except NotImplementedError as err:
        raise InputError(f"cannot decompress: {err}", file=where) from None
    except RuntimeError as err:  # zipfile's word for a member it will not open
        raise InputError(f"cannot read the member: {_reason(err)}", file=where) from None
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, ValueError) as err:
        raise InputError(f"corrupt member: {_reason(err)}", file=where) from None
    try:
        value = jsonout.parse(data)
    except jsonout.TooDeep as err:
        raise InputError(str(err), file=where, line=err.line) from None
    except UnicodeDecodeError as err:
        raise InputError(f"not valid UTF-8 (byte {err.start + 1})", file=where) from None
    except json.JSONDecodeError as err:
        raise InputError(
            f"not valid JSON (column {err.colno}: {err.msg})", file=where, line=err.lineno
        ) from None
    if not isinstance(value, dict):
        raise InputError(f"a JSON object was expected, found {type(value).__name__}", file=where)
    return value


def _zstd_member(fh: BinaryIO, entry: zipfile.ZipInfo) -> bytes:
    """A zstd-compressed entry's bytes: its local header skipped, its frame decoded, its CRC
    checked."""
    import pyarrow as pa

    fh.seek(entry.header_offset)
    head = fh.read(_LOCAL_HEADER.size)
    if len(head) < _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile("bad local file header")
    fields = _LOCAL_HEADER.unpack(head)
    fh.seek(fields[-2] + fields[-1], io.SEEK_CUR)  # the name and the extra field
    raw = fh.read(entry.compress_size)
    if len(raw) < entry.compress_size:
        raise EOFError("the member is cut short")
    try:
        data = pa.input_stream(pa.BufferReader(raw), compression="zstd").read(entry.file_size + 1)
    except pa.ArrowException as err:
        raise ValueError(f"zstd: {err}") from None
    if len(data) != entry.file_size or zlib.crc32(data) != entry.CRC:
        raise ValueError("the decompressed bytes do not match the zip entry's size and CRC")
    return bytes(data)


def _reason(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return " ".join(str(err).split())[:200] or type(err).__name__


def from_log(doc: dict[str, Any], name: str) -> Converted:
    samples = doc.get("samples") or []
    if not isinstance(samples, list):
        raise InputError("inspect_ai log: samples is not a list", file=name, field="samples")
    return _rows(doc, [(s, f"samples[{i}]") for i, s in enumerate(samples)], name, None)


def _expect(
    value: Any, kinds: type | tuple[type, ...], what: str, name: str, at: str | None, field: str
) -> Any:
    """``value`` when it is absent (null) or of ``kinds``; else one located refusal."""
    if value is None or (isinstance(value, kinds) and not isinstance(value, bool)):
        return value
    found = kind_words(value)
    raise InputError(f"{what} expected, found {found}", file=name, at=at, field=field)


def _header(header: dict[str, Any], name: str, at: str | None) -> dict[str, Any]:
    """The header's ``eval`` object, its fields' shapes checked before use."""
    spec = _expect(header.get("eval"), dict, "an object", name, at, "eval") or {}
    for key in ("model", "task"):
        _expect(spec.get(key), str, "a string", name, at, f"eval.{key}")
    _expect(header.get("status"), str, "a string", name, at, "status")
    return spec


def _sample_shape(sample: Any, name: str, at: str) -> dict[str, Any]:
    """One sample, the fields read from it checked: an object with an ``id`` (a string or an
    integer), an integer ``epoch``, a ``scores`` object, an ``output`` object whose
    ``choices`` is a list; else one line naming the member (or entry) and the field."""
    if not isinstance(sample, dict):
        raise InputError(
            f"a sample must be a JSON object, found {kind_words(sample)}", file=name, at=at
        )
    sid = sample.get("id")
    if sid is None or isinstance(sid, bool) or not isinstance(sid, (str, int)) or sid == "":
        shown = json.dumps(sid)[:40] if sid is not None else "missing"
        raise InputError(
            f"the sample id is {shown}: inspect_ai keys every sample by a string or an integer",
            file=name,
            at=at,
            field="id",
        )
    _expect(sample.get("epoch"), int, "an integer", name, at, "epoch")
    _expect(sample.get("scores"), dict, "an object", name, at, "scores")
    output = _expect(sample.get("output"), dict, "an object", name, at, "output") or {}
    choices = _expect(output.get("choices"), list, "a list", name, at, "output.choices") or []
    _expect(output.get("stop_reason"), str, "a string", name, at, "output.stop_reason")
    if choices:
        first = _expect(choices[0], dict, "an object", name, at, "output.choices[0]") or {}
        _expect(first.get("message"), dict, "an object", name, at, "output.choices[0].message")
        _expect(
            first.get("stop_reason"), str, "a string", name, at, "output.choices[0].stop_reason"
        )
    _expect(output.get("completion"), str, "a string", name, at, "output.completion")
    _expect(sample.get("input"), (str, list), "a string or a list", name, at, "input")
    return sample


def _rows(
    header: dict[str, Any], samples: list[tuple[Any, str]], name: str, header_at: str | None
) -> Converted:
    spec = _header(header, name, header_at)
    model = spec.get("model")
    task = spec.get("task")
    notes: list[str] = []
    temperature = _temperature(header, spec)
    status = header.get("status")
    if isinstance(status, str) and status != "success":
        notes.append(f"the inspect_ai log's status is {status!r}: it may hold only some samples")
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    scorers: list[str] = []
    for sample, at in samples:
        _sample_shape(sample, name, at)
        scores = as_dict(sample.get("scores"))
        for scorer in scores:
            if scorer not in scorers:
                scorers.append(scorer)
        reward: Any = None
        if scorers and scorers[0] in scores:
            raw = scores[scorers[0]]
            raw = raw.get("value") if isinstance(raw, dict) else raw
            reward = score_value(raw)
            if reward is None and _named_grades(raw) is not None:
                # a value of named grades ({"accuracy": 1.0, "f1": 0.9}): only the user knows
                # which passes; kept whole, so --map reward=scores.SCORER.value.KEY reads one
                reward = _named_grades(raw)
            elif reward is None and raw is not None:
                raise InputError(
                    f"score value {json.dumps(raw)[:60]} is not a grade (C/P/I/N, a number or a"
                    " boolean); pass --map reward=scores.SCORER.value.KEY",
                    file=name,
                    at=at,
                    field=f"scores.{scorers[0]}.value",
                )
        output = as_dict(sample.get("output"))
        stop = output.get("stop_reason")
        choices = output.get("choices")
        if stop is None and isinstance(choices, list) and choices and isinstance(choices[0], dict):
            stop = choices[0].get("stop_reason")
        cut = None if stop is None else cut_reason(stop)
        if str(as_dict(sample.get("limit")).get("type")) in CUT_LIMITS:
            cut = True  # the sample was halted at its token, message or context limit
        completion = _completion(output)
        row = {k: v for k, v in sample.items() if k not in HEAVY}
        row["scores"] = {
            k: ({**v, "value": _value(v.get("value"))} if isinstance(v, dict) else v)
            for k, v in scores.items()
        }
        row.update(
            task_id=str(sample["id"]),
            reward=reward,
            truncated=cut,
            model=model,
            prompt=first_assistant_cut(sample.get("input")),
            completion=completion,
        )
        if temperature is not None:
            row["temperature"] = temperature
        rows.append(row)
        positions.append({"at": at})
    if len(scorers) > 1:
        notes.append(
            f"the log has {len(scorers)} scorers ({', '.join(scorers)}): {scorers[0]} grades;"
            f" --map reward=scores.NAME.value picks another"
        )
    origins = {
        "task_id": "samples[].id (epochs are rollouts)",
        "reward": (
            f"scores.{scorers[0]}.value (C = 1, P = 0.5, I = N = 0)" if scorers else "no scorer"
        ),
        "truncated": "output stop_reason in {max_tokens, model_length}, or the sample's limit"
        " of type token, message or context",
        "model": "header eval.model" if model else "not recorded",
    }
    spelled = {"task_id": "id"}  # a sample's own id
    if scorers:
        spelled["reward"] = f"scores.{scorers[0]}.value"
    return Converted(
        "inspect-ai", rows, origins, notes, env=task, positions=positions, spelled=spelled
    )


def _temperature(header: dict[str, Any], spec: dict[str, Any]) -> float | None:
    """The temperature the log's samples were generated at: the plan's generate config
    (``plan.config.temperature``), else the eval's (``eval.model_generate_config``); None
    where neither records one."""
    for config in (
        as_dict(as_dict(header.get("plan")).get("config")),
        as_dict(spec.get("model_generate_config")),
    ):
        value = config.get("temperature")
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value)
    return None


def _named_grades(value: Any) -> dict[str, float] | None:
    """A score value that is an object of several grades, each read as a grade; None
    where it is not one (or one of its entries is no grade)."""
    if not isinstance(value, dict) or len(value) < 2:
        return None
    grades = {str(k): score_value(v) for k, v in value.items()}
    if any(g is None for g in grades.values()):
        return None
    return {k: g for k, g in grades.items() if g is not None}


def _value(value: Any) -> Any:
    """A score's value as rows keep it: a grade as a number, an object of grades as numbers."""
    grade = score_value(value)
    return grade if grade is not None else _named_grades(value)


def _completion(output: dict[str, Any]) -> str | None:
    if isinstance(output.get("completion"), str):
        return output["completion"]
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return None
