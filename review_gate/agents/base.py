"""What every agent kind receives and returns, and the Protocol a kind module implements."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from pydantic import Field, field_validator

from review_gate.models import CommandAgent, FileChange, LlmAgent, PatternAgent, Price, RawFinding, Rule
from review_gate.models.base import Frozen
from review_gate.models.config_values import Severity
from review_gate.models.report import DroppedFinding, ToolCall, bounded_notes
from review_gate.models.usage import Usage

if TYPE_CHECKING:
    import httpx

    from review_gate.llm.governor import Governors
    from review_gate.llm.tool_files import Revision

AgentSpec = PatternAgent | CommandAgent | LlmAgent

RAW_LIMIT = 1_000_000  # bytes of an agent's raw answer kept (replay bundles)
_NOTE_ROOM = 128  # what the closing "capped" line may add to RAW_LIMIT


def cap_raw(raw: str | bytes, limit: int = RAW_LIMIT) -> str:
    """An agent's raw answer as text: its first ``limit`` bytes, with a closing line that says
    it was cut when it was longer: a 61 MB model answer must not go whole into a bundle.
    """
    if isinstance(raw, str) and len(raw) * 4 <= limit:  # UTF-8 takes at most 4 bytes a character
        return raw
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if len(data) <= limit:
        return raw if isinstance(raw, str) else data.decode("utf-8", "replace")
    kept = data[:limit].decode("utf-8", "ignore")
    return kept + f"\n[review-gate: raw answer capped at its first {limit} of {len(data)} bytes]\n"


def capped(raw: str | None) -> str | None:
    """``raw`` within RAW_LIMIT bytes and its closing line; an answer capped once stays as it is."""
    if raw is None or len(raw) * 4 <= RAW_LIMIT + _NOTE_ROOM:
        return raw
    return raw if len(raw.encode("utf-8", "surrogatepass")) <= RAW_LIMIT + _NOTE_ROOM else cap_raw(raw)


@dataclass(frozen=True)
class AgentContext:
    """What the run shares with every agent. ``client`` is the one HTTP client of the dispatch,
    created only when an agent of a network kind runs, and closed by dispatch afterwards;
    ``governors`` comes with it, one rate governor per llm endpoint."""

    client: httpx.AsyncClient | None = None
    offline: bool = False
    config_dir: str | None = None
    repo_root: str | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)
    standards: str | None = None  # the constitution's Standards section, when one is set
    intent: str | None = None  # what the change is for (review_gate.change.intent), when the caller said
    governors: Governors | None = None  # the llm endpoints' rate governors, made beside the client
    revision: Revision | None = None  # the files an llm agent's tools read; None: no repository, no tools
    # the severity of an intent-unmet finding (review-rules.json's rule of that id); None: it is switched off
    intent_unmet: Severity | None = "major"
    # told of an llm agent's requests as they are answered: (agent id, done, total, usage so far)
    on_request: Callable[[str, int, int, Usage], None] | None = None


class AgentTask(Frozen):
    """One agent's assignment: its scope of files (with their hunks) and its rules."""

    files: list[FileChange]
    rules: list[Rule]
    repo_root: str | None = Field(description="Repository root, None when reviewing a bare diff.")
    config_dir: str | None
    aliases: dict[str, list[str]] = Field(
        default_factory=dict, description="Path -> other names its rules' `paths` globs match it by: a script "
                                          "a domain claims by its #! line, with that domain's extensions.")
    deadline: float | None = Field(
        default=None, description="When the agent's hard deadline falls, on anyio's clock (set by dispatch): "
                                  "a kind may stop early and return what it has.")


