"""``--diff`` sections that show no line of what they bring (issue 29, item 10).

A ``git diff -M``/``-C`` section that is a 100 % rename or copy of a fixture into the
application shows no line: it passed, "1/1 files reviewed", its ``eval`` never shown to an agent,
while the same commits as a range fail. Such a section is reviewed whole from the repository (the
blob its ``index`` line names, else the old path at the merge-base with the default branch), else
it is unreadable and the gate ``incomplete``. And a patch series that changes one file in several sections let a later
section's context show an ``eval`` an earlier one added as unchanged, under a waiver comment the
base has: it is refused (exit 2)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo

PAYLOAD = "from flask import request\n\n\ndef run():\n    return eval(request.args['q'])\n"
FLAGS = {"rename": ["-M"], "copy": ["-C", "--find-copies-harder"]}


def _moved(repo: GitRepo, how: str) -> str:
    """The 100 % rename or copy of a fixture into app/, as ``git diff`` writes it."""
    repo.write("tests/fixtures/payload.py", PAYLOAD)
    repo.commit("a fixture")
    repo.branch("feature")
    if how == "rename":
        (repo.root / "app").mkdir()
        repo.git("mv", "tests/fixtures/payload.py", "app/payload.py")
    else:
        repo.write("app/payload.py", PAYLOAD)
    repo.commit(f"{how} the fixture into the application")
    diff = repo.git("diff", *FLAGS[how], "main", "HEAD")
    assert "similarity index 100%" in diff and "@@" not in diff, diff
    return diff


def _report(cli: Any, diff: Path, cwd: Path | None = None) -> tuple[int, dict[str, Any]]:
    result = cli("--diff", str(diff), "--offline", "--no-state", "--format", "json", cwd=cwd)
    return result.code, result.json()


@pytest.mark.parametrize("how", sorted(FLAGS))
def test_a_whole_move_given_as_a_diff_is_reviewed_whole(cli: Any, repo: GitRepo, tmp_path: Path, how: str) -> None:
    diff = tmp_path / "change.diff"
    diff.write_text(_moved(repo, how))
    as_range = cli("--base", "main", "--head", "HEAD", "--offline", "--no-state", "--format", "json")
    assert as_range.code == 1
    code, report = _report(cli, diff)
    assert code == 1, report["decision"]
    assert [(f["file"], f["line"], f["rule_id"]) for f in report["findings"]] == [("app/payload.py", 5,
                                                                                   "sec-py-eval-01")]


@pytest.mark.parametrize("how", sorted(FLAGS))
def test_a_whole_move_that_cannot_be_read_is_unreadable(cli: Any, repo: GitRepo, tmp_path: Path, how: str) -> None:
    diff = tmp_path / "change.diff"
    diff.write_text(_moved(repo, how))
    elsewhere = tmp_path / "not-a-repository"
    elsewhere.mkdir()
    code, report = _report(cli, diff, cwd=elsewhere)
    assert code == 3 and report["decision"] == "incomplete", report["decision"]
    [unread] = report["coverage"]["not_inspected"]
    assert (unread["path"], unread["kind"], unread["counted"]) == ("app/payload.py", "unreadable", True)
    # in a repository whose default branch lacks the old path (the branch's HEAD is not trusted
    # to say what it was): the same
    repo.git("checkout", "-q", "main")
    repo.git("rm", "-q", "tests/fixtures/payload.py")
    repo.commit("the fixture is gone")
    code, report = _report(cli, diff, cwd=repo.root)
    assert code == 3 and report["decision"] == "incomplete"


def test_a_series_that_changes_one_file_twice_is_refused(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    """The attack: commit 1 puts an eval under a waiver comment the base has (judged as added, it
    is not waived); commit 2 edits a line below, and its section shows the eval as context."""
    repo.write("app/views.py", "from flask import request\n"
                               "# review-gate: ignore[sec-py-eval-01] reviewed in 2023, compute is pure\n"
                               "value = compute()\nother = 1\n\n\ndef f():\n    return 2\n")
    repo.commit("base")
    repo.branch("feature")
    text = (repo.root / "app/views.py").read_text()
    repo.write("app/views.py", text.replace("value = compute()", "value = eval(request.args['q'])"))
    repo.commit("commit 1: the eval")
    text = (repo.root / "app/views.py").read_text()
    repo.write("app/views.py", text.replace("other = 1\n", "other = 1\nmore = 2\n"))
    repo.commit("commit 2: a line below")
    series = tmp_path / "series.patch"
    series.write_text(repo.git("format-patch", "--stdout", "main..feature"))
    for given in (("--diff", str(series)), ("--diff", "-")):
        result = cli(*given, "--offline", "--no-state", stdin=series.read_bytes() if given[1] == "-" else None)
        assert result.code == 2, result.out
        assert "changes app/views.py in more than one section (a patch series)" in result.err
        assert "git diff FIRST^ LAST" in result.err and len(result.err.strip().splitlines()) == 2
    assert cli("--base", "main", "--head", "feature", "--offline", "--no-state").code == 1


def test_a_series_whose_commits_change_other_files_is_reviewed(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    repo.branch("feature")
    repo.write("app/a.py", "x = 1\n")
    repo.commit("one")
    repo.write("app/b.py", PAYLOAD)
    repo.commit("two")
    series = tmp_path / "series.patch"
    series.write_text(repo.git("format-patch", "--stdout", "main..feature"))
    code, report = _report(cli, series)
    assert code == 1
    assert [f["file"] for f in report["findings"]] == ["app/b.py"]


def test_a_file_that_becomes_a_link_is_one_change(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    """git writes a type change as two sections of one path in one diff: not a series."""
    repo.write("app/conf.py", "x = 1\n")
    repo.commit("a file")
    (repo.root / "app/conf.py").unlink()
    (repo.root / "app/conf.py").symlink_to("settings.py")
    repo.write("app/settings.py", "x = 2\n")
    diff = tmp_path / "change.diff"
    diff.write_text(subprocess.run(["git", "diff"], cwd=repo.root, capture_output=True, text=True,
                                   check=True).stdout)
    assert diff.read_text().count("diff --git a/app/conf.py b/app/conf.py") == 2
    result = cli("--diff", str(diff), "--offline", "--no-state")
    assert result.code == 0, result.err
