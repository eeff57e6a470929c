"""``review-gate merge REPORT...``: the shards of one run as one report and one decision."""

from __future__ import annotations

import argparse

from review_gate import api
from review_gate.surfaces.commands.common import output_targets
from review_gate.surfaces.commands.emit import show, text_renderers


def merge_command(args: argparse.Namespace) -> int:
    targets = output_targets(args)
    files = [(fmt, path) for fmt, path in targets if path is not None and path != "-"]
    report = api.merge(args.reports, config=args.config, fail_on=args.fail_on, outputs=files)
    show(report, targets, text_renderers(args.verbose), verbose=args.verbose)
    return report.exit_code
