"""``review-gate [run]``: all six stages, the outputs, and the exit code of the decision."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from review_gate import bootstrap, bundle, console, runner
from review_gate.commands.common import check_timeout, config_for, diff_request, find_repo_root, output_targets
from review_gate.commands.emit import emit
from review_gate.commands.progress import Progress
from review_gate.errors import UsageError
from review_gate.models import Plan, PRFacts, ReviewReport
from review_gate.own_files import blob_ids, relative
from review_gate.state.session import NoState, run_state

if TYPE_CHECKING:
    import httpx


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
    setup = bootstrap.setup(
        root=root, config=config_for(args, root), request=diff_request(args, root), offline=args.offline,
        concurrency=args.concurrency, timeout_s=args.timeout, constitution=args.constitution,
        baseline_file=args.baseline, no_baseline=args.no_baseline, packing=args.packing)
    bundle_dir = Path(args.bundle) if args.bundle else None
    if bundle_dir is not None:
        bundle.check_target(bundle_dir)  # before any agent runs
    done: list[tuple[Plan, ReviewReport, dict[str, str]]] = []

    async def main() -> None:
        # Returns nothing: asyncio builds the repr of a finished main task, and a report's
        # repr holds the whole diff.
        facts = await runner.read_change(setup.request)
        # The run state is opened only once the change is known not to bring its own.
        state = run_state(setup.config, root, enabled=not args.no_state and setup.state_trusted(facts),
                          use_cache=not args.no_cache)
        # One HTTP client for the run (the gap detector and every llm agent), when it may use one.
        connection = runner.connect() if setup.networked() else contextlib.nullcontext()
        with state:  # cache, acceptances, history; --no-state skips it
            async with connection as http:
                await review(facts, state, http)
            the_plan, report, waivers = done[0]
            files = _write(report, the_plan, waivers)
            await anyio.to_thread.run_sync(state.record_written, report.run_id, files)

    async def review(facts: PRFacts, state: NoState, http: httpx.AsyncClient | None) -> None:
        config = setup.config
        the_plan = await runner.plan(facts, config, own=setup.own_files(state.written()), offline=args.offline,
                                     http=http)
        waivers = setup.waivers(facts)
        run_id = runner.new_run_id()
        reuse = await anyio.to_thread.run_sync(state.start, the_plan, run_id, setup.extras(), setup.options.packing)
        with Progress(live=console.is_interactive(sys.stderr)) as progress:
            report = await runner.review(
                the_plan, config, setup.options, filter_mode=args.filter_mode, fail_on=args.fail_on,
                listener=progress, waivers={**waivers, **state.waivers}, run_id=run_id, reuse=reuse, http=http)
        await anyio.to_thread.run_sync(state.finish, report)
        done.append((the_plan, report, waivers))

    def _write(report: ReviewReport, the_plan: Plan, waivers: dict[str, str]) -> list[tuple[str, list[str], str]]:
        """Bundle and reports; what landed inside the repository, for the next run to leave out."""
        written: list[tuple[Path, bytes, str]] = []
        if bundle_dir is not None:
            written += [(p, data, "bundle") for p, data in bundle.write(
                bundle_dir, facts=the_plan.facts, classification=the_plan.classification,
                manifest=the_plan.manifest.entries, gaps=the_plan.gaps, config=setup.config, report=report,
                info=bundle.BundleInfo(tool_version=report.tool_version, run_id=report.run_id,
                                       filter_mode=args.filter_mode, fail_on=args.fail_on,
                                       waivers={**waivers, **{f.fingerprint: f.waived
                                                              for f in report.waived if f.waived}}))]
        written += [(p, data, "report") for p, data in emit(report, targets)]
        return [(rel, blob_ids(data), kind) for path, data, kind in written
                if (rel := relative(path, root)) is not None]

    anyio.run(main)
    return done[0][1].exit_code
