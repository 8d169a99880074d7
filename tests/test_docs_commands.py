"""Every shell command of the docs runs as written, in order, on a fresh copy of the project.

The documents are ``README.md``, ``docs/*.md``, ``examples/README.md`` and the READMEs in
the folders under ``examples/``. From each, every fenced ``bash``/``sh``/``shell``/``console``
block is read in document order (a ``console`` block's commands are its ``$ `` lines; a line
ending in ``\\`` continues on the next), and the commands run one after another in a fresh
copy of the project's files (``git ls-files``, tracked and untracked-but-not-ignored), so a
command may read what an earlier one of the same document wrote and must not overwrite it
without ``--force``. Each must exit with its documented code.

**Reading the doc.** A trailing comment states the expected exit code, ``# exits 1`` (or
``# ... exit 1``); without one the command must exit 0. Setup is skipped: a command line
that runs ``pip``, ``uv``, or the project's own checks (``pytest``, ``ruff``, ``mypy``,
which this suite is). A command that needs the network must say so (``# network``) and is
skipped; one that would reach it unmarked (a URL, ``curl``, ``git clone``, ...) fails the
test. A command that needs a GPU (``--device cuda`` or ``# gpu``) is skipped without CUDA.

**Running it.** ``whilecli``, ``while``, ``\\while`` and ``command while`` are the
program: a command that is that program with plain arguments runs in this process,
``whilecli.cli.app(args, standalone_mode=False)`` in the copy as working folder, which is
what keeps the test fast; anything using the shell (pipes, redirections, ``$VAR``, globs,
``&&``) runs under ``bash -c`` with the program rewritten to ``python3 -m whilecli`` and
``PYTHONPATH`` set to the copy's ``src`` (in this process the code is this checkout's own,
which the copy's is a copy of). A line that only assigns variables (``DUMP=... MODEL=...``,
or ``export`` of them) sets them for the rest of its document, and a ``cd DIR`` line moves
the rest into ``DIR``, as a shell session would.
``GITHUB_STEP_SUMMARY`` is unset, so ``--format github`` writes nothing outside the copy.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from conftest import ROOT
from whilecli.cli import app

SHELL_LANGS = frozenset({"bash", "sh", "shell", "console", "zsh"})
#: The program's names as the docs type them.
PROGRAM = re.compile(r"(?:\\while|command\s+while|whilecli|while)")
#: Where a command word can start in a shell line.
COMMAND_START = r"(^|[|;&(]|&&|\|\|)(\s*)"
PYTHON_WORD = re.compile(COMMAND_START + r"(python3?)(?=\s)")
PROGRAM_WORD = re.compile(COMMAND_START + PROGRAM.pattern + r"(?=\s|$)")
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
EXPECT = re.compile(r"\bexits?\s+(\d+)\b")
#: Programs whose lines are setup or the project's own checks, never run here.
SETUP = frozenset({"pip", "pip3", "uv", "pipx", "pytest", "ruff", "mypy", "pre-commit"})
SETUP_MODULE_ARGS = [["pip"], ["pytest"], ["ruff"], ["mypy"]]
NETWORK = re.compile(
    r"https?://|s3://|gs://|\b(curl|wget|git\s+clone|huggingface-cli|hf\s+download)\b"
)
#: Subprocess wall limit per command, seconds.
TIMEOUT = 120


def documents() -> list[Path]:
    """The documents whose commands are run, in the order a reader meets them."""
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found += [ROOT / "examples" / "README.md", *sorted((ROOT / "examples").glob("*/README.md"))]
    return [p for p in found if p.is_file()]


@dataclass(frozen=True)
class Command:
    """One command of a document: its text as a shell reads it and what it must do."""

    doc: str  # path relative to the project
    line: int  # 1-based line of its first line in the document
    text: str  # continuations joined, the trailing comment removed
    comment: str  # the trailing comment, without '#'
    expect: int  # the exit code the doc states (0 unless it says otherwise)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def split_comment(line: str) -> tuple[str, str]:
    """``line`` → (code, comment): the first ``#`` outside quotes that starts a word."""
    quote: str | None = None
    escaped = False
    for i, ch in enumerate(line):
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1 :].strip()
    return line.rstrip(), ""


