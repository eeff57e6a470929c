"""``review-gate batch submit | status | collect``: a run executed by the providers' batch APIs."""

from __future__ import annotations

import argparse
import json
import sys

import anyio

from review_gate import api
from review_gate.errors import UsageError
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import (
    check_concurrency,
    check_timeout,
    diff_request,
    find_repo_root,
    output_targets,
)
from review_gate.surfaces.commands.emit import show, text_renderers
from review_gate.surfaces.commands.progress import Progress
from review_gate.text.escape import sanitize

EXIT_PENDING = 3  # nothing decided yet, as for an incomplete run


def batch_command(args: argparse.Namespace) -> int:
    return {"submit": _submit, "status": _status, "collect": _collect}[args.batch_command](args)


def _submit(args: argparse.Namespace) -> int:
    if args.paths and not args.sweep:
        raise UsageError(f"PATHSPEC {args.paths[0]}: pathspecs name the files of a sweep",
                         fix="add --sweep, or name the change with --base/--head/--staged/--diff")
    if args.sweep and (args.diff or args.base or args.head or args.staged or args.pre_push):
        raise UsageError("--sweep reviews the files as they are; it takes no --diff, --base, --head or --staged",
                         fix="give --sweep [--since REF] [PATHSPEC...], or a change without --sweep")
    if args.since and not args.sweep:
        raise UsageError("--since limits a sweep", fix="add --sweep")
    check_concurrency(args.concurrency)
    check_timeout(args.timeout)
    request = None if args.sweep else diff_request(args, find_repo_root())
    found: list[api.BatchSubmitted] = []

    async def main() -> None:
        with Progress(live=console.is_interactive(sys.stderr)) as progress:
            found.append(await api.batch_submit_async(
                request=request, sweep=args.paths if args.sweep else None, since=args.since,
                max_file_bytes=args.max_file_bytes, config=args.config, fail_on=args.fail_on,
                filter_mode=args.filter_mode, concurrency=args.concurrency, agent_timeout=args.timeout,
                constitution=args.constitution, baseline=args.baseline, use_baseline=not args.no_baseline,
                packing=args.packing, cache=not args.no_cache, bundle_dir=args.bundle, listener=progress))

    anyio.run(main)
    [sent] = found
    if args.summary_format == "json":
        sys.stdout.write(json.dumps(_submitted_data(sent), indent=2) + "\n")
    else:
        _show_submitted(sent)
    if sent.report is not None:
        show(sent.report, [])  # its summary line
        return sent.report.exit_code
    return 0


def _submitted_data(sent: api.BatchSubmitted) -> dict[str, object]:
    return {"run_id": sent.run_id, "requests": sent.requests, "local_agents": sent.local_agents,
            "not_run": sent.not_run,
            "batches": [vars(b) for b in sent.batches], "tokens_in": sent.tokens_in,
            "max_tokens_out": sent.max_tokens_out, "max_cost_usd": sent.max_cost_usd,
            "max_cost_interactive_usd": sent.max_cost_interactive_usd,
            "finished": sent.report is not None,
            "decision": sent.report.decision if sent.report else None,
            "exit_code": sent.report.exit_code if sent.report else None}


def _show_submitted(sent: api.BatchSubmitted) -> None:
    if sent.report is not None:
        console.out(f"run {sent.run_id}: nothing to send to a batch API (every llm pair fresh, or no llm agent "
                    "can run); the run is finished")
        return
    console.out(f"run {sent.run_id}: {sent.requests} request(s) submitted")
    for b in sent.batches:
        console.out(f"  {b.provider} batch {b.batch_id} at {b.endpoint}: {b.requests} request(s), {b.status}")
    if sent.local_agents:
        console.out(f"  ran locally now: {', '.join(sent.local_agents)} (their findings wait in the run)")
    if sent.not_run:
        console.out(sanitize(f"  did not run: {'; '.join(sent.not_run)}"))
    console.out(f"  about {sent.tokens_in} input tokens, at most {sent.max_tokens_out} output tokens; at most "
                f"${sent.max_cost_usd:.4f} at batch prices (${sent.max_cost_interactive_usd:.4f} interactive)")
    console.out(f"collect it with: review-gate batch collect {sent.run_id}")


def _status(args: argparse.Namespace) -> int:
    seen = anyio.run(lambda: api.batch_status_async(args.run, config=args.config))
    if args.summary_format == "json":
        sys.stdout.write(json.dumps({"run_id": seen.run_id, "state": seen.state, "ended": seen.ended,
                                     "batches": [vars(b) for b in seen.batches]}, indent=2) + "\n")
        return 0
    console.out(f"run {seen.run_id}: {seen.state}" + (", every batch ended" if seen.ended and seen.state ==
                                                        "submitted" else ""))
    for b in seen.batches:
        counts = ", ".join(f"{k} {v}" for k, v in b.counts.items())
        console.out(f"  {b.provider} batch {b.batch_id}: {b.status}" + (f" ({counts})" if counts else ""))
    return 0


def _collect(args: argparse.Namespace) -> int:
    targets = output_targets(args)
    for flag, value in (("--wait", args.wait), ("--poll", args.poll)):
        if value is not None and not 0 < value <= 7 * 24 * 3600:
            raise UsageError(f"{flag} {value:g}: must be more than 0 seconds and at most a week")
    files = [(fmt, path) for fmt, path in targets if path is not None and path != "-"]
    collected = anyio.run(lambda: api.batch_collect_async(args.run, config=args.config, wait_s=args.wait,
                                                          poll_s=args.poll, outputs=files, bundle_dir=args.bundle))
    if collected.pending is not None:
        states = ", ".join(f"{b.provider} {b.batch_id} {b.status}" for b in collected.pending.batches)
        console.err(f"review-gate: run {collected.run_id} is still running at its provider ({states}); "
                    "nothing was decided. Collect it again later, or wait with --wait SECONDS")
        return EXIT_PENDING
    assert collected.report is not None
    if collected.already:
        console.err(f"review-gate: run {collected.run_id} was collected already; nothing done "
                    f"(its report: review-gate show {collected.run_id})")
    show(collected.report, targets, text_renderers(args.verbose), verbose=args.verbose)
    return collected.report.exit_code
