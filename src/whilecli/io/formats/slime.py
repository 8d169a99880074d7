"""slime rollout dumps: ``--save-debug-rollout-data PATH`` writes one ``torch.save`` file a
rollout (``rollout_data_{rollout_id}.pt``; ``eval_{rollout_id}`` for evaluations) holding
``{"rollout_id": N, "samples": [Sample.to_dict(), ...]}`` (``slime/utils/types.py``).

Each sample is one rollout of its prompt group: ``group_index`` is the task (its
``n_samples_per_prompt`` samples share it; numbered across the run, so two rollouts' groups
never merge), ``reward`` the grade (a number, or a dict of which ``--reward-key`` picks one),
``status`` ``truncated`` a reply cut at the cap, ``completed`` one that stopped, ``aborted`` and
``failed`` an engine or tool error (an error reply, not the model's), ``weight_versions`` the
policy versions that wrote it (the first is the oldest), ``rollout_log_probs`` the sampler's
per-token log-probs. slime writes no model name.

The file is a zip of a pickle (``<name>/data.pkl``) and its tensors' bytes. It is read
without torch and without running any code the file names: the unpickler loads builtin data
only (dicts, lists, strings, numbers) and stands in ``None`` for a tensor, refusing any other
class (the "restricting globals" recipe of Python's ``pickle`` documentation, as
``torch.load(weights_only=True)`` does).
"""

from __future__ import annotations

import collections
import io
import json
import pickle
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any

from whilecli.errors import InputError
from whilecli.io.formats import Converted, zipped
from whilecli.jsonout import MAX_DEPTH

#: Pickle globals a dump of plain data names: the containers ``torch.save`` writes beside
#: builtin values (a tensor's backward hooks are an ``OrderedDict``).
SAFE_GLOBALS: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
}
#: Sample fields too large or of no use to a row (token ids, masks, images, routed experts).
HEAVY = frozenset(
    {
        "tokens",
        "loss_mask",
        "multimodal_inputs",
        "multimodal_train_inputs",
        "rollout_routed_experts",
        "teacher_log_probs",
        "mopd_teacher_log_probs",
        "spec_info",
        "prefix_cache_info",
        "train_metadata",
    }
)
#: ``Sample.Status`` values of a reply the engine or a tool failed: error replies.
ERROR_STATUSES = frozenset({"aborted", "failed"})


def is_torch_zip(names: list[str]) -> bool:
    """Whether a zip's member names are a ``torch.save`` file's (``<name>/data.pkl``)."""
    return any(n == "data.pkl" or n.endswith("/data.pkl") for n in names)


def _tensor(*args: Any, **kwargs: Any) -> None:
    """A tensor's stand-in: its values are not rows."""
    return None


class _Storage:
    """A tensor storage's stand-in (its bytes are never read)."""


class _NamesCode(pickle.UnpicklingError):
    """A pickle that names a class or function beyond plain data."""


class _DataOnly(pickle.Unpickler):
    """Loads builtin data; a tensor is ``None``; any other class is refused."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in SAFE_GLOBALS:
            return SAFE_GLOBALS[(module, name)]
        if module == "torch._utils" and name.startswith("_rebuild_"):
            return _tensor
        if module in ("torch", "torch.storage") and name.endswith("Storage"):
            return _Storage
        if module == "torch" and not name.startswith("_") and name[:1].islower():
            return name  # a dtype or layout named beside a tensor (torch.float32)
        raise _NamesCode(f"names the class {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        return _Storage


def load(archive_file: str | bytes, name: str) -> tuple[Any, int]:
    """The object a ``torch.save`` zip holds, builtin data only (:class:`_DataOnly`), and
    the size of its pickle in bytes."""
    try:
        source = io.BytesIO(archive_file) if isinstance(archive_file, bytes) else archive_file
        with zipfile.ZipFile(source) as archive:
            members = [n for n in archive.namelist() if n == "data.pkl" or n.endswith("/data.pkl")]
            if len(members) != 1:
                raise InputError(
                    f"a PyTorch file with {len(members)} data.pkl members: not one saved object",
                    file=name,
                )
            zipped.refuse_bombs([archive.getinfo(members[0])], name)
            data = archive.read(members[0])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as err:
        raise InputError(f"not a readable PyTorch file: {err}", file=name) from None
    except (RuntimeError, zlib.error) as err:  # an encrypted or damaged member
        raise InputError(f"cannot read the PyTorch file's data: {err}", file=name) from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=name) from None
    try:
        return _DataOnly(io.BytesIO(data)).load(), len(data)
    except _NamesCode as err:
        raise InputError(
            f"a PyTorch file that {err}: only plain data (dicts, lists, numbers, text) is"
            " read, and no code a file names is run; save the samples as dicts"
            " (Sample.to_dict()), as slime's --save-debug-rollout-data does",
            file=name,
        ) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as err:
        raise InputError(f"a corrupt PyTorch pickle: {err}", file=name) from None
    except (IndexError, KeyError, RecursionError, MemoryError) as err:
        raise InputError(f"a corrupt PyTorch pickle: {type(err).__name__}", file=name) from None


def convert(archive_file: str | bytes, name: str) -> Converted:
    """Rows from one slime rollout dump (a path, or the bytes of a stream)."""
    doc, size = load(archive_file, name)
    budget = _Budget(name, EXPANSION * size + EXPANSION_FLOOR)
    samples = doc.get("samples") if isinstance(doc, dict) else None
    if not isinstance(samples, list):
        kind = f"a dict of {', '.join(map(str, list(doc)[:5]))}" if isinstance(doc, dict) else (
            type(doc).__name__
        )  # fmt: skip
        raise InputError(
            f"a PyTorch file of no samples list ({kind}): rows are read from slime's"
            " --save-debug-rollout-data dumps ({'rollout_id': N, 'samples': [...]})",
            file=name,
        )
    rollout = doc.get("rollout_id")
    rows: list[dict[str, Any]] = []
    positions: list[dict[str, Any]] = []
    for i, sample in enumerate(samples):
        at = f"samples[{i}]"
        if not isinstance(sample, dict):
            raise InputError(
                f"is {type(sample).__name__}, not a sample (a dict of Sample.to_dict())",
                file=name,
                at=at,
            )
        rows.append(_row(_plain(sample, name, at, budget), rollout))
        positions.append({"at": at})
    origins = {
        "task_id": "samples[].group_index (a prompt's samples share it)",
        "reward": "samples[].reward (a dict's one number; else --map reward=reward.KEY)",
        "truncated": "samples[].status == 'truncated' ('completed': not cut off)",
        "model": "not recorded",
        "version": "samples[].weight_versions[0], else the dump's rollout_id",
    }
    return Converted(
        "slime",
        rows,
        origins,
        positions=positions,
        spelled={"task_id": "group_index", "reward": "reward"},
    )


#: What a pickle may expand to as JSON data: this many values (and characters of text) per
#: byte of pickle, past :data:`EXPANSION_FLOOR`. A pickle names an object once and refers to
#: it again by a few bytes (its memo), so a list of ten references to a list of ten
#: references ... is a billion values in under a kilobyte; a real dump shares a prompt among
#: its group's samples, a few times over.
EXPANSION = 64
EXPANSION_FLOOR = 1 << 20


@dataclass
class _Budget:
    """Values and characters left to a dump's conversion, refused past them."""

    name: str
    left: int

    def spend(self, cost: int, where: str) -> None:
        self.left -= cost
        if self.left < 0:
            raise InputError(
                "expands past what its size allows (one object referred to from many places,"
                " over and over: an expansion bomb, no rollout dump); refused",
                file=self.name,
                at=where,
            )


