"""``review-gate loop start|status|approve|reject|retry|cancel|log``: the coder/reviewer loop.

Every command is its own process: it opens the run state, claims the task's session, acts,
advances the session as far as it goes without a person, and exits with where it stands:
0 complete (GO) or cancelled, 4 waiting for a person (an approval, a response to write, the
hand-off after max_iterations NO_GO), 3 stopped by an error, 2 refused (nothing changed).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import re
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from review_gate.errors import GitError, InputError, StateError, StepFailed, UsageError
from review_gate.loop import status as describe
from review_gate.loop import store as sessions
from review_gate.loop.engine import Loop, exit_code
from review_gate.loop.model import WAITING, Session, StartPhase
from review_gate.loop.verdict import MetaVerdict
from review_gate.models import ReviewConfig
from review_gate.state.location import state_file
from review_gate.state.store import Store, open_store
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import config_for, find_repo_root, load_config_dir

TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
START_FLAGS = ("start_phase", "prompt", "coder", "max_iterations", "mode", "approver", "base", "fail_on")


class _Reporter:
    def info(self, text: str) -> None:
        console.err(f"loop: {text}")

    def warn(self, text: str) -> None:
        console.err(f"loop: warning: {text}")


@dataclass
class _Opened:
    root: Path
    config: ReviewConfig
    store: Store


def loop_command(args: argparse.Namespace) -> int:
    actions: dict[str, Callable[[argparse.Namespace], int]] = {
        "start": _start, "status": _status, "approve": _approve, "reject": _reject, "retry": _retry,
        "cancel": _cancel, "log": _log}
    return actions[args.loop_command](args)


def _task(text: str) -> str:
    if not TASK_ID.fullmatch(text):
        raise UsageError(f"task id {text!r}: use letters, digits, '.', '_' and '-' (at most 100, not starting "
                         "with '.', '_' or '-')", fix="e.g. review-gate loop start fix-login")
    return text


@contextmanager
def _opened(args: argparse.Namespace, *, create: bool = True) -> Iterator[_Opened | None]:
    root = find_repo_root()
    if root is None:
        raise GitError("the loop works on a git repository's working tree, and this is not inside one",
                       fix="run it inside the repository the coder works in")
    config = config_for(args, root)
    store = open_store(state_file(config, root), create=create)
    if store is None:
        yield None
        return
    with store:
        yield _Opened(root, config, store)


def _engine(opened: _Opened, session: Session | None = None) -> Loop:
    """The engine for ``session``, with the configuration it was started with."""
    from review_gate.pipeline.bootstrap import standards

    config = opened.config
    if session is not None and session.config_dir != config.directory:
        config = load_config_dir(Path(session.config_dir) if session.config_dir else None)
    return Loop(opened.store, opened.root, config, _Reporter(), standards(config, opened.root, None))


def _claimed(opened: _Opened, task: str) -> Session:
    session = sessions.claim(opened.store, task)
    if session is None:
        raise UsageError(f"no loop session {task!r}",
                         fix="start one with `review-gate loop start TASK`; `review-gate loop status` lists them")
    return session


def _finish(opened: _Opened, loop: Loop, session: Session) -> int:
    sessions.release(opened.store, session.task)
    info = describe.state(session, loop.files(session), decisions=loop.decisions(session.task),
                          made=describe.made_by_gate(opened.store, session, loop.files(session)))
    console.out("\n".join(describe.lines(info)))
    return exit_code(session)


def _run(opened: _Opened, task: str, act: Callable[[Loop, Session], Session | Awaitable[Session]]) -> int:
    """Claim the session, act on it (an awaitable is run in an event loop), release it whatever happens."""
    session = _claimed(opened, task)
    try:
        loop = _engine(opened, session)
        result = act(loop, session)
        if inspect.isawaitable(result):
            result = _wait(result)
    except StateError as exc:  # the session was under way: a failed step (exit 3), not a refusal
        with contextlib.suppress(StateError):
            sessions.release(opened.store, task)
        raise StepFailed(f"loop session {task!r} stopped: {exc.message}", fix=exc.fix) from exc
    except BaseException:
        sessions.release(opened.store, task)
        raise
    return _finish(opened, loop, result)


def _wait(awaitable: Awaitable[Session]) -> Session:
    import anyio

    done: list[Session] = []

    async def main() -> None:
        done.append(await awaitable)

    anyio.run(main)
    return done[0]


# -- loop start -------------------------------------------------------------------------------


def _start(args: argparse.Namespace) -> int:
    task = _task(args.task)
    with _opened(args) as opened:
        assert opened is not None
        existing = sessions.claim(opened.store, task)
        if existing is not None and not existing.finished:
            return _resume(opened, args, existing)
        try:
            if existing is not None and not getattr(args, "restart", False):
                raise UsageError(f"loop session {task!r} exists already ({existing.phase}, started "
                                 f"{existing.created_at})",
                                 fix=f"use a new task id, or start it again with `review-gate loop start {task} "
                                     "--restart ...` (its files are kept aside)")
            _new_session(opened, args, task)
        except BaseException:
            if existing is not None:
                sessions.release(opened.store, task)
            raise
        return _run(opened, task, lambda loop, s: loop.advance(s))


def _new_session(opened: _Opened, args: argparse.Namespace, task: str) -> None:
    from review_gate.loop import pin, templates
    from review_gate.loop import settings as chosen

    start: StartPhase = args.start_phase or ("plan" if args.prompt else "review")
    if start in ("plan", "generate") and not args.prompt:
        raise UsageError(f"--from {start} needs the task: --prompt FILE (- for standard input)",
                         fix="describe the task in a file and pass --prompt FILE, or start at review")
    if args.max_iterations is not None and args.max_iterations < 1:
        raise UsageError(f"--max-iterations {args.max_iterations}: must be at least 1")
    effective = chosen.effective(opened.config.settings.loop, coder=args.coder, max_iterations=args.max_iterations,
                                 mode=args.mode, approvers=args.approver)
    chosen.check(effective, opened.config, start)
    templates.check(opened.config.directory)
    # Pinned now, for every review of the session: commits made since cannot move it (an unknown
    # ref is refused here, not at the first review).
    base_commit = pin.base_commit(opened.root, args.base)
    task_prompt = _read_prompt(args.prompt) if args.prompt else ""
    loop = _engine(opened)
    loop.create(task, start=start, task_prompt=task_prompt, settings=effective.settings, base=args.base,
                fail_on=args.fail_on, base_commit=base_commit, replace=bool(getattr(args, "restart", False)))


def _read_prompt(path: str) -> str:
    from review_gate.change.input_files import read_path, read_stream
    from review_gate.loop.files import MAX_CONTENT_BYTES

    fix = "give a readable UTF-8 text file that describes the task"
    if path == "-":
        data = read_stream(sys.stdin.buffer, limit=MAX_CONTENT_BYTES, name="the task on standard input", fix=fix)
    elif not Path(path).exists():
        raise InputError(f"--prompt {path}: no such file", fix="give the file that describes the task")
    else:
        data = read_path(path, limit=MAX_CONTENT_BYTES, name=f"--prompt {path}", fix=fix)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"--prompt {path}: cannot read it: {exc}", fix=fix) from None


def _resume(opened: _Opened, args: argparse.Namespace, session: Session) -> int:
    task = session.task
    given = [name for name in START_FLAGS if getattr(args, name, None) not in (None, [], False)]
    try:
        if getattr(args, "restart", False):
            raise UsageError(f"loop session {task!r} is not finished ({session.phase}); --restart starts a "
                             "complete or cancelled session again",
                             fix=f"cancel it first (`review-gate loop cancel {task}`), or resume it with "
                                 f"`review-gate loop start {task}` alone")
        if session.step == "human" or session.phase == "error":
            waits = ("stopped with an error: " + str(session.reason)) if session.phase == "error" else \
                f"waiting at {session.where} for {WAITING[str(session.waiting)]}"
            raise UsageError(f"loop session {task!r} exists and is {waits}",
                             fix=f"see `review-gate loop status {task}`; approve, reject, retry or cancel it "
                                 "(a cancelled session can be started again with --restart)")
        if given:
            raise UsageError(f"loop session {task!r} exists (interrupted at {session.where}); resuming takes no "
                             f"options ({', '.join('--' + g.replace('_', '-') for g in given)})",
                             fix=f"run `review-gate loop start {task}` alone to resume it, or cancel it first")
    except BaseException:
        sessions.release(opened.store, task)
        raise
    console.err(f"loop: {task}: resuming at {session.where} (step {session.step})")
    sessions.release(opened.store, task)
    return _run(opened, task, lambda loop, s: loop.advance(s))


# -- the person's commands --------------------------------------------------------------------


def _approve(args: argparse.Namespace) -> int:
    verdict: MetaVerdict | None = "PASS" if args.complete else "FAIL" if args.revise else None
    if args.replace and not args.feedback:
        raise UsageError("--replace replaces the review with --feedback TEXT", fix="give --feedback TEXT")
    with _opened(args) as opened:
        assert opened is not None
        return _run(opened, _task(args.task), lambda loop, s: loop.approve(
            s, verdict=verdict, replace=args.replace, feedback=args.feedback))


def _reject(args: argparse.Namespace) -> int:
    with _opened(args) as opened:
        assert opened is not None
        return _run(opened, _task(args.task), lambda loop, s: loop.reject(s, _feedback(args)))


def _retry(args: argparse.Namespace) -> int:
    with _opened(args) as opened:
        assert opened is not None
        return _run(opened, _task(args.task), lambda loop, s: loop.retry(s, _feedback(args)))


def _cancel(args: argparse.Namespace) -> int:
    with _opened(args) as opened:
        assert opened is not None
        return _run(opened, _task(args.task), lambda loop, s: loop.cancel(s))


def _feedback(args: argparse.Namespace) -> str:
    if not args.feedback.strip():
        raise UsageError("--feedback is empty", fix="say what should change")
    return str(args.feedback)


# -- status and log ---------------------------------------------------------------------------


def _status(args: argparse.Namespace) -> int:
    with _opened(args, create=False) as opened:
        root = opened.root if opened is not None else find_repo_root()
        assert root is not None  # _opened refuses a directory outside a repository
        infos, handoffs = describe.collect(root, opened.store if opened is not None else None, args.task)
    if args.task and not infos:
        raise UsageError(f"no loop session {args.task!r}", fix="`review-gate loop status` lists them")
    if args.format == "json":
        payload = infos[0] if args.task else {"sessions": infos, "handoffs_waiting": handoffs}
        console.out(json.dumps(payload, indent=2))
        return 0
    if not infos:
        console.out("no loop sessions; start one with `review-gate loop start TASK`")
    for info in infos:
        console.out("\n".join(describe.lines(info)))
    if handoffs and not args.task:
        console.out("hand-offs waiting for a person: " + ", ".join(f"{h['task']} ({h['file']})" for h in handoffs))
    return 0


def _review_log(root: Path, session: Session, decisions: list[dict[str, Any]]) -> dict[str, Any]:
    """Seed 001's review log of the session, read from the decision log it appends
    (``.review-gate/review-logs/<task>.jsonl``); when a write to that file failed (it is
    observability, not state), from the run state's copy of the records, and it says so."""
    from review_gate.loop import log
    from review_gate.loop.files import Files

    path = Files(root, session.task).log
    found = log.review_log(session.task, log.read(path), session.session_id)
    source = Files(root, session.task).shown(path)
    if len(found["iterations"]) < len(decisions):
        found = log.review_log(session.task, decisions, session.session_id)
        source = f"run state ({source} lacks some of the session's records)"
    return {**found, "review_log": source}


