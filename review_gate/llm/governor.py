"""The rate governor: every request of the run to one endpoint waits its turn in one queue.

An endpoint is a base URL and the *name* of the variable holding its key (never the key), so
the llm agents of a run that share an account share its limits. A request goes out when

- fewer requests are in flight than the endpoint's window (``llm.concurrency``: small at
  first, open once the headers tell the budgets, halved on a push back; ``max_concurrency``
  is a hard cap);
- the config budgets ``rpm`` and ``tpm`` have room over the last 60 s (a request costs its
  prompt estimate plus its ``max_output_tokens``, as OpenAI counts it);
- what the server last said leaves room (``llm.limits`` reads it: requests, tokens, and
  Anthropic's input and output tokens, each counted on its own). The remaining count is read
  conservatively: every request sent after the one that brought the answer, and every one
  sent before it still unanswered, is taken as not yet counted by the server. When it is
  short, the request waits for the reset (no earlier than the reset's last digit allows), or,
  when the reset is not known, for another answer.
  At the reset the budget is its limit again, less every request sent since that answer: in a
  rolling window they still count, in a fixed one they may have reached the server after its
  reset;
- the endpoint is not paused: a 429 pauses every request to it until its Retry-After (else
  the reset of the budget that ran out, else a second), and so does a 503 or 529 that gives
  a Retry-After.

So no request goes out that the server's last word says it will refuse: after the first
answer, a 429 means the server changed its mind (another client on the account, a budget it
does not report).

Waiting is cancellable, so the agent's deadline still bounds it, and a caller that gives a
deadline gets ``NoTurn`` as soon as its turn cannot come before the deadline less the time an
answer takes (the slowest seen on the endpoint, or the caller's reserve).

Agents that share an endpoint but set different limits get the strictest of them.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass

import anyio

from review_gate.llm.concurrency import CEILING, START, Flow
from review_gate.llm.limits import DIMENSIONS, Reading, read_limits, retry_after
from review_gate.models import LlmAgent

WINDOW_S = 60.0  # rpm and tpm are per minute
DEFAULT_PAUSE_S = 1.0  # after a 429 that says neither Retry-After nor a reset
PROBE_AFTER_S = 1.0  # a budget short with no reset known and nothing in flight: one request asks again
RAMP_S = 0.005  # requests past the most ever answered at once go out this far apart
OVERLOADED = (429, 503, 529)  # answers that say the endpoint takes too much: the window shrinks


class NoTurn(Exception):
    """The request's turn cannot come early enough to be answered before the deadline."""


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
    of sends was ``base`` (at ``heard``), until ``reset_at``."""

    remaining: int
    base: int
    reset_at: float | None
    limit: int | None
    heard: float = 0.0
    index: int = 0  # the place in the order of sending of the request that brought it


@dataclass
class Ticket:
    """One request's turn; ``observe`` its answer."""

    governor: Governor
    sent: dict[str, int]  # the governor's running totals, this request included
    started: float
    need: Need = Need(0, 0)
    in_flight: int = 1  # requests in flight when it went out, itself included
    ahead: dict[str, int] | None = None  # the cost of the requests in flight when it went out, by dimension

    def observe(self, headers: Mapping[str, str], status: int, now: float | None = None, *,
                usable: bool = True) -> None:
        self.governor.observe(self, headers, status, now, usable=usable)