def fenced_blocks(text: str) -> Iterator[tuple[str, int, list[str]]]:
    """(language, first line number, lines) of every fenced block of a Markdown text."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = re.match(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)", lines[i])
        if not opening:
            i += 1
            continue
        fence, lang = opening.group(2), opening.group(3).lower()
        start = i + 1
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            i += 1
        yield lang, start + 1, lines[start:i]
        i += 1


def commands(text: str, doc: str) -> list[Command]:
    """The shell commands of one Markdown document, in order."""
    out: list[Command] = []
    for lang, first, lines in fenced_blocks(text):
        if lang not in SHELL_LANGS:
            continue
        pending: list[str] = []
        start = 0
        for offset, raw in enumerate(lines):
            line = raw.rstrip()
            if lang == "console" and not pending:
                if not line.lstrip().startswith("$ "):
                    continue  # output
                line = line.lstrip()[2:]
            if not pending:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                start = first + offset
            if line.endswith("\\"):
                pending.append(line[:-1].rstrip())
                continue
            pending.append(line.strip() if len(pending) else line)
            code, comment = split_comment(" ".join(p.strip() for p in pending))
            pending = []
            found = EXPECT.search(comment)
            out.append(Command(doc, start, code, comment, int(found.group(1)) if found else 0))
        assert not pending, f"{doc}: a command ends its block with a backslash"
    return out


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment)
    except ValueError:
        return segment.split()


def is_setup(cmd: Command) -> bool:
    """Whether a command line installs or runs the project's own checks (see the docstring)."""
    for segment in re.split(r"&&|\|\||[;|]", cmd.text):
        words = [w for w in _words(segment) if not ASSIGNMENT.match(w)]
        if not words:
            continue
        program = os.path.basename(words[0])
        if program in SETUP:
            return True
        if (
            program.startswith("python")
            and words[1:2] == ["-m"]
            and words[2:3] in SETUP_MODULE_ARGS
        ):
            return True
    return False


def skip_reason(cmd: Command, cuda: bool | None = None) -> str | None:
    """Why a command is not run here, or None. Fails on an unmarked network command."""
    marks = set(re.findall(r"[\w-]+", cmd.comment.lower()))
    if is_setup(cmd):
        return "setup"
    if "network" in marks:
        return "needs the network"
    assert not NETWORK.search(cmd.text), (
        f"{cmd.where}: `{cmd.text}` reaches the network: mark it `# network` (it is skipped)"
    )
    if "gpu" in marks or re.search(r"--device[= ]cuda", cmd.text):
        if cuda is None:
            cuda = _cuda()
        if not cuda:
            return "needs CUDA"
    return None


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def assignments(cmd: Command) -> dict[str, str] | None:
    """The variables a line of plain assignments (or ``export`` of them) sets, or None for
    any other line."""
    words = _words(cmd.text)
    if words[:1] == ["export"]:
        words = words[1:]
    if not words or not all(ASSIGNMENT.match(w) for w in words):
        return None
    return dict(w.split("=", 1) for w in words)


