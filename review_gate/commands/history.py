"""``review-gate history``: the recorded runs, newest first."""

from __future__ import annotations

import argparse
import sys

from review_gate import console
from review_gate.commands.state_common import open_existing
from review_gate.errors import UsageError
from review_gate.state import runs
from review_gate.state.times import parse

ALL_RUNS = 2**62
COLUMNS = ("run", "when", "source", "decision", "total/critical", "missing", "duration", "cached pairs")


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
    table = [COLUMNS]
    for r in rows:
        when = parse(r.started_at).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        decision = r.decision or r.status if r.status in ("completed", "running") else r.status
        counts = f"{r.metrics.get('total', 0)}/{r.metrics.get('critical', 0)}" if r.metrics else "-"
        missing = str(r.metrics.get("missing_inputs", 0)) if r.metrics else "-"
        duration = f"{r.duration_s:.1f}s" if r.duration_s is not None else "-"
        source = r.source if len(r.source) <= 40 else "…" + r.source[-39:]
        table.append((r.id, when, source, decision, counts, missing, duration, f"{r.cached_pairs}/{r.pairs}"))
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    for row in table:
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        sys.stdout.write(console.sanitize(line) + "\n")
    return 0