def _log(args: argparse.Namespace) -> int:
    task = _task(args.task)
    with _opened(args, create=False) as opened:
        session = sessions.load(opened.store, task) if opened is not None else None
        if opened is None or session is None:
            raise UsageError(f"no loop session {task!r}", fix="`review-gate loop status` lists them")
        events = sessions.events(opened.store, task)
    decisions = [e.detail for e in events if e.kind == "decision" and e.detail]
    if args.format == "json":
        console.out(json.dumps({**_review_log(opened.root, session, decisions), "task": task, "decisions": decisions,
                                "events": [{"at": e.at, "iteration": e.iteration, "phase": e.phase, "stage": e.stage,
                                            "kind": e.kind, "actor": e.actor, "file": e.file, "sha256": e.sha256,
                                            "feedback": e.feedback} for e in events]},
                               indent=2))
        return 0
    for e in events:
        if e.kind == "decision":
            continue
        parts = [e.at, f"#{e.iteration}", e.where, e.kind]
        parts += [f"by {e.actor}"] if e.actor else []
        parts += [f"{e.file} sha256 {e.sha256[:12]}"] if e.file and e.sha256 else []
        parts += [f"feedback: {' '.join(e.feedback.split())}"] if e.feedback else []
        console.out("  ".join(parts))
    for d in decisions:
        mark = "  (final)" if d.get("final") else ""
        console.out(f"decision: iteration {d.get('iteration')} {d.get('decision')}{mark}  {d.get('summary', '')}  "
                    f"run {d.get('run_id')}")
    return 0