def shell_words(text: str, variables: dict[str, str], cwd: Path) -> list[str] | None:
    """The words bash would make of ``text``: quotes removed, ``$NAME``/``${NAME}`` of the
    document's own variables substituted, unquoted globs expanded in ``cwd`` (a glob that
    matches nothing stays as typed, as in bash). None when ``text`` needs more of the shell
    (pipes, redirections, ``&&``, subshells, other variables, a backslash other than the
    program's ``\\while``)."""
    words: list[str] = []
    word: list[str] = []
    started = globbed = False
    quote: str | None = None

    def flush() -> None:
        if started or word:
            typed = "".join(word)
            matches = sorted(glob.glob(typed, root_dir=cwd)) if globbed else []
            words.extend(matches or [typed])

    i = 0
    while i < len(text):
        ch = text[i]
        if quote == "'":
            if ch == "'":
                quote = None
            else:
                word.append(ch)
        elif ch == "$":
            found = re.match(r"\$(?:\{(\w+)\}|(\w+))", text[i:])
            name = found and (found.group(1) or found.group(2))
            if not found or name not in variables:
                return None
            word.append(variables[name])
            started = True
            i += found.end()
            continue
        elif quote == '"':
            if ch == '"':
                quote = None
            elif ch in "\\`":
                return None
            else:
                word.append(ch)
        elif ch in "'\"":
            quote, started = ch, True
        elif ch.isspace():
            flush()
            word, started, globbed = [], False, False
        elif ch == "\\" and not words and not word and text.startswith("\\while", i):
            pass  # \while: the program's name, typed past the shell keyword
        elif ch in "|&;<>()`{}~\\":
            return None
        else:
            globbed = globbed or ch in "*?["
            word.append(ch)
        i += 1
    if quote is not None:
        return None
    flush()
    return words


def in_process_args(
    cmd: Command, variables: dict[str, str] | None = None, cwd: Path | None = None
) -> list[str] | None:
    """The program's arguments when the command is the program alone with plain words, or
    None (the command runs in bash)."""
    words = shell_words(cmd.text, variables or {}, cwd or Path.cwd())
    if not words:
        return None
    if words[0] in ("while", "whilecli"):
        return words[1:]
    if words[:2] == ["command", "while"]:
        return words[2:]
    return None


def shell_text(text: str) -> str:
    """``text`` with the program and ``python`` at command positions made this interpreter."""
    python = shlex.quote(sys.executable)
    text = PROGRAM_WORD.sub(lambda m: f"{m.group(1)}{m.group(2)}{python} -m whilecli", text)
    return PYTHON_WORD.sub(lambda m: f"{m.group(1)}{m.group(2)}{python}", text)


# --- running -----------------------------------------------------------------------------


def fresh_copy(dest: Path) -> Path:
    """The project's files (tracked and untracked-but-not-ignored) copied under ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if listed.returncode == 0 and listed.stdout:
        for name in sorted(set(listed.stdout.decode().split("\0")) - {""}):
            src = ROOT / name
            if src.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)
    else:  # not a git checkout: the folders a reader has
        for name in ("README.md", "pyproject.toml", "docs", "examples", "src", "benchmarks"):
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
            elif src.is_file():
                shutil.copy2(src, dest / name)
    return dest


def run_in_process(args: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The program on ``args`` in this process: (exit code, stderr)."""
    capfd.readouterr()
    try:
        result = app(args, prog_name="while", standalone_mode=False)
        code = result if isinstance(result, int) else 0
    except click.exceptions.Exit as exit_:
        code = exit_.exit_code
    except click.ClickException as err:
        err.show()
        code = err.exit_code
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return code, capfd.readouterr().err


