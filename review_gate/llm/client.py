"""The one way review-gate talks to a model, for the llm agents, the gap detector and
``agents check`` alike: which provider speaks which wire format, the API key, one request (sent
in its turn at the endpoint's rate governor, its answer read with a size limit, HTTP errors
mapped to faults, a transient fault retried as that request alone), one question asked twice
at most, and what the tokens cost.

    >>> sorted(PROVIDERS)
    ['anthropic', 'openai']
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
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
BACKOFF_S = (0.5, 10.0)  # a retry's wait without Retry-After: 0.5 s, doubling, at most 10 s (plus jitter)
JITTER_S = 0.5
MAX_REFUSALS = 10  # 429s one request may get (they do not use its retries: the governor paces them)
MAX_SCATTERED = 5  # faults one request may get while the endpoint answers others (they do not use its retries)
MIN_PAUSE_S = 0.05  # after a 429 that asks for no wait at all
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
    (a key must not follow one to another host), the proxy settings of the environment, the
    certificate store loaded by the first https request (``transport.verifying``)."""
    _import_httpx()
    import httpx

    from review_gate.llm.transport import verifying

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=max(20, concurrency))
    return httpx.AsyncClient(timeout=httpx.Timeout(None, connect=30), verify=verifying(), limits=limits,
                             follow_redirects=False, trust_env=True)


def _import_httpx() -> None:
    """httpx, imported without its command line. ``import httpx`` imports ``httpx._main`` (click,
    rich's console, progress and tables, pygments' lexers: 30-45 ms of CPU before the first
    request) whenever click is installed beside it, as the mcp extra does; no run uses httpx's
    command line. While httpx is first imported, that module reads as absent, and httpx takes
    its own path for a missing click: ``httpx.main`` says the command line cannot run."""
    if "httpx" in sys.modules:
        return
    sys.modules["httpx._main"] = None  # type: ignore[assignment]  # None: "not importable", as Python reads it
    try:
        import httpx  # noqa: F401
    finally:
        del sys.modules["httpx._main"]


def api_key(spec: LlmAgent) -> str | None:
    """The agent's key, read from the environment variable it names; None for a server that needs none."""
    if not spec.api_key_env:
        return None
    key = os.environ.get(spec.api_key_env)
    if not key:
        raise AgentFault(f"{spec.api_key_env} is not set")
    return key


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
                 reasoning_tokens=reply.reasoning_out,
                 unpriced_tokens=0 if model in prices else reply.tokens_in + reply.tokens_out)


def with_spent(fault: AgentFault, usage: Usage) -> AgentFault:
    """``fault``, carrying ``usage`` on top of what it carried already."""
    fault.spent = usage + fault.spent if fault.spent is not None else usage
    return fault


@dataclass(frozen=True)
class Pace:
    """Whose turn a request waits for, until when it is worth sending (anyio's clock), and how
    many more times it may be sent after a transient fault."""

    governor: Governor
    deadline: float | None = None
    reserve: float = 0.0
    retries: int = 0

    @property
    def latest(self) -> float | None:
        """The last moment a request may go out and still be answered before the deadline."""
        if self.deadline is None:
            return None
        return self.deadline - max(self.reserve, self.governor.slowest)


def pace(governors: Governors | None, spec: LlmAgent, deadline: float | None) -> Pace | None:
    if governors is None:
        return None
    import anyio

    governor = governors.get(spec)
    if deadline is None:
        return Pace(governor, retries=spec.retries)
    left = deadline - anyio.current_time()
    return Pace(governor, deadline, max(0.0, min(RESERVE_S, left / 4)), spec.retries)


