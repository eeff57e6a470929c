"""What docs/agents.md says the hook protects holds for the docs' own sample payloads: the hosts'
settings (which hold the hook) cannot be removed, a glob with the payload's relative `"cwd": "."`
is resolved where the hook runs, and an empty payload says it is empty."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.integrations.test_hooks import answer, bash, hook


def sample(command: str) -> dict[str, Any]:
    """The docs' hand-written payload: a relative cwd."""
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}, "cwd": "."}


@pytest.mark.parametrize("command", ["rm -rf .claude", "rm -rf .cla*", "mv .claude /tmp/elsewhere",
                                     "rm -r .codex", "rm -rf .revie*"])
def test_removing_the_hooks_settings_or_the_configuration_is_denied(cli: Any, repo: GitRepo, command: str) -> None:
    repo.write(".claude/settings.json", "{}")
    repo.write(".codex/hooks.json", "{}")
    for payload in (bash(repo, command), sample(command)):
        assert answer(hook(cli, payload))["hookSpecificOutput"]["permissionDecision"] == "deny", payload


@pytest.mark.parametrize("command", ["rm -rf build", "rm -f .claude-notes.txt", "cp notes.txt .", "mv a.py b.py"])
def test_other_removals_are_allowed(cli: Any, repo: GitRepo, command: str) -> None:
    repo.write(".claude/settings.json", "{}")
    assert hook(cli, sample(command)).out == ""


def test_an_empty_payload_says_it_is_empty(cli: Any) -> None:
    result = cli("hook", "claude-code", stdin=b"")
    assert result.code == 2 and "payload on standard input is empty" in result.err


def _untracked_settings(repo: GitRepo) -> None:
    """What `init --hooks` leaves: the settings written, not committed; a build directory ignored."""
    repo.write(".gitignore", "build/\n")
    repo.write("app.py", "x = 1\n")
    repo.commit("app")
    repo.write(".claude/settings.json", "{}")
    repo.write("build/out.txt", "x")
    repo.write("notes.txt", "scratch")


@pytest.mark.parametrize("command", ["git clean -fdx", "git clean -fd", "git clean -f -d -x .",
                                     "git clean -fdx -e build", "cd .claude && git clean -fdx",
                                     "git stash -u", "git stash push --include-untracked -m wip", "git stash -a",
                                     "git stash --all", "git stash save -u wip", "git clean -fdx $DIR"])
def test_a_clean_or_stash_that_takes_the_untracked_settings_is_denied(cli: Any, repo: GitRepo,
                                                                      command: str) -> None:
    """They would remove .claude/settings.json, and the hooks would be off without a word."""
    _untracked_settings(repo)
    decision = answer(hook(cli, bash(repo, command)))["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny", command
    assert ".claude/settings.json" in decision["permissionDecisionReason"]


@pytest.mark.parametrize("command", ["git clean -fdX", "git clean -fdx build", "git clean -ndx",
                                     "git clean -fd -- build", "git stash", "git stash push -m wip", "git stash pop",
                                     "git stash -u -- app.py"])
def test_a_clean_or_stash_that_leaves_the_settings_is_allowed(cli: Any, repo: GitRepo, command: str) -> None:
    _untracked_settings(repo)
    assert hook(cli, bash(repo, command)).out == "", command


def test_once_the_settings_are_committed_a_clean_is_allowed(cli: Any, repo: GitRepo) -> None:
    _untracked_settings(repo)
    repo.commit("the hooks")
    repo.write("notes.txt", "scratch")
    for command in ("git clean -fdx", "git stash -u"):
        assert hook(cli, bash(repo, command)).out == "", command


@pytest.mark.parametrize("command", [
    "rm -rf $(echo .claude)", "rm -rf `echo .claude`", 'rm -rf "$(printf .claude)"', "D=.cla; rm -rf ${D}ude",
    "printf '%s' .claude | xargs rm -rf", "ls -d .c* | xargs rm -rf",
    "find . -maxdepth 1 -name '.cl*' -exec rm -rf {} +", "rm -rf $(echo .codex)", "D=.revie; rm -rf ${D}w-gate",
    "printf '%s' .review-gate | xargs rm -rf", "ls -d .r* | xargs rm -rf",
])
@pytest.mark.parametrize("committed", [False, True])
def test_the_settings_named_through_a_substitution_a_variable_xargs_or_find_are_protected(
        cli: Any, repo: GitRepo, command: str, committed: bool) -> None:
    """.claude and .codex hold the hooks' settings: named the ways .review-gate is, they are
    protected the same way (`a line that cannot be read for sure and mentions one is denied`)."""
    repo.write(".claude/settings.json", "{}")
    repo.write(".codex/hooks.json", "{}")
    repo.write(".review-gate/review-rules.json", "{}")
    if committed:
        repo.commit("the hooks")
    assert answer(hook(cli, bash(repo, command)))["hookSpecificOutput"]["permissionDecision"] == "deny", command


@pytest.mark.parametrize("command", ["find . -name '*.pyc' -delete", "find . -name '*.pyc' | xargs rm -f",
                                     "ls | xargs cat", "find . -name '.cl*' -print", "git status"])
def test_everyday_removals_beside_the_settings_are_allowed(cli: Any, repo: GitRepo, command: str) -> None:
    repo.write(".claude/settings.json", "{}")
    assert hook(cli, bash(repo, command)).out == "", command
