"""A batch run's llm requests, planned exactly as a live run plans them (``llm.review``): the
same lenses, packing, chunks, system and user messages, and each provider's request body; only
the sending differs. Each request gets a custom id (the run id, its unit and its chunk), which
the request map of the frozen run ties to the agents it asks for and the files it shows.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from review_gate.agents import llm as llm_kind
from review_gate.agents.base import AgentTask
from review_gate.errors import AgentFault
from review_gate.llm import chunking, client
from review_gate.llm import review as lens_review
from review_gate.llm.providers import anthropic, openai
from review_gate.llm.schema import TOOL_NAME, findings_schema
from review_gate.models import AgentResult, FileChange, LlmAgent, ManifestEntry, Packing, ReviewConfig
from review_gate.pipeline.dispatch import agent_result
from review_gate.pipeline.run_budget import RunBudget
from review_gate.scale.batch.models import Endpoint, Request, Unit

OPENAI_ENDPOINT = "/v1/chat/completions"  # the one endpoint of the OpenAI Batch API review-gate uses


@dataclass
class Planned:
    """The batch part of a run: endpoints, units and requests; and the agents that cannot be
    batched (their instructions missing, too long, over the run budget) as their results."""

    endpoints: list[Endpoint] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    refused: list[AgentResult] = field(default_factory=list)
    estimate: tuple[int, int] = (0, 0)  # tokens in, at most tokens out
    cost: tuple[float, float] = (0.0, 0.0)  # at most, at batch and at interactive prices

    def lines(self, endpoint: Endpoint, config: ReviewConfig) -> list[dict[str, Any]]:
        """The request file of one endpoint, in its provider's batch format."""
        out = []
        for request in self.requests:
            unit = self.units[request.unit]
            if unit.endpoint != endpoint.ordinal:
                continue
            spec = packed_spec(unit, config)
            named: dict[str, Any] = {"name": TOOL_NAME} if unit.lenses else {}
            schema = findings_schema(lenses=unit.lenses) if unit.lenses else None
            if endpoint.provider == "openai":
                _, _, body = openai.request(spec, None, unit.system, request.user, schema=schema, **named)
                out.append({"custom_id": request.custom_id, "method": "POST", "url": OPENAI_ENDPOINT, "body": body})
            else:
                _, _, body = anthropic.request(spec, None, unit.system, request.user, schema=schema, **named)
                out.append({"custom_id": request.custom_id, "params": body})
        return out


def batchable(entry: ManifestEntry, config: ReviewConfig, *, host: bool = False) -> LlmAgent | None:
    """The entry's llm agent when it can be sent to a batch API: enabled, its key set, its
    provider one with a batch API, no repository tools. Every other entry runs locally at submit.
    ``host``: its requests go to the coding agent's host instead (``scale.host``), which needs no
    key, answers once for a whole scope (dimensions) and reads the repository with its own tools."""
    spec = config.agent(entry.agent)
    if not isinstance(spec, LlmAgent) or not spec.enabled:
        return None
    if host:
        return spec
    if llm_kind.unavailable(spec) is not None:
        return None
    # a conversation with tools takes several rounds, a batch request is one; dimension verdicts
    # are escalated over the whole scope: both run live
    if spec.tools or spec.dimensions is not None:
        return None
    return spec


def packed_spec(unit: Unit, config: ReviewConfig) -> LlmAgent:
    specs = [config.agent(a) for a in unit.agents]
    lenses = [lens_review.Lens(spec=s, instructions="", rules=[], files=[]) for s in specs if isinstance(s, LlmAgent)]
    return lens_review.packed_spec(lenses)


def plan(entries: list[tuple[ManifestEntry, LlmAgent]], files: Mapping[str, FileChange], config: ReviewConfig, *,
         run_id: str, packing: Packing, standards: str | None, repo_root: str | None, intent: str | None = None,
         spends: bool = True) -> Planned:
    """Plan the requests of the batched entries (each with its llm agent). ``intent``: what the
    change is for, in every system message as a live run has it; ``spends``: False when the
    requests cost the run nothing (a host answers them), so the run budget does not apply."""
    planned = Planned()
    groups: dict[Hashable, list[tuple[ManifestEntry, LlmAgent]]] = {}
    for entry, spec in entries:
        key = llm_kind.pack_key(spec) if packing == "agent_packed" else entry.agent
        groups.setdefault(key, []).append((entry, spec))
    prices = config.settings.prices
    batch_prices = {model: price.batch() for model, price in prices.items()}
    budget = RunBudget(config.settings.max_tokens, config.settings.max_cost_usd)
    for members in groups.values():
        try:
            lenses = [llm_kind.lens(spec, AgentTask(files=[files[p] for p in entry.files],
                                                    rules=config.rules_for(spec.id), repo_root=repo_root,
                                                    config_dir=config.directory), config.directory)
                      for entry, spec in members]
            requests = lens_review.plan_requests(lenses, standards, repo_root, intent)
        except AgentFault as fault:
            planned.refused += [agent_result(e, "failed", error=str(fault), kind="llm", required=s.required,
                                             on_failure=s.on_failure) for e, s in members]
            continue
        tokens_in = sum(chunking.estimate_tokens(len(requests.system) + len(u)) for u in requests.users)
        tokens_out = requests.spec.max_output_tokens * len(requests.users)
        at_batch = client.cost(requests.spec.model, tokens_in, tokens_out, batch_prices)
        over = budget.reserve(tokens_in + tokens_out, at_batch) if spends else None
        if over:
            planned.refused += [agent_result(e, "skipped", error=over, kind="llm", required=s.required,
                                             on_failure=s.on_failure) for e, s in members]
            continue
        planned.estimate = (planned.estimate[0] + tokens_in, planned.estimate[1] + tokens_out)
        planned.cost = (planned.cost[0] + at_batch,
                        planned.cost[1] + client.cost(requests.spec.model, tokens_in, tokens_out, prices))
        _add_unit(planned, members, requests, run_id)
    return planned


def _add_unit(planned: Planned, members: list[tuple[ManifestEntry, LlmAgent]], requests: lens_review.Requests,
              run_id: str) -> None:
    spec = members[0][1]
    endpoint = next((e for e in planned.endpoints if (e.provider, e.url, e.api_key_env) ==
                     (spec.provider, spec.url, spec.api_key_env)), None)
    if endpoint is None:
        endpoint = Endpoint(ordinal=len(planned.endpoints), provider=spec.provider, url=spec.url,
                            api_key_env=spec.api_key_env, agent=spec.id)
        planned.endpoints.append(endpoint)
    index = len(planned.units)
    planned.units.append(Unit(agents=[e.agent for e, _ in members], lenses=requests.lenses,
                              endpoint=endpoint.ordinal, system=requests.system, unreviewed=requests.unreviewed,
                              criteria=requests.criteria))
    # custom ids: 1-64 characters of [A-Za-z0-9_-] (Anthropic's rule; OpenAI takes them too)
    planned.requests += [Request(custom_id=f"{run_id}-u{index}-c{chunk}", unit=index, files=chunk_files, user=user)
                         for chunk, (user, chunk_files) in enumerate(zip(requests.users, requests.files, strict=True))]


__all__ = ["OPENAI_ENDPOINT", "Planned", "batchable", "packed_spec", "plan"]
