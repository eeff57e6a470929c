"""Shared fixtures: an isolated environment, real git repositories, and the CLI called in-process."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from review_gate.surfaces import console
from review_gate.surfaces.cli.main import main


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Never touch the user's home, git config or the repository's own .review-gate/."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"
                         "[commit]\n\tgpgsign = false\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("REVIEW_GATE_CONFIG", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)  # state outside a repository, crash logs: under HOME
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    work = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(work)
    console.reset()
    yield work
    console.reset()


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """Call ``main([...])`` in-process; ``stdin`` feeds --diff -."""

    def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> Result:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        capsys.readouterr()
        console.reset()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


class GitRepo:
    """A real git repository in a temporary directory, on branch main with one commit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git("init", "-q", "-b", "main")
        self.write("README.md", "# project\n")
        self.commit("initial commit")

    def git(self, *args: str) -> str:
        result = subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, check=True)
        return result.stdout

    def write(self, path: str, text: str | bytes) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
        return target

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, "--allow-empty")
        return self.git("rev-parse", "HEAD").strip()

    def branch(self, name: str) -> None:
        self.git("checkout", "-q", "-b", name)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    root = tmp_path / "repo"
    root.mkdir()
    made = GitRepo(root)
    monkeypatch.chdir(root)
    return made


def make_diff(path: str, added: list[str], *, start: int = 1, new_file: bool = True) -> str:
    """A git-style unified diff adding ``added`` lines to ``path``."""
    header = f"diff --git a/{path} b/{path}\n"
    if new_file:
        header += f"new file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +{start},{len(added)} @@\n"
    else:
        header += f"--- a/{path}\n+++ b/{path}\n@@ -{start},0 +{start},{len(added)} @@\n"
    return header + "".join(f"+{line}\n" for line in added)


@pytest.fixture
def review_gate_bin() -> list[str]:
    """The installed console script, for the few tests that must run a real process."""
    exe = Path(sys.executable).parent / "review-gate"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "review_gate"]


def env_without_ci() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "CI"}


def review_branch(repo: GitRepo, cli: Any, files: dict[str, str] | dict[str, bytes] | dict[str, str | bytes], *,
                  base: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """``files`` written on a new branch ``feature`` (``base`` committed on main first), committed,
    and the branch reviewed offline against main: the exit code and the JSON report."""
    for path, text in (base or {}).items():
        repo.write(path, text)
    if base:
        repo.commit("base")
    repo.branch("feature")
    for path, data in files.items():
        repo.write(path, data)
    repo.commit("change")
    result = cli("--offline", "--no-state", "--base", "main", "--head", "HEAD", "--format", "json")
    assert result.code in (0, 1), result.err
    report: dict[str, Any] = json.loads(result.out)
    return result.code, report
