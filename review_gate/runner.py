"""The order of the stages, and nothing else: plan = stages 1-4, review = all six."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from datetime import datetime, timezone
from typing import Protocol

from review_gate import __version__
from review_gate.models import (
    AgentManifest,
    AgentResult,
    FilterMode,
    Gap,
    LlmAgent,
    PRClassification,
    PRFacts,
    ReviewConfig,
    ReviewReport,
)
from review_gate.models.base import Frozen
from review_gate.pipeline.aggregate import aggregate
from review_gate.pipeline.classify import classify
from review_gate.pipeline.compose import compose
from review_gate.pipeline.dispatch import DispatchOptions, Listener, dispatch
from review_gate.pipeline.gap_detect import gap_detect
from review_gate.pipeline.normalize import DiffRequest, normalize


class Plan(Frozen):
    facts: PRFacts
    classification: PRClassification
    manifest: AgentManifest
    gaps: list[Gap]


class Reuse(Protocol):
    """Cached results (review_gate.state): dispatch only ``manifest``, then ``merge`` the results
    back into one per original manifest entry."""

    manifest: AgentManifest

    def merge(self, dispatched: list[AgentResult]) -> list[AgentResult]: ...


async def plan(request: DiffRequest, config: ReviewConfig, *, exclude: Collection[str] = (),
               offline: bool = False) -> Plan:
    """Stages 1-4. ``exclude``: paths dropped from the facts (the run-state files). The LLM gap
    detector (``gap_detector`` in review-gate.json) runs after the deterministic part unless ``offline``."""
    facts = await normalize(request)
    if exclude and any(f.path in exclude for f in facts.files):
        facts = facts.model_copy(update={"files": [f for f in facts.files if f.path not in exclude]})
    classification = classify(facts, config.domains.domains)
    manifest = compose(classification, config.composition.policies)
    manifest, gaps = gap_detect(classification, manifest, config)
    detector = next((a for a in config.agents.agents if a.id == config.settings.gap_detector), None)
    if isinstance(detector, LlmAgent) and not offline:
        manifest, added = await _detect_gaps(facts, classification, manifest, config, detector)
        gaps = [*gaps, *added]
    return Plan(facts=facts, classification=classification, manifest=manifest, gaps=gaps)


async def _detect_gaps(facts: PRFacts, classification: PRClassification, manifest: AgentManifest,
                       config: ReviewConfig, detector: LlmAgent) -> tuple[AgentManifest, list[Gap]]:
    """The LLM gap detector, over an HTTP client of its own (closed here), bounded by its timeout."""
    import anyio
    import httpx

    from review_gate.llm.gap_detector import detect, failed

    deadline = detector.timeout_s or config.settings.timeout_s
    async with httpx.AsyncClient(timeout=httpx.Timeout(None, connect=30), follow_redirects=False,
                                 trust_env=True) as client:
        with anyio.move_on_after(deadline):
            return await detect(facts, classification, manifest, config, detector, client)
    return manifest, [failed(detector, f"timed out after {deadline:g} s")]


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


async def review(
    request: DiffRequest,
    config: ReviewConfig,
    options: DispatchOptions,
    *,
    filter_mode: FilterMode | None = None,
    fail_on: str | None = None,
    listener: Listener | None = None,
    planned: Plan | None = None,
    waivers: Mapping[str, str] | None = None,
    run_id: str | None = None,
    reuse: Reuse | None = None,
) -> ReviewReport:
    the_plan = planned or await plan(request, config, offline=options.offline)
    if reuse is None:
        results = await dispatch(the_plan.manifest, the_plan.facts, config, options, listener)
    else:
        results = reuse.merge(await dispatch(reuse.manifest, the_plan.facts, config, options, listener))
    return aggregate(
        the_plan.facts, the_plan.classification, the_plan.manifest.entries, the_plan.gaps, results,
        config, run_id=run_id or new_run_id(), tool_version=__version__, filter_mode=filter_mode, fail_on=fail_on,
        waivers=waivers,
    )
