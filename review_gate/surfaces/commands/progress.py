"""Per-agent progress while dispatch runs: a live table on a terminal, one plain line per
finished agent elsewhere (CI logs must not fill with spinner frames)."""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

from review_gate.models import AgentResult
from review_gate.surfaces import console
from review_gate.text.escape import sanitize

if TYPE_CHECKING:
    from rich.table import Table


class Progress:
    def __init__(self, live: bool, *, quiet: bool = False) -> None:
        """``quiet``: off a terminal, no line per agent (the report on stdout lists them)."""
        self.states: dict[str, tuple[str, float, AgentResult | None]] = {}
        self.quiet = quiet
        self._live: Any = None
        if live:  # rich is imported only for a terminal
            from rich.live import Live

            self._live = Live(console=console.stderr(), refresh_per_second=10, transient=True,
                              get_renderable=self._table)

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.__exit__(kind, value, tb)

    def __call__(self, agent: str, event: str, result: AgentResult | None) -> None:
        started = self.states.get(agent, ("", time.monotonic(), None))[1]
        if event == "running":
            started = time.monotonic()
        self.states[agent] = (event, started, result)
        if self._live is None and not self.quiet and event == "done" and result is not None:
            note = f" ({sanitize(result.error)})" if result.error else ""
            found = len(result.findings)
            console.err(f"agent {sanitize(agent)}: {result.status} in {result.duration_s:.2f}s, "
                        f"{found} finding{'' if found == 1 else 's'}{note}")

    def _table(self) -> Table:
        from rich.spinner import Spinner
        from rich.table import Table
        from rich.text import Text

        from review_gate.outputs.text import STATUS_STYLES, plural

        table = Table(box=None, show_header=False, pad_edge=False)
        for agent, (event, started, result) in self.states.items():
            if result is not None:
                status = Text(result.status, style=STATUS_STYLES.get(result.status, ""))
                table.add_row(Text("✓" if result.status == "completed" else "✗"), sanitize(agent), status,
                              f"{result.duration_s:.1f}s", plural(len(result.findings), "finding"))
            else:
                elapsed = f"{time.monotonic() - started:.1f}s" if event != "queued" else ""
                table.add_row(Spinner("dots") if event != "queued" else Text("·"), sanitize(agent), Text(event),
                              elapsed, "")
        return table
