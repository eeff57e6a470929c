"""Agent kinds, one module each, in an explicit registry keyed by the ``kind`` of an agent entry."""

from __future__ import annotations

from review_gate.agents import command, llm, pattern
from review_gate.agents.base import AgentContext, AgentKind, AgentOutput, AgentSpec, AgentTask

KINDS: dict[str, AgentKind] = {
    "pattern": pattern,
    "command": command,
    "llm": llm,
}

__all__ = ["KINDS", "AgentContext", "AgentKind", "AgentOutput", "AgentSpec", "AgentTask"]
