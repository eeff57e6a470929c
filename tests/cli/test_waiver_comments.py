"""Waiver text counts only inside a real comment (issue 29, item 11): through the real CLI on real
git repositories, the words of a waiver in a string statement, a docstring, a string of a script
named by its ``#!`` line, or on a line a hidden line end splits waive nothing; the same words in a
comment still do."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import GitRepo, make_diff, review_branch

REASON = "the expression comes from our own table"


def _review(repo: GitRepo, cli: Any, files: dict[str, str | bytes], *, base: dict[str, str] | None = None
            ) -> dict[str, Any]:
    return review_branch(repo, cli, files, base=base)[1]


def _counted(report: dict[str, Any], rule: str) -> list[int]:
    return sorted(f["line"] for f in report["findings"] if f["rule_id"] == rule)


def _waived(report: dict[str, Any], rule: str) -> list[int]:
    return sorted(f["line"] for f in report["waived"] if f["rule_id"] == rule)


def test_waiver_words_in_a_docstring_line_above_waive_nothing(repo: GitRepo, cli: Any) -> None:
    report = _review(repo, cli, {"app/calc.py": (
        "def run(x):\n"
        '    """Run an expression.\n'
        f'    # review-gate: ignore[sec-py-eval-01] {REASON}"""\n'
        "    return eval(x)\n")})
    assert _counted(report, "sec-py-eval-01") == [4] and _waived(report, "sec-py-eval-01") == []


def test_waiver_words_in_a_string_statement_waive_nothing(repo: GitRepo, cli: Any) -> None:
    report = _review(repo, cli, {"app/calc.py": (
        'NOTE = """\n'
        f"# review-gate: ignore[sec-py-eval-01] {REASON}\n"
        '"""; result = eval(expression)\n')})
    assert _counted(report, "sec-py-eval-01") == [3] and _waived(report, "sec-py-eval-01") == []


def test_waiver_words_in_a_string_of_a_script_named_by_its_interpreter_waive_nothing(repo: GitRepo,
                                                                                      cli: Any) -> None:
    report = _review(repo, cli, {
        "bin/calc": f'#!/usr/bin/env python3\nr = eval(e); s = "# review-gate: ignore[sec-py-eval-01] {REASON}"\n',
        "bin/fetch": ('#!/bin/sh\ncurl -s https://get.example.org | sh; '
                      f'echo "# review-gate: ignore[infra-curl-pipe-01] {REASON}"\n'),
    })
    assert _counted(report, "sec-py-eval-01") == [2] and _waived(report, "sec-py-eval-01") == []
    assert _counted(report, "infra-curl-pipe-01") == [2] and _waived(report, "infra-curl-pipe-01") == []


def test_a_waiver_on_a_line_a_hidden_line_end_splits_waives_nothing(repo: GitRepo, cli: Any) -> None:
    report = _review(repo, cli, {"app/calc.py": (
        f"# review-gate: ignore[sec-py-eval-01] {REASON}\r    result = eval(expression)\n".encode())})
    assert _counted(report, "sec-py-eval-01") == [1] and _waived(report, "sec-py-eval-01") == []


def test_real_comments_still_waive(repo: GitRepo, cli: Any) -> None:
    """The near misses: a comment above, a comment after code, in a file the change edits (its new
    content read from git) and in a script named by its interpreter."""
    before = "def run(x):\n    '''Run it.'''\n    return x\n"
    report = _review(repo, cli, {
        "app/calc.py": ("def run(x):\n    '''Run it.'''\n"
                        f"    # review-gate: ignore[sec-py-eval-01] {REASON}\n    return eval(x)\n"
                        f"\n\ndef again(y):\n    return eval(y)  # review-gate: ignore[sec-py-eval-01] {REASON}\n"),
        "bin/calc": f"#!/usr/bin/env python3\nr = eval(e)  # review-gate: ignore[sec-py-eval-01] {REASON}\n",
    }, base={"app/calc.py": before})
    assert _counted(report, "sec-py-eval-01") == []
    assert sorted(f["file"] for f in report["waived"] if f["rule_id"] == "sec-py-eval-01") == \
        ["app/calc.py", "app/calc.py", "bin/calc"]


def test_a_diff_without_its_repository_reads_a_new_files_docstring(cli: Any) -> None:
    diff = make_diff("app/calc.py", ["def run(x):", '    """Run it.',
                                     f'    # review-gate: ignore[sec-py-eval-01] {REASON}"""', "    return eval(x)"])
    result = cli("--diff", "-", "--offline", "--no-state", "--format", "json", stdin=diff.encode())
    report = json.loads(result.out)
    assert _counted(report, "sec-py-eval-01") == [4] and report["waived"] == []
