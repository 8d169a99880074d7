"""The install line a hint gives works for how whilecli was installed: from a clone, a
directory, a wheel, a git URL or a package index."""

from __future__ import annotations

from pathlib import Path

from whilecli.install import install_command


def _site(tmp_path: Path) -> Path:
    package = tmp_path / "site-packages" / "whilecli"
    package.mkdir(parents=True, exist_ok=True)
    return package


def test_a_clone_installs_its_extra_in_place(tmp_path: Path) -> None:
    root = tmp_path / "clone"
    package = root / "src" / "whilecli"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'whilecli'\n")
    assert install_command("torch", package_dir=package, cwd=root) == "pip install -e '.[torch]'"
    elsewhere = install_command("torch", package_dir=package, cwd=tmp_path)
    assert elsewhere == f"pip install -e '{root}[torch]'"


def test_an_index_install_names_the_package(tmp_path: Path) -> None:
    got = install_command("torch", package_dir=_site(tmp_path), direct_url={}, cwd=tmp_path)
    assert got == "pip install 'whilecli[torch]'"


def test_a_directory_install_names_the_directory(tmp_path: Path) -> None:
    src = tmp_path / "my whilecli"
    record = {"url": src.as_uri(), "dir_info": {}}
    got = install_command("torch", package_dir=_site(tmp_path), direct_url=record, cwd=tmp_path)
    assert got == f"pip install '{src}[torch]'"
    record["dir_info"] = {"editable": True}
    got = install_command("torch", package_dir=_site(tmp_path), direct_url=record, cwd=src)
    assert got == "pip install -e '.[torch]'"


def test_a_wheel_or_git_install_names_its_url(tmp_path: Path) -> None:
    git = {"url": "https://example.org/team/whilecli", "vcs_info": {"vcs": "git"}}
    got = install_command("torch", package_dir=_site(tmp_path), direct_url=git, cwd=tmp_path)
    assert got == "pip install 'whilecli[torch] @ git+https://example.org/team/whilecli'"
    wheel = {"url": "file:///w/whilecli-0.1.0-py3-none-any.whl", "archive_info": {}}
    got = install_command("torch", package_dir=_site(tmp_path), direct_url=wheel, cwd=tmp_path)
    assert got == "pip install 'whilecli[torch] @ file:///w/whilecli-0.1.0-py3-none-any.whl'"


def test_this_checkout_is_a_clone() -> None:
    assert install_command("torch", cwd=Path(__file__).resolve().parents[2]) == (
        "pip install -e '.[torch]'"
    )
