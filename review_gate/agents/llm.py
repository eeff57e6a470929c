"""Agent kind ``llm``: a model behind an HTTP API (OpenAI-compatible or Anthropic).

The scope is rendered (``llm.prompt``), split to fit ``max_input_tokens`` (``llm.chunking``)
and the chunks are sent over the dispatch's shared HTTP client, each when the endpoint's rate
governor (``llm.governor``) gives it a turn; the findings of the chunks are merged and their
tokens summed. Near the agent's deadline it stops with what it has: a chunk whose turn comes
too late to be answered is not sent, and once a chunk is answered, those still in flight at
the deadline are given up; their files are reported unreviewed. An answer that cannot be used
is asked for again once, with the reason appended to the prompt; a second unusable answer
fails the agent. An answer with some malformed findings is not unusable: ``llm.answer`` keeps
what is good and notes what it repaired or dropped. The tokens of every attempt, failed ones
too, are reported (a fault carries them in ``spent``), with the cached and reasoning tokens the
provider names.
Transient HTTP faults (connect errors, timeouts, 408/409/429/5xx, 529) become
TransientAgentFault with the server's Retry-After, so dispatch retries them within the deadline.

The API key is read from the environment variable ``api_key_env`` names, at call time, and is
scrubbed from every message this module raises.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import anyio

from review_gate.agents.base import AgentContext, AgentOutput, AgentSpec, AgentTask
from review_gate.config.locations import builtin_dir
from review_gate.errors import AgentFault, TransientAgentFault
from review_gate.llm import chunking, prompt
from review_gate.llm.answer import ParsedAnswer, UnusableAnswer, parse_answer
from review_gate.llm.context import widen
from review_gate.llm.governor import Governor, NoTurn, Ticket
from review_gate.llm.providers import anthropic, openai
from review_gate.llm.providers.common import Reply, Unusable, check_status, decode, read_bounded
from review_gate.llm.schema import findings_schema, format_note
from review_gate.models import LlmAgent, Price, Usage
from review_gate.models.report import bounded_notes

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    import httpx

needs_network = True

PROVIDERS: dict[str, ModuleType] = {"openai": openai, "anthropic": anthropic}
MARGIN_TOKENS = 64  # what the token estimate may be off by for the fixed parts of a request
CUTOFF_S = 0.5  # the agent returns what it has this long before its deadline (at most a tenth of it)
RESERVE_S = 10.0  # time an answer is expected to take, before one was seen (at most a quarter of the deadline)


def unavailable(spec: AgentSpec) -> str | None:
    """Why the agent cannot run at all: its key variable is not set."""
    if isinstance(spec, LlmAgent) and spec.api_key_env and not os.environ.get(spec.api_key_env):
        return f"{spec.api_key_env} is not set"
    return None


def instructions_path(spec: LlmAgent, config_dir: str | None) -> Path | None:
    """The instructions file: relative to the config directory, else to the built-in one."""
    for base in ([Path(config_dir)] if config_dir else []) + [builtin_dir("config")]:
        candidate = base / spec.instructions
        if candidate.is_file():
            return candidate
    return None


def cost(model: str, tokens_in: int, tokens_out: int, prices: Mapping[str, Price], *, cached_in: int = 0,
         cache_write_in: int = 0) -> float:
    """USD for these tokens; cached input (read or written) at its own rate when the price names one."""
    price = prices.get(model)
    if price is None:
        return 0.0
    plain = max(0, tokens_in - cached_in - cache_write_in)
    cached_rate = price.input_per_mtok if price.cached_input_per_mtok is None else price.cached_input_per_mtok
    write_rate = price.input_per_mtok if price.cache_write_per_mtok is None else price.cache_write_per_mtok
    return (plain * price.input_per_mtok + cached_in * cached_rate + cache_write_in * write_rate
            + tokens_out * price.output_per_mtok) / 1_000_000


def spent(reply: Reply, model: str, prices: Mapping[str, Price]) -> Usage:
    """What one reply used, priced."""
    return Usage(tokens_in=reply.tokens_in, tokens_out=reply.tokens_out,
                 cost_usd=cost(model, reply.tokens_in, reply.tokens_out, prices, cached_in=reply.cached_in,
                               cache_write_in=reply.cache_write_in),
                 cached_tokens_in=reply.cached_in, cache_write_tokens_in=reply.cache_write_in,
                 reasoning_tokens=reply.reasoning_out)


@dataclass
class Request:
    system: str
    users: list[str]
    files: list[list[str]]
    unreviewed: list[str]


def build(spec: LlmAgent, task: AgentTask, context: AgentContext) -> Request:
    path = instructions_path(spec, context.config_dir)
    if path is None:
        raise AgentFault(f"instructions file {spec.instructions!r} not found")
    system = prompt.system_message(path.read_text(encoding="utf-8"), task.rules, context.standards)
    boundary = prompt.new_boundary()
    # json_object and none: the provider adds the schema to the system message
    added = 0 if spec.answer_format == "json_schema" else len(format_note(findings_schema())) + 2
    fixed = chunking.estimate_tokens(len(system) + added + prompt.preamble_size(boundary)) + MARGIN_TOKENS
    if fixed >= spec.max_input_tokens:
        raise AgentFault(f"its instructions, rules and standards alone take about {fixed} tokens, "
                         f"more than max_input_tokens ({spec.max_input_tokens})")
    plan = chunking.split(task.files, spec.max_input_tokens - fixed, widen(task.files, task.repo_root))
    users = [prompt.user_message(c.sections, boundary) for c in plan.chunks]
    return Request(system=system, users=users, files=[c.files for c in plan.chunks], unreviewed=plan.unreviewed)


def estimate(spec: AgentSpec, task: AgentTask, context: AgentContext) -> tuple[int, float]:
    """The most tokens (and their cost) the agent may spend: every prompt plus a full answer each."""
    assert isinstance(spec, LlmAgent)
    try:
        request = build(spec, task, context)
    except AgentFault:
        return 0, 0.0
    tokens_in = sum(chunking.estimate_tokens(len(request.system) + len(u)) for u in request.users)
    tokens_out = spec.max_output_tokens * len(request.users)
    return tokens_in + tokens_out, cost(spec.model, tokens_in, tokens_out, context.prices)


def _key(spec: LlmAgent) -> str | None:
    if not spec.api_key_env:
        return None
    key = os.environ.get(spec.api_key_env)
    if not key:
        raise AgentFault(f"{spec.api_key_env} is not set")
    return key


def _scrub(text: str, key: str | None) -> str:
    return text.replace(key, "[redacted]") if key and len(key) >= 4 else text


@dataclass(frozen=True)
class Pace:
    """Whose turn a request waits for, and until when it is worth sending (anyio's clock)."""

    governor: Governor
    deadline: float | None = None
    reserve: float = 0.0


def _pace(spec: LlmAgent, task: AgentTask, context: AgentContext) -> Pace | None:
    if context.governors is None:
        return None
    governor = context.governors.get(spec)
    if task.deadline is None:
        return Pace(governor)
    left = task.deadline - anyio.current_time()
    return Pace(governor, task.deadline, max(0.0, min(RESERVE_S, left / 4)))


def _turn(pace: Pace | None, spec: LlmAgent, body: dict[str, Any]) -> contextlib.AbstractAsyncContextManager[
        Ticket | None]:
    """The request's turn at its endpoint; NoTurn when it cannot come in time."""
    if pace is None:
        return contextlib.nullcontext()
    tokens_in = chunking.estimate_tokens(len(json.dumps(body))) + MARGIN_TOKENS  # the schema counts too
    return pace.governor.slot(tokens_in, spec.max_output_tokens, deadline=pace.deadline, reserve=pace.reserve)


async def send(client: httpx.AsyncClient, spec: LlmAgent, key: str | None, system: str, user: str, *,
               schema: dict[str, Any] | None = None, name: str | None = None, pace: Pace | None = None) -> Reply:
    """One request; transport and HTTP errors mapped to AgentFault / TransientAgentFault.
    ``schema`` and ``name``: another answer schema than the findings one (the gap detector's).
    ``pace``: wait for a turn at the endpoint's rate governor (NoTurn when it comes too late)."""
    import httpx

    provider = PROVIDERS[spec.provider]
    named = {"name": name} if name else {}
    url, headers, body = provider.request(spec, key, system, user, schema=schema, **named)
    async with _turn(pace, spec, body) as ticket:
        try:
            async with client.stream("POST", url, headers=headers, json=body) as streamed:
                response = await read_bounded(streamed, spec.provider)
        except httpx.TimeoutException as exc:
            raise TransientAgentFault(f"{spec.provider} API at {spec.url}: timed out ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise TransientAgentFault(f"{spec.provider} API at {spec.url}: {type(exc).__name__}: {exc}") from exc
        if ticket is not None:
            ticket.observe(response.headers, response.status_code)
    check_status(response, spec.provider, spec)
    data = decode(response, spec.provider)
    reply: Reply = provider.reply(data, response.text, **named)
    return reply


@dataclass
class ChunkResult:
    parsed: ParsedAnswer
    usage: Usage
    raw: str


def _with_spent(fault: AgentFault, usage: Usage) -> AgentFault:
    """``fault``, carrying ``usage`` on top of what it carried already."""
    fault.spent = usage + fault.spent if fault.spent is not None else usage
    return fault


async def _review_chunk(client: httpx.AsyncClient, spec: LlmAgent, key: str | None, system: str,
                        user: str, prices: Mapping[str, Price], pace: Pace | None = None) -> ChunkResult:
    usage = Usage()
    raws: list[str] = []
    error = ""
    for attempt in range(2):
        message = user if attempt == 0 else user + prompt.retry_note(error)
        try:
            reply = await send(client, spec, key, system, message, pace=pace)
        except Unusable as exc:
            usage += spent(exc.reply, spec.model, prices)
            raws.append(exc.reply.raw)
            error = str(exc)
            continue
        except AgentFault as fault:
            raise _with_spent(fault, usage) from None
        usage += spent(reply, spec.model, prices)
        raws.append(reply.raw)
        try:
            assert reply.answer is not None
            return ChunkResult(parse_answer(reply.answer), usage, "\n".join(raws))
        except UnusableAnswer as exc:
            error = str(exc)
    raise AgentFault(f"no usable answer after a retry: {error}", spent=usage)


async def review(spec: AgentSpec, task: AgentTask, context: AgentContext) -> AgentOutput:
    assert isinstance(spec, LlmAgent)
    if context.client is None:
        raise AgentFault("no HTTP client (the run is offline)")
    key = _key(spec)
    try:
        return await _review(spec, task, context, context.client, key)
    except TransientAgentFault as fault:
        raise TransientAgentFault(_scrub(str(fault), key), retry_after=fault.retry_after, spent=fault.spent) from None
    except AgentFault as fault:
        raise AgentFault(_scrub(str(fault), key), spent=fault.spent) from None


async def _schedule(users: list[str], deadline: float | None, review_one: Callable[[str], Awaitable[ChunkResult]],
                    ) -> tuple[list[ChunkResult | None], list[AgentFault]]:
    """Review every chunk concurrently (the governor paces the requests); a chunk whose turn
    comes too late stays None. The first fault cancels the others. Just before ``deadline``,
    once a chunk is answered, the ones still in flight are given up (None); while none is,
    the deadline takes its course and the agent times out."""
    results: list[ChunkResult | None] = [None] * len(users)
    faults: list[AgentFault] = []
    chunks = anyio.CancelScope()

    async def one(index: int, user: str) -> None:
        try:
            results[index] = await review_one(user)
        except NoTurn:
            pass
        except AgentFault as fault:
            faults.append(fault)
            chunks.cancel()

    async def cut_short(at: float) -> None:
        await anyio.sleep_until(at)
        if any(r is not None for r in results):
            chunks.cancel()

    async with anyio.create_task_group() as watch:
        if deadline is not None:
            left = deadline - anyio.current_time()
            watch.start_soon(cut_short, deadline - max(0.0, min(CUTOFF_S, left / 10)))
        with chunks:
            async with anyio.create_task_group() as group:
                for index, user in enumerate(users):
                    group.start_soon(one, index, user)
        watch.cancel_scope.cancel()
    return results, faults


async def _review(spec: LlmAgent, task: AgentTask, context: AgentContext, client: httpx.AsyncClient,
                  key: str | None) -> AgentOutput:
    request = build(spec, task, context)
    pace = _pace(spec, task, context)
    results, faults = await _schedule(
        request.users, task.deadline,
        lambda user: _review_chunk(client, spec, key, request.system, user, context.prices, pace))
    done = [r for r in results if r is not None]
    usage = sum((r.usage for r in done), Usage())
    if faults:
        # Every chunk's tokens were billed, those of the chunks that finished and of the failed one.
        usage = sum((f.spent for f in faults if f.spent is not None), usage)
        permanent = [f for f in faults if not isinstance(f, TransientAgentFault)]
        if permanent:
            permanent[0].spent = usage
            raise permanent[0]
        waits = [f.retry_after for f in faults if isinstance(f, TransientAgentFault) and f.retry_after is not None]
        raise TransientAgentFault(str(faults[0]), retry_after=max(waits) if waits else None, spent=usage)
    if request.users and not done:
        raise AgentFault(f"none of its {len(request.users)} request(s) could be sent early enough to be answered "
                         f"before its deadline: {spec.url} is at its rate limits or answering too slowly", spent=usage)
    missed = [path for r, files in zip(results, request.files, strict=True) if r is None for path in files]
    unreviewed = list(dict.fromkeys([*request.unreviewed, *missed]))
    scope = {f.path for f in task.files}
    kept = [f for r in done for f in r.parsed.findings]
    findings = [f for f in kept if f.file is None or f.file in scope]
    return AgentOutput(
        findings=findings, **usage.rounded().model_dump(),
        unreviewed=unreviewed, out_of_scope=len(kept) - len(findings),
        dropped_findings=sum(r.parsed.dropped for r in done),
        notes=bounded_notes([n for r in done for n in r.parsed.notes]),
        raw=_scrub("\n".join(r.raw for r in done), key) or None)


@dataclass
class CheckResult:
    ok: bool
    latency_s: float
    model: str | None
    structured: bool
    detail: str


CHECK_SYSTEM = "You are checking that a code-review tool can reach you. Answer with the schema."
CHECK_USER = ('Report exactly one finding: severity "info", message "ok", every other field null.')


async def check(spec: LlmAgent, client: httpx.AsyncClient) -> CheckResult:
    """One tiny request: is the endpoint reachable, which model answers, does structured output work."""
    import time

    key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
    started = time.monotonic()
    try:
        reply = await send(client, spec, key, CHECK_SYSTEM, CHECK_USER)
    except Unusable as exc:
        return CheckResult(False, time.monotonic() - started, exc.reply.model, False, _scrub(str(exc), key))
    except AgentFault as exc:
        return CheckResult(False, time.monotonic() - started, None, False, _scrub(str(exc), key))
    latency = time.monotonic() - started
    try:
        findings = parse_answer(reply.answer or "").findings
    except UnusableAnswer as exc:
        return CheckResult(False, latency, reply.model, False, f"answer not usable: {exc}")
    detail = f"{len(findings)} finding(s) in the answer, {reply.tokens_in}+{reply.tokens_out} tokens"
    return CheckResult(True, latency, reply.model, reply.structured, detail)


__all__ = ["check", "estimate", "needs_network", "review", "unavailable"]
