"""The order of the stages, and nothing else: plan = stages 1-4, review = all six."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from review_gate import __version__
from review_gate.models import AgentManifest, FilterMode, Gap, PRClassification, PRFacts, ReviewConfig, ReviewReport
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


async def plan(request: DiffRequest, config: ReviewConfig) -> Plan:
    facts = await normalize(request)
    classification = classify(facts, config.domains.domains)
    manifest = compose(classification, config.composition.policies)
    manifest, gaps = gap_detect(classification, manifest, config)
    return Plan(facts=facts, classification=classification, manifest=manifest, gaps=gaps)


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
) -> ReviewReport:
    the_plan = planned or await plan(request, config)
    results = await dispatch(the_plan.manifest, the_plan.facts, config, options, listener)
    return aggregate(
        the_plan.facts, the_plan.classification, the_plan.manifest.entries, the_plan.gaps, results,
        config, run_id=new_run_id(), tool_version=__version__, filter_mode=filter_mode, fail_on=fail_on,
    )
