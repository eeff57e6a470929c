"""The one way review-gate talks to a model, for the llm agents, the gap detector and
``agents check`` alike: which provider speaks which wire format, the API key, one request (sent
in its turn at the endpoint's rate governor, its answer read with a size limit, HTTP errors
mapped to faults), one question asked twice at most, and what the tokens cost.

    >>> sorted(PROVIDERS)
    ['anthropic', 'openai']
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from review_gate.errors import AgentFault, TransientAgentFault
from review_gate.llm import chunking, prompt
from review_gate.llm.answer import UnusableAnswer
from review_gate.llm.governor import Governor, Governors, Ticket
from review_gate.llm.providers import anthropic, openai
from review_gate.llm.providers.common import Dialog, Reply, Unusable, check_status, decode, read_bounded
from review_gate.models import LlmAgent, Price, Usage

if TYPE_CHECKING:
    import httpx

MARGIN_TOKENS = 64  # what the token estimate may be off by for the fixed parts of a request
RESERVE_S = 10.0  # time an answer is expected to take, before one was seen (at most a quarter of the deadline)
T = TypeVar("T")


class Provider(Protocol):
    """A wire format: the request for one question, and the reply read from the answer."""

    def request(self, spec: LlmAgent, key: str | None, system: str, user: str, *,
                schema: dict[str, Any] | None = None, name: str = ...,
                dialog: Dialog | None = None) -> tuple[str, dict[str, str], dict[str, Any]]:
        ...

    def reply(self, data: dict[str, Any], raw: str, *, name: str = ..., tools: bool = False) -> Reply: ...


PROVIDERS: dict[str, Provider] = {"openai": openai, "anthropic": anthropic}


def new_client(concurrency: int = 8) -> httpx.AsyncClient:
    """The HTTP client of a run: no overall timeout (each agent has its deadline), no redirects
    (a key must not follow one to another host), the proxy settings of the environment."""
    import httpx

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=max(20, concurrency))
    return httpx.AsyncClient(timeout=httpx.Timeout(None, connect=30), limits=limits, follow_redirects=False,
                             trust_env=True)


def api_key(spec: LlmAgent) -> str | None:
    """The agent's key, read from the environment variable it names; None for a server that needs none."""
    if not spec.api_key_env:
        return None
    key = os.environ.get(spec.api_key_env)
    if not key:
        raise AgentFault(f"{spec.api_key_env} is not set")
    return key


def missing_key(spec: LlmAgent) -> str | None:
    """Why the agent cannot run at all: its key variable is not set."""
    if spec.api_key_env and not os.environ.get(spec.api_key_env):
        return f"{spec.api_key_env} is not set"
    return None


def scrub(text: str, key: str | None) -> str:
    return text.replace(key, "[redacted]") if key and len(key) >= 4 else text


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


def with_spent(fault: AgentFault, usage: Usage) -> AgentFault:
    """``fault``, carrying ``usage`` on top of what it carried already."""
    fault.spent = usage + fault.spent if fault.spent is not None else usage
    return fault


@dataclass(frozen=True)
class Pace:
    """Whose turn a request waits for, and until when it is worth sending (anyio's clock)."""

    governor: Governor
    deadline: float | None = None
    reserve: float = 0.0


def pace(governors: Governors | None, spec: LlmAgent, deadline: float | None) -> Pace | None:
    if governors is None:
        return None
    import anyio

    governor = governors.get(spec)
    if deadline is None:
        return Pace(governor)
    left = deadline - anyio.current_time()
    return Pace(governor, deadline, max(0.0, min(RESERVE_S, left / 4)))


def _turn(pacing: Pace | None, spec: LlmAgent, body: dict[str, Any]) -> contextlib.AbstractAsyncContextManager[
        Ticket | None]:
    """The request's turn at its endpoint; NoTurn when it cannot come in time."""
    if pacing is None:
        return contextlib.nullcontext()
    tokens_in = chunking.estimate_tokens(len(json.dumps(body))) + MARGIN_TOKENS  # the schema counts too
    return pacing.governor.slot(tokens_in, spec.max_output_tokens, deadline=pacing.deadline, reserve=pacing.reserve)


