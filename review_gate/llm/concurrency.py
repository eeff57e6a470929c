"""How many requests an endpoint gets in flight at once: a window that grows while the endpoint
answers and shrinks when it pushes back (additive increase, multiplicative decrease, the shape
TCP's congestion control made well known, and every client that meets limits it is not told).

- It starts small: ``START`` requests, one more than the parallel slots a local server
  (llama-server, Ollama, LM Studio) usually has (``SLOTS``), and a first burst small enough for
  a low paid tier, sent before any rate-limit header has been read. An explicit
  ``max_concurrency`` starts there instead: the team knows its server.
- Once an answer carries rate-limit headers, the endpoint has budgets the governor checks
  request by request, so the window opens at once to its ceiling (``CEILING``, or the
  explicit ``max_concurrency``, a hard cap): the budgets, not the window, then say how many
  go (the governor spaces out the requests past the most ever answered at once).
- An endpoint that sends no such headers (llama.cpp, vLLM, Ollama, most proxies) tells nothing
  of its limits but its answers. Its first ``START`` requests are a probe; while it lasts, an
  answer only lets the next request take its place. When all of them came back calm (each
  within CALM times the fastest answer) after being in flight together (from the last one
  sent to the first one answered) longer than (CALM - 1) answers, the endpoint answered them
  side by side: a server with fewer slots held one back all that time and served it only
  after, so its latency was more than CALM answers. The window then opens to its ceiling as
  headers would open it (the governor spaces out the requests past the most ever answered at
  once, so a server that takes fewer refuses one or two, not a burst). Sent too spread out to
  tell (a slow start, a loaded machine), the next ``START`` requests are the probe. A server
  that queues what it has no slot for (llama-server, Ollama: they never refuse) answers the
  request past its slots a round trip late: the first answer that is not calm, to a request
  that went out beside others, ends the probe, and the window becomes one less than the
  requests in flight when that one went out (its slots), growing by one request a round trip
  from there. That is why the probe is one past the usual slots: with a probe of 4, a server
  with 4 slots (llama-server's default) passed it and was sent every chunk at once, queued at
  the server where their waiting counts against the agent's deadline (22 of 30 waiting at
  once). A server with more slots than the probe that queues past them is told apart only
  once its answers slow down, after the window opened: set ``max_concurrency`` to its slots.
  After a push back the window grows by one request a round trip (1/window an answer), up to
  the ceiling. (Growing by one an answer alone, a doubling a round trip, took 4 round trips
  where the wide setting takes 1: 36 requests of 2 s were 2x slower.)
- A 429 while the headers say every budget still has room is the server's own limit on
  requests at once, one it reports nowhere: the window's ceiling becomes one less than the
  requests that were in flight when the refused one went out, for the rest of the run.
- Any other 429 (or a 503 or 529: overloaded) halves the window. So does, at an endpoint without
  rate-limit headers, latency that rises to twice the fastest answer seen: a local server
  queues what it has no slot for. (A hosted API's latency follows the length of its answers,
  and its budgets are in its headers.) One push back halves the window once: requests already
  in flight when it was halved cannot halve it again. After that it grows by one request a
  round trip, back to where it may go.

    >>> flow = Flow(start=4, ceiling=64, explicit=False)
    >>> flow.answered(latency=2.0, index=1, headers=True); flow.limit
    64
    >>> flow.pushed_back(index=2, sent=40); flow.limit
    32
    >>> quiet = Flow(start=5, ceiling=64, explicit=False)
    >>> for index in range(1, 5): quiet.answered(latency=2.0, index=index, headers=False, at_once=index)
    >>> quiet.limit
    5
    >>> quiet.answered(latency=2.0, index=5, headers=False, at_once=5); quiet.limit
    64
    >>> slots = Flow(start=5, ceiling=64, explicit=False)  # 4 slots: the 5th waited for one
    >>> for index in range(1, 5): slots.answered(latency=2.0, index=index, headers=False, at_once=index)
    >>> slots.answered(latency=4.0, index=5, headers=False, at_once=5); slots.limit
    4
"""

from __future__ import annotations

import math

SLOTS = 4  # the parallel slots a local server usually has (llama-server's default)
START = SLOTS + 1  # requests in flight before an endpoint's headers were read: one past those slots
CEILING = 64  # requests in flight once they were, without an explicit max_concurrency
RISE = 2.0  # latency this many times the fastest answer's is requests queueing: back off
CALM = 1.5  # latency below this many times the fastest answer's lets the window grow again
SMOOTHING = 0.3  # weight of the newest answer in the latency average