class Governor:
    """The queue of one endpoint. ``slot`` is the way in; the rest is its bookkeeping, with the
    time passed in so that it can be tested with a fake clock."""

    def __init__(self, name: str, limits: Limits = Limits()) -> None:
        self.name = name
        self.limits = Limits()
        self.rpm: Window | None = None
        self.tpm: Window | None = None
        self.in_flight = 0
        self.most_in_flight = 0
        self.flying: dict[int, Ticket] = {}  # the requests in flight, by id()
        self.sent = dict.fromkeys(DIMENSIONS, 0)
        self.known: dict[str, Known] = {}
        self.largest: dict[str, int] = {}  # the most a budget was said to hold: its limit at least
        self.paused_until = -math.inf
        self.slowest = 0.0  # seconds, the slowest answer seen
        self.rejected = 0  # 429s received
        self.answered = 0  # answers that were not errors
        self.flow = Flow(START, CEILING, explicit=False)
        self.proven = 0  # the most requests in flight at once that were answered
        self.raised_at = -math.inf  # when the last request past that went out
        self._changed: anyio.Event | None = None
        self.tighten(limits)

    @property
    def concurrency(self) -> int:
        return self.flow.limit

    def tighten(self, limits: Limits) -> None:
        self.limits = self.limits.tighter(limits)
        for name in ("rpm", "tpm"):
            budget = getattr(self.limits, name)
            window = getattr(self, name)
            if budget is not None and window is None:
                setattr(self, name, Window(budget))
            elif budget is not None and window is not None:
                window.budget = budget
        cap = self.limits.max_concurrency
        if cap is not None and (not self.flow.explicit or cap < self.flow.ceiling):
            self.flow = Flow(cap, cap, explicit=True)
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
            else:  # no reset known and nothing in flight to bring one: one request asks again
                waits.append(known.heard + PROBE_AFTER_S - now)
        if self.rpm is not None:
            waits.append(self.rpm.wait(1, now))
        if self.tpm is not None:
            waits.append(self.tpm.wait(need.cost("tokens"), now))
        return max(0.0, *waits)

    def ramp(self, now: float) -> float:
        """Seconds before one more request may go out past the most that were ever answered
        at once (or the window's start): such requests go one every RAMP_S, so that a server
        that takes fewer at once than its headers let on refuses one or two, not a burst,
        before the governor learns its limit."""
        if self.in_flight < max(self.flow.start, self.proven) or self.flow.explicit:
            return 0.0
        return max(0.0, self.raised_at + RAMP_S - now)

    def take(self, need: Need, now: float) -> Ticket:
        self._expire(now)
        if self.in_flight >= max(self.flow.start, self.proven):
            self.raised_at = now
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        for dimension in DIMENSIONS:
            self.sent[dimension] += need.cost(dimension)
        if self.rpm is not None:
            self.rpm.add(1, now)
        if self.tpm is not None:
            self.tpm.add(need.cost("tokens"), now)
        ahead = {d: sum(t.need.cost(d) for t in self.flying.values()) for d in DIMENSIONS}
        ticket = Ticket(self, dict(self.sent), now, need, self.in_flight, ahead)
        self.flying[id(ticket)] = ticket
        return ticket

    def release(self, ticket: Ticket) -> None:
        self.in_flight -= 1
        self.flying.pop(id(ticket), None)
        self._wake()

    def observe(self, ticket: Ticket, headers: Mapping[str, str], status: int, now: float | None = None, *,
                usable: bool = True) -> None:
        """Read an answer: what the server says of its budgets, how long it took, a push back.
        ``usable``: a success whose body could be read (one that could not is no answer: a
        retry that meets it is not scattered noise while the endpoint answers others)."""
        now = anyio.current_time() if now is None else now
        wall = time.time()
        readings = read_limits(headers, wall)
        for reading in readings:
            self._hear(reading, self._seen(ticket, reading.dimension), ticket.sent["requests"], now)
        index = ticket.sent["requests"]
        if status in OVERLOADED:
            self.rejected += status == 429
            pause = retry_after(headers, wall)
            if pause is None and status == 429:
                empty = [r.reset_in + r.slack for r in readings if r.remaining == 0 and r.reset_in is not None]
                pause = max(empty, default=DEFAULT_PAUSE_S)
            if pause is not None:
                self.paused_until = max(self.paused_until, now + pause)
            if status == 429 and readings and all(r.remaining >= ticket.need.cost(r.dimension) for r in readings):
                self.flow.busy(ticket.in_flight)  # refused though every budget had room: too many at once
            else:
                self.flow.pushed_back(index, self.sent["requests"], self.proven)
        elif status < 400:
            self.answered += 1 if usable else 0
            self.proven = max(self.proven, ticket.in_flight)
            self.slowest = max(self.slowest, now - ticket.started)
            self.flow.answered(now - ticket.started, index, bool(readings), self.sent["requests"], ticket.in_flight,
                               ticket.started)
        self._wake()

    def _seen(self, ticket: Ticket, dimension: str) -> int:
        """The running total of sends the server may be taken to have counted when it answered
        ``ticket``: its own, less the requests in flight when it went out. Requests reach the
        server in no set order: one sent earlier may arrive after it, and be answered before
        it all the same (a trial's late 429), so being answered since proves nothing."""
        return ticket.sent[dimension] - (ticket.ahead or {}).get(dimension, 0)

    def _hear(self, reading: Reading, base: int, index: int, now: float) -> None:
        dimension = reading.dimension
        self.largest[dimension] = max(self.largest.get(dimension, 0), reading.remaining, reading.limit or 0)
        known = self.known.get(dimension)
        if known is not None and known.index > index:
            return  # older news than what is known: an answer to an earlier request, come late
        reset_at = now + reading.reset_in + reading.slack if reading.reset_in is not None else None
        if reset_at is not None and reset_at <= now:
            return  # full again already: no constraint to add
        self.known[dimension] = Known(reading.remaining, base, reset_at, reading.limit, now, index)

    def _expire(self, now: float) -> None:
        """A budget past its reset is full again: its limit (or the most it was ever said to
        hold), less what was sent since the answer that told of it; unknown when nothing says
        how much it holds."""
        for dimension, known in list(self.known.items()):
            if known.reset_at is not None and now >= known.reset_at:
                limit = known.limit if known.limit is not None else self.largest.get(dimension, 0)
                if not limit:
                    del self.known[dimension]
                    continue
                unseen = self.sent[dimension] - known.base
                self.known[dimension] = Known(max(0, limit - unseen), self.sent[dimension], None, known.limit, now,
                                              self.sent["requests"])

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
            # An unknown wait (an answer will tell) is not a late one: wait for it, up to ``latest``.
            if now >= latest or (math.isfinite(wait) and now + wait > latest):
                raise NoTurn(f"no turn at {self.name} in time for the deadline")
            if wait == 0 and self.in_flight < self.concurrency:
                wait = self.ramp(now)
                if wait == 0:
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
