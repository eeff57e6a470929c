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
