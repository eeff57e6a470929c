"""The git processes a run starts, counted by git itself (``GIT_TRACE``) in a real repository:
every process costs a few milliseconds, and a question asked twice is a process too many
(issue 23: the blob sizes of binary sections were asked twice, the empty tree's id was asked of
``git hash-object`` for every range, and the base's ``.gitattributes`` was read by the plan and
again by the judging)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from review_gate.change import git
from review_gate.judging.surroundings import GitSurroundings
from tests.conftest import GitRepo

PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)) * 4


def traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    trace = tmp_path / "git-trace.log"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    return trace


def commands(trace: Path) -> list[str]:
    """Each git command the run started, as git traced it (``cat-file --batch-check``)."""
    return [m.group(1) for m in re.finditer(r"trace: built-in: git (.*)", trace.read_text(encoding="utf-8"))]


def count(trace: Path, command: str) -> int:
    return sum(1 for line in commands(trace) if line == command or line.startswith(command + " "))


@pytest.fixture
def binary_change(repo: GitRepo) -> GitRepo:
    repo.branch("feature")
    repo.write("docs/logo.png", PNG)
    repo.write("app/service.py", "def fetch(url):\n    return url\n")
    repo.commit("a logo and a service")
    return repo


def test_a_plan_asks_the_sizes_of_binary_sections_once_and_never_hash_object(
        binary_change: GitRepo, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = traced(tmp_path, monkeypatch)
    result = cli("plan", "--base", "main", "--head", "feature", "--format", "json", cwd=binary_change.root)
    assert result.code == 0, result.err
    plan = result.json()
    assert {f["path"]: f["binary"] for f in plan["facts"]["files"]} == {"docs/logo.png": True,
                                                                        "app/service.py": False}
    assert count(trace, "cat-file --batch-check") == 1  # the sizes, then the small blobs read by size
    assert count(trace, "cat-file --batch") == 1
    assert count(trace, "hash-object") == 0  # the empty tree's id is known without a process
    assert [c["subject"] for c in plan["facts"]["commits"]] == ["a logo and a service"]


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_the_empty_tree_is_told_without_git_in_either_object_format(tmp_path: Path, object_format: str) -> None:
    root = tmp_path / object_format
    root.mkdir()
    subprocess.run(["git", "init", "-q", f"--object-format={object_format}", str(root)], check=True)
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "first"], cwd=root, check=True)
    head = git.resolve(root, "HEAD")
    assert git.is_empty_tree(git.empty_tree(root))
    assert not git.is_empty_tree(head)
    # from the empty tree (a first push): every commit the head holds, not a range of none
    assert [c.subject for c in git.commits(root, git.empty_tree(root), head)] == ["first"]


def test_the_base_gitattributes_is_read_once_for_the_plan_and_the_judging(
        repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # class_moves (the plan) and refine (the judging) each make their own GitSurroundings
    repo.write(".gitattributes", "generated/** linguist-generated\n")
    base = repo.commit("attributes")
    repo.write(".gitattributes", "nothing/** linguist-generated\n")  # the change's own: never read
    repo.commit("the change edits them")
    trace = traced(tmp_path, monkeypatch)
    planned, judged = GitSurroundings(repo.root, base), GitSurroundings(repo.root, base)
    assert planned.gitattributes() == judged.gitattributes() == "generated/** linguist-generated\n"
    assert count(trace, "cat-file --batch") == 1


def _calc(repo: GitRepo) -> None:
    """A committed module, which the stop's change then edits."""
    repo.write("app/calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("calc")


def _stop(cli: Any, repo: GitRepo) -> Any:
    payload = {"session_id": "s", "cwd": str(repo.root), "hook_event_name": "Stop", "stop_hook_active": False}
    return cli("hook", "claude-code", stdin=json.dumps(payload).encode(), cwd=repo.root)


def test_a_stop_over_a_change_without_a_waiver_reads_the_working_tree_once(
        repo: GitRepo, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 33: the hook's review read the working tree a second time (against HEAD, ten git
    # processes and a parse) to place the waivers the change adds, in a change that adds none
    _calc(repo)
    repo.write("app/calc.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    trace = traced(tmp_path, monkeypatch)
    assert _stop(cli, repo).code == 0
    assert count(trace, "diff --no-color") == 1 and count(trace, "ls-files") == 2  # (and the index's diff --cached)


def test_a_stop_over_a_change_that_adds_a_waiver_still_reads_what_is_committed(
        repo: GitRepo, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _calc(repo)
    repo.write("app/calc.py", "def add(a, b):\n    return eval('a + b')  # noqa: S307 trusted\n")
    trace = traced(tmp_path, monkeypatch)
    assert _stop(cli, repo).code == 0
    assert count(trace, "diff --no-color") == 2  # the change, and what it adds since HEAD


def test_a_stop_asks_each_question_about_refs_and_objects_once(
        repo: GitRepo, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 33: a stop asked git for the root twice, HEAD's commit five times, the default
    # branch twice and the trusted baseline and acceptances twice each: 24 processes, 15 needed
    _calc(repo)
    repo.write("app/calc.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    trace = traced(tmp_path, monkeypatch)
    assert _stop(cli, repo).code == 0
    asked = [c for c in commands(trace) if c.split(" ")[0] in ("rev-parse", "symbolic-ref", "merge-base", "cat-file")]
    assert asked and sorted(asked) == sorted(set(asked))
    assert count(trace, "rev-parse --show-toplevel") == 1


def test_what_a_run_remembers_of_git_is_forgotten_after_it(repo: GitRepo) -> None:
    # a server or the loop reviews again after a commit: HEAD is asked afresh
    repo.write("a.txt", "one\n")
    first = repo.commit("one")
    with git.one_run():
        assert git.resolve(repo.root, "HEAD") == first
        repo.write("a.txt", "two\n")
        second = repo.commit("two")
        assert git.resolve(repo.root, "HEAD") == first  # within a run, one answer
    with git.one_run():
        assert git.resolve(repo.root, "HEAD") == second
    assert git.resolve(repo.root, "HEAD") == second
