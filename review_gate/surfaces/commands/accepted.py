"""``review-gate accepted``: the active acceptances; ``--revoke ID`` ends one."""

from __future__ import annotations

import argparse
import sys
from datetime import date

from review_gate.errors import StateError
from review_gate.state import acceptance
from review_gate.surfaces import console
from review_gate.surfaces.commands.state_common import open_existing, who

COLUMNS = ("id", "fingerprint", "who", "created", "expires", "state", "reason")


def accepted_command(args: argparse.Namespace) -> int:
    path, store = open_existing(args)
    if store is None:
        if args.revoke is not None:
            raise StateError(f"no acceptances recorded ({path} does not exist)")
        console.err("no acceptances recorded")
        return 0
    with store:
        if args.revoke is not None:
            found = acceptance.revoke(store, args.revoke, who())
            console.out(f"revoked acceptance {found.id} of {console.sanitize(found.fingerprint)}")
            return 0
        items = acceptance.listing(store)
    today = date.today()
    shown = [a for a in items if args.all or a.active(today)]
    if not shown:
        console.err("no active acceptances" + ("" if args.all else " (--all lists revoked and expired ones)"))
        return 0
    table = [COLUMNS]
    for a in shown:
        state = "active" if a.active(today) else ("revoked" if a.revoked else "expired")
        table.append((str(a.id), a.fingerprint, a.who, a.created_at[:10], a.expires or "-", state, a.reason))
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS) - 1)]
    for row in table:
        line = "  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
        sys.stdout.write(console.sanitize(line) + "\n")
    return 0
