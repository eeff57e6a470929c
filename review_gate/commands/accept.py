"""``review-gate accept FINGERPRINT --reason TEXT``: a person accepts a finding; it stops counting."""

from __future__ import annotations

import argparse

from review_gate import console
from review_gate.commands.common import expiry
from review_gate.commands.state_common import state_path, who
from review_gate.errors import StateError, UsageError
from review_gate.escape import sanitize
from review_gate.state import acceptance
from review_gate.state.store import Store, open_store


def accept_command(args: argparse.Namespace) -> int:
    given = args.fingerprint.strip().lower()
    reason = args.reason.strip()
    if not acceptance.SHORT_ID.match(given):
        raise UsageError(f"{sanitize(args.fingerprint.strip()) or 'the id'} is not a finding id",
                         fix="give the id a report shows beside the finding (6 or more hex digits), "
                             "or its whole fingerprint")
    if not reason:
        raise UsageError("--reason is empty", fix="say why the finding is accepted")
    expires = expiry(args.expires).isoformat() if args.expires is not None else None
    path = state_path(args)
    store = open_store(path, create=args.force)
    if store is None:
        raise StateError(f"no runs recorded yet ({path} does not exist), so {given} is unknown",
                         fix="accept a finding from a recorded run, or pass --force with its whole fingerprint")
    with store:
        fingerprint, pair = _resolve(store, given, args.force)
        event = acceptance.accept(store, fingerprint, reason, who(), expires, pair)
    until = f" until {expires}" if expires else ""
    console.out(f"accepted {fingerprint}{until} (acceptance {event}); "
                f"revoke it with `review-gate accepted --revoke {event}`")
    return 0


def _resolve(store: Store, given: str, force: bool) -> tuple[str, int | None]:
    """The one reported fingerprint ``given`` is (or starts); with ``force``, a whole fingerprint
    no run reported is taken as it is."""
    matches = acceptance.reported(store, given)
    if len(matches) == 1:
        return matches[0]
    if not matches:
        if force and acceptance.FINGERPRINT.match(given):
            return given, None
        raise StateError(f"no recorded run reported a finding {given}",
                         fix="copy the id from a report (`review-gate show last`), or pass --force with "
                             "the whole fingerprint")
    listed = ", ".join(fp for fp, _ in matches[:5])
    raise StateError(f"{given} is the start of several findings' fingerprints: {listed}",
                     fix="give more of the fingerprint")
