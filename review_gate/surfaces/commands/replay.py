"""``review-gate replay DIR``: aggregate a bundle's agent results again and decide, calling no agent.

With the bundle's own config/ it reproduces the run's decision; with ``--config DIR``,
``--filter-mode`` or ``--fail-on`` it shows what a rule or gate change would have decided.
"""

from __future__ import annotations

import argparse

from review_gate import api
from review_gate.models import ReviewReport
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import output_targets
from review_gate.surfaces.commands.emit import emit
from review_gate.text.escape import sanitize


def replay_command(args: argparse.Namespace) -> int:
    targets = output_targets(args)
    report, before = api.replay(args.bundle, config=args.config, fail_on=args.fail_on,
                                filter_mode=args.filter_mode)
    emit(report, targets, verbose=args.verbose)
    console.err(sanitize(changes(before, report)))
    return report.exit_code


def changes(before: ReviewReport, after: ReviewReport) -> str:
    """One line: the decision and the counts of the bundle's run against the replay's."""
    def counts(r: ReviewReport) -> str:
        m = r.metrics
        return (f"issues={m.total} (critical={m.critical} major={m.major} warning={m.warning} info={m.info}) "
                f"waived={len(r.waived)} filtered={r.coverage.findings_filtered}")

    b, a = counts(before), counts(after)
    if before.decision == after.decision and b == a:
        return f"replay: unchanged: {after.decision}, {a}"
    decision = (f"{before.decision} -> {after.decision}" if before.decision != after.decision
                else f"{after.decision} (unchanged)")
    return f"replay: decision {decision}; {b} -> {a}"
