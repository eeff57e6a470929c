"""What every agent kind receives and returns, and the Protocol a kind module implements."""

from __future__ import annotations

from typing import Protocol

from pydantic import Field

from review_gate.models import CommandAgent, FileChange, PatternAgent, RawFinding, Rule
from review_gate.models.base import Frozen

AgentSpec = PatternAgent | CommandAgent


class AgentTask(Frozen):
    """One agent's assignment: its scope of files (with their hunks) and its rules."""

    files: list[FileChange]
    rules: list[Rule]
    repo_root: str | None = Field(description="Repository root, None when reviewing a bare diff.")
    config_dir: str | None


class AgentOutput(Frozen):
    findings: list[RawFinding]
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    raw: str | None = Field(
        default=None, repr=False,
        description="The agent's answer as it gave it (a program's stdout, capped), kept for replay bundles.",
    )


class AgentKind(Protocol):
    """A kind of agent: a module with these two names, listed in ``review_gate.agents.KINDS``.

    ``review`` raises AgentFault when it cannot produce usable output and TransientAgentFault
    when trying again may help; dispatch owns retries and the deadline.

    Example, a kind that never finds anything::

        needs_network = False

        async def review(spec: AgentSpec, task: AgentTask) -> AgentOutput:
            return AgentOutput(findings=[])
    """

    needs_network: bool

    async def review(self, spec: AgentSpec, task: AgentTask) -> AgentOutput: ...
