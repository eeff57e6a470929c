"""``review-gate gc``: drop old runs and their pairs from the run state."""

from __future__ import annotations

import argparse

from review_gate.errors import UsageError
from review_gate.state import runs
from review_gate.surfaces import console
from review_gate.surfaces.commands.state_common import open_existing

DEFAULT_DAYS = 30
NO_AGE_LIMIT_DAYS = 36500  # a hundred years: more than that drops nothing by age


def gc_command(args: argparse.Namespace) -> int:
    if args.obsolete:
        return _obsolete(args)
    for flag, value in (("--days", args.days), ("--keep", args.keep)):
        if value is not None and value < 0:
            raise UsageError(f"{flag} {value}: must be 0 or more")
    days = args.days if args.days is not None or args.keep is not None else DEFAULT_DAYS
    if days is not None and days > NO_AGE_LIMIT_DAYS:
        days = None  # no run is that old, and dates that far back do not exist
    path, store = open_existing(args)
    if store is None:
        console.out(f"nothing to drop ({path} does not exist)")
        return 0
    with store:
        dropped, pairs = runs.gc(store, days, args.keep)
    if not dropped:
        console.out("nothing to drop")
        return 0
    console.out(f"dropped {len(dropped)} run{'s' if len(dropped) != 1 else ''} and {pairs} review pairs: "
                + ", ".join(dropped))
    return 0


def _obsolete(args: argparse.Namespace) -> int:
    """Only the pairs a newer pair supersedes; a run goes only when none of its pairs is left."""
    if args.days is not None or args.keep is not None:
        raise UsageError("--obsolete drops superseded pairs, not runs by age or count",
                         fix="give --obsolete alone, or --days / --keep")
    path, store = open_existing(args)
    if store is None:
        console.out(f"nothing to drop ({path} does not exist)")
        return 0
    with store:
        pairs, emptied = runs.gc_obsolete(store)
    console.out(f"dropped {pairs} obsolete review pair{'s' if pairs != 1 else ''}"
                + (f" and {len(emptied)} run{'s' if len(emptied) != 1 else ''} left without any: "
                   + ", ".join(emptied) if emptied else ""))
    return 0
