"""Everyday agent lines a user trial saw denied: a find that only narrows with a negation, a
line that mentions a waiver without writing one into a file, a rewrite that keeps a file's
waivers, and cleans that leave the protected paths alone. Each is allowed; the spellings that
do reach a protected path or write a waiver stay denied."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.integrations.test_hooks import answer, bash, hook


def _protected(repo: GitRepo) -> None:
    repo.write(".claude/settings.json", "{}")
    repo.write(".review-gate/review-rules.json", "{}")
    repo.write("src/app/core.py", "old_name = 1\n")
    repo.commit("the hooks")


def _denied(result: Any) -> str:
    decision = answer(result)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny", decision
    return str(decision["permissionDecisionReason"])


@pytest.mark.parametrize("command", [
    "find . -name '*.pyc' -not -path './.venv/*' -delete",
    "find . -name '*.py' -not -path './.venv/*' -exec sed -i 's/old_name/new_name/g' {} +",
    "find . -name '*.py' ! -path './.venv/*' -exec sed -i 's/a/b/g' {} +",
    "find . -name '*.js.map' -not -path './node_modules/*' -delete",
    "find . -name '*.json' -path './build/*' -delete",
])
def test_a_find_whose_negation_only_narrows_it_is_allowed(cli: Any, repo: GitRepo, command: str) -> None:
    _protected(repo)
    assert hook(cli, bash(repo, command)).out == "", command


@pytest.mark.parametrize("command", [
    "find . -name '*.json' -not -path './build/*' -delete",
    "find . -not -name '*.py' -delete",
    "find . -name '*.pyc' -o -not -path './.venv/*' -delete",
    "find . \\( -name '*.pyc' -o -name '*.json' \\) -delete",
    "find . -name 'settings.json' -path './.claude/*' -delete",
])
def test_a_find_that_may_still_reach_a_protected_file_is_denied(cli: Any, repo: GitRepo, command: str) -> None:
    _protected(repo)
    _denied(hook(cli, bash(repo, command)))
