"""How many requests an endpoint gets in flight at once: a window that grows while the endpoint
answers and shrinks when it pushes back (additive increase, multiplicative decrease, the shape
TCP's congestion control made well known, and every client that meets limits it is not told).

- It starts small: ``START`` requests, the parallel slots a local server (Ollama, llama-server)
  usually has, and a first burst small enough for a low paid tier, sent before any rate-limit
  header has been read. An explicit ``max_concurrency`` starts there instead: the team knows
  its server.
- Once an answer carries rate-limit headers, the endpoint has budgets the governor checks
  request by request, so the window opens at once to its ceiling (``CEILING``, or the
  explicit ``max_concurrency``, a hard cap): the budgets, not the window, then say how many
  go (the governor spaces out the requests past the most ever answered at once).
- An endpoint that sends no such headers (llama.cpp, vLLM, Ollama, most proxies) tells nothing
  of its limits but its answers: each usable answer grows the window by one request until the
  first push back (a slow start: the window doubles a round trip), by one request a round trip
  after it (1/window an answer), up to the ceiling.
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
    >>> quiet = Flow(start=4, ceiling=64, explicit=False)
    >>> for index in range(1, 5): quiet.answered(latency=2.0, index=index, headers=False)
    >>> quiet.limit
    8
"""

from __future__ import annotations

import math

START = 4  # requests in flight before an endpoint's headers were read
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

    @property
    def limit(self) -> int:
        return max(1, math.floor(self.window))

    @property
    def room(self) -> int:
        """As far as the window may grow."""
        return self.ceiling

    def answered(self, latency: float, index: int, headers: bool, sent: int | None = None) -> None:
        """A usable answer after ``latency`` seconds; ``headers``: it carried rate-limit headers."""
        latency = max(latency, 1e-6)
        self.fastest = latency if self.fastest is None else min(self.fastest, latency)
        self.average = latency if self.average is None else (
            SMOOTHING * latency + (1 - SMOOTHING) * self.average)
        self.headers = self.headers or headers
        if self.average > RISE * self.fastest and not self.headers:
            self.pushed_back(index, index if sent is None else sent)
            return
        if headers and not self.opened:
            self.opened = True
            self.window = max(self.window, min(float(self.room), self.threshold))
            return
        if self.average <= CALM * self.fastest and self.window < self.room:
            slow_start = not self.headers and self.window < self.threshold
            self.window = min(float(self.room), self.window + (1.0 if slow_start else 1 / self.window))

    def busy(self, in_flight: int) -> None:
        """The server refused a request sent while ``in_flight`` were (it included) though its
        budgets had room: it takes fewer at once."""
        self.ceiling = max(1, min(self.ceiling, in_flight - 1))
        self.start = min(self.start, self.ceiling)
        self.window = min(self.window, float(self.ceiling))
        self.threshold = min(self.threshold, float(self.ceiling))

    def pushed_back(self, index: int, sent: int) -> None:
        """A 429 (or overload, or queueing) for the request sent ``index``-th; halve once."""
        if index <= self.cut_at:
            return
        self.window = max(1.0, self.window / 2)
        self.threshold = self.window
        self.cut_at = sent
        self.cuts += 1
        if self.average is not None and self.fastest is not None:
            self.average = self.fastest  # measure afresh at the new window
