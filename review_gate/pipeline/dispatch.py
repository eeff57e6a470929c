"""Stage 5: run the manifest's agents in parallel, each under its own deadline.

Every agent runs in its own task inside one task group, behind a capacity limiter. Its hard
deadline (``timeout_s``) starts when it gets a slot and covers all its attempts; tenacity
retries only transient faults, waiting what the fault asked for (Retry-After) or a jittered
backoff. Whatever happens to one agent becomes its AgentResult; it never cancels the others.

When an agent of a network kind is dispatched (and the run is not offline), dispatch creates
one HTTP client for all of them and closes it at the end. A run budget (``max_cost_usd``,
``max_tokens`` of review-gate.json) is checked before each such agent starts: what the run has
spent or reserved so far plus the agent's own estimate must fit, or the agent is skipped.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Literal

import anyio
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_exponential, wait_random

from review_gate.agents import KINDS, AgentContext, AgentOutput, AgentTask
from review_gate.errors import AgentFault, TransientAgentFault
from review_gate.fingerprint import fingerprint, message_anchor
from review_gate.llm.governor import Governors
from review_gate.models import (
    AgentManifest,
    AgentResult,
    AgentStatus,
    FileChange,
    Finding,
    ManifestEntry,
    PRFacts,
    RawFinding,
    ReviewConfig,
    Usage,
)
from review_gate.models.base import Frozen

if TYPE_CHECKING:
    import httpx

Event = Literal["queued", "running", "retrying", "done"]
Listener = Callable[[str, Event, AgentResult | None], None]

_backoff = wait_exponential(multiplier=0.5, max=10) + wait_random(0, 0.5)


class DispatchOptions(Frozen):
    concurrency: int
    timeout_s: float | None = None  # overrides every agent's timeout when given
    default_timeout_s: float
    offline: bool = False
    repo_root: str | None = None
    config_dir: str | None = None
    standards: str | None = None  # the constitution's Standards section (resolved by the bootstrap)


def _wait(state: RetryCallState) -> float:
    fault = state.outcome.exception() if state.outcome else None
    if isinstance(fault, TransientAgentFault) and fault.retry_after is not None:
        return max(0.0, fault.retry_after)
    return float(_backoff(state))


async def dispatch(
    manifest: AgentManifest,
    facts: PRFacts,
    config: ReviewConfig,
    options: DispatchOptions,
    listener: Listener | None = None,
) -> list[AgentResult]:
    """Run every manifest entry; return one result per entry, in manifest order.

    >>> # results = await dispatch(manifest, facts, config, DispatchOptions(concurrency=4, default_timeout_s=60))
    """
    notify: Listener = listener or (lambda _id, _event, _result: None)
    limiter = anyio.CapacityLimiter(options.concurrency)
    by_path = {f.path: f for f in facts.files}
    line_text = _line_index(facts)
    results: dict[str, AgentResult] = {}
    budget = _Budget(config.settings.max_tokens, config.settings.max_cost_usd)

    async with _client(manifest, config, options) as client:
        context = AgentContext(client=client, offline=options.offline, config_dir=options.config_dir,
                               repo_root=options.repo_root, prices=config.settings.prices,
                               standards=options.standards,
                               governors=Governors(config.agents.agents) if client is not None else None)

        async def run(entry: ManifestEntry) -> None:
            notify(entry.agent, "queued", None)
            result = await _run_entry(entry, config, options, limiter, by_path, line_text, notify, context, budget)
            results[entry.agent] = result
            notify(entry.agent, "done", result)

        async with anyio.create_task_group() as group:
            for entry in manifest.entries:
                group.start_soon(run, entry)
    return [results[e.agent] for e in manifest.entries]


@contextlib.asynccontextmanager
async def _client(manifest: AgentManifest, config: ReviewConfig,
                  options: DispatchOptions) -> AsyncIterator[httpx.AsyncClient | None]:
    """One HTTP client for the run, only when an agent that needs the network will run."""
    def networked(agent_id: str) -> bool:
        spec = config.agent(agent_id)
        kind = KINDS.get(spec.kind) if spec is not None else None
        if spec is None or not spec.enabled or kind is None or not kind.needs_network:
            return False
        unavailable: Any = getattr(kind, "unavailable", None)  # e.g. its API key is not set
        return unavailable is None or unavailable(spec) is None

    if options.offline or not any(networked(e.agent) for e in manifest.entries):
        yield None
        return
    import httpx

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=max(20, options.concurrency))
    async with httpx.AsyncClient(timeout=httpx.Timeout(None, connect=30), limits=limits,
                                 follow_redirects=False, trust_env=True) as client:
        yield client


class _Budget:
    """Tokens and cost spent or reserved by the run's agents so far, against the run budget."""

    def __init__(self, max_tokens: int | None, max_cost: float | None) -> None:
        self.max_tokens = max_tokens
        self.max_cost = max_cost
        self.tokens = 0
        self.cost = 0.0

    @property
    def limited(self) -> bool:
        return self.max_tokens is not None or self.max_cost is not None

    def reserve(self, tokens: int, cost: float) -> str | None:
        """Reserve an agent's estimate; the reason it does not fit, if it does not."""
        if self.max_tokens is not None and self.tokens + tokens > self.max_tokens:
            return (f"run budget: about {tokens} more tokens would pass max_tokens {self.max_tokens} "
                    f"({self.tokens} spent or reserved)")
        if self.max_cost is not None and self.cost + cost > self.max_cost:
            return (f"run budget: about ${cost:.4f} more would pass max_cost_usd {self.max_cost:g} "
                    f"(${self.cost:.4f} spent or reserved)")
        self.tokens += tokens
        self.cost += cost
        return None

    def settle(self, reserved: tuple[int, float], spent: tuple[int, float]) -> None:
        self.tokens += spent[0] - reserved[0]
        self.cost += spent[1] - reserved[1]