def run_in_shell(text: str, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run(
        ["bash", "-c", shell_text(text)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    return done.returncode, done.stderr


def run_commands(
    cmds: list[Command],
    work: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> tuple[list[str], list[str]]:
    """Run ``cmds`` in order in ``work``: (failures, skipped), one line each."""
    for var in ("GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS", "GITHUB_OUTPUT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(work)
    env = {**os.environ, "PYTHONPATH": str(work / "src")}
    variables: dict[str, str] = {}
    cwd = work
    failures: list[str] = []
    skipped: list[str] = []
    for cmd in cmds:
        why = skip_reason(cmd)
        if why is not None:
            skipped.append(f"{cmd.where} ({why})")
            continue
        assigned = assignments(cmd)
        if assigned is not None:
            env.update(assigned)
            variables.update(assigned)
            continue
        words = shell_words(cmd.text, variables, cwd)
        if words and words[0] == "cd" and len(words) == 2:
            cwd = (cwd / words[1]).resolve()
            assert cwd.is_dir() and cwd.is_relative_to(work), f"{cmd.where}: no folder {cwd}"
            monkeypatch.chdir(cwd)
            continue
        args = in_process_args(cmd, variables, cwd)
        if args is not None:
            code, err = run_in_process(args, capfd)
        else:
            code, err = run_in_shell(cmd.text, cwd, env)
        tail = " | ".join(err.strip().splitlines()[-3:])
        if code != cmd.expect:
            failures.append(f"{cmd.where}: `{cmd.text}` exited {code}, not {cmd.expect}: {tail}")
        elif "Traceback" in err or "internal error" in err:
            failures.append(f"{cmd.where}: `{cmd.text}` printed a traceback: {tail}")
    return failures, skipped


DOCS = documents()


@pytest.mark.parametrize("doc", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_every_command_of_the_doc_runs_as_written(
    doc: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    name = str(doc.relative_to(ROOT))
    cmds = commands(doc.read_text(encoding="utf-8"), name)
    if not cmds:
        pytest.skip(f"{name} has no shell commands")
    work = fresh_copy(tmp_path / "clone")
    failures, skipped = run_commands(cmds, work, monkeypatch, capfd)
    assert not failures, "\n".join(failures)
    assert len(skipped) < len(cmds), f"{name}: every command was skipped: {skipped}"


def test_the_runner_reports_what_a_reader_would_hit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A wrong exit code, an overwrite without --force and a placeholder path are failures;
    a documented exit code, a variable, a pipe, a glob and ``cd`` work as in bash."""
    work = tmp_path / "clone"
    shutil.copytree(ROOT / "examples" / "data", work / "examples" / "data")
    (work / "src").mkdir()
    os.symlink(ROOT / "src" / "whilecli", work / "src" / "whilecli")
    doc = """
```bash
POOL=examples/data/mixed.parquet
whilecli route "$POOL" --model Qwen/Qwen3-0.6B
whilecli route examples/data/truncated_passes.parquet   # exits 1
whilecli route evals/latest.parquet
whilecli config --method grpo -o rl.toml
whilecli config --method grpo -o rl.toml
cat examples/data/mixed.jsonl | whilecli route - > out.txt
cd examples
whilecli summarize data/shards/*.parquet -o ../tasks.parquet
```
"""
    failures, skipped = run_commands(commands(doc, "doc.md"), work, monkeypatch, capfd)
    assert skipped == []
    assert [f.split(":")[1] for f in failures] == ["6", "8"], failures
    assert "evals/latest.parquet" in failures[0] and "--force" in failures[1]
    assert (work / "out.txt").read_text().startswith("whilecli route: ")
    assert (work / "tasks.parquet").is_file()


# --- the reading rules, on small texts ---------------------------------------------------

SAMPLE = """
Some text with `whilecli route x` inline (not run).

```bash
whilecli route a.parquet --model M     # → grpo
whilecli check b.parquet \\
    --fail-on all                      # → floor, exits 1
python3 -m pip install -e . && whilecli route a.parquet
# a comment line
cat rows.jsonl | \\while route - --format json > out.json
whilecli route "a file#1.parquet"      # exit 0
```

```python
print("not shell")
```

```console
$ whilecli size --effect 0.05
367 tasks
$ curl https://example.com/rows.jsonl -o rows.jsonl   # network
```
"""


def test_commands_are_read_in_order_with_their_exit_codes() -> None:
    got = commands(SAMPLE, "doc.md")
    assert [(c.line, c.text, c.expect) for c in got] == [
        (5, "whilecli route a.parquet --model M", 0),
        (6, "whilecli check b.parquet --fail-on all", 1),
        (8, "python3 -m pip install -e . && whilecli route a.parquet", 0),
        (10, "cat rows.jsonl | \\while route - --format json > out.json", 0),
        (11, 'whilecli route "a file#1.parquet"', 0),
        (19, "whilecli size --effect 0.05", 0),
        (21, "curl https://example.com/rows.jsonl -o rows.jsonl", 0),
    ]
    reasons = [skip_reason(c, cuda=False) for c in got]
    assert reasons == [None, None, "setup", None, None, None, "needs the network"]


def test_how_each_command_runs() -> None:
    route, check, _, pipe, quoted, size, _ = commands(SAMPLE, "doc.md")
    assert in_process_args(route) == ["route", "a.parquet", "--model", "M"]
    assert in_process_args(quoted) == ["route", "a file#1.parquet"]
    assert in_process_args(size) == ["size", "--effect", "0.05"]
    assert in_process_args(pipe) is None
    py = shlex.quote(sys.executable)
    assert (
        shell_text(pipe.text)
        == f"cat rows.jsonl | {py} -m whilecli route - --format json > out.json"
    )
    assert shell_text("whilecli a && while b; command while c") == (
        f"{py} -m whilecli a && {py} -m whilecli b; {py} -m whilecli c"
    )
    assert shell_text("python examples/make_examples.py --out x") == (
        f"{py} examples/make_examples.py --out x"
    )


def test_setup_network_and_gpu_rules() -> None:
    def cmd(text: str, comment: str = "") -> Command:
        return Command("doc.md", 1, text, comment, 0)

    assert is_setup(cmd("python3 -m pip install torch==2.13.0 && python3 -m pip install -e ."))
    assert is_setup(cmd("ruff check . && ruff format --check . && python3 -m pytest"))
    assert is_setup(cmd("uv pip install whilecli"))
    assert not is_setup(cmd("whilecli route pip.parquet"))
    assert not is_setup(cmd("python examples/make_examples.py"))
    with pytest.raises(AssertionError, match="network"):
        skip_reason(cmd("whilecli route https://example.com/rows.parquet"))
    assert skip_reason(cmd("whilecli route https://x/rows.parquet", "network")) is not None
    gpu = cmd("whilecli update --method sao b.jsonl --device cuda")
    assert skip_reason(gpu, cuda=False) == "needs CUDA"
    assert skip_reason(gpu, cuda=True) is None
    assert (
        skip_reason(cmd("whilecli update --method sao b.jsonl --device auto"), cuda=False) is None
    )
    assert assignments(cmd("DUMP=a.parquet MODEL=Qwen/Qwen3-8B")) == {
        "DUMP": "a.parquet",
        "MODEL": "Qwen/Qwen3-8B",
    }
    assert assignments(cmd("DUMP=a whilecli route $DUMP")) is None
    assert assignments(cmd("export A=1")) == {"A": "1"}


def test_shell_words_as_bash_makes_them(tmp_path: Path) -> None:
    (tmp_path / "s0.parquet").touch()
    (tmp_path / "s1.parquet").touch()
    env = {"DUMP": "examples/data/teacher.parquet"}
    assert shell_words('whilecli check "$DUMP" --model ${M}', {**env, "M": "Q/Q"}, tmp_path) == [
        "whilecli",
        "check",
        "examples/data/teacher.parquet",
        "--model",
        "Q/Q",
    ]
    assert shell_words("whilecli route --merge s*.parquet -o t.parquet", {}, tmp_path) == [
        "whilecli",
        "route",
        "--merge",
        "s0.parquet",
        "s1.parquet",
        "-o",
        "t.parquet",
    ]
    assert shell_words("whilecli route 's*.parquet' none*.parquet", {}, tmp_path) == [
        "whilecli",
        "route",
        "s*.parquet",
        "none*.parquet",
    ]
    assert shell_words("\\while route --map 'reward=a[0].b' ''", {}, tmp_path) == [
        "while",
        "route",
        "--map",
        "reward=a[0].b",
        "",
    ]
    for text in ("a | b", "a > b", "a && b", "a $HOME", "a $(b)", "a 'b", "a ~/b"):
        assert shell_words(text, env, tmp_path) is None, text
