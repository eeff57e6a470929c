"""Stage 5: run the manifest's agents in parallel, each under its own deadline.

Every agent runs in its own task inside one task group, behind a capacity limiter. Its hard
deadline (``timeout_s``) starts when it gets a slot and covers all its attempts; only transient
faults are retried (``retries.attempts``), waiting what the fault asked for (Retry-After) or a jittered
backoff. (The llm kind retries each of its requests itself and never raises a transient
fault: a retry of the whole agent would send again what was answered.) Whatever happens to
one agent becomes its AgentResult; it never cancels the others.

When an agent of a network kind is dispatched (and the run is not offline), dispatch creates
one HTTP client for all of them and closes it at the end. A run budget (``max_cost_usd``,
``max_tokens`` of review-gate.json) is checked before each such agent starts: what the run has
spent or reserved so far plus the agent's own estimate must fit, or the agent is skipped.

With ``packing: agent_packed``, agents whose kind can share requests (``pack_key``: llm agents
of one provider, model and endpoint) run as one unit: one task, one slot, the shortest deadline
and fewest retries of its members, one packed review (``review_pack``) whose outcome becomes
each member's own result.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from review_gate.agents import KINDS, AgentContext, AgentKind, AgentOutput, AgentSpec, AgentTask
from review_gate.errors import AgentFault, AgentSkipped
from review_gate.judging.fingerprint import fingerprint, message_anchor
from review_gate.models import (
    AgentManifest,
    AgentResult,
    AgentStatus,
    FileChange,
    Finding,
    ManifestEntry,
    OnFailure,
    Packing,
    PRFacts,
    RawFinding,
    ReviewConfig,
    ToolCall,
    Usage,
)
from review_gate.models.config import INTENT_UNMET, script_names
from review_gate.models.config_values import Severity
from review_gate.models.facts import LineIndex
from review_gate.pipeline.boundary import checked, checked_all
from review_gate.pipeline.options import DispatchOptions as DispatchOptions
from review_gate.pipeline.options import Event
from review_gate.pipeline.options import Listener as Listener
from review_gate.pipeline.retries import attempts as retried
from review_gate.pipeline.run_budget import RunBudget

if TYPE_CHECKING:
    import httpx

    from review_gate.llm.governor import Governors
    from review_gate.llm.tool_files import Revision

async def dispatch(
    manifest: AgentManifest,
    facts: PRFacts,
    config: ReviewConfig,
    options: DispatchOptions,
    listener: Listener | None = None,
    http: httpx.AsyncClient | None = None,
) -> list[AgentResult]:
    """Run every manifest entry; return one result per entry, in manifest order. ``http``: the
    run's HTTP client, when its caller made one (else dispatch makes one if it needs one).

    >>> # results = await dispatch(manifest, facts, config, DispatchOptions(concurrency=4, default_timeout_s=60))
    """
    manifest, facts = checked("dispatch", manifest), checked("dispatch", facts)
    notify: Listener = listener or (lambda _id, _event, _result: None)
    limiter = anyio.CapacityLimiter(options.concurrency)
    by_path = {f.path: f for f in facts.files}
    aliases = _Aliases(config)
    line_text = line_index(facts)
    results: dict[str, AgentResult] = {}
    budget = RunBudget(config.settings.max_tokens, config.settings.max_cost_usd)
    members: list[_Member] = []
    for entry in manifest.entries:
        notify(entry.agent, "queued", None)
        member, refused = _prepare(entry, config, options, by_path, aliases)
        if member is not None:
            members.append(member)
        else:
            assert refused is not None
            results[entry.agent] = refused
            notify(entry.agent, "done", refused)

    async with _client(manifest, config, options, http) as client:
        context = AgentContext(client=client, offline=options.offline, config_dir=options.config_dir,
                               repo_root=options.repo_root, prices=config.settings.prices,
                               standards=options.standards, intent=options.intent,
                               intent_unmet=intent_severity(config),
                               # a listener with an on_request method also hears of each llm request answered
                               on_request=getattr(listener, "on_request", None),
                               governors=_governors(config) if client is not None else None,
                               revision=revision(facts, options))

        async def run(unit: list[_Member]) -> None:
            for result in await _run_unit(unit, options, limiter, line_text, notify, context, budget):
                results[result.id] = result
                notify(result.id, "done", result)

        async with anyio.create_task_group() as group:
            for unit in _units(members, options.packing):
                group.start_soon(run, unit)
    return checked_all("dispatch", [results[e.agent] for e in manifest.entries])


def intent_severity(config: ReviewConfig) -> Severity | None:
    """The severity of an intent-unmet finding as the configuration sets its rule; None when it
    is switched off; major when the configuration has no such rule."""
    rule = config.gate_rule(INTENT_UNMET)
    return "major" if rule is None else rule.severity if rule.enabled else None


def _governors(config: ReviewConfig) -> Governors:
    from review_gate.llm.governor import Governors  # the model endpoints' pacing: only a run that talks to one

    return Governors(config.agents.agents)


def revision(facts: PRFacts, options: DispatchOptions) -> Revision | None:
    """The files an llm agent's tools read: the head commit's of a range, the index's of staged
    changes, else the working tree's; None without a repository."""
    if options.repo_root is None:
        return None
    from review_gate.llm.tool_files import Revision
    return Revision(root=options.repo_root, commit=facts.head, index=options.staged and facts.head is None,
                    private=options.private_paths)


