"""``review-gate baseline``: review the change and record every finding as accepted debt."""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio

from review_gate import __version__, api
from review_gate.errors import IncompleteError, UsageError
from review_gate.judging import baseline
from review_gate.models import ReviewReport
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import diff_request, expiry, find_repo_root
from review_gate.text.escape import sanitize


def baseline_command(args: argparse.Namespace) -> int:
    expires = expiry(args.expires) if args.expires is not None else None
    root = find_repo_root()
    if args.output is not None:
        target = Path(args.output)
    elif root is not None:
        target = root / ".review-gate" / baseline.FILE_NAME
    else:
        raise UsageError("no git repository here to hold .review-gate/baseline.json",
                         fix="name the file with --output FILE")
    request = diff_request(args, root)  # checked with the flags' own words
    reports: list[ReviewReport] = []

    async def main() -> None:
        # No baseline applied: it records everything the review counts now (an old entry's finding
        # included). The gate's own files (the baseline itself among them) are never part of the change.
        reports.append(await api.review_async(request=request, config=args.config, offline=args.offline,
                                              filter_mode=args.filter_mode, use_baseline=False))

    anyio.run(main)
    [report] = reports
    missing = [a.id for a in report.agents if a.missing_input]
    if missing:
        raise IncompleteError(
            f"baseline not written: required agent{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} did not review the whole change, so the baseline would miss their findings",
            fix="run `review-gate run --format text` to see why, fix it, and try again")
    # only what counts: a finding someone accepted (on this machine, or for the team), one an
    # inline comment waives, or one the base already has is not debt to hand to the whole team
    written = baseline.from_findings(report.findings, __version__, expires)
    baseline.save(written, target)
    until = f", until {expires.isoformat()}" if expires else ""
    count = len(written.findings)
    console.err(sanitize(f"review-gate: baselined {count} finding{'' if count == 1 else 's'}{until} "
                         f"in {target}; commit it and merge it to the base branch: it waives them for every run "
                         "(CI included) once it is there, and nothing in the branch that adds it"))
    return 0