def backoff(fault: TransientAgentFault, retry: int) -> float:
    """Seconds before the ``retry``-th retry (from 0): what the server asked for, else a
    doubling wait with jitter, so that requests that failed together do not come back together."""
    if fault.retry_after is not None:
        return max(0.0, fault.retry_after)
    return min(BACKOFF_S[1], BACKOFF_S[0] * 2.0 ** retry) + random.uniform(0, JITTER_S)


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
    it comes too late), and retry a transient fault (429, 5xx, a dropped connection, a timeout)
    by sending this request again, as often as ``pacing.retries`` and the deadline allow, after
    the wait the server asked for or a backoff; the fault that ends it carries its attempts.
    ``dialog``: a conversation with tools, whose reply may be tool calls."""
    import anyio

    faults = refusals = scattered = 0
    attempt = 0
    answered = pacing.governor.answered if pacing is not None else 0
    while True:
        attempt += 1
        try:
            reply = await _send_once(client, spec, key, system, user, schema=schema, name=name, pacing=pacing,
                                     dialog=dialog)
        except Unusable as exc:
            exc.reply.attempts = attempt
            raise
        except TransientAgentFault as fault:
            fault.attempts = attempt
            if pacing is None:
                raise
            # A 429 is the server's "later", which the governor's pause already holds every request
            # to; a fault while the endpoint answered other requests (since this one's last fault)
            # is scattered noise, not an outage. Each has an allowance of its own; any other
            # transient fault uses a retry.
            if fault.status == 429:
                refusals += 1
            elif pacing.governor.answered > answered and scattered < MAX_SCATTERED:
                scattered += 1
            else:
                faults += 1
            answered = pacing.governor.answered
            if faults > pacing.retries or refusals > MAX_REFUSALS:
                raise
            wait = max(MIN_PAUSE_S, backoff(fault, max(0, faults + scattered - 1)))
            latest = pacing.latest
            if latest is not None and anyio.current_time() + wait >= latest:
                raise  # the retry could not be answered before the deadline
            await anyio.sleep(wait)
            continue
        reply.attempts = attempt
        return reply


async def _send_once(client: httpx.AsyncClient, spec: LlmAgent, key: str | None, system: str, user: str, *,
                     schema: dict[str, Any] | None, name: str | None, pacing: Pace | None,
                     dialog: Dialog | None) -> Reply:
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
        except httpx.ConnectError as exc:  # nothing answers there: most often a wrong base_url or no network
            raise TransientAgentFault(unreachable(spec, exc)) from exc
        except httpx.TimeoutException as exc:
            raise TransientAgentFault(f"{spec.provider} API at {spec.url}: timed out ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise TransientAgentFault(f"{spec.provider} API at {spec.url}: {type(exc).__name__}: {exc}") from exc
        try:
            data = decode(response, spec.provider) if response.status_code < 400 else {}
        except TransientAgentFault:
            if ticket is not None:
                ticket.observe(response.headers, response.status_code, usable=False)
            raise
        if ticket is not None:
            ticket.observe(response.headers, response.status_code)
    check_status(response, spec.provider, spec)
    return provider.reply(data, response.text, **({"name": name} if name else {}), tools=dialog is not None)


def unreachable(spec: LlmAgent, exc: Exception) -> str:
    """What a connection that failed says: the endpoint, and what to check.

    >>> from review_gate.models import LlmAgent
    >>> spec = LlmAgent(id="rev", name="r", description="d", kind="llm", provider="openai", model="m",
    ...                 instructions="r.md", base_url="http://127.0.0.1:9/v1")
    >>> unreachable(spec, OSError("All connection attempts failed"))[:93]
    'openai API at http://127.0.0.1:9/v1: cannot connect (OSError: All connection attempts failed)'
    """
    return (f"{spec.provider} API at {spec.url}: cannot connect ({type(exc).__name__}: {exc}); check the agent's "
            f"base_url in review-agents.json (and the network, a proxy), then run `review-gate agents check "
            f"{spec.id}`")


@dataclass
class Asked(Generic[T]):
    """A question's usable answer, read, with everything the attempts used and said, and the
    most times one of its requests was sent."""

    answer: T
    usage: Usage
    raw: str
    attempts: int = 1


async def ask(client: httpx.AsyncClient, spec: LlmAgent, key: str | None, system: str, user: str,
              prices: Mapping[str, Price], read: Callable[[str | dict[str, Any]], T], *,
              schema: dict[str, Any] | None = None, name: str | None = None, pacing: Pace | None = None) -> Asked[T]:
    """Ask, and read the answer with ``read``; an answer that cannot be used (cut off, empty, not
    what ``read`` takes) is asked for again once with the reason, then the question fails. The
    tokens of every attempt are counted, on the fault too."""
    usage = Usage()
    raws: list[str] = []
    error = ""
    sent = 0  # times the question went out: asking again after an unusable answer counts, as the server saw it
    for attempt in range(2):
        message = user if attempt == 0 else user + prompt.retry_note(error, _answer_key(schema))
        try:
            reply = await send(client, spec, key, system, message, schema=schema, name=name, pacing=pacing)
        except Unusable as exc:
            usage += spent(exc.reply, spec.model, prices)
            raws.append(exc.reply.raw)
            sent += exc.reply.attempts
            error = str(exc)
            continue
        except AgentFault as fault:
            fault.attempts += sent
            raise with_spent(fault, usage) from None
        usage += spent(reply, spec.model, prices)
        raws.append(reply.raw)
        sent += reply.attempts
        try:
            assert reply.answer is not None
            return Asked(read(reply.answer), usage, "\n".join(raws), sent)
        except UnusableAnswer as exc:
            error = str(exc)
    raise AgentFault(f"no usable answer after a retry: {error}", spent=usage, attempts=sent)


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
