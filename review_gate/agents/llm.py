"""Agent kind ``llm``: a model behind an HTTP API (OpenAI-compatible or Anthropic).

The agent is one lens of ``llm.review``: its instructions and rules over its scope, sent in as
many requests as its token budget needs, each in its turn at the endpoint's rate governor.
Agents that share provider, model and endpoint can be reviewed together in one packed review
(``review_pack``, dispatch decides with ``packing``): the change is sent once for all of them.
The API key is read from the environment variable ``api_key_env`` names, at call time, and is
scrubbed from every message this kind raises (``llm.client``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING

from review_gate.agents.base import AgentContext, AgentOutput, AgentSpec, AgentTask
from review_gate.config.locations import find_config_file
from review_gate.errors import AgentFault
from review_gate.llm import keys
from review_gate.models import LlmAgent, Usage

if TYPE_CHECKING:  # the reviewing machinery is imported when an agent of this kind reviews, not to skip it
    from review_gate.llm import review as lens_review
    from review_gate.llm.tool_files import Revision
    from review_gate.llm.tools import ToolBox

needs_network = True


def unavailable(spec: AgentSpec) -> str | None:
    """Why the agent cannot run at all: its key variable is not set."""
    return keys.missing_key(spec) if isinstance(spec, LlmAgent) else None


def instructions_path(spec: LlmAgent, config_dir: str | None) -> Path | None:
    """The instructions file: relative to the config directory, else to the built-in one."""
    return find_config_file(spec.instructions, config_dir)


def lens(spec: AgentSpec, task: AgentTask, config_dir: str | None, revision: Revision | None = None,
         ) -> lens_review.Lens:
    """The agent as a lens; ``revision``: the files its tools read, when there is a repository."""
    from review_gate.llm import review as lens_review

    assert isinstance(spec, LlmAgent)
    path = instructions_path(spec, config_dir)
    if path is None:
        raise AgentFault(f"instructions file {spec.instructions!r} not found")
    return lens_review.Lens(spec=spec, instructions=path.read_text(encoding="utf-8"), rules=task.rules,
                            files=task.files, tools=bool(spec.tools) and revision is not None)


def estimate(spec: AgentSpec, task: AgentTask, context: AgentContext) -> tuple[int, float]:
    """The most tokens (and their cost) the agent may spend: every prompt plus a full answer each,
    and, with tools, every round they may take."""
    try:
        one = lens(spec, task, context.config_dir, context.revision)
    except AgentFault:
        return 0, 0.0
    from review_gate.llm import review as lens_review

    return lens_review.estimate([one], context.standards, task.repo_root, context.prices, context.intent)


def pack_key(spec: AgentSpec) -> Hashable | None:
    """Agents with the same key can share requests: the same endpoint, key, model and request shape.
    An agent with tools has its own conversations, never packed."""
    if not isinstance(spec, LlmAgent) or spec.tools:
        return None
    if spec.dimensions is not None:  # its answer has a shape of its own: it always runs alone
        return ("dimensions", spec.id)
    return (spec.provider, spec.url, spec.api_key_env, spec.model, spec.answer_format, spec.is_reasoning,
            spec.reasoning_effort, spec.temperature)


async def review(spec: AgentSpec, task: AgentTask, context: AgentContext) -> AgentOutput:
    [output] = await review_pack([spec], [task], context)
    return output


async def review_pack(specs: list[AgentSpec], tasks: list[AgentTask], context: AgentContext) -> list[AgentOutput]:
    """Review the agents' scopes together, one output an agent; a fault fails them all."""
    if context.client is None:
        raise AgentFault("no HTTP client (the run is offline)")
    deadlines = [t.deadline for t in tasks if t.deadline is not None]
    from review_gate.llm import review as lens_review
    from review_gate.llm.answer import unmet_finding

    lenses = [lens(spec, task, context.config_dir, context.revision) for spec, task in zip(specs, tasks, strict=True)]
    box = _toolbox(lenses, context.revision)
    try:
        results = await lens_review.review(
            lenses, http=context.client, standards=context.standards, prices=context.prices,
            governors=context.governors, deadline=min(deadlines) if deadlines else None,
            repo_root=tasks[0].repo_root, box=box, intent=context.intent, progress=_told(specs, context))
    except AgentFault as fault:
        if box is not None:  # the calls it made are part of its result, failed or not
            fault.tool_calls = [*fault.tool_calls, *box.calls]
        raise
    calls = box.calls if box is not None else []
    notes = [f"{box.unlisted} more tool calls refused past the budget, not listed"] if box and box.unlisted else []
    outputs = []
    for r in results:
        met, why = r.criteria()
        # A judgement that the change misses its intent is a finding of its own, cached with the rest
        unmet = [unmet_finding(why, context.intent_unmet)] if met is False and context.intent_unmet else []
        outputs.append(AgentOutput(findings=[*r.findings, *unmet], **r.usage.rounded().model_dump(),
                                   unreviewed=r.unreviewed,
                                   out_of_scope=r.out_of_scope, out_of_scope_findings=r.discarded,
                                   dropped_findings=r.dropped, notes=[*r.notes, *notes], raw="\n".join(r.raws) or None,
                                   prompts=r.prompts, tool_calls=calls, attempts=r.attempts,
                                   criteria_met=met, criteria_note=why))
    return outputs


def _told(specs: list[AgentSpec], context: AgentContext) -> Callable[[int, int, Usage], None] | None:
    """What each agent of a review hears of its requests (a packed review's are shared by all)."""
    tell = context.on_request
    if tell is None:
        return None

    def told(done: int, total: int, usage: Usage) -> None:
        for spec in specs:
            tell(spec.id, done, total, usage)

    return told


def _toolbox(lenses: list[lens_review.Lens], revision: Revision | None) -> ToolBox | None:
    """The tools of a lone agent that has some, over the reviewed revision."""
    if len(lenses) != 1 or not lenses[0].tools or revision is None:
        return None
    from review_gate.llm.tools import ToolBox

    spec = lenses[0].spec
    return ToolBox(revision, list(spec.tools), spec.max_tool_calls, spec.max_tool_bytes)


__all__ = ["estimate", "needs_network", "pack_key", "review", "review_pack", "unavailable"]
