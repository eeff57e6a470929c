"""What gets reviewed: the working tree, --base, --head, --staged, in real git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import GitRepo


def planned_files(cli, *args: str) -> dict[str, dict]:
    result = cli("plan", "--format", "json", *args)
    assert result.code == 0, result.err
    return {f["path"]: f for f in result.json()["facts"]["files"]}


def test_default_is_working_tree_against_merge_base_with_untracked_files(cli, repo: GitRepo) -> None:
    repo.write(".gitignore", "*.log\n")
    repo.commit("ignore logs")
    repo.branch("feature")
    repo.write("committed.py", "a = 1\n")
    repo.commit("feat: add committed.py")
    repo.git("checkout", "-q", "main")
    repo.write("README.md", "# changed on main later\n")
    repo.commit("main moves on")
    repo.git("checkout", "-q", "feature")
    repo.write("committed.py", "a = 1\nb = 2\n")  # uncommitted edit
    repo.write("untracked.py", "c = 3\n")
    repo.write("debug.log", "ignored\n")
    status_before = repo.git("status", "--porcelain")
    files = planned_files(cli)
    assert set(files) == {"committed.py", "untracked.py"}
    assert files["committed.py"]["added"] == 2
    assert files["untracked.py"]["status"] == "added"
    assert repo.git("status", "--porcelain") == status_before  # the real index is untouched


def test_commit_metadata_is_collected(cli, repo: GitRepo) -> None:
    repo.branch("feature")
    repo.write("a.py", "x = 1\n")
    repo.commit("fix: handle empty input")
    result = cli("plan", "--format", "json")
    facts = result.json()["facts"]
    assert [c["subject"] for c in facts["commits"]] == ["fix: handle empty input"]
    assert result.json()["classification"]["pr_type"] == "fix"


def test_head_compares_commits_and_ignores_the_working_tree(cli, repo: GitRepo) -> None:
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("one.py", "1\n")
    first = repo.commit("one")
    repo.write("two.py", "2\n")
    repo.commit("two")
    repo.write("dirty.py", "not committed\n")
    assert set(planned_files(cli, "--base", base, "--head", first)) == {"one.py"}
    assert set(planned_files(cli, "--base", base, "--head", "HEAD")) == {"one.py", "two.py"}


def test_base_names_another_base(cli, repo: GitRepo) -> None:
    repo.write("one.py", "1\n")
    repo.commit("one")
    repo.write("two.py", "2\n")
    assert set(planned_files(cli, "--base", "HEAD~1")) == {"one.py", "two.py"}


def test_staged_reviews_only_the_index(cli, repo: GitRepo) -> None:
    repo.write("staged.py", "s = 1\n")
    repo.git("add", "staged.py")
    repo.write("unstaged.py", "u = 1\n")
    assert set(planned_files(cli, "--staged")) == {"staged.py"}


def test_repository_without_commits(cli, tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / "hello.py").write_text("print('hi')\n")
    monkeypatch.chdir(root)
    assert set(planned_files(cli)) == {"hello.py"}


def test_binary_and_non_utf8_files_are_reviewed_without_crashing(cli, repo: GitRepo) -> None:
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    repo.write("latin1.txt", b"caf\xe9 TODO\n")
    result = cli("--format", "json")
    assert result.code == 0, result.err
    report = result.json()
    assert report["coverage"]["files_changed"] == 2
    assert report["coverage"]["unreviewed"] == []
    assert [f["file"] for f in report["findings"]] == ["latin1.txt"]  # the TODO is still found


def test_unknown_ref_is_a_usage_error(cli, repo: GitRepo) -> None:
    result = cli("--base", "no-such-branch")
    assert result.code == 2
    assert "unknown git ref 'no-such-branch'" in result.err
    assert "Traceback" not in result.err
    result = cli("--base", "main", "--head", "v9.9.9")
    assert result.code == 2
    assert "'v9.9.9'" in result.err


def test_outside_a_repository_without_diff_is_a_usage_error(cli, isolated: Path) -> None:
    result = cli()
    assert result.code == 2
    assert "not inside a git repository" in result.err
    assert "--diff" in result.err


def test_conflicting_inputs_are_refused(cli, repo: GitRepo) -> None:
    assert cli("--diff", "x.diff", "--staged").code == 2
    result = cli("--staged", "--head", "HEAD")
    assert result.code == 2
    assert "--staged" in result.err


def test_missing_diff_file(cli, isolated: Path) -> None:
    result = cli("--diff", "nope.diff")
    assert result.code == 2
    assert "nope.diff" in result.err


def test_head_behind_base_is_refused_with_how_to_review_the_reverse(cli, repo: GitRepo) -> None:
    """--base F --head F~1 names an empty merge-base range: a silent "Nothing to review" pass would
    hide the change the user asked about, which is the reverse of F."""
    parent = repo.git("rev-parse", "HEAD").strip()
    repo.write("app.py", "import subprocess\nsubprocess.run(cmd, shell=True)\n")
    fix = repo.commit("fix")
    result = cli("--base", fix, "--head", f"{fix}~1", "--offline", "--no-state")
    assert result.code == 2, result.out + result.err
    assert f"is an ancestor of --base {fix}" in result.err
    assert "git commit-tree" in result.err and parent[:12] in result.err
    assert "Traceback" not in result.err
    # the same commit on both sides is an empty change, not a reversed one
    same = cli("--base", fix, "--head", fix, "--offline", "--no-state")
    assert same.code == 0, same.err
    # the way the message gives reviews the reverse (here: the removal of app.py)
    reverse = repo.git("commit-tree", f"{parent}^{{tree}}", "-p", fix, "-m", "reverse").strip()
    reviewed = cli("plan", "--format", "json", "--base", fix, "--head", reverse)
    assert reviewed.code == 0, reviewed.err
    assert [f["path"] for f in reviewed.json()["facts"]["files"]] == ["app.py"]


def test_a_pre_push_that_rewinds_a_branch_is_not_refused(cli, repo: GitRepo, monkeypatch) -> None:
    """A force push back to an older commit: pre-commit names the remote's commit as the base and
    an ancestor of it as the head. Nothing is added, so nothing is reviewed and the push goes on."""
    parent = repo.git("rev-parse", "HEAD").strip()
    repo.write("app.py", "x = 1\n")
    fix = repo.commit("fix")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", fix)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", parent)
    result = cli("--pre-push", "--offline", "--no-state")
    assert result.code == 0, result.out + result.err
