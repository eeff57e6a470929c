"""``review-gate --llm host`` and ``review-gate collect``: a review whose llm reviewers the coding
agent's host answers with its sub-agents (review tasks in the run's directory, answers handed back)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from review_gate import api
from review_gate.errors import UsageError
from review_gate.pipeline.normalize import DiffRequest
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import output_targets
from review_gate.surfaces.commands.emit import show, text_renderers
from review_gate.surfaces.commands.progress import Progress
from review_gate.text.escape import sanitize

EXIT_PENDING = 3  # nothing decided yet, as for an incomplete run: a script never reads it as a pass
SELF_REVIEW = ("A host review is a self-review by the reviewed agent's own host: every report says "
               "`reviewed by: host sub-agent`; it adds findings and never lowers another reviewer's.")


def start(args: argparse.Namespace, request: DiffRequest, files: list[tuple[str | api.Render, str]],
          intent: str | None) -> int:
    """``run --llm host``: the local agents run now, each llm request becomes a task for the host."""
    found: list[api.HostStarted] = []

    async def main() -> None:
        with Progress(live=console.is_interactive(sys.stderr)) as progress:
            found.append(await api.host_start_async(
                request=request, config=args.config, fail_on=args.fail_on, filter_mode=args.filter_mode,
                concurrency=args.concurrency, agent_timeout=args.timeout, constitution=args.constitution,
                baseline=args.baseline, use_baseline=not args.no_baseline, packing=args.packing,
                cache=not args.no_cache, outputs=files, listener=progress, intent=intent,
                ci=True if args.ci else None))

    anyio.run(main)
    [started] = found
    if started.report is not None:
        console.err(f"review-gate: run {started.run_id}: nothing to ask the host (every llm reviewer's answer is "
                    "fresh, none is routed, or a host review does not count here); the run is decided")
        show(started.report, output_targets(args), text_renderers(args.verbose), verbose=args.verbose)
        return started.report.exit_code
    show_tasks(started)
    return EXIT_PENDING


def show_tasks(started: api.HostStarted) -> None:
    run = started.run_id
    console.out(f"run {run} waits for the host: {len(started.tasks)} review task(s) in "
                f"{sanitize(started.directory)}/tasks/")
    for task in started.tasks:
        files = ", ".join(task.files[:3]) + (f" and {len(task.files) - 3} more" if len(task.files) > 3 else "")
        console.out(sanitize(f"  {task.task}: {', '.join(task.agents)} on {files}"))
    if started.local_agents:
        console.out(f"ran now: {', '.join(started.local_agents)} (their findings wait in the run)")
    if started.not_run:
        console.out(sanitize(f"did not run: {'; '.join(started.not_run)}"))
    console.out("Run each task with a sub-agent: give it the task file's messages (system, then user) and its "
                "answer_schema; it answers with one JSON object.")
    console.out(f"Hand each answer back:  review-gate collect {run} --answer TASK FILE   (FILE: the JSON; - reads "
                "standard input)")
    console.out(f"Then decide the gate:   review-gate collect {run}   (a task with no answer is a reviewer that did "
                "not run, never a pass)")
    console.out(SELF_REVIEW)
    console.err(f"review-gate: nothing decided yet: {len(started.tasks)} task(s) wait for the host (exit "
                f"{EXIT_PENDING})")


def collect_command(args: argparse.Namespace) -> int:
    targets = output_targets(args)
    if args.list:
        if args.answer:
            raise UsageError("--list lists the tasks; it takes no --answer", fix="give one of them")
        return _list(args)
    taken = None
    for task, source in args.answer:
        if args.run is None:
            raise UsageError(f"--answer {task}: name the run it answers", fix="review-gate collect RUN --answer "
                                                                             "TASK FILE")
        taken = api.host_answer(args.run, task, _read(source, task), config=args.config)
        console.out(f"task {taken.task} of run {taken.run_id}: answer taken ({taken.findings} finding(s))")
    if taken is not None and taken.unanswered:
        console.out(f"run {taken.run_id}: {len(taken.unanswered)} task(s) still unanswered: "
                    f"{', '.join(taken.unanswered)}. Hand them back the same way; `review-gate collect "
                    f"{taken.run_id}` decides now without them (they count as reviewers that did not run)")
        return 0
    run = taken.run_id if taken is not None else args.run
    files = [(fmt, path) for fmt, path in targets if path is not None and path != "-"]
    collected = anyio.run(lambda: api.host_collect_async(run, config=args.config, outputs=files))
    if collected.already:
        console.err(f"review-gate: run {collected.run_id} was collected already; nothing done "
                    f"(its report: review-gate show {collected.run_id})")
    elif collected.unanswered:
        console.err(f"review-gate: {len(collected.unanswered)} task(s) had no answer "
                    f"({', '.join(collected.unanswered)}): their reviewers did not run")
    show(collected.report, targets, text_renderers(args.verbose), verbose=args.verbose)
    return collected.report.exit_code


def _read(source: str, task: str) -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise UsageError(f"--answer {task} {source}: cannot read it ({reason}); the task stays unanswered",
                         fix="give the file the sub-agent's JSON answer was written to") from None


def _list(args: argparse.Namespace) -> int:
    found = api.host_tasks(args.run, config=args.config)
    console.out(f"run {found.run_id}: {found.state}; tasks in {sanitize(found.directory)}/tasks/")
    for state in found.states:
        mark = "answered" if state.answered else "waiting"
        console.out(sanitize(f"  {state.task}: {mark}: {', '.join(state.agents)} on {', '.join(state.files)}"))
    return 0