@contextlib.asynccontextmanager
async def _client(manifest: AgentManifest, config: ReviewConfig, options: DispatchOptions,
                  given: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient | None]:
    """The run's HTTP client (``given``, or one made here and closed after), only when an agent
    that needs the network will run."""
    def networked(agent_id: str) -> bool:
        spec = config.agent(agent_id)
        kind = KINDS.get(spec.kind) if spec is not None else None
        if spec is None or not spec.enabled or kind is None or not kind.needs_network:
            return False
        return kind.unavailable(spec) is None  # e.g. its API key is not set

    if options.offline or options.llm_left_out or not any(networked(e.agent) for e in manifest.entries):
        yield None
        return
    if given is not None:
        yield given
        return
    from review_gate.llm.client import new_client

    async with new_client(options.concurrency) as client:
        yield client


@dataclass
class _Member:
    """An entry ready to run: its agent and kind found, enabled, able to run."""

    entry: ManifestEntry
    spec: AgentSpec
    kind: AgentKind
    task: AgentTask


class _Aliases:
    """The other names of each file (``script_names``), made once a dispatch: every agent of a
    change of hundreds of files asks about each of them."""

    def __init__(self, config: ReviewConfig) -> None:
        self.domains = config.domains.domains
        self.known: dict[str, list[str]] = {}

    def of(self, change: FileChange) -> list[str]:
        found = self.known.get(change.path)
        if found is None:
            found = self.known[change.path] = script_names(change.path, change.interpreter, self.domains,
                                                                  change.content_kind)
        return found


OFFLINE = "off: needs the network; --offline"


def _prepare(entry: ManifestEntry, config: ReviewConfig, options: DispatchOptions,
             by_path: dict[str, FileChange], aliases: _Aliases) -> tuple[_Member | None, AgentResult | None]:
    """The entry ready to run, or its result when it cannot run at all."""
    spec = config.agent(entry.agent)
    if spec is None:
        return None, agent_result(entry, "failed", error=f"agent {entry.agent!r} is not in the registry "
                                                   "(review-agents.json)")
    kind = KINDS.get(spec.kind)
    if kind is None:
        return None, agent_result(entry, "failed", kind=spec.kind, required=spec.required,
                             error=f"agent kind {spec.kind!r} is not available in this version")
    if not spec.enabled:
        # The configuration turned it off: nothing requires it to run, and it is listed, not
        # counted as absent. A skip nobody chose (no key, the run budget) still counts.
        result = agent_result(entry, "skipped", kind=spec.kind, required=False,
                              error="disabled in review-agents.json (enabled: false)")
        return None, result.model_copy(update={"disabled": True})
    if options.offline and kind.needs_network:
        # The person turned it off (--offline): a choice, listed as off like a disabled agent,
        # not a reviewer that should have run (aggregate still counts it when it was the only
        # one routed to a file).
        result = agent_result(entry, "skipped", kind=spec.kind, required=spec.required,
                              error=OFFLINE, on_failure=spec.on_failure)
        return None, result.model_copy(update={"disabled": True})
    if options.llm_left_out and kind.needs_network:
        return None, agent_result(entry, "skipped", kind=spec.kind, required=spec.required,
                                  error=options.llm_left_out, on_failure=spec.on_failure)
    reason = kind.unavailable(spec)
    if reason:
        return None, agent_result(entry, "skipped", kind=spec.kind, required=spec.required, error=reason,
                                  on_failure=spec.on_failure)
    files = [by_path[p] for p in entry.files]
    names = {f.path: found for f in files if (found := aliases.of(f))}
    task = AgentTask(files=files, rules=config.rules_for(spec.id), repo_root=options.repo_root,
                     config_dir=options.config_dir, aliases=names)
    return _Member(entry, spec, kind, task), None