class AgentOutput(Frozen):
    findings: list[RawFinding]
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    cached_tokens_in: int = Field(default=0, ge=0, description="Input tokens read from a prompt cache.")
    cache_write_tokens_in: int = Field(default=0, ge=0, description="Input tokens written to a prompt cache.")
    reasoning_tokens: int = Field(default=0, ge=0, description="Output tokens spent on hidden reasoning.")
    unpriced_tokens: int = Field(default=0, ge=0, description="Tokens of a model with no price in review-gate.json.")
    unreviewed: list[str] = Field(
        default_factory=list, description="Files of the scope not reviewed (a hunk over the token budget)."
    )
    out_of_scope: int = Field(default=0, description="Findings dropped because their file is not in the scope.")
    out_of_scope_findings: list[DroppedFinding] = Field(
        default_factory=list, max_length=20, description="Those findings with their severity (at most 20).")
    attempts: int = Field(
        default=0, ge=0, description="A kind that retries its own requests: the most times one was sent (0: none).")
    dropped_findings: int = Field(default=0, ge=0, description="Findings of the answer too malformed to keep.")
    notes: list[str] = Field(default_factory=list, description="What was corrected in the answer (bounded).")
    tool_calls: list[ToolCall] = Field(
        default_factory=list, description="An llm agent's calls to its repository tools, in order.")
    raw: str | None = Field(
        default=None, repr=False,
        description="The agent's answer as it gave it (a program's stdout, capped), kept for replay bundles.",
    )
    prompts: list[dict[str, str]] = Field(
        default_factory=list, repr=False,
        description="What an llm agent sent, a system and a user message a request; kept for replay bundles.",
    )
    criteria_met: bool | None = Field(
        default=None, description="An llm agent's judgement of the change against its intent; None: not judged.")
    criteria_note: str | None = Field(default=None, description="Why, in the agent's words (bounded).")

    @field_validator("raw")
    @classmethod
    def _cap(cls, raw: str | None) -> str | None:
        return capped(raw)  # every kind, present and future: what a bundle gets is bounded

    @field_validator("notes")
    @classmethod
    def _bound(cls, notes: list[str]) -> list[str]:
        return bounded_notes(notes)

    @property
    def usage(self) -> Usage:
        return Usage(tokens_in=self.tokens_in, tokens_out=self.tokens_out, cost_usd=self.cost_usd,
                     cached_tokens_in=self.cached_tokens_in, cache_write_tokens_in=self.cache_write_tokens_in,
                     reasoning_tokens=self.reasoning_tokens, unpriced_tokens=self.unpriced_tokens)


Estimate = Callable[[AgentSpec, "AgentTask", AgentContext], tuple[int, float]]
"""The most tokens, and their cost in USD, an agent may spend on its task."""


def always_available(spec: AgentSpec) -> str | None:
    """The shared ``unavailable``: nothing outside the config stops the agent from running."""
    return None


SPENDS_NOTHING: Estimate | None = None
"""The shared ``estimate``: a kind that calls no model spends nothing the run budget counts,
so dispatch never holds it back for the budget (a zero estimate could still be refused once
other agents have overspent)."""

PackReview = Callable[[list[AgentSpec], list["AgentTask"], AgentContext], Awaitable[list["AgentOutput"]]]
"""Several agents reviewed together, one output an agent in order; a fault fails them all."""


def never_packed(spec: AgentSpec) -> Hashable | None:
    """The shared ``pack_key``: every agent of the kind runs alone."""
    return None


NO_PACKS: PackReview | None = None
"""The shared ``review_pack`` of a kind whose agents always run alone."""


class AgentKind(Protocol):
    """A kind of agent: a module with these names, listed in ``review_gate.agents.KINDS``.

    ``review`` raises AgentFault when it cannot produce usable output and TransientAgentFault
    when trying again may help; dispatch owns retries and the deadline. ``unavailable(spec)``
    gives a reason the agent cannot run at all (its API key is not set), which makes it
    ``skipped`` rather than failed. ``estimate(spec, task, context)``, when not None, gives the
    tokens and cost it may spend, which dispatch checks against the run budget before starting
    it. ``pack_key(spec)``, when not None, lets agents with the same key run as one unit through
    ``review_pack`` (``packing: agent_packed``). Kinds that need none of these take the shared
    defaults, as pre-commit's languages take ``lang_base``'s.

    Example, a kind that never finds anything::

        needs_network = False
        unavailable = base.always_available
        estimate = base.SPENDS_NOTHING
        pack_key = base.never_packed
        review_pack = base.NO_PACKS

        async def review(spec: AgentSpec, task: AgentTask, context: AgentContext) -> AgentOutput:
            return AgentOutput(findings=[])
    """

    needs_network: bool

    @property
    def estimate(self) -> Estimate | None: ...

    @property
    def review_pack(self) -> PackReview | None: ...

    def unavailable(self, spec: AgentSpec) -> str | None: ...

    def pack_key(self, spec: AgentSpec) -> Hashable | None: ...

    async def review(self, spec: AgentSpec, task: AgentTask, context: AgentContext) -> AgentOutput: ...
