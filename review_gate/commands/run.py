"""``review-gate [run]``: all six stages, the outputs, and the exit code of the decision."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio
import anyio.to_thread

from review_gate import baseline, bundle, console, runner
from review_gate.commands.common import check_timeout, config_for, diff_request, find_repo_root, output_targets
from review_gate.commands.emit import emit
from review_gate.errors import UsageError
from review_gate.models import ReviewReport
from review_gate.outputs.progress import Progress
from review_gate.pipeline.dispatch import DispatchOptions
from review_gate.state.session import run_state
from review_gate.state.store import review_excludes, state_file


def _constitution(args: argparse.Namespace) -> str | None:
    """--constitution FILE, checked now: a missing file is the user's error, not a silent no-op."""
    if not args.constitution:
        return None
    path = Path(args.constitution)
    if not path.is_file():
        raise UsageError(f"--constitution {args.constitution}: no such file",
                         fix="name a Markdown file with a '## Standards' section")
    return str(path.resolve())


def run_command(args: argparse.Namespace) -> int:
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(f"--concurrency {args.concurrency}: must be at least 1")
    if args.exit_zero and args.fail_on is not None:
        raise UsageError("--exit-zero and --fail-on both set the exit code", fix="give one of them")
    if args.exit_zero:
        args.fail_on = "never"
    check_timeout(args.timeout)
    targets = output_targets(args)
    root = find_repo_root()
    request = diff_request(args, root)
    config = config_for(args, root)
    settings = config.settings
    options = DispatchOptions(
        concurrency=args.concurrency or settings.concurrency, timeout_s=args.timeout,
        default_timeout_s=settings.timeout_s, offline=args.offline, constitution=_constitution(args),
        repo_root=str(root) if root else None, config_dir=config.directory,
    )
    waivers = baseline.waivers_for_run(getattr(args, "baseline", None), getattr(args, "no_baseline", False),
                                       config.directory, root)
    bundle_dir = Path(args.bundle) if getattr(args, "bundle", None) else None
    if bundle_dir is not None:
        bundle.check_target(bundle_dir)  # before any agent runs
    reports: list[ReviewReport] = []
    plans: list[runner.Plan] = []
    excludes = frozenset() if args.no_state else review_excludes(state_file(config, root), root)

    async def read_input() -> None:
        # Returns nothing: asyncio builds the repr of a finished main task, and a report's
        # repr holds the whole diff.
        plans.append(await runner.plan(request, config, exclude=excludes, offline=args.offline))

    # The input first: a diff that cannot be read (no repository, a bad ref, a malformed diff)
    # must fail before the run state creates or writes anything.
    anyio.run(read_input)
    [plan] = plans
    state = run_state(config, root, enabled=not args.no_state, use_cache=not args.no_cache)

    async def main() -> None:
        run_id = runner.new_run_id()
        reuse = await anyio.to_thread.run_sync(state.start, plan, run_id)  # pending pairs before dispatch
        with Progress(live=console.is_interactive(sys.stderr)) as progress:
            reports.append(await runner.review(
                request, config, options, filter_mode=args.filter_mode, fail_on=args.fail_on,
                listener=progress, planned=plan, waivers={**waivers, **state.waivers}, run_id=run_id,
                reuse=reuse))
        await anyio.to_thread.run_sync(state.finish, reports[0])

    with state:  # run state (review_gate.state): cache, acceptances, history; --no-state skips it
        anyio.run(main)
    [report] = reports
    if bundle_dir is not None:
        bundle.write(bundle_dir, facts=plan.facts, classification=plan.classification,
                     manifest=plan.manifest.entries, gaps=plan.gaps, config=config, report=report,
                     info=bundle.BundleInfo(tool_version=report.tool_version, run_id=report.run_id,
                                            filter_mode=args.filter_mode, fail_on=args.fail_on,
                                            waivers={**waivers, **{f.fingerprint: f.waived
                                                                   for f in report.waived if f.waived}}))
    emit(report, targets)
    return report.exit_code

