"""What every agent kind receives and returns, and the Protocol a kind module implements."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from pydantic import Field

from review_gate.models import CommandAgent, FileChange, LlmAgent, PatternAgent, Price, RawFinding, Rule
from review_gate.models.base import Frozen

if TYPE_CHECKING:
    import httpx

AgentSpec = PatternAgent | CommandAgent | LlmAgent


@dataclass(frozen=True)
class AgentContext:
    """What the run shares with every agent. ``client`` is the one HTTP client of the dispatch,
    created only when an agent of a network kind runs, and closed by dispatch afterwards."""

    client: httpx.AsyncClient | None = None
    offline: bool = False
    config_dir: str | None = None
    repo_root: str | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)
    standards: str | None = None  # the constitution's Standards section, when one is set


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
    unreviewed: list[str] = Field(
        default_factory=list, description="Files of the scope not reviewed (a hunk over the token budget)."
    )
    out_of_scope: int = Field(default=0, description="Findings dropped because their file is not in the scope.")
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

        async def review(spec: AgentSpec, task: AgentTask, context: AgentContext) -> AgentOutput:
            return AgentOutput(findings=[])

    A kind may also define ``unavailable(spec) -> str | None``: a reason the agent cannot run
    at all (its API key is not set), which makes it ``skipped`` rather than failed, and
    ``estimate(spec, task, context) -> tuple[int, float]``: the tokens and cost it may spend,
    which dispatch checks against the run budget before starting it.
    """

    needs_network: bool

    async def review(self, spec: AgentSpec, task: AgentTask, context: AgentContext) -> AgentOutput: ...
