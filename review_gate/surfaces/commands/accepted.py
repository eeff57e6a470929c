"""``review-gate accepted``: the active acceptances, this machine's and the team's (the committed
``.review-gate/acceptances.json``); ``--revoke ID`` ends one of this machine's."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import date

from review_gate.errors import StateError
from review_gate.state import acceptance
from review_gate.surfaces import console
from review_gate.surfaces.commands.state_common import open_existing, who

COLUMNS = ("id", "fingerprint", "who", "created", "expires", "state", "reason")


def accepted_command(args: argparse.Namespace) -> int:
    path, store = open_existing(args)
    if store is None and args.revoke is not None:
        raise StateError(f"no acceptances recorded ({path} does not exist)")
    items = []
    if store is not None:
        with store:
            if args.revoke is not None:
                found = acceptance.revoke(store, args.revoke, who())
                console.out(f"revoked acceptance {found.id} of {console.sanitize(found.fingerprint)}")
                return 0
            items = acceptance.listing(store)
    today = date.today()
    shown = [a for a in items if args.all or a.active(today)]
    team = _team(args, today)
    if not shown and not team:
        console.err("no active acceptances" + ("" if args.all else " (--all lists revoked and expired ones)"))
        return 0
    if shown:
        rows: list[tuple[str, ...]] = []
        for a in shown:
            state = "active" if a.active(today) else ("revoked" if a.revoked else "expired")
            rows.append((str(a.id), a.fingerprint, a.who, a.created_at[:10], a.expires or "-", state, a.reason))
        _table(COLUMNS, rows)
    for where, entries in team:
        console.out(console.sanitize(f"{'' if not shown else chr(10)}for the team, in {where} (they waive a "
                                     "finding in every run once the file is on the base branch):"))
        _table(TEAM_COLUMNS, entries)
    return 0


TEAM_COLUMNS = ("fingerprint", "who", "created", "expires", "state", "where", "reason")


def _team(args: argparse.Namespace, today: date) -> list[tuple[str, list[tuple[str, ...]]]]:
    """The team's acceptances in each file ``accept --shared`` writes, as this checkout has them."""
    from pathlib import Path

    from review_gate.config import locate_config_dir
    from review_gate.judging import shared_acceptances
    from review_gate.surfaces.commands.common import find_repo_root

    root = find_repo_root()
    directory = locate_config_dir(getattr(args, "config", None), root)
    out = []
    for candidate in dict.fromkeys(shared_acceptances.candidates(str(directory) if directory else None, root)):
        if not Path(candidate).is_file():
            continue
        rows: list[tuple[str, ...]] = [
            (a.fingerprint, a.who, a.created.isoformat(), a.expires.isoformat() if a.expires else "-",
             "active" if a.active(today) else "expired", f"{a.file or '-'} {a.rule_id or ''}".strip(), a.reason)
            for a in shared_acceptances.load(Path(candidate)).acceptances if args.all or a.active(today)]
        if rows:
            out.append((str(candidate), rows))
    return out


def _table(columns: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    table = [columns, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(columns) - 1)]
    for row in table:
        line = "  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
        sys.stdout.write(console.sanitize(line) + "\n")
