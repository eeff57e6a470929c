"""``review-gate sweep [PATHSPEC...]``: the files as they are, each reviewed as if added whole."""

from __future__ import annotations

import argparse
import sys

import anyio

from review_gate import api
from review_gate.errors import UsageError
from review_gate.models import ReviewReport
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import advisory, check_concurrency, check_timeout, output_targets
from review_gate.surfaces.commands.emit import show, text_renderers
from review_gate.surfaces.commands.progress import Progress


def sweep_command(args: argparse.Namespace) -> int:
    from review_gate.pipeline import shards

    check_concurrency(args.concurrency)
    if args.exit_zero and args.fail_on is not None:
        raise UsageError("--exit-zero and --fail-on both set the exit code", fix="give one of them")
    if args.baseline is not None and args.no_baseline:
        raise UsageError("--baseline and --no-baseline contradict each other", fix="give one of them")
    check_timeout(args.timeout)
    targets = output_targets(args)
    files = [(fmt, path) for fmt, path in targets if path is not None and path != "-"]
    share = shards.parse(args.shard) if args.shard else None
    reports: list[ReviewReport] = []

    async def main() -> None:
        with Progress(live=console.is_interactive(sys.stderr)) as progress:
            reports.append(await api.sweep_async(
                args.paths, since=args.since, config=args.config, fail_on=args.fail_on,
                filter_mode=args.filter_mode, offline=args.offline, concurrency=args.concurrency,
                agent_timeout=args.timeout, constitution=args.constitution, baseline=args.baseline,
                use_baseline=not args.no_baseline, packing=args.packing, state=not args.no_state,
                cache=not args.no_cache, outputs=files, bundle_dir=args.bundle, listener=progress, shard=share,
                max_file_bytes=args.max_file_bytes))

    anyio.run(main)
    [report] = reports
    show(report, targets, text_renderers(args.verbose), verbose=args.verbose)
    return advisory(report.exit_code) if args.exit_zero else report.exit_code