def _plain(value: Any, name: str, at: str, budget: _Budget) -> Any:
    """``value`` as JSON data, or one located refusal: a pickle can hold what JSON cannot (an
    object that holds itself, keys that are tuples, nesting past :data:`MAX_DEPTH`, sets, or
    more than ``budget`` values and characters: :data:`EXPANSION`). Keys that are numbers,
    booleans or None read as their text, as JSON writes them; sets and tuples as lists; a
    tensor's stand-in as None."""
    holding: set[int] = set()  # the containers on the path walked: one seen again holds itself

    def walk(item: Any, where: str, depth: int) -> Any:
        budget.spend(1 + (len(item) if isinstance(item, str) else 0), where)
        if item is None or isinstance(item, (str, bool, int, float)):
            return item
        if not isinstance(item, (dict, list, tuple, set, frozenset)):
            return None  # a tensor or storage stand-in, a dtype's name read as a class
        if depth >= MAX_DEPTH:
            raise InputError(f"nests deeper than {MAX_DEPTH} levels", file=name, at=where)
        if id(item) in holding:
            raise InputError("holds itself (a circular reference)", file=name, at=where)
        holding.add(id(item))
        try:
            if isinstance(item, dict):
                out = {}
                for key, sub in item.items():
                    if not (key is None or isinstance(key, (str, bool, int, float))):
                        raise InputError(
                            f"has a key that is {type(key).__name__}, not text",
                            file=name,
                            at=where,
                        )
                    text = key if isinstance(key, str) else json.dumps(key)
                    out[text] = walk(sub, f"{where}.{text}", depth + 1)
                return out
            return [walk(sub, f"{where}[{j}]", depth + 1) for j, sub in enumerate(item)]
        finally:
            holding.discard(id(item))

    return walk(value, at, 0)


def _row(sample: dict[str, Any], rollout: Any) -> dict[str, Any]:
    row = {k: v for k, v in sample.items() if k not in HEAVY}
    group = sample.get("group_index")
    row["task_id"] = str(group) if isinstance(group, int) and not isinstance(group, bool) else None
    row["reward"] = _reward(sample.get("reward"))
    status = sample.get("status")
    row["truncated"] = {"truncated": True, "completed": False}.get(str(status))
    row["completion"] = sample.get("response")
    if isinstance(status, str) and status in ERROR_STATUSES:
        row["error"] = f"status {status}"
        row["completion"] = None  # an aborted or failed sample's text is no reply
    versions = sample.get("weight_versions")
    if isinstance(versions, list) and versions:
        row["policy_version"] = str(versions[0])
    elif isinstance(rollout, (int, str)) and not isinstance(rollout, bool):
        row["policy_version"] = str(rollout)
    logprobs = sample.get("rollout_log_probs")
    if isinstance(logprobs, list):
        row["logprobs"] = logprobs
    row.pop("rollout_log_probs", None)
    row.pop("weight_versions", None)
    return row


def _reward(value: Any) -> Any:
    """A sample's reward: a number as it is; a dict of one number, that number (slime's
    ``--reward-key`` picks one of several; the row keeps the dict for ``--map``)."""
    if isinstance(value, dict):
        numbers = [v for v in value.values() if isinstance(v, (int, float))]
        if len(value) == 1 and len(numbers) == 1:
            return numbers[0]
    return value
