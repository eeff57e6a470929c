"""Files the change moves across path classes are reviewed whole where they land
(review_gate.judging.class_moves), through the real CLI on real repositories.

A trial: renaming a test fixture that holds ``eval(request.args[...])`` into the application
(``git mv tests/fixtures/evil.py app/ev.py``) passed, with or without a one-line edit: rules skip
fixtures, and the rename added no line, or one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import GitRepo

EVIL = "import requests\n\n\ndef ev(request):\n    return eval(request.args['q'])\n"


def review(cli: Any) -> tuple[int, dict[str, Any]]:
    result = cli("--base", "HEAD~1", "--head", "HEAD", "--offline", "--no-state", "--format", "json")
    assert result.code in (0, 1, 3), result.err
    report: dict[str, Any] = json.loads(result.out)
    return result.code, report


def evals(report: dict[str, Any]) -> list[tuple[str, int]]:
    return [(f["file"], f["line"]) for f in report["findings"] if f["rule_id"] == "sec-py-eval-01"]


@pytest.mark.parametrize("edit", [False, True])
def test_a_fixture_renamed_into_the_application_is_reviewed_whole(cli: Any, repo: GitRepo, edit: bool) -> None:
    repo.write("tests/fixtures/evil.py", EVIL)
    repo.write("app/__init__.py", "")
    repo.commit("a fixture")
    repo.git("mv", "tests/fixtures/evil.py", "app/ev.py")
    if edit:
        repo.write("app/ev.py", EVIL.replace("def ev", "def ev2"))
    repo.commit("move the fixture into the application")

    code, report = review(cli)
    assert evals(report) == [("app/ev.py", 5)], report["findings"]
    assert code == 1 and report["decision"] in ("fail", "needs_fixes")


def test_a_rename_within_a_class_stays_a_rename(cli: Any, repo: GitRepo) -> None:
    """Moving a file inside the application reads only what the change adds: its lines are the
    application's already (an eval that was there before is not new)."""
    repo.write("app/old.py", EVIL)
    repo.commit("application code")
    repo.git("mv", "app/old.py", "app/new.py")
    repo.commit("rename")

    code, report = review(cli)
    assert evals(report) == [] and code == 0, report["findings"]


@pytest.mark.parametrize("fixture_too", [False, True])
def test_a_link_in_the_application_to_a_fixture_is_reviewed_as_the_fixture(cli: Any, repo: GitRepo,
                                                                          fixture_too: bool) -> None:
    """A trial: ``ln -s ../tests/fixtures/evil.py app/ev.py`` passed, the fixture's eval
    importable as ``app.ev``, and the report never said app/ev.py was a link."""
    repo.write("app/__init__.py", "")
    if not fixture_too:
        repo.write("tests/fixtures/evil.py", EVIL)
    repo.commit("the application")
    if fixture_too:
        repo.write("tests/fixtures/evil.py", EVIL)
    (repo.root / "app" / "ev.py").symlink_to("../tests/fixtures/evil.py")
    repo.commit("link the fixture into the application")

    code, report = review(cli)
    assert ("app/ev.py", 5) in evals(report), report["findings"]
    assert code == 1


@pytest.mark.parametrize("fixture_too", [False, True])
def test_a_link_to_a_directory_of_fixtures_is_reviewed_as_the_application(cli: Any, repo: GitRepo,
                                                                        fixture_too: bool) -> None:
    """A trial's next step: ``ln -s ../tests/fixtures app/plugins`` made every fixture importable as
    ``app.plugins.*``, and a link to a directory was not followed: a pass."""
    repo.write("app/__init__.py", "")
    repo.write("tests/fixtures/data.txt", "plain words\n")
    if not fixture_too:
        repo.write("tests/fixtures/evil.py", EVIL)
    repo.commit("the application")
    if fixture_too:
        repo.write("tests/fixtures/evil.py", EVIL)
    (repo.root / "app" / "plugins").symlink_to("../tests/fixtures")
    repo.commit("link the fixtures into the application")

    code, report = review(cli)
    assert ("app/plugins/evil.py", 5) in evals(report), report["findings"]
    assert ("tests/fixtures/evil.py", 5) not in evals(report)  # where it stands, a fixture still
    assert code == 1


def test_a_link_to_a_directory_of_the_same_classes_adds_nothing_to_review(cli: Any, repo: GitRepo) -> None:
    repo.write("src/lib/old.py", EVIL)
    repo.commit("library code, reviewed when it landed")
    (repo.root / "app").mkdir()
    (repo.root / "app" / "lib").symlink_to("../src/lib")
    repo.commit("reach the library from the application")

    code, report = review(cli)
    assert evals(report) == [] and code == 0, report["findings"]