async def send(client: httpx.AsyncClient, spec: LlmAgent, key: str | None, system: str, user: str, *,
               schema: dict[str, Any] | None = None, name: str | None = None, pacing: Pace | None = None,
               dialog: Dialog | None = None) -> Reply:
    """One request; transport and HTTP errors mapped to AgentFault / TransientAgentFault.
    ``schema`` and ``name``: another answer schema than the findings one (the gap detector's, a
    packed review's). ``pacing``: wait for a turn at the endpoint's rate governor (NoTurn when
    it comes too late). ``dialog``: a conversation with tools, whose reply may be tool calls."""
    import httpx

    provider = PROVIDERS[spec.provider]
    named: dict[str, Any] = {"name": name} if name else {}
    if dialog is not None:  # without one, the plain question
        named["dialog"] = dialog
    url, headers, body = provider.request(spec, key, system, user, schema=schema, **named)
    async with _turn(pacing, spec, body) as ticket:
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
    return provider.reply(data, response.text, **({"name": name} if name else {}), tools=dialog is not None)


@dataclass
class Asked(Generic[T]):
    """A question's usable answer, read, with everything the attempts used and said."""

    answer: T
    usage: Usage
    raw: str


async def ask(client: httpx.AsyncClient, spec: LlmAgent, key: str | None, system: str, user: str,
              prices: Mapping[str, Price], read: Callable[[str | dict[str, Any]], T], *,
              schema: dict[str, Any] | None = None, name: str | None = None, pacing: Pace | None = None) -> Asked[T]:
    """Ask, and read the answer with ``read``; an answer that cannot be used (cut off, empty, not
    what ``read`` takes) is asked for again once with the reason, then the question fails. The
    tokens of every attempt are counted, on the fault too."""
    usage = Usage()
    raws: list[str] = []
    error = ""
    for attempt in range(2):
        message = user if attempt == 0 else user + prompt.retry_note(error, _answer_key(schema))
        try:
            reply = await send(client, spec, key, system, message, schema=schema, name=name, pacing=pacing)
        except Unusable as exc:
            usage += spent(exc.reply, spec.model, prices)
            raws.append(exc.reply.raw)
            error = str(exc)
            continue
        except AgentFault as fault:
            raise with_spent(fault, usage) from None
        usage += spent(reply, spec.model, prices)
        raws.append(reply.raw)
        try:
            assert reply.answer is not None
            return Asked(read(reply.answer), usage, "\n".join(raws))
        except UnusableAnswer as exc:
            error = str(exc)
    raise AgentFault(f"no usable answer after a retry: {error}", spent=usage)


def _answer_key(schema: dict[str, Any] | None) -> str:
    """The one list an answer's object holds, as the schema names it (findings by default)."""
    required = (schema or {}).get("required") or []
    return str(required[0]) if len(required) == 1 else "findings"


@dataclass
class CheckResult:
    ok: bool
    latency_s: float
    model: str | None
    structured: bool
    detail: str


CHECK_SYSTEM = "You are checking that a code-review tool can reach you. Answer with the schema."
CHECK_USER = 'Report exactly one finding: severity "info", message "ok", every other field null.'


async def check(spec: LlmAgent, client: httpx.AsyncClient) -> CheckResult:
    """One tiny request: is the endpoint reachable, which model answers, does structured output work."""
    import time

    from review_gate.llm.answer import parse_answer

    key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
    started = time.monotonic()
    try:
        reply = await send(client, spec, key, CHECK_SYSTEM, CHECK_USER)
    except Unusable as exc:
        return CheckResult(False, time.monotonic() - started, exc.reply.model, False, scrub(str(exc), key))
    except AgentFault as exc:
        return CheckResult(False, time.monotonic() - started, None, False, scrub(str(exc), key))
    latency = time.monotonic() - started
    try:
        findings = parse_answer(reply.answer or "").findings
    except UnusableAnswer as exc:
        return CheckResult(False, latency, reply.model, False, f"answer not usable: {exc}")
    detail = f"{len(findings)} finding(s) in the answer, {reply.tokens_in}+{reply.tokens_out} tokens"
    return CheckResult(True, latency, reply.model, reply.structured, detail)
