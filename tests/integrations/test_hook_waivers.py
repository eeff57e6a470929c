"""A coding agent cannot waive its own findings with an inline comment: the hook denies a tool
call that adds a review-gate waiver or a peer's suppression of a rule (Claude Code's
Write/Edit/MultiEdit payloads, a shell command that writes one)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.integrations.test_hooks import answer, bash, hook

WAIVER = "total = eval(expression)  # review-gate: ignore[sec-py-eval-01] constant table"


def tool(repo: GitRepo, name: str, path: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {**bash(repo, ""), "tool_name": name, "tool_input": {"file_path": str(repo.root / path), **tool_input}}


def denied(result: Any) -> str:
    decision = answer(result)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    return str(decision["permissionDecisionReason"])


@pytest.mark.parametrize("name, tool_input", [
    ("Write", {"content": f"import x\n{WAIVER}\n"}),
    ("Edit", {"old_string": "total = eval(expression)", "new_string": WAIVER}),
    ("MultiEdit", {"edits": [{"old_string": "a = 1", "new_string": "a = 2"},
                             {"old_string": "total = eval(expression)", "new_string": WAIVER}]}),
])
def test_an_edit_that_adds_a_waiver_is_denied(cli: Any, repo: GitRepo, name: str, tool_input: dict[str, Any]) -> None:
    repo.write("app.py", "a = 1\ntotal = eval(expression)\n")
    reason = denied(hook(cli, tool(repo, name, "app.py", tool_input)))
    assert "inline waiver" in reason and "ignore[sec-py-eval-01]" in reason and "ask a person" in reason


def test_a_peer_suppression_of_a_mapped_rule_is_denied_and_others_are_not(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", "r = requests.get(url, verify=False, timeout=5)\n")
    edit = {"old_string": "timeout=5)", "new_string": "timeout=5)  # noqa: S501"}
    assert "# noqa: S501" in denied(hook(cli, tool(repo, "Edit", "app.py", edit)))
    harmless = {"old_string": "timeout=5)", "new_string": "timeout=5)  # noqa: E501"}
    assert hook(cli, tool(repo, "Edit", "app.py", harmless)).out == ""


def test_an_edit_that_keeps_an_existing_waiver_is_allowed(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", f"{WAIVER}\n")
    keep = {"old_string": WAIVER, "new_string": f"{WAIVER}\nprint_total = 1"}
    assert hook(cli, tool(repo, "Edit", "app.py", keep)).out == ""
    rewrite = {"content": f"{WAIVER}\nother = 2\n"}
    assert hook(cli, tool(repo, "Write", "app.py", rewrite)).out == ""


def test_a_shell_command_that_writes_a_waiver_is_denied(cli: Any, repo: GitRepo) -> None:
    command = "echo 'x = eval(y)  # review-gate: ignore[sec-py-eval-01] fine' >> app.py"
    assert "inline waiver" in denied(hook(cli, bash(repo, command)))
    assert hook(cli, bash(repo, "grep -rn 'review-gate' docs")).out == ""


@pytest.mark.parametrize("command", [
    "sed -i 's/loads(blob)/loads(blob)  # nosec/' app.py",
    "sed -i 's/loads(blob)/loads(blob)  # nosec B301/' app.py",
    "sed -i 's/eval(input)/eval(input) \\/\\/ eslint-disable-line/' web/app.js",
    "perl -pi -e 's/loads\\(blob\\)/loads(blob) # nosec/' app.py",
    "echo \"x = eval(y)  # revie\"\"w-gate: ignore[sec-py-eval-01] fine\" >> app.py",
    "printf '%s%s\\n' 'x = eval(y)  # no' 'qa: S307' >> app.py",
])
def test_a_shell_command_that_writes_a_waiver_by_any_spelling_is_denied(cli: Any, repo: GitRepo,
                                                                         command: str) -> None:
    """sed and perl substitutions (their delimiter after `# nosec` is no code, `\\/\\/` is `//`) and
    quoted pieces the shell joins into one word write a waiver as surely as `echo '# nosec'`."""
    assert "inline waiver" in denied(hook(cli, bash(repo, command)))


def test_a_shell_command_without_a_waiver_is_still_allowed(cli: Any, repo: GitRepo) -> None:
    for command in ("sed -i 's/loads(blob)/json.loads(blob)/' app.py", "echo \"rev\"\"iew\" > notes.txt",
                    "perl -pi -e 's/a/b/' app.py"):
        assert hook(cli, bash(repo, command)).out == "", command
