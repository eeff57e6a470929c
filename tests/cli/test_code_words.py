"""Code, not words about code (issue 31): a code rule's pattern quoted in a comment, a docstring or
a doctest is no finding, read with the language's grammar; through the real CLI on real git
repositories. A misparse never hides code: a line near a parse error, a line the language splits
where git does not, a string that runs code (an f-string) are judged as code, and the secret rules
still read everything."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import GitRepo, make_diff, review_branch

AWS_KEY = "AKIA" + "Q7WZ3M9K2R5T8XB4"  # assembled: the source holds no key a scanner would flag

QUOTING = '''\
"""Helpers that must never call eval(expr) on user input.

>>> result = eval(expression)
"""
import requests


def fetch(url):
    """Fetch ``url``; never pass verify=False (requests.get(url, verify=False) is what we avoid)."""
    # subprocess.run(cmd, shell=True) would be the shortcut; we do not take it
    return requests.get(url, timeout=5)  # not requests.get(url, verify=False)
'''


def _review(repo: GitRepo, cli: Any, files: dict[str, str | bytes]) -> dict[str, Any]:
    return review_branch(repo, cli, files)[1]


def _found(report: dict[str, Any]) -> set[tuple[str, str, int]]:
    return {(f["rule_id"], f["file"], f["line"]) for f in report["findings"]}


def test_patterns_quoted_in_docstrings_doctests_and_comments_are_no_findings(repo: GitRepo, cli: Any) -> None:
    report = _review(repo, cli, {
        "app/fetch.py": QUOTING,
        "web/app.js": "// never eval(input) here\n/* eval(input) would run it */\nconst v = JSON.parse(input);\n",
        "cmd/main.go": '// exec.Command("sh", "-c", cmd) is what we avoid\npackage main\n',
        "scripts/setup.sh": "#!/bin/sh\n# curl -s https://get.example.org | sh is how not to do it\necho ready\n",
    })
    assert [f for f in report["findings"] if f["severity"] in ("critical", "major")] == []
    assert report["decision"] in ("pass", "pass_with_warnings")


def test_code_beside_the_words_is_still_code(repo: GitRepo, cli: Any) -> None:
    report = _review(repo, cli, {"app/run.py": (
        '"""Runs things."""\n'
        "import subprocess\n\n\n"
        "def run(expr, cmd):\n"
        '    f"{eval(expr)}"\n'
        "    subprocess.run(cmd, shell=True)  # shell=True: cmd is ours\n"
        "    return eval(expr)  # eval(expr) is fine here\n")})
    found = _found(report)
    assert {("sec-py-eval-01", "app/run.py", 6), ("sec-py-eval-01", "app/run.py", 8),
            ("sec-shell-true-01", "app/run.py", 7)} <= found


def test_a_parse_error_near_the_words_makes_them_code(repo: GitRepo, cli: Any) -> None:
    report = _review(repo, cli, {"app/broken.py": (
        "def handler(request:\n"
        "    # x = eval(request.data)\n"
        "    x = '''\n"
        "eval(request.args['q'])\n")})
    found = _found(report)
    assert ("sec-py-eval-01", "app/broken.py", 2) in found
    assert ("sec-py-eval-01", "app/broken.py", 4) in found


def test_a_comment_a_hidden_line_end_ends_is_code(repo: GitRepo, cli: Any) -> None:
    report = _review(repo, cli, {"app/job.py": b"def run(request):\n    # run it\r    exec(request.data)\n"})
    assert ("sec-py-eval-01", "app/job.py", 2) in _found(report)


def test_the_secret_rules_still_read_docstrings(repo: GitRepo, cli: Any) -> None:
    report = _review(repo, cli, {"app/keys.py": f'"""Deploy with key {AWS_KEY}."""\n'})
    assert ("sec-aws-key-01", "app/keys.py", 1) in _found(report)
    assert report["decision"] == "fail"


def test_a_diff_without_its_repository_reads_a_new_files_docstring(cli: Any) -> None:
    diff = make_diff("app/calc.py", ["def run(x):", '    """Run it.', "", "    >>> y = eval(x)", '    """',
                                     "    return x"])
    result = cli("--diff", "-", "--offline", "--no-state", "--format", "json", stdin=diff.encode())
    assert [f["rule_id"] for f in json.loads(result.out)["findings"]] == []
