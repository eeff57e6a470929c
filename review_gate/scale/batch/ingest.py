"""A batch's result lines -> each batched agent's result, as a live run would have it.

Each line is read with its provider's ``reply`` and the answer parser, priced at the batch
price, and the answered chunks of a unit go through ``llm.review.lens_results`` and
``dispatch.agent_result``: the same findings, fingerprints, usage shares and unreviewed files
as live answers give. A request with no usable answer (it errored or expired, the batch
failed, its answer was cut off or not JSON) is not retried, as a live run would: its files
stay unreviewed for the agents that had them, so their pairs go missing and, for a required
agent, the gate is incomplete. An agent none of whose requests was answered has failed.
"""

from __future__ import annotations

from collections.abc import Mapping

from review_gate.agents.base import AgentOutput
from review_gate.llm import client
from review_gate.llm import review as lens_review
from review_gate.llm.answer import UnusableAnswer, parse_answer, unmet_finding
from review_gate.llm.providers.common import Unusable
from review_gate.models import AgentResult, FileChange, LlmAgent, ManifestEntry, Price, Usage
from review_gate.models.report import HOST_REVIEWER
from review_gate.pipeline.dispatch import agent_result, intent_severity, line_index
from review_gate.scale.batch.models import FrozenRun, Request, Unit
from review_gate.scale.batch.requests import packed_spec
from review_gate.scale.batch.wire import Outcome

MAX_REASONS = 3


def ingest(frozen: FrozenRun, entries: Mapping[str, ManifestEntry], outcomes: Mapping[str, Outcome],
           failed: Mapping[int, str]) -> list[AgentResult]:
    """One result per batched agent. ``entries``: the agents' stale manifest entries (their
    scope in this run); ``failed``: endpoint ordinal -> why none of its requests has a result."""
    prices = {model: price.batch() for model, price in frozen.config.settings.prices.items()}
    files = {f.path: f for f in frozen.facts.files}
    lines = line_index(frozen.facts)
    out: list[AgentResult] = []
    for index, unit in enumerate(frozen.units):
        requests = [r for r in frozen.requests if r.unit == index]
        answered: list[lens_review.Answered | None] = []
        reasons: list[str] = []
        lost = Usage()  # tokens of answers that could not be used: billed all the same
        spec = packed_spec(unit, frozen.config)
        for request in requests:
            outcome = outcomes.get(request.custom_id)
            default = failed.get(unit.endpoint, "the batch returned no result for this request")
            chunk, reason, usage = _answer(outcome, spec, unit, prices, default)
            answered.append(chunk)
            if chunk is None:
                lost += usage
                reasons.append(reason or default)
        out += unit_results(frozen, unit, entries, files, lines, requests, answered, reasons, lost, spec)
    return out


def _answer(outcome: Outcome | None, spec: LlmAgent, unit: Unit, prices: Mapping[str, Price],
            default: str) -> tuple[lens_review.Answered | None, str | None, Usage]:
    if outcome is None:
        return None, default, Usage()
    if outcome.body is None:
        return None, outcome.error or default, Usage()
    provider = client.PROVIDERS[spec.provider]
    try:
        reply = provider.reply(outcome.body, outcome.raw)
    except Unusable as exc:
        return None, str(exc), client.spent(exc.reply, spec.model, prices)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None, "the result is not a response of the provider's API", Usage()
    usage = client.spent(reply, spec.model, prices)
    try:
        assert reply.answer is not None
        parsed = parse_answer(reply.answer, unit.lenses)
    except UnusableAnswer as exc:
        return None, f"the answer is not usable: {exc}", usage
    return lens_review.Answered(parsed, usage, reply.raw), None, usage


def unit_requests(unit: Unit, requests: list[Request], spec: LlmAgent) -> lens_review.Requests:
    """The unit's requests as a live review planned them: what reads their answers (``parse``,
    ``schema``) and shares them out among its lenses."""
    return lens_review.Requests(spec=spec, system=unit.system, users=[r.user for r in requests],
                                files=[r.files for r in requests], unreviewed=unit.unreviewed, lenses=unit.lenses,
                                criteria=unit.criteria)


def unit_results(frozen: FrozenRun, unit: Unit, entries: Mapping[str, ManifestEntry],
                 files: dict[str, FileChange], lines: Mapping[tuple[str, int], str], requests: list[Request],
                 answered: list[lens_review.Answered | None], reasons: list[str], lost: Usage,
                 spec: LlmAgent, source: str = "batch") -> list[AgentResult]:
    """Each agent of the unit's result from its requests' answers (None: not answered), as a live
    review gives it. ``source``: who answered (``batch``, or ``host``: a self-review by the coding
    agent's host, marked ``reviewed_by``)."""
    members = [(entries[a], frozen.config.agent(a)) for a in unit.agents if a in entries]
    specs = [(e, s) for e, s in members if isinstance(s, LlmAgent)]
    shares = lost.split(len(specs)) if specs else []
    summary = _summary(reasons, len(answered))
    by = HOST_REVIEWER if source == "host" else None
    if not any(answered):
        return [agent_result(e, "failed", 1, 0.0, f"{source}: {summary}", kind="llm", required=s.required,
                             spent=shares[i], on_failure=s.on_failure).model_copy(update={"reviewed_by": by})
                for i, (e, s) in enumerate(specs)]
    lenses = [lens_review.Lens(spec=s, instructions="", rules=[], files=[files[p] for p in e.files if p in files])
              for e, s in specs]
    results = lens_review.lens_results(lenses, unit_requests(unit, requests, spec), answered, None)
    severity = intent_severity(frozen.config)
    out = []
    for i, ((entry, agent), result) in enumerate(zip(specs, results, strict=True)):
        notes = result.notes + ([f"{source}: {summary}"] if reasons else [])
        met, why = result.criteria()
        unmet = [unmet_finding(why, severity)] if met is False and severity else []  # as a live review's
        output = AgentOutput(findings=[*result.findings, *unmet], **result.usage.rounded().model_dump(),
                             unreviewed=result.unreviewed, out_of_scope=result.out_of_scope,
                             out_of_scope_findings=result.discarded, dropped_findings=result.dropped, notes=notes,
                             raw="\n".join(result.raws) or None, prompts=result.prompts, criteria_met=met,
                             criteria_note=why)
        made = agent_result(entry, "completed", 1, 0.0, None, output, "llm", agent.required, shares[i], lines,
                            on_failure=agent.on_failure)
        out.append(made.model_copy(update={"reviewed_by": by}) if by else made)
    return out


def _summary(reasons: list[str], total: int) -> str:
    if not reasons:
        return f"all {total} requests answered"
    kinds = list(dict.fromkeys(reasons))
    shown = "; ".join(kinds[:MAX_REASONS]) + (f"; and {len(kinds) - MAX_REASONS} more" if len(kinds) > MAX_REASONS
                                               else "")
    return f"{len(reasons)} of {total} request(s) without a usable answer: {shown}"


__all__ = ["ingest", "unit_requests", "unit_results"]