def _units(members: list[_Member], packing: Packing) -> list[list[_Member]]:
    """What runs together: every member alone, or, packed, the members whose kind gives the same
    ``pack_key`` in one unit."""
    if packing != "agent_packed":
        return [[m] for m in members]
    groups: dict[tuple[str, Hashable], list[_Member]] = {}
    units: list[list[_Member]] = []
    for member in members:
        key = member.kind.pack_key(member.spec) if member.kind.review_pack is not None else None
        if key is None:
            units.append([member])
        elif (member.spec.kind, key) in groups:
            groups[(member.spec.kind, key)].append(member)
        else:
            units.append(groups.setdefault((member.spec.kind, key), [member]))
    return units


def agent_result(entry: ManifestEntry, status: AgentStatus, attempts: int = 0, duration: float = 0.0,
                 error: str | None = None, output: AgentOutput | None = None, kind: str = "unknown",
                 required: bool = True, spent: Usage | None = None,
                 line_text: Mapping[tuple[str, int], str] | None = None,
                 tool_calls: list[ToolCall] | None = None, on_failure: OnFailure = "fail_closed") -> AgentResult:
    """The result of an entry: its status, and the findings of ``output`` given their agent and
    fingerprint (anchored on ``line_text``, ``line_index(facts)``). Provider batches build
    theirs here too, so a finding has the same fingerprint however it was asked for.
    ``tool_calls``: those of attempts that failed, listed before the output's own. ``attempts``:
    the agent's, or the most one of its requests took when its kind retries them itself."""
    findings = _findings(entry.agent, output.findings, line_text or {}) if output else []
    usage = (spent or Usage()) + output.usage if output else (spent or Usage())
    return AgentResult(
        id=entry.agent, kind=kind, status=status, required=required, on_failure=on_failure,
        attempts=max(attempts, output.attempts if output else 0),
        duration_s=round(duration, 3), files=entry.files, error=error,
        **usage.rounded().model_dump(), findings=findings,
        unreviewed=output.unreviewed if output else [],
        out_of_scope=output.out_of_scope if output else 0,
        out_of_scope_findings=output.out_of_scope_findings if output else [],
        dropped_findings=output.dropped_findings if output else 0, notes=output.notes if output else [],
        raw=output.raw if output else None, prompts=output.prompts if output else [],
        tool_calls=[*(tool_calls or []), *(output.tool_calls if output else [])],
        criteria_met=output.criteria_met if output else None, criteria_note=output.criteria_note if output else None)


