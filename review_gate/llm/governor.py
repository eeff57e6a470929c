"""The rate governor: every request of the run to one endpoint waits its turn in one queue.

An endpoint is a base URL and the *name* of the variable holding its key (never the key), so
the llm agents of a run that share an account share its limits. A request goes out when

- fewer than ``max_concurrency`` requests are in flight (default 4);
- the config budgets ``rpm`` and ``tpm`` have room over the last 60 s (a request costs its
  prompt estimate plus its ``max_output_tokens``, as OpenAI counts it);
- what the server last said leaves room: OpenAI's ``x-ratelimit-remaining-*`` and
  ``-reset-*``, Anthropic's ``anthropic-ratelimit-*`` (requests, tokens, input and output
  tokens). The remaining count is read conservatively: every request sent after the one that
  brought the answer is taken as not yet counted by the server. When it is short, the request
  waits for the reset;
- the endpoint is not paused: a 429 pauses every request to it until its Retry-After.

Waiting is cancellable, so the agent's deadline still bounds it, and a caller that gives a
deadline gets ``NoTurn`` as soon as its turn cannot come before the deadline less the time an
answer takes (the slowest seen on the endpoint, or the caller's reserve).

Agents that share an endpoint but set different limits get the strictest of them.
"""

from __future__ import annotations

import contextlib
import math
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

import anyio

from review_gate.models import LlmAgent

DEFAULT_CONCURRENCY = 4  # a local server's usual parallel slots (Ollama, llama-server), a small burst for a paid tier
WINDOW_S = 60.0  # rpm and tpm are per minute
DEFAULT_PAUSE_S = 1.0  # after a 429 that says neither Retry-After nor a reset
DIMENSIONS = ("requests", "tokens", "input_tokens", "output_tokens")


class NoTurn(Exception):
    """The request's turn cannot come early enough to be answered before the deadline."""


# ---------------------------------------------------------------------------------------------
# Reading the headers
# ---------------------------------------------------------------------------------------------

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
          "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)")
_RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-]\d\d:?\d\d)?")
EPOCH_FROM = 1e9  # a bare number this large is a Unix time, not a number of seconds


