"""``review-gate [run]``: all six stages, the outputs, and the exit code of the decision."""

from __future__ import annotations

import argparse
import functools
import sys

import anyio

from review_gate import api
from review_gate.change import git
from review_gate.change import intent as purpose
from review_gate.errors import UsageError
from review_gate.models import ReviewReport
from review_gate.outputs.agent import MAX_CHARS, MIN_CHARS
from review_gate.pipeline import shards
from review_gate.surfaces import console, quoted_agent_report
from review_gate.surfaces.commands.common import (
    advisory,
    check_concurrency,
    check_timeout,
    diff_request,
    find_repo_root,
    output_targets,
)
from review_gate.surfaces.commands.emit import show, text_renderers
from review_gate.surfaces.commands.progress import Progress


def run_command(args: argparse.Namespace) -> int:
    with git.one_run():  # the request's questions about refs are asked again by the review
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    check_concurrency(args.concurrency)
    if args.exit_zero and args.fail_on is not None:
        raise UsageError("--exit-zero and --fail-on both set the exit code", fix="give one of them")
    if args.baseline is not None and args.no_baseline:
        raise UsageError("--baseline and --no-baseline contradict each other", fix="give one of them")
    check_timeout(args.timeout)
    if args.intent == "-" and args.diff == "-":
        raise UsageError("--intent - and --diff - both read standard input",
                         fix="give one of them as a file (--intent FILE or --diff FILE)")
    added = added_agents(args.add_agents)
    targets = output_targets(args)
    check_max_chars(args.max_chars, [fmt for fmt, _ in targets])
    intent = purpose.read(args.intent) if args.intent is not None else None  # refused before anything runs
    request = diff_request(args, find_repo_root())  # checked with the flags' own words
    # The agent format quotes the lines its findings flag, read again from this change.
    renderers: dict[str, api.Render] = {
        "agent": functools.partial(quoted_agent_report.render, request=request,
                                   max_chars=args.max_chars or MAX_CHARS), **text_renderers(args.verbose)}
    files: list[tuple[str | api.Render, str]] = [
        (renderers.get(fmt, fmt), path) for fmt, path in targets if path is not None and path != "-"]
    share = shards.parse(args.shard) if args.shard else None
    if args.llm == "host":
        for flag, given in (("--offline", args.offline), ("--shard", share), ("--bundle", args.bundle),
                            ("--no-state", args.no_state), ("--add-agent", added)):
            if given:
                raise UsageError(f"--llm host and {flag}: a host review waits in the run state for the host's "
                                 "answers, over the whole change", fix=f"drop {flag}, or review without --llm host")
        from review_gate.surfaces.commands import collect

        return collect.start(args, request, files, intent)
    reports: list[ReviewReport] = []

    async def main() -> None:  # returns nothing: asyncio keeps a finished task's repr, and a report is big
        live = console.is_interactive(sys.stderr)
        # Off a terminal, the text report on stdout lists the agents: a line each on stderr too
        # would say it all twice in a CI log (and a pre-commit hook's).
        quiet = not live and any(fmt == "text" and path in (None, "-") for fmt, path in targets)
        with Progress(live=live, quiet=quiet) as progress:
            reports.append(await api.review_async(
                request=request, config=args.config, fail_on=args.fail_on, filter_mode=args.filter_mode,
                offline=args.offline, concurrency=args.concurrency, agent_timeout=args.timeout,
                constitution=args.constitution, baseline=args.baseline, use_baseline=not args.no_baseline,
                packing=args.packing, state=not args.no_state, cache=not args.no_cache, outputs=files,
                bundle_dir=args.bundle, listener=progress, shard=share, add_agents=added, intent=intent))

    anyio.run(main)
    [report] = reports
    show(report, targets, renderers, verbose=args.verbose)
    return advisory(report.exit_code) if args.exit_zero else report.exit_code


def added_agents(pairs: list[list[str | None]] | None) -> list[tuple[str, str]]:
    """The --add-agent ID[:GLOB] --gap-reason TEXT pairs; an agent without its reason is refused."""
    out = []
    for target, reason in pairs or []:
        assert target is not None
        if reason is None or not reason.strip():
            raise UsageError(f"--add-agent {target}: " + ("no --gap-reason after it" if reason is None
                                                           else "its --gap-reason is empty"),
                             fix=f"say why the change needs it: --add-agent {target} --gap-reason TEXT")
        out.append((target, reason))
    return out


def check_max_chars(value: int | None, formats: list[str]) -> None:
    if value is None:
        return
    if "agent" not in formats:
        raise UsageError(f"--max-chars {value}: only the agent format is bounded by it",
                         fix="add --format agent, or drop --max-chars")
    if value < MIN_CHARS:
        raise UsageError(f"--max-chars {value}: the agent report needs at least {MIN_CHARS} characters",
                         fix=f"give {MIN_CHARS} or more (default {MAX_CHARS})")
