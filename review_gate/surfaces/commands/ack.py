"""``review-gate ack ID --reason TEXT``: a person notes that they saw a finding (seed 003's ack).

An ack waives nothing: the finding keeps counting, in this run and the next, and freshness is
untouched (docs/run-state.md). ``review-gate ack`` alone lists the acks recorded.
"""

from __future__ import annotations

import argparse
import sys

from review_gate import api
from review_gate.errors import UsageError
from review_gate.state import acceptance
from review_gate.surfaces import console
from review_gate.surfaces.commands.state_common import open_existing

COLUMNS = ("id", "fingerprint", "who", "when", "reason")


def ack_command(args: argparse.Namespace) -> int:
    if args.finding is None:
        if args.reason is not None:
            raise UsageError("--reason goes with the finding it is about", fix="review-gate ack ID --reason TEXT")
        return _listing(args)
    if args.reason is None:
        raise UsageError(f"ack {console.sanitize(args.finding)}: no --reason",
                         fix=f"say what you saw: review-gate ack {console.sanitize(args.finding)} --reason TEXT")
    if not args.reason.strip():
        raise UsageError("--reason is empty", fix="say what you saw, or what will be done about it")
    done = api.ack(args.finding, args.reason, config=args.config)
    console.out(f"acknowledged {done.fingerprint} (ack {done.event}); it still counts: fix it, or a person accepts "
                f"it with `review-gate accept {done.fingerprint[:8]} --reason TEXT`")
    return 0


def _listing(args: argparse.Namespace) -> int:
    _, store = open_existing(args)
    if store is None:
        console.err("no acks recorded")
        return 0
    with store:
        acks = acceptance.listing(store, ("ack",))
    if not acks:
        console.err("no acks recorded")
        return 0
    table = [COLUMNS, *((str(a.id), a.fingerprint, a.who, a.created_at[:16].replace("T", " "), a.reason)
                        for a in acks)]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS) - 1)]
    for row in table:
        line = "  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
        sys.stdout.write(console.sanitize(line) + "\n")
    return 0
