"""``review-gate replay DIR``: aggregate a bundle's agent results again and decide, calling no agent.

With the bundle's own config/ it reproduces the run's decision; with ``--config DIR``,
``--filter-mode`` or ``--fail-on`` it shows what a rule or gate change would have decided.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from review_gate import __version__, bundle, console, runner
from review_gate.commands.common import load_config_dir, output_targets
from review_gate.commands.emit import emit
from review_gate.config import locate_config_dir
from review_gate.escape import sanitize
from review_gate.models import ReviewReport
from review_gate.pipeline.aggregate import aggregate


def replay_command(args: argparse.Namespace) -> int:
    targets = output_targets(args)
    directory = Path(args.bundle)
    saved = bundle.read(directory)
    config_path = locate_config_dir(args.config, None) if args.config else bundle.config_dir(directory)
    config = load_config_dir(config_path)
    info = saved.info
    report = aggregate(
        saved.facts, saved.classification, saved.manifest, saved.gaps, saved.results, config,
        run_id=runner.new_run_id(), tool_version=__version__,
        filter_mode=args.filter_mode or info.filter_mode, fail_on=args.fail_on or info.fail_on,
        waivers=info.waivers,
    )
    emit(report, targets)
    console.err(sanitize(changes(saved.report, report)))
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
