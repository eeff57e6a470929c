"""``review-gate history``: the recorded runs, newest first."""

from __future__ import annotations

import argparse

from review_gate.errors import UsageError
from review_gate.state import runs
from review_gate.state.times import parse
from review_gate.surfaces import console
from review_gate.surfaces.commands.state_common import open_existing

ALL_RUNS = 2**62
COLUMNS = ("run", "when", "source", "decision", "issues", "missing", "time", "cached")
SOURCE_WIDTH = 30


def history_command(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit {args.limit}: must be at least 1")
    path, store = open_existing(args)
    if store is None:
        console.err(f"no runs recorded yet ({path} does not exist)")
        return 0
    with store:
        # SQLite counts in 64 bits; a larger --limit means what it says: every run
        rows = runs.history(store, min(args.limit, ALL_RUNS) if args.limit is not None else None)
    if not rows:
        console.err(f"no runs recorded yet in {path}")
        return 0
    from rich.table import Table

    from review_gate.outputs.text import print_trimmed

    out = console.stdout()
    # On a narrow terminal the start time (the run id begins with it, in UTC) and the source
    # (`show RUN` has it) give way; in a file or a pipe every column is there.
    wide = not out.is_terminal or out.width >= 120
    missing = any(r.metrics.get("missing_inputs") for r in rows)
    columns = [c for c in COLUMNS if (wide or c not in ("when", "source")) and (missing or c != "missing")]
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, no_wrap=True)
    for r in rows:
        cells = {
            "run": r.id, "when": parse(r.started_at).astimezone().strftime("%m-%d %H:%M"),
            "source": _tail(r.source, SOURCE_WIDTH),
            "decision": r.decision or r.status if r.status in ("completed", "running") else r.status,
            "issues": f"{r.metrics.get('total', 0)}/{r.metrics.get('critical', 0)}" if r.metrics else "-",
            "missing": str(r.metrics.get("missing_inputs", 0)) if r.metrics else "-",
            "time": f"{r.duration_s:.1f}s" if r.duration_s is not None else "-",
            "cached": f"{r.cached_pairs}/{r.pairs}"}
        table.add_row(*(console.sanitize(cells[c]) for c in columns))
    print_trimmed(out, table)
    return 0


def _tail(text: str, width: int) -> str:
    """The end of a long source (a diff file's name, the base commit) is what tells runs apart."""
    return text if len(text) <= width else "…" + text[-(width - 1):]
