"""Claude Code: hooks in ``.claude/settings.json``, answers as JSON on stdout with exit 0.

- Stop / SubagentStop: ``{"decision": "block", "reason": ...}`` keeps the agent working with the
  reason as its next instruction; nothing on stdout lets it stop. The payload's
  ``stop_hook_active`` is true when the agent is already working because a Stop hook blocked.
- PreToolUse (matcher ``Bash`` and the edit tools): ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "deny", "permissionDecisionReason": ...}}`` stops the call and tells
  the model why.
- ``systemMessage`` is a line shown to the person (the hand-off).
"""

from __future__ import annotations

from typing import Any

from review_gate.surfaces.hooks.base import Outcome, encode_json

NAME = "claude-code"
SETTINGS = ".claude/settings.json"
TIMEOUT_S = 60  # seconds the host waits; the command's --budget leaves it room to answer
BUDGET_S = 50
# the shell tool, and the edit tools: an agent must not write the configuration that judges it
MATCHER = "Bash|Write|Edit|MultiEdit|NotebookEdit"


def entries(program: str = "review-gate") -> dict[str, list[dict[str, Any]]]:
    hook = {"type": "command", "command": f"{program} hook {NAME} --budget {BUDGET_S}", "timeout": TIMEOUT_S}
    return {"Stop": [{"hooks": [hook]}], "PreToolUse": [{"matcher": MATCHER, "hooks": [hook]}]}


def encode(outcome: Outcome, event: str) -> str:
    return encode_json(outcome, event)