class Flow:
    """The window of one endpoint. ``index`` is a request's place in the order of sending
    (the governor's running count), ``sent`` the count at the time of the event."""

    def __init__(self, start: int, ceiling: int, explicit: bool) -> None:
        self.ceiling = ceiling
        self.start = min(start, ceiling)
        self.explicit = explicit
        self.window = float(ceiling if explicit else self.start)
        # where a window opening at once stops, and where growing a request an answer (the slow
        # start) gives way to a request a round trip: the ceiling until the first push back
        self.threshold = float(ceiling)
        self.opened = explicit  # opened at once: headers seen, or the team said how far
        self.headers = False  # an answer carried rate-limit headers
        self.fastest: float | None = None
        self.average: float | None = None
        self.cut_at = 0  # requests sent before this index do not halve the window again
        self.cuts = 0
        self.batch = 1  # the index of the first request of the probe's batch
        self.times: dict[int, tuple[float, float]] = {}  # its requests answered: (sent, answered)

    @property
    def limit(self) -> int:
        return max(1, math.floor(self.window))

    @property
    def room(self) -> int:
        """As far as the window may grow."""
        return self.ceiling

    def answered(self, latency: float, index: int, headers: bool, sent: int | None = None,
                 at_once: int = 1, at: float = 0.0) -> None:
        """A usable answer after ``latency`` seconds to the request sent at ``at``; ``headers``:
        it carried rate-limit headers; ``at_once``: the requests in flight when it went out,
        itself included."""
        latency = max(latency, 1e-6)
        self.fastest = latency if self.fastest is None else min(self.fastest, latency)
        self.average = latency if self.average is None else (
            SMOOTHING * latency + (1 - SMOOTHING) * self.average)
        self.headers = self.headers or headers
        sent = index if sent is None else sent
        if self.average > RISE * self.fastest and not self.headers:
            self.pushed_back(index, sent)
            return
        if headers and not self.opened:
            self.opened = True
            self.window = max(self.window, min(float(self.room), self.threshold))
            return
        if self.probing:
            if latency > CALM * self.fastest:
                if at_once > 1:  # it waited for a slot behind ours: the server has fewer than were in flight
                    self.window = self.threshold = float(at_once - 1)
                    self.cut_at, self.cuts = sent, self.cuts + 1
                    self.average = self.fastest  # measure afresh at the new window
                return
            if self.batch <= index < self.batch + self.start:
                self._probed(index, at, at + latency, sent)
            return
        if self.average <= CALM * self.fastest and self.window < self.room:
            self.window = min(float(self.room), self.window + 1 / self.window)

    def _probed(self, index: int, at: float, answered: float, sent: int) -> None:
        """One of the probe's batch answered calmly. Once all are, they were in flight together
        from the last one sent to the first one answered; a server with fewer slots than the
        batch held one of them back that whole time, and served it only after: its latency is
        at least that time and one answer more, not calm when that time is more than (CALM - 1)
        answers. When the batch went out too spread out to tell (a slow start, a loaded
        machine), the next ``START`` requests are the probe."""
        self.times[index] = (at, answered)
        if len(self.times) < self.start:
            return
        together = min(a for _, a in self.times.values()) - max(s for s, _ in self.times.values())
        if self.fastest is not None and together > (CALM - 1) * self.fastest:
            self.window = max(self.window, min(float(self.room), self.threshold))  # answered side by side
        else:
            self.batch, self.times = sent + 1, {}

    @property
    def probing(self) -> bool:
        """No headers, no push back, not open yet: the answers to the first requests tell."""
        return not (self.headers or self.explicit or self.cuts) and self.window < self.threshold

    def busy(self, in_flight: int) -> None:
        """The server refused a request sent while ``in_flight`` were (it included) though its
        budgets had room: it takes fewer at once."""
        self.ceiling = max(1, min(self.ceiling, in_flight - 1))
        self.start = min(self.start, self.ceiling)
        self.window = min(self.window, float(self.ceiling))
        self.threshold = min(self.threshold, float(self.ceiling))

    def pushed_back(self, index: int, sent: int, proven: int = 0) -> None:
        """A 429 (or overload, or queueing) for the request sent ``index``-th; halve once. At an
        endpoint without headers, to ``proven`` (the most ever answered at once) when that is
        less: a window the probe opened past what the server takes drops to what it took."""
        if index <= self.cut_at:
            return
        half = self.window / 2
        self.window = max(1.0, min(half, float(proven)) if proven and not (self.headers or self.explicit) else half)
        self.threshold = self.window
        self.cut_at = sent
        self.cuts += 1
        if self.average is not None and self.fastest is not None:
            self.average = self.fastest  # measure afresh at the new window