async def _run_entry(
    entry: ManifestEntry,
    config: ReviewConfig,
    options: DispatchOptions,
    limiter: anyio.CapacityLimiter,
    by_path: dict[str, FileChange],
    line_text: dict[tuple[str, int], str],
    notify: Listener,
    context: AgentContext,
    budget: _Budget,
) -> AgentResult:
    spec = config.agent(entry.agent)

    spent = Usage()  # what attempts that raised a fault used (AgentFault.spent): billed all the same

    def result(status: AgentStatus, attempts: int = 0, duration: float = 0.0, error: str | None = None,
               output: AgentOutput | None = None, kind: str = "unknown", required: bool = True,
               unreviewed: list[str] | None = None) -> AgentResult:
        findings = _findings(entry.agent, output.findings, line_text) if output else []
        usage = spent + output.usage if output else spent
        return AgentResult(
            id=entry.agent, kind=kind, status=status, required=required, attempts=attempts,
            duration_s=round(duration, 3), files=entry.files, error=error,
            **usage.rounded().model_dump(), findings=findings,
            unreviewed=output.unreviewed if output else (unreviewed or []),
            out_of_scope=output.out_of_scope if output else 0,
            dropped_findings=output.dropped_findings if output else 0, notes=output.notes if output else [],
            raw=output.raw if output else None)

    if spec is None:
        return result("failed", error=f"agent {entry.agent!r} is not in the registry (review-agents.json)")
    kind = KINDS.get(spec.kind)
    if kind is None:
        return result("failed", kind=spec.kind, required=spec.required,
                      error=f"agent kind {spec.kind!r} is not available in this version")
    if not spec.enabled:
        # The configuration turned it off: nothing requires it to run. Any other skip of a
        # required agent (no key, --offline, the run budget) makes the run incomplete.
        return result("skipped", kind=spec.kind, required=False,
                      error="disabled in review-agents.json (enabled: false)")
    if options.offline and kind.needs_network:
        return result("skipped", kind=spec.kind, required=spec.required, error="needs the network; --offline")
    unavailable: Any = getattr(kind, "unavailable", None)
    reason = unavailable(spec) if unavailable is not None else None
    if reason:
        return result("skipped", kind=spec.kind, required=spec.required, error=reason)

    task = AgentTask(files=[by_path[p] for p in entry.files], rules=config.rules_for(spec.id),
                     repo_root=options.repo_root, config_dir=options.config_dir)
    deadline = options.timeout_s or spec.timeout_s or options.default_timeout_s
    attempts = 0
    estimate: Any = getattr(kind, "estimate", None)
    reserved = (0, 0.0)
    async with limiter:
        if budget.limited and estimate is not None:
            reserved = estimate(spec, task, context)
            over = budget.reserve(*reserved)
            if over:
                return result("skipped", kind=spec.kind, required=spec.required, error=over)
        notify(entry.agent, "running", None)
        started = time.monotonic()
        try:
            with anyio.fail_after(deadline) as scope:
                task = task.model_copy(update={"deadline": scope.deadline})  # a kind may finish early
                retrying = AsyncRetrying(
                    stop=stop_after_attempt(spec.retries + 1),
                    retry=retry_if_exception_type(TransientAgentFault),
                    wait=_wait, sleep=anyio.sleep, reraise=True,
                    before_sleep=lambda _s: notify(entry.agent, "retrying", None),
                )
                async for attempt in retrying:
                    with attempt:
                        attempts += 1
                        try:
                            output = await kind.review(spec, task, context)
                        except AgentFault as fault:
                            spent += fault.spent or Usage()
                            raise
        except TimeoutError:
            budget.settle(reserved, reserved)  # what it spent is unknown: keep the reservation
            return result("timed_out", attempts, time.monotonic() - started, kind=spec.kind,
                          required=spec.required, error=f"no usable answer within its {deadline:g} s deadline")
        except AgentFault as fault:
            budget.settle(reserved, reserved)
            return result("failed", attempts, time.monotonic() - started, kind=spec.kind,
                          required=spec.required, error=str(fault))
        except Exception as exc:  # a bug in a kind must not take the other agents down
            return result("failed", attempts, time.monotonic() - started, kind=spec.kind,
                          required=spec.required, error=f"internal error: {type(exc).__name__}: {exc}")
    budget.settle(reserved, (output.tokens_in + output.tokens_out + spent.tokens_in + spent.tokens_out,
                             output.cost_usd + spent.cost_usd))
    return result("completed", attempts, time.monotonic() - started, output=output, kind=spec.kind,
                  required=spec.required)


def _line_index(facts: PRFacts) -> dict[tuple[str, int], str]:
    return {(f.path, ln.number): ln.text for f in facts.files for h in f.hunks for ln in h.lines}


def _findings(agent: str, raw: list[RawFinding], line_text: dict[tuple[str, int], str]) -> list[Finding]:
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
            file=item.file, line=line, end_line=end_line, message=item.message,
            recommendation=item.recommendation, confidence=item.confidence))
    return out
