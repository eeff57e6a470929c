"""Codex CLI: hooks in ``.codex/hooks.json`` (or ``[hooks]`` in ``config.toml``), answers as
JSON on stdout with exit 0, in the shapes Claude Code reads.

Where Codex differs from Claude Code, and what the hook does about it:

- its output schemas reject unknown fields: the answer carries only ``decision``, ``reason``,
  ``hookSpecificOutput`` and ``systemMessage`` (``base.encode_json`` writes nothing else);
- PreToolUse honours ``deny`` only (``allow`` and ``ask`` are not supported): the hook never
  answers with them, an allowed call gets an empty stdout;
- PreToolUse is sent for the shell tool as ``tool_name`` ``Bash`` with ``tool_input.command``;
- project hooks load only in a project Codex trusts, and matching hooks run concurrently;
- there is no ``$CLAUDE_PROJECT_DIR``: the hook reviews the repository of the payload's ``cwd``.
"""

from __future__ import annotations

from typing import Any

from review_gate.surfaces.hooks.base import Outcome, encode_json

NAME = "codex"
SETTINGS = ".codex/hooks.json"
TIMEOUT_S = 60
BUDGET_S = 50


def entries(program: str = "review-gate") -> dict[str, list[dict[str, Any]]]:
    hook = {"type": "command", "command": f"{program} hook {NAME} --budget {BUDGET_S}", "timeout": TIMEOUT_S}
    return {"Stop": [{"hooks": [hook]}], "PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}


def encode(outcome: Outcome, event: str) -> str:
    return encode_json(outcome, event)