async def _run_unit(unit: list[_Member], options: DispatchOptions, limiter: anyio.CapacityLimiter,
                    line_text: Mapping[tuple[str, int], str], notify: Listener, context: AgentContext,
                    budget: RunBudget) -> list[AgentResult]:
    """Run one agent, or a pack of them, under the unit's deadline and retries."""
    kind = unit[0].kind
    deadline = min(options.timeout_s or m.spec.timeout_s or options.default_timeout_s for m in unit)
    spent = Usage()  # what attempts that raised a fault used (AgentFault.spent): billed all the same
    calls: list[ToolCall] = []  # the tool calls of attempts that raised a fault (tool agents run alone)
    attempts = 0
    tries = 0  # a kind that retries its requests itself: the most times the one that failed was sent

    def each(status: AgentStatus, started: float, error: str | None = None,
             outputs: list[AgentOutput] | None = None) -> list[AgentResult]:
        shares = spent.split(len(unit))
        return [agent_result(m.entry, status, max(attempts, tries), time.monotonic() - started if started else 0.0,
                             error, outputs[i] if outputs else None, m.spec.kind, m.spec.required, shares[i],
                             line_text, calls if len(unit) == 1 else None, m.spec.on_failure)
                for i, m in enumerate(unit)]

    estimate = kind.estimate  # None: a kind that calls no model, never held back by the budget
    reserved = (0, 0.0)
    async with limiter:
        if budget.limited and estimate is not None:
            estimates = [estimate(m.spec, m.task, context) for m in unit]
            reserved = (sum(e[0] for e in estimates), sum(e[1] for e in estimates))
            over = budget.reserve(*reserved)
            if over:
                return each("skipped", 0.0, over)
        _tell(unit, notify, "running")
        started = time.monotonic()
        try:
            with anyio.fail_after(deadline) as scope:
                tasks = [m.task.model_copy(update={"deadline": scope.deadline}) for m in unit]  # may finish early

                async def attempt() -> list[AgentOutput]:
                    nonlocal attempts, spent, tries
                    attempts += 1
                    try:
                        return await _review(unit, tasks, context)
                    except AgentFault as fault:
                        spent += fault.spent or Usage()
                        calls.extend(fault.tool_calls)
                        tries = max(tries, fault.attempts)
                        raise

                outputs = await retried(attempt, min(m.spec.retries for m in unit),
                                          lambda: _tell(unit, notify, "retrying"))
        except TimeoutError:
            budget.settle(reserved, reserved)  # what it spent is unknown: keep the reservation
            return each("timed_out", started, f"no usable answer within its {deadline:g} s deadline")
        except AgentSkipped as fault:  # it sent nothing: it did not run
            budget.settle(reserved, (0, 0.0))
            return each("skipped", started, str(fault))
        except AgentFault as fault:
            budget.settle(reserved, reserved)
            return each("failed", started, str(fault))
        except Exception as exc:  # a bug in a kind must not take the other agents down
            return each("failed", started, f"internal error: {type(exc).__name__}: {exc}")
    used = sum((o.usage for o in outputs), spent)
    budget.settle(reserved, (used.tokens_in + used.tokens_out, used.cost_usd))
    return each("completed", started, outputs=outputs)


def _tell(unit: list[_Member], notify: Listener, event: Event) -> None:
    for member in unit:
        notify(member.entry.agent, event, None)


async def _review(unit: list[_Member], tasks: list[AgentTask], context: AgentContext) -> list[AgentOutput]:
    review_pack = unit[0].kind.review_pack
    if len(unit) == 1 or review_pack is None:
        return [await unit[0].kind.review(unit[0].spec, tasks[0], context)]
    return await review_pack([m.spec for m in unit], tasks, context)


def line_index(facts: PRFacts) -> Mapping[tuple[str, int], str]:
    """(file, new line number) -> the line's text: what a finding's fingerprint is anchored on
    (read from the hunks when asked: a large diff's lines are not copied)."""
    return LineIndex(facts)


def _findings(agent: str, raw: list[RawFinding], line_text: Mapping[tuple[str, int], str]) -> list[Finding]:
    """Give each finding its agent and a fingerprint anchored on the flagged line's text."""
    seen: Counter[tuple[str, str | None, str]] = Counter()
    out = []
    for item in raw:
        rule = item.rule_id or item.category or "general"
        known = line_text.get((item.file, item.line)) if item.file and item.line else None
        anchor = known if known is not None else message_anchor(item.message)
        key = (rule, item.file, anchor.strip())
        occurrence = seen[key]
        seen[key] += 1
        line = item.line if item.line and item.line > 0 else None
        end_line = item.end_line if item.end_line and line and item.end_line >= line else line
        out.append(Finding(
            fingerprint=fingerprint(agent, rule, item.file, anchor, occurrence), agent=agent,
            rule_id=item.rule_id, severity=item.severity, category=item.category or "general",
            file=item.file, line=line, end_line=end_line,
            column=item.column if line is not None and item.column is not None and item.column > 0 else None,
            message=item.message,
            recommendation=item.recommendation, confidence=item.confidence))
    return out
