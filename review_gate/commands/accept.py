"""``review-gate accept FINGERPRINT --reason TEXT``: a person accepts a finding; it stops counting."""

from __future__ import annotations

import argparse

from review_gate import api, console
from review_gate.commands.common import expiry
from review_gate.errors import UsageError


def accept_command(args: argparse.Namespace) -> int:
    if not args.reason.strip():
        raise UsageError("--reason is empty", fix="say why the finding is accepted")
    # The date is checked here first, so that its error names the flag.
    day = expiry(args.expires) if args.expires is not None else None
    done = api.accept(args.fingerprint, args.reason, day, config=args.config, force=args.force)
    until = f" until {done.expires.isoformat()}" if done.expires else ""
    verb = "accepted" if done.kind == "accept" else "overridden (no recorded run reported it)"
    console.out(f"{verb} {done.fingerprint}{until} (acceptance {done.acceptance}); "
                f"revoke it with `review-gate accepted --revoke {done.acceptance}`")
    return 0
