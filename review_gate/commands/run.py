"""``review-gate [run]``: all six stages, the outputs, and the exit code of the decision."""

from __future__ import annotations

import argparse
import sys

import anyio

from review_gate import api, console, shard
from review_gate.commands.common import check_timeout, diff_request, find_repo_root, output_targets
from review_gate.commands.emit import show
from review_gate.commands.progress import Progress
from review_gate.errors import UsageError
from review_gate.models import ReviewReport


def run_command(args: argparse.Namespace) -> int:
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(f"--concurrency {args.concurrency}: must be at least 1")
    if args.exit_zero and args.fail_on is not None:
        raise UsageError("--exit-zero and --fail-on both set the exit code", fix="give one of them")
    if args.exit_zero:
        args.fail_on = "never"
    if args.baseline is not None and args.no_baseline:
        raise UsageError("--baseline and --no-baseline contradict each other", fix="give one of them")
    check_timeout(args.timeout)
    targets = output_targets(args)
    request = diff_request(args, find_repo_root())  # checked with the flags' own words
    files = [(fmt, path) for fmt, path in targets if path is not None and path != "-"]
    share = shard.parse(args.shard) if args.shard else None
    reports: list[ReviewReport] = []

    async def main() -> None:  # returns nothing: asyncio keeps a finished task's repr, and a report is big
        with Progress(live=console.is_interactive(sys.stderr)) as progress:
            reports.append(await api.review_async(
                request=request, config=args.config, fail_on=args.fail_on, filter_mode=args.filter_mode,
                offline=args.offline, concurrency=args.concurrency, agent_timeout=args.timeout,
                constitution=args.constitution, baseline=args.baseline, use_baseline=not args.no_baseline,
                packing=args.packing, state=not args.no_state, cache=not args.no_cache, outputs=files,
                bundle_dir=args.bundle, listener=progress, shard=share))

    anyio.run(main)
    [report] = reports
    show(report, targets)
    return report.exit_code
