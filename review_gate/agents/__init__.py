"""Agent kinds, one module each, in an explicit registry keyed by the ``kind`` of an agent entry."""

from __future__ import annotations

from review_gate.agents import command, pattern
from review_gate.agents.base import AgentKind, AgentOutput, AgentSpec, AgentTask

KINDS: dict[str, AgentKind] = {
    "pattern": pattern,
    "command": command,
}

__all__ = ["KINDS", "AgentKind", "AgentOutput", "AgentSpec", "AgentTask"]