def test_a_link_to_more_fixtures_than_are_read_is_not_reviewed_and_says_so(cli: Any, repo: GitRepo) -> None:
    from review_gate.judging.class_moves import MAX_LINKED_FILES

    for number in range(MAX_LINKED_FILES + 1):
        repo.write(f"tests/fixtures/case_{number}.py", f"VALUE = {number}\n")
    repo.commit("many fixtures")
    (repo.root / "app").mkdir()
    (repo.root / "app" / "cases").symlink_to("../tests/fixtures")
    repo.commit("link them into the application")

    code, report = review(cli)
    assert code == 3 and report["decision"] == "incomplete", report["decision"]
    [unread] = [n for n in report["coverage"]["not_inspected"] if n["path"] == "app/cases"]
    assert "tests/fixtures/" in unread["reason"] and str(MAX_LINKED_FILES) in unread["reason"]


def test_a_docs_link_to_many_examples_is_no_gap(cli: Any, repo: GitRepo) -> None:
    """Docs that link the examples judge nothing stricter there: not a file more to review, and
    not a link left unread however many examples there are."""
    from review_gate.judging.class_moves import MAX_LINKED_FILES

    for number in range(MAX_LINKED_FILES + 1):
        repo.write(f"examples/demo_{number}.py", f"VALUE = {number}\n")
    repo.write("docs/index.md", "# docs\n")
    repo.commit("examples and docs")
    (repo.root / "docs" / "examples").symlink_to("../examples")
    repo.commit("show the examples in the docs")

    code, report = review(cli)
    assert code == 0 and report["decision"] in ("pass", "pass_with_warnings"), report["decision"]


def test_a_file_replaced_by_a_link_to_a_fixture_is_reviewed_as_the_fixture(cli: Any, repo: GitRepo) -> None:
    """A trial: `git rm app/views.py; ln -s ../tests/fixtures/evil.py app/views.py` passed. git
    shows the type change as a deletion and an addition, and the file was taken as deleted."""
    repo.write("app/views.py", "def ping():\n    return 'ok'\n")
    repo.write("tests/fixtures/evil.py", EVIL)
    repo.commit("the application")
    (repo.root / "app" / "views.py").unlink()
    (repo.root / "app" / "views.py").symlink_to("../tests/fixtures/evil.py")
    repo.commit("the view is the fixture now")

    code, report = review(cli)
    assert ("app/views.py", 5) in evals(report), report["findings"]
    assert code == 1


def test_a_link_replaced_by_a_script_is_reviewed_as_the_script(cli: Any, repo: GitRepo) -> None:
    """The same type change the other way: a link made an executable Python script by its #! line
    was taken as deleted, and its eval passed."""
    repo.write("app/cli.py", "print('hello')\n")
    (repo.root / "bin").mkdir()
    (repo.root / "bin" / "tool").symlink_to("../app/cli.py")
    repo.commit("a tool")
    (repo.root / "bin" / "tool").unlink()
    repo.write("bin/tool", "#!/usr/bin/env python3\nimport sys\nprint(eval(sys.argv[1]))\n")
    (repo.root / "bin" / "tool").chmod(0o755)
    repo.commit("the tool is a script now")

    code, report = review(cli)
    assert ("bin/tool", 3) in evals(report), report["findings"]
    assert code == 1


@pytest.mark.parametrize("shape", ["link to a link", "file through a linked directory"])
def test_a_link_is_followed_through_the_links_on_its_way(cli: Any, repo: GitRepo, shape: str) -> None:
    """A trial: `app/t2 -> t` with `app/t -> ../tests/fixtures`, and `app/ev.py -> fx/evil.py` with
    `app/fx -> ../tests/fixtures`, passed: the target was read as written (`app/t`,
    `app/fx/evil.py`), in the application's classes, not where the links lead. (A path reached
    through a link that still names a class, `app/t/fixtures/evil.py`, is in that class by name.)"""
    repo.write("app/__init__.py", "")
    repo.write("tests/fixtures/evil.py", EVIL)
    repo.commit("the application")
    if shape == "link to a link":
        (repo.root / "app" / "t").symlink_to("../tests/fixtures")
        (repo.root / "app" / "t2").symlink_to("t")
        expected = "app/t2/evil.py"
    else:
        (repo.root / "app" / "fx").symlink_to("../tests/fixtures")
        (repo.root / "app" / "ev.py").symlink_to("fx/evil.py")
        expected = "app/ev.py"
    repo.commit("links")

    code, report = review(cli)
    assert (expected, 5) in evals(report), report["findings"]
    assert code == 1


def test_a_link_in_the_working_tree_is_followed_through_links_too(cli: Any, repo: GitRepo) -> None:
    repo.write("app/__init__.py", "")
    repo.write("tests/fixtures/evil.py", EVIL)
    repo.commit("the application")
    (repo.root / "app" / "fx").symlink_to("../tests/fixtures")
    (repo.root / "app" / "ev.py").symlink_to("fx/evil.py")
    repo.git("add", "-A")
    result = cli("--offline", "--no-state", "--format", "json")
    assert result.code == 1, result.err
    assert ("app/ev.py", 5) in evals(json.loads(result.out))
