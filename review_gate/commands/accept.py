"""``review-gate accept FINGERPRINT --reason TEXT``: a person accepts a finding; it stops counting."""

from __future__ import annotations

import argparse
from datetime import date

from review_gate import console
from review_gate.commands.state_common import state_path, who
from review_gate.console import sanitize
from review_gate.errors import StateError, UsageError
from review_gate.state import acceptance
from review_gate.state.store import open_store


def accept_command(args: argparse.Namespace) -> int:
    fingerprint = args.fingerprint.strip()
    reason = args.reason.strip()
    if not fingerprint:
        raise UsageError("the fingerprint is empty", fix="copy it from a report (the fingerprint of a finding)")
    if not reason:
        raise UsageError("--reason is empty", fix="say why the finding is accepted")
    expires = _expiry(args.expires) if args.expires else None
    path = state_path(args)
    store = open_store(path, create=args.force)
    if store is None:
        raise StateError(f"no runs recorded yet ({path} does not exist), so {fingerprint} is unknown",
                         fix="accept a fingerprint from a recorded run, or pass --force")
    with store:
        known, pair = acceptance.known(store, fingerprint)
        if not known and not args.force:
            raise StateError(f"no recorded run reported {fingerprint}",
                             fix="check it against `review-gate show last --format json`, or pass --force")
        event = acceptance.accept(store, fingerprint, reason, who(), expires, pair)
    until = f" until {expires}" if expires else ""
    console.out(f"accepted {sanitize(fingerprint)}{until} (acceptance {event}); "
                f"revoke it with `review-gate accepted --revoke {event}`")
    return 0


def _expiry(text: str) -> str:
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--expires {text}: not a date", fix="give it as YYYY-MM-DD") from None
    if len(text) != 10 or day < date.today():
        raise UsageError(f"--expires {text}: must be a YYYY-MM-DD date, today or later")
    return day.isoformat()
