"""``review-gate accept FINGERPRINT --reason TEXT [--shared]``: a person accepts a finding; it stops
counting, on this machine (the run state), or with ``--shared`` for everyone once the committed
acceptances file is on the base branch."""

from __future__ import annotations

import argparse
from pathlib import Path

from review_gate import api
from review_gate.errors import UsageError
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import expiry


def accept_command(args: argparse.Namespace) -> int:
    if not args.reason.strip():
        raise UsageError("--reason is empty", fix="say why the finding is accepted")
    # The date is checked here first, so that its error names the flag.
    day = expiry(args.expires) if args.expires is not None else None
    done = api.accept(args.fingerprint, args.reason, day, config=args.config, force=args.force, shared=args.shared)
    until = f" until {done.expires.isoformat()}" if done.expires else ""
    if done.shared is not None:
        where = _shown(done.shared)
        console.out(f"accepted {done.fingerprint}{until} in {where}, for everyone once it is on the base branch.\n"
                    f"  Commit {where} and merge it to the base branch: until then it waives nothing, not even in "
                    "this branch's own CI run (a change never waives its own findings).")
        return 0
    verb = "accepted" if done.kind == "accept" else "overridden (no recorded run reported it)"
    console.out(f"{verb} {done.fingerprint}{until} (acceptance {done.acceptance}) on this machine only: it is in this "
                f"machine's run state, so CI and your teammates still see the finding.\n"
                f"  Revoke it with `review-gate accepted --revoke {done.acceptance}`; to waive it for everyone, "
                f"run `review-gate accept {done.fingerprint[:12]} --reason TEXT --shared` and commit the file.")
    return 0


def _shown(path: Path) -> str:
    """``path`` relative to the current directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
