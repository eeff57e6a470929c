"""Per-agent progress while dispatch runs: a live table on a terminal, plain lines elsewhere (CI
logs must not fill with spinner frames).

On a terminal each agent's row says what it does: an llm agent its requests answered of all,
its tokens, the time it has run and an estimate of what is left (from the pace of the requests
answered so far). Off a terminal, a line per finished agent (unless the report on stdout lists
them), and while reviews run, one status line at most every ``STATUS_EVERY_S`` seconds: a
202-request review was 103 s of silence in a CI log. The clock is injected (``clock``), and
``tick`` is what the status thread calls each second, so tests drive it without waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from review_gate.models import AgentResult, Usage
from review_gate.surfaces import console
from review_gate.text.escape import sanitize

if TYPE_CHECKING:
    from rich.table import Table

STATUS_EVERY_S = 15.0


@dataclass
class _Requests:
    done: int
    total: int
    tokens: int


class Progress:
    def __init__(self, live: bool, *, quiet: bool = False, clock: Callable[[], float] = time.monotonic,
                 status_thread: bool = True) -> None:
        """``quiet``: off a terminal, no line per agent (the report on stdout lists them).
        ``status_thread``: off a terminal, a thread calls ``tick`` every second."""
        self.states: dict[str, tuple[str, float, AgentResult | None]] = {}
        self.requests: dict[str, _Requests] = {}
        self.quiet = quiet
        self.clock = clock
        self._said = clock()  # when the last status line was written (the run's start counts)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._live: Any = None
        if live:  # rich is imported only for a terminal
            from rich.live import Live

            self._live = Live(console=console.stderr(), refresh_per_second=10, transient=True,
                              get_renderable=self._table)
        elif status_thread:
            self._thread = threading.Thread(target=self._beat, name="review-gate-status", daemon=True)

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.__enter__()
        if self._thread is not None:
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout=2.0)
        if self._live is not None:
            self._live.__exit__(kind, value, tb)

    def __call__(self, agent: str, event: str, result: AgentResult | None) -> None:
        with self._lock:
            started = self.states.get(agent, ("", self.clock(), None))[1]
            if event == "running":
                started = self.clock()
            self.states[agent] = (event, started, result)
        if self._live is None and not self.quiet and event == "done" and result is not None:
            note = f" ({sanitize(result.error)})" if result.error else ""
            found = len(result.findings)
            console.err(f"agent {sanitize(agent)}: {result.status} in {result.duration_s:.2f}s, "
                        f"{found} finding{'' if found == 1 else 's'}{note}")

    def on_request(self, agent: str, done: int, total: int, usage: Usage) -> None:
        """An llm agent's requests: ``done`` of ``total`` answered, having used ``usage``."""
        with self._lock:
            self.requests[agent] = _Requests(done, total, usage.tokens_in + usage.tokens_out)

    def doing(self, agent: str, now: float) -> str:
        """What a running agent has done: ``3/12 requests · 45.1k tokens · 98.9s · ~4m left``."""
        event, started, _ = self.states.get(agent, ("queued", now, None))
        elapsed = now - started
        parts = []
        asked = self.requests.get(agent)
        if asked is not None and asked.total:
            parts += [f"{asked.done}/{asked.total} requests", f"{_tokens(asked.tokens)} tokens"]
        if event != "queued":
            parts.append(f"{elapsed:.1f}s")
        if asked is not None and 0 < asked.done < asked.total:
            parts.append(f"~{_duration(elapsed / asked.done * (asked.total - asked.done))} left")
        return " · ".join(parts)

    def status_line(self, now: float) -> str | None:
        """The line a CI log gets while reviews run; None when none runs."""
        with self._lock:
            running = [a for a, (event, _, result) in self.states.items()
                       if result is None and event in ("running", "retrying")]
            finished = sum(1 for _, _, result in self.states.values() if result is not None)
            if not running:
                return None
            shown = "; ".join(f"{sanitize(a)} {self.doing(a, now)}" for a in running[:5])
        more = f" and {len(running) - 5} more" if len(running) > 5 else ""
        return f"review-gate: {finished} of {len(self.states)} agents done; running: {shown}{more}"

    def tick(self) -> None:
        """Write the status line when ``STATUS_EVERY_S`` have passed since the last one."""
        now = self.clock()
        if now - self._said < STATUS_EVERY_S:
            return
        line = self.status_line(now)
        if line is not None:
            self._said = now
            console.err(line)

    def _beat(self) -> None:
        while not self._stop.wait(1.0):
            try:
                self.tick()
            except Exception:  # a status line never takes the review down (a closed stderr)
                return

    def _table(self) -> Table:
        from rich.spinner import Spinner
        from rich.table import Table
        from rich.text import Text

        from review_gate.outputs.text import STATUS_STYLES, plural

        table = Table(box=None, show_header=False, pad_edge=False)
        now = self.clock()
        for agent, (event, _started, result) in list(self.states.items()):
            if result is not None:
                status = Text(result.status, style=STATUS_STYLES.get(result.status, ""))
                table.add_row(Text("✓" if result.status == "completed" else "✗"), sanitize(agent), status,
                              f"{result.duration_s:.1f}s", plural(len(result.findings), "finding"))
            else:
                table.add_row(Spinner("dots") if event != "queued" else Text("·"), sanitize(agent), Text(event),
                              self.doing(agent, now), "")
        return table


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 90 else f"{seconds / 60:.0f}m"
