"""The CI example (``examples/ci/check-eval-dump.yml``) runs as its steps say.

Its install step runs as written, in a new virtual environment, with ``WHILECLI`` naming a
copy of this project: it installs whilecli and nothing of torch. That environment sees this
one's packages through a ``.pth`` line (whilecli's dependencies are there, not downloaded) and
torch cannot be imported in it. Then each ``whilecli`` step runs under ``bash`` with the environment's script first on
``PATH`` and the workflow's variables pointing at the bundled dumps, and exits 0.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from workflow import workflow

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "ci" / "check-eval-dump.yml"
EXAMPLES = ROOT / "examples" / "data"
#: A torch that cannot be imported, as where torch is not installed.
NO_TORCH = "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n"


def _project_copy(dest: Path) -> Path:
    """What ``pip install DIR`` of this project reads: its metadata, README and sources."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "src", dest / "src", ignore=shutil.ignore_patterns("*.egg-info"))
    return dest


def _venv(where: Path) -> Path:
    """A new environment that sees this one's packages, pip among them; its scripts folder."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=300
    )
    bin_dir = where / "bin"
    purelib = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    parents = [p for p in (*site.getsitepackages(), site.getusersitepackages()) if Path(p).is_dir()]
    (Path(purelib) / "parent-env.pth").write_text("\n".join(parents) + "\n")
    return bin_dir


def test_the_install_step_asks_for_whilecli_alone() -> None:
    env, runs = workflow(WORKFLOW.read_text(encoding="utf-8"))
    assert set(env) == {"DUMP", "BASELINE", "MODEL", "WHILECLI"}
    installs = [r for r in runs if "pip install" in r]
    assert installs == ['python -m pip install "$WHILECLI"']
    assert "torch" not in " ".join(runs)


@pytest.mark.slow
def test_the_ci_example_runs_as_its_steps_say(tmp_path: Path) -> None:
    _, runs = workflow(WORKFLOW.read_text(encoding="utf-8"))
    bin_dir = _venv(tmp_path / "venv")
    no_torch = tmp_path / "no-torch"
    (no_torch / "torch").mkdir(parents=True)
    (no_torch / "torch" / "__init__.py").write_text(NO_TORCH)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(no_torch),
        "WHILECLI": str(_project_copy(tmp_path / "whilecli")),
        "DUMP": str(EXAMPLES / "teacher.parquet"),
        "BASELINE": str(EXAMPLES / "student.parquet"),
        "MODEL": "Qwen/Qwen3-8B",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    for step in runs:
        done = subprocess.run(
            ["bash", "-c", step],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, (step, done.stdout[-2000:], done.stderr[-2000:])
    script = (bin_dir / "whilecli").read_text()
    # the step's own whilecli ran: its interpreter on the first line, or (a path past the
    # kernel's shebang limit) in pip's /bin/sh trampoline on the second
    ran = script.startswith(f"#!{bin_dir}") or f"'''exec' {bin_dir}/" in script[:400]
    assert ran, script[:200]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "check: ok" in summary and "diff: improvement" in summary
