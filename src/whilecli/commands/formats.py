"""``whilecli formats``: every input format the reader knows, how it is detected, and which field
feeds each canonical field (:data:`whilecli.io.formats.FORMATS`). Thin: print the table."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from whilecli import jsonout
from whilecli.commands._common import user_errors


@user_errors
def formats_command(
    as_json: bool = typer.Option(
        False, "--json", help="Print the table as JSON.", rich_help_panel="Output"
    ),
    aliases: bool = typer.Option(
        False,
        "--aliases",
        help="Also print the alias table (first match wins).",
        rich_help_panel="Output",
    ),
) -> None:
    """List the input formats: how each is detected and where each field is read from."""
    from whilecli.io import aliases as table
    from whilecli.io.formats import FORMATS

    alias_table = {
        "task_id": list(table.TASK_ALIASES) + ["else a hash of the prompt"],
        "prompt": list(table.PROMPT_ALIASES),
        "reward": list(table.REWARD_ALIASES) + [f"{table.REWARD_PARTS} dict: Σ score × weight"],
        "truncated": [a for a, v in table.TRUNCATION_ALIASES if v is None]
        + [
            "/".join(table.REASON_NAMES)
            + f" in {sorted(table.CUT_REASONS)} (any case), on the top level and under "
            + ", ".join(p.rstrip(".") for p in (*table.EXTRA_PLACES, *table.REPLY_HOLDERS) if p)
            + ", each also in "
            + ", ".join(p.rstrip(".") for p in table.REPLY_LISTS)
        ]
        + [
            f"{a} false" if v is table.DONE else f"{a} in {sorted(v)}"
            for a, v in table.TRUNCATION_ALIASES
            if v is not None and a not in table.REASON_PLACES
        ]
        + [
            "else the reply's token count ("
            + ", ".join(table.TOKEN_COUNT_ALIASES)
            + ") reaching its cap ("
            + ", ".join(table.TOKEN_CAP_ALIASES)
            + "; else in the settings beside the rows: vf-eval's metadata.json"
            " sampling_args.max_tokens, a config.yaml's sampling.max_tokens, ...)"
        ],
        "model": [
            *(a for a in table.MODEL_ALIASES if "." not in a and "[" not in a),
            "each also under "
            + ", ".join(p.rstrip(".") for p in table.MODEL_PLACES if p)
            + "; model and model_name also as an object's "
            + "/".join(table.MODEL_OBJECT_KEYS)
            + " or a one-element list; "
            + ", ".join(table.MODEL_ROLES)
            + " only where the value looks like a model's; each row's first that names a"
            " model (a served-model name such as 'default' or 'policy' names none)",
        ],
        "policy_version": list(table.VERSION_ALIASES) + ["else the model's '@version'"],
        "behavior_logprobs": list(table.LOGPROB_ALIASES),
        "completion": list(table.COMPLETION_ALIASES)
        + [f"{a} (text only)" for a in table.TEXT_REPLY_ALIASES],
    }
    if as_json:
        out: dict[str, Any] = {
            "schema_version": jsonout.SCHEMA_VERSION,
            "formats": [
                {"name": f.name, "tool": f.tool, "detected": f.detected, "fields": f.fields}
                for f in FORMATS
            ],
        }
        if aliases:
            out["aliases"] = alias_table
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        return
    from whilecli import textstyle

    columns = textstyle.width(sys.stdout)
    lines: list[str] = []
    for f in FORMATS:
        lines += textstyle.wrap(f"{f.name}: {f.tool}", columns)
        lines += textstyle.wrap(f"detected: {f.detected}", columns, indent="    ")
        for key, where in f.fields.items():
            field = "every field" if key == "*" else key
            lines += textstyle.wrap(f"{field}: {where}", columns, indent="    ")
    if aliases:
        lines.append("")
        lines += textstyle.wrap(
            "alias table (first match wins; dotted = nested; --map FIELD=PATH overrides):", columns
        )
        for k, v in alias_table.items():
            lines += textstyle.wrap(f"{k}: {', '.join(v)}", columns, indent="    ")
    lines.append("")
    lines += textstyle.wrap(
        "--input-format NAME forces one; --map FIELD=PATH reads a field from any path.", columns
    )
    sys.stdout.write("\n".join(lines) + "\n")
