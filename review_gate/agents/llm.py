"""Agent kind ``llm``: a model behind an HTTP API (OpenAI-compatible or Anthropic).

The scope is rendered (``llm.prompt``), split to fit ``max_input_tokens`` (``llm.chunking``)
and every chunk is sent at once over the dispatch's shared HTTP client; the findings of the
chunks are merged and their tokens summed. An answer that cannot be used is asked for again
once, with the reason appended to the prompt; a second unusable answer fails the agent.
Transient HTTP faults (connect errors, timeouts, 408/409/429/5xx, 529) become
TransientAgentFault with the server's Retry-After, so dispatch retries them within the deadline.

The API key is read from the environment variable ``api_key_env`` names, at call time, and is
scrubbed from every message this module raises.
"""

from __future__ import annotations

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
from review_gate.llm.answer import UnusableAnswer, parse_answer
from review_gate.llm.context import widen
from review_gate.llm.providers import anthropic, openai
from review_gate.llm.providers.common import Reply, Unusable, check_status, decode, read_bounded
from review_gate.models import LlmAgent, Price, RawFinding

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

needs_network = True

PROVIDERS: dict[str, ModuleType] = {"openai": openai, "anthropic": anthropic}
MARGIN_TOKENS = 64  # what the token estimate may be off by for the fixed parts of a request


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


def cost(model: str, tokens_in: int, tokens_out: int, prices: Mapping[str, Price]) -> float:
    price = prices.get(model)
    if price is None:
        return 0.0
    return (tokens_in * price.input_per_mtok + tokens_out * price.output_per_mtok) / 1_000_000


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
    fixed = chunking.estimate_tokens(len(system) + prompt.preamble_size(boundary)) + MARGIN_TOKENS
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


async def send(client: httpx.AsyncClient, spec: LlmAgent, key: str | None, system: str, user: str, *,
               schema: dict[str, Any] | None = None, name: str | None = None) -> Reply:
    """One request; transport and HTTP errors mapped to AgentFault / TransientAgentFault.
    ``schema`` and ``name``: another answer schema than the findings one (the gap detector's)."""
    import httpx

    provider = PROVIDERS[spec.provider]
    named = {"name": name} if name else {}
    url, headers, body = provider.request(spec, key, system, user, schema=schema, **named)
    try:
        async with client.stream("POST", url, headers=headers, json=body) as streamed:
            response = await read_bounded(streamed, spec.provider)
    except httpx.TimeoutException as exc:
        raise TransientAgentFault(f"{spec.provider} API at {spec.url}: timed out ({type(exc).__name__})") from exc
    except httpx.TransportError as exc:
        raise TransientAgentFault(f"{spec.provider} API at {spec.url}: {type(exc).__name__}: {exc}") from exc
    check_status(response, spec.provider)
    data = decode(response, spec.provider)
    reply: Reply = provider.reply(data, response.text, **named)
    return reply


@dataclass
class ChunkResult:
    findings: list[RawFinding]
    tokens_in: int
    tokens_out: int
    raw: str


async def _review_chunk(client: httpx.AsyncClient, spec: LlmAgent, key: str | None, system: str,
                        user: str) -> ChunkResult:
    tokens_in = tokens_out = 0
    raws: list[str] = []
    error = ""
    for attempt in range(2):
        message = user if attempt == 0 else user + prompt.retry_note(error)
        try:
            reply = await send(client, spec, key, system, message)
        except Unusable as exc:
            tokens_in += exc.reply.tokens_in
            tokens_out += exc.reply.tokens_out
            raws.append(exc.reply.raw)
            error = str(exc)
            continue
        tokens_in += reply.tokens_in
        tokens_out += reply.tokens_out
        raws.append(reply.raw)
        try:
            assert reply.answer is not None
            return ChunkResult(parse_answer(reply.answer), tokens_in, tokens_out, "\n".join(raws))
        except UnusableAnswer as exc:
            error = str(exc)
    raise AgentFault(f"no usable answer after a retry: {error}")


async def review(spec: AgentSpec, task: AgentTask, context: AgentContext) -> AgentOutput:
    assert isinstance(spec, LlmAgent)
    if context.client is None:
        raise AgentFault("no HTTP client (the run is offline)")
    key = _key(spec)
    try:
        return await _review(spec, task, context, context.client, key)
    except TransientAgentFault as fault:
        raise TransientAgentFault(_scrub(str(fault), key), retry_after=fault.retry_after) from None
    except AgentFault as fault:
        raise AgentFault(_scrub(str(fault), key)) from None


async def _review(spec: LlmAgent, task: AgentTask, context: AgentContext, client: httpx.AsyncClient,
                  key: str | None) -> AgentOutput:
    request = build(spec, task, context)
    results: list[ChunkResult | None] = [None] * len(request.users)
    faults: list[AgentFault] = []

    async def one(index: int, user: str) -> None:
        try:
            results[index] = await _review_chunk(client, spec, key, request.system, user)
        except AgentFault as fault:
            faults.append(fault)
            group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        for index, user in enumerate(request.users):
            group.start_soon(one, index, user)
    if faults:
        permanent = [f for f in faults if not isinstance(f, TransientAgentFault)]
        if permanent:
            raise permanent[0]
        waits = [f.retry_after for f in faults if isinstance(f, TransientAgentFault) and f.retry_after is not None]
        raise TransientAgentFault(str(faults[0]), retry_after=max(waits) if waits else None)
    done = [r for r in results if r is not None]
    scope = {f.path for f in task.files}
    findings = [f for r in done for f in r.findings if f.file is None or f.file in scope]
    dropped = sum(len(r.findings) for r in done) - len(findings)
    tokens_in = sum(r.tokens_in for r in done)
    tokens_out = sum(r.tokens_out for r in done)
    return AgentOutput(
        findings=findings, tokens_in=tokens_in, tokens_out=tokens_out,
        cost_usd=round(cost(spec.model, tokens_in, tokens_out, context.prices), 6),
        unreviewed=request.unreviewed, out_of_scope=dropped,
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
        findings = parse_answer(reply.answer or "")
    except UnusableAnswer as exc:
        return CheckResult(False, latency, reply.model, False, f"answer not usable: {exc}")
    detail = f"{len(findings)} finding(s) in the answer, {reply.tokens_in}+{reply.tokens_out} tokens"
    return CheckResult(True, latency, reply.model, reply.structured, detail)


__all__ = ["check", "estimate", "needs_network", "review", "unavailable"]
