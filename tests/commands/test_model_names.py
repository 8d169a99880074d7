"""Every option that names a model (``--model`` of route, check and config, config's
``--teacher NAME@URL``, ``--set model.name`` and the other model keys) refuses a name that
names no model (blank, ``None``, ``N/A``: what the rows' reader reads as no model) or that
holds a control character, alike: one line naming the option, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import EXAMPLES
from whilecli.cli import app

MIXED = str(EXAMPLES / "mixed.jsonl")

#: Names that name no model: blank (any whitespace), a missing value's word in any case.
NO_MODEL = st.one_of(
    st.text(st.sampled_from(" \t\u00a0\u2003"), max_size=4),
    st.sampled_from(["None", "null", "N/A", "unknown", "undefined", " none ", "@4", "NULL@7"]),
)
#: Names holding a control character.
CONTROL = st.builds(
    lambda a, c, b: a + c + b,
    st.sampled_from(["Qwen", "Qwen/Qwen3-8B", "m"]),
    st.sampled_from(["\n", "\r", "\x1b", "\x7f", "\u2028", "\x08"]),
    st.sampled_from(["", "[evil]", "-8B"]),
)


def _commands(name: str, out: Path) -> list[list[str]]:
    return [
        ["route", MIXED, "-q", "--model", name],
        ["check", MIXED, "--model", name, "--fail-on", "off-policy"],
        ["config", "--method", "grpo", "--model", name, "-o", str(out)],
        ["config", "--method", "sft", "--model", name, "-o", str(out)],
        ["config", "--method", "grpo", "--set", f'model.name="{_toml(name)}"', "-o", str(out)],
        ["config", "--method", "opd", "--teacher", f"{name}@http://127.0.0.1:8001/v1", "-o", str(out)],
    ]  # fmt: skip


def _toml(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if not c.isprintable() or c in '"\\' else c for c in text)


@settings(max_examples=25, deadline=None)
@given(name=st.one_of(NO_MODEL, CONTROL))
def test_a_model_option_naming_no_model_is_refused_alike(tmp_path_factory, name: str) -> None:
    out = tmp_path_factory.mktemp("out") / "rl.toml"
    for args in _commands(name, out):
        if args[-1] == str(out) and "--teacher" in args and "@" in name:
            continue  # NAME@URL splits at the first @: another option's spelling
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 2, (args, done.output)
        assert done.stderr.count("\n") == 1 and "model" in done.stderr.lower(), done.stderr
        said = ("is empty", "names no model", "control character")
        assert any(s in done.stderr for s in said), done.stderr
        assert not out.exists()


def test_a_model_name_is_still_taken() -> None:
    done = CliRunner().invoke(app, ["route", MIXED, "-q", "--model", "Qwen/Qwen3-8B"])
    assert done.exit_code in (0, 1), done.output