def parse_duration(text: str) -> float | None:
    """Seconds in a Go-style duration ("1s", "6m0s", "20ms", "1h2m3.5s") or a bare number of
    seconds ("2", "0.5"); None for anything else, a negative value included."""
    text = text.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pos, seconds = 0, 0.0
        for match in _PART.finditer(text):
            if match.start() != pos:
                return None
            seconds += float(match.group(1)) * _UNITS[match.group(2)]
            pos = match.end()
        if pos != len(text):
            return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def parse_timestamp(text: str) -> float | None:
    """The Unix time of an RFC 3339 timestamp ("2024-05-01T12:00:03Z", with an optional
    fraction and offset), None when it is not one."""
    match = _RFC3339.fullmatch(text.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    zone = match.group(8) or "Z"
    offset = timedelta(0)
    if zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    try:
        when = datetime(year, month, day, hour, minute, second, tzinfo=timezone(offset))
    except ValueError:
        return None
    return when.timestamp() + float(match.group(7) or 0)


def seconds_until(text: str, wall: float) -> float | None:
    """Seconds from ``wall`` (Unix time) until a reset given as a duration, a number of
    seconds, a Unix time or an RFC 3339 timestamp; None when it cannot be read."""
    seconds = parse_duration(text)
    if seconds is not None:
        return max(0.0, seconds - wall) if seconds >= EPOCH_FROM else seconds
    at = parse_timestamp(text)
    return None if at is None else max(0.0, at - wall)


def retry_after(headers: Mapping[str, str], wall: float) -> float | None:
    """Seconds a 429 asks to wait: retry-after-ms, or Retry-After in seconds or as an HTTP date."""
    millis = parse_duration(headers.get("retry-after-ms", ""))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after", "")
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - wall)
    except (TypeError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Reading:
    """What one answer says of one budget."""

    dimension: str  # one of DIMENSIONS
    remaining: int
    limit: int | None
    reset_in: float | None  # seconds until the budget is full again


def _count(value: str | None) -> int | None:
    try:
        return max(0, int(float(value))) if value is not None else None
    except (ValueError, OverflowError):
        return None


def read_limits(headers: Mapping[str, str], wall: float) -> list[Reading]:
    """The budgets an answer's headers report, OpenAI's and Anthropic's; the tighter one when a
    budget is reported twice. Header names are matched case-insensitively."""
    lower = {k.lower(): v for k, v in headers.items()}
    names = [(d, f"x-ratelimit-{{}}-{d}") for d in ("requests", "tokens")]
    names += [(d, f"anthropic-ratelimit-{d.replace('_', '-')}-{{}}") for d in DIMENSIONS]
    found: dict[str, Reading] = {}
    for dimension, pattern in names:
        remaining = _count(lower.get(pattern.format("remaining")))
        if remaining is None:
            continue
        reset = lower.get(pattern.format("reset"))
        reading = Reading(dimension, remaining, _count(lower.get(pattern.format("limit"))),
                          seconds_until(reset, wall) if reset else None)
        if dimension not in found or reading.remaining < found[dimension].remaining:
            found[dimension] = reading
    return list(found.values())


# ---------------------------------------------------------------------------------------------
# The budgets
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    rpm: int | None = None
    tpm: int | None = None
    max_concurrency: int | None = None

    def tighter(self, other: Limits) -> Limits:
        def least(a: int | None, b: int | None) -> int | None:
            return b if a is None else a if b is None else min(a, b)

        return Limits(least(self.rpm, other.rpm), least(self.tpm, other.tpm),
                      least(self.max_concurrency, other.max_concurrency))


@dataclass(frozen=True)
class Need:
    """What one request costs: its prompt estimate and the most it may answer."""

    tokens_in: int
    tokens_out: int

    def cost(self, dimension: str) -> int:
        return {"requests": 1, "tokens": self.tokens_in + self.tokens_out, "input_tokens": self.tokens_in,
                "output_tokens": self.tokens_out}[dimension]


class Window:
    """A budget over the last ``span`` seconds (rpm, tpm), as a log of what was sent."""

    def __init__(self, budget: int, span: float = WINDOW_S) -> None:
        self.budget = budget
        self.span = span
        self.log: deque[tuple[float, int]] = deque()

    def wait(self, cost: int, now: float) -> float:
        """Seconds until ``cost`` fits. A request larger than the whole budget waits for an
        empty window, then goes alone: it can never fit, and must not wait forever."""
        while self.log and self.log[0][0] <= now - self.span:
            self.log.popleft()
        used = sum(c for _, c in self.log)
        if used + cost <= self.budget or not self.log:
            return 0.0
        if cost >= self.budget:
            return self.log[-1][0] + self.span - now
        for at, spent in self.log:
            used -= spent
            if used + cost <= self.budget:
                return at + self.span - now
        return self.log[-1][0] + self.span - now  # not reached: an empty log fits

    def add(self, cost: int, now: float) -> None:
        self.log.append((now, cost))


@dataclass
class Known:
    """A server's last word on one budget: ``remaining`` after the request whose running total
    of sends was ``base``, until ``reset_at``."""

    remaining: int
    base: int
    reset_at: float | None
    limit: int | None


@dataclass
class Ticket:
    """One request's turn; ``observe`` its answer."""

    governor: Governor
    sent: dict[str, int]  # the governor's running totals, this request included
    started: float

    def observe(self, headers: Mapping[str, str], status: int, now: float | None = None) -> None:
        self.governor.observe(self, headers, status, now)


class Governor:
    """The queue of one endpoint. ``slot`` is the way in; the rest is its bookkeeping, with the
    time passed in so that it can be tested with a fake clock."""

    def __init__(self, name: str, limits: Limits = Limits()) -> None:
        self.name = name
        self.limits = Limits()
        self.rpm: Window | None = None
        self.tpm: Window | None = None
        self.in_flight = 0
        self.sent = dict.fromkeys(DIMENSIONS, 0)
        self.known: dict[str, Known] = {}
        self.paused_until = -math.inf
        self.slowest = 0.0  # seconds, the slowest answer seen
        self.rejected = 0  # 429s received
        self._changed: anyio.Event | None = None
        self.tighten(limits)

    @property
    def concurrency(self) -> int:
        return self.limits.max_concurrency or DEFAULT_CONCURRENCY

    def tighten(self, limits: Limits) -> None:
        self.limits = self.limits.tighter(limits)
        for name in ("rpm", "tpm"):
            budget = getattr(self.limits, name)
            window = getattr(self, name)
            if budget is not None and window is None:
                setattr(self, name, Window(budget))
            elif budget is not None and window is not None:
                window.budget = budget
        self._wake()

    # -- the pure part ---------------------------------------------------------------------

    def delay(self, need: Need, now: float) -> float:
        """Seconds until every budget has room for ``need`` (concurrency aside); ``math.inf``
        when only an answer in flight can tell."""
        self._expire(now)
        waits = [self.paused_until - now]
        for dimension, known in self.known.items():
            cost = need.cost(dimension)
            if known.limit is not None and cost > known.limit:
                continue  # it can never fit; the server will say what it thinks of it
            if known.remaining - (self.sent[dimension] - known.base) >= cost:
                continue
            if known.reset_at is not None:
                waits.append(known.reset_at - now)
            elif self.in_flight:
                waits.append(math.inf)
            # else: nothing in flight will say more; send, and let the server decide
        if self.rpm is not None:
            waits.append(self.rpm.wait(1, now))
        if self.tpm is not None:
            waits.append(self.tpm.wait(need.cost("tokens"), now))
        return max(0.0, *waits)

    def take(self, need: Need, now: float) -> Ticket:
        self._expire(now)
        self.in_flight += 1
        for dimension in DIMENSIONS:
            self.sent[dimension] += need.cost(dimension)
        if self.rpm is not None:
            self.rpm.add(1, now)
        if self.tpm is not None:
            self.tpm.add(need.cost("tokens"), now)
        return Ticket(self, dict(self.sent), now)

    def release(self, ticket: Ticket) -> None:
        self.in_flight -= 1
        self._wake()

    def observe(self, ticket: Ticket, headers: Mapping[str, str], status: int, now: float | None = None) -> None:
        """Read an answer: what the server says of its budgets, how long it took, a 429's pause."""
        now = anyio.current_time() if now is None else now
        wall = time.time()
        readings = read_limits(headers, wall)
        for reading in readings:
            reset_at = now + reading.reset_in if reading.reset_in is not None else None
            known = self.known.get(reading.dimension)
            if reset_at is not None and reset_at <= now:
                continue  # full again already: no constraint to add
            if known is not None and known.base > ticket.sent[reading.dimension]:
                continue  # older news than what is known: an answer to an earlier request, come late
            self.known[reading.dimension] = Known(reading.remaining, ticket.sent[reading.dimension], reset_at,
                                                  reading.limit)
        if status == 429:
            self.rejected += 1
            pause = retry_after({k.lower(): v for k, v in headers.items()}, wall)
            if pause is None:
                empty = [r.reset_in for r in readings if r.remaining == 0 and r.reset_in is not None]
                pause = max(empty, default=DEFAULT_PAUSE_S)
            self.paused_until = max(self.paused_until, now + pause)
        elif status < 400:
            self.slowest = max(self.slowest, now - ticket.started)
        self._wake()

    def _expire(self, now: float) -> None:
        """A budget past its reset is full again: its limit from here on, or unknown."""
        for dimension, known in list(self.known.items()):
            if known.reset_at is not None and now >= known.reset_at:
                if known.limit is None:
                    del self.known[dimension]
                else:
                    self.known[dimension] = Known(known.limit, self.sent[dimension], None, known.limit)

    # -- the async part --------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def slot(self, tokens_in: int, tokens_out: int, *, deadline: float | None = None,
                   reserve: float = 0.0) -> AsyncIterator[Ticket]:
        """Wait for the turn of a request of ``tokens_in`` + ``tokens_out`` tokens; hold it for
        the ``async with`` body, which sends and calls ``ticket.observe``.

        With ``deadline`` (anyio's clock), raises NoTurn when the turn cannot come before
        ``deadline`` less the larger of ``reserve`` and the slowest answer seen.
        """
        need = Need(max(0, tokens_in), max(0, tokens_out))
        ticket = await self._turn(need, deadline, reserve)
        try:
            yield ticket
        finally:
            self.release(ticket)

    async def _turn(self, need: Need, deadline: float | None, reserve: float) -> Ticket:
        while True:
            now = anyio.current_time()
            wait = self.delay(need, now)
            latest = math.inf if deadline is None else deadline - max(reserve, self.slowest)
            if now >= latest or now + wait > latest:
                raise NoTurn(f"no turn at {self.name} in time for the deadline")
            if wait == 0 and self.in_flight < self.concurrency:
                return self.take(need, now)
            if self._changed is None:
                self._changed = anyio.Event()
            changed = self._changed
            with anyio.move_on_after(min(wait if wait > 0 else math.inf, latest - now)):
                await changed.wait()

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None


class Governors:
    """The governors of one dispatch, one per endpoint, made as agents ask for them. Built with
    the registry's agents, so that each endpoint has the strictest limits of its agents from
    the first request on, whichever agent comes first."""

    def __init__(self, agents: Iterable[object] = ()) -> None:
        self._by_key: dict[tuple[str, str], Governor] = {}
        for agent in agents:
            if isinstance(agent, LlmAgent) and agent.enabled:
                self.get(agent)

    def get(self, spec: LlmAgent) -> Governor:
        key = (spec.url, spec.api_key_env or "")
        limits = Limits(spec.rpm, spec.tpm, spec.max_concurrency)
        governor = self._by_key.get(key)
        if governor is None:
            governor = self._by_key[key] = Governor(spec.url, limits)
        elif governor.limits.tighter(limits) != governor.limits:
            governor.tighten(limits)
        return governor
