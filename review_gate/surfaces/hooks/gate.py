"""The review a hook runs, within the host's time, and the answer it gives.

What is reviewed: before a stop or a ``git commit``, the working tree against the base (what
the agent leaves behind, untracked files included) and, when something is staged, the index
against HEAD (what ``git commit`` records, which the working tree may no longer show); before
a ``git push``, everything the remotes lack up to HEAD (with ``--base``, the commits since the
base); before ``gh pr create``, the commits since the base (the pull request's content). A
command that does several of these (``git commit -am x && git push``) gets every review it
calls for, in that order, within one budget; the first that fails decides.

Time: a host kills a hook that outlives its ``timeout``, and a killed hook blocks nothing. So
the review gets ``budget`` seconds in all (``hooks.budget``): agents that need no network always
run; LLM reviewers run with their deadline clipped to what is left, and are left out (counted as
skipped, said on a line of its own) only when even that is too short. A review that overruns the
budget anyway is cut off, and the answer is a block: nothing was decided.

A person's steps: before any review, a tool call that would waive findings or write the
configuration (``base.persons_step``) is denied, whatever the gate says, with a reason that
says a person must take it.

Stops: a failing gate blocks the stop, with the agent report as the agent's next instruction,
at most ``max_blocks`` times in a row per session (counted in the run state). The next stop is
let through with a hand-off line for the person; a stop that the gate passes, or one that is
not a continuation (``stop_hook_active`` false), starts the count again. Should the count be
unreadable, a continuation is let through: a hook must never trap an agent. Tool calls (a
commit, a push, a pull request) are denied while the gate fails, with no limit: letting a push
through after three tries would turn the gate into a delay.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio

from review_gate import api
from review_gate.change import git
from review_gate.errors import ReviewGateError
from review_gate.models import FailOn
from review_gate.models.report import summary_line
from review_gate.outputs.agent import MAX_CHARS
from review_gate.pipeline.normalize import DiffRequest
from review_gate.state import blocks
from review_gate.state.location import state_file
from review_gate.state.store import Store, open_store
from review_gate.surfaces import console, quoted_agent_report
from review_gate.surfaces.hooks import host_review
from review_gate.surfaces.hooks.base import (
    EDIT_TOOLS,
    SHELL_TOOLS,
    TOOL_EVENT,
    Gate,
    Outcome,
    Payload,
    adds_waiver,
    elsewhere,
    gates_for,
    persons_step,
)
from review_gate.surfaces.hooks.budget import plan_time
from review_gate.surfaces.hooks.claude_code import NAME as CLAUDE_CODE
from review_gate.surfaces.hooks.task import session_task
from review_gate.text.escape import sanitize

FRAME_CHARS = 400  # of --max-chars, kept for the hook's own lines around the report


@dataclass(frozen=True)
class Options:
    max_blocks: int = 3
    budget_s: float = 50.0
    base: str | None = None
    config: str | None = None
    fail_on: FailOn | None = None
    max_chars: int = MAX_CHARS


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str
    summary: str = ""
    note: str = ""  # what the person watching is told when it passes (reviewers left out, and why)


PERSONS_STEP = (
    "review-gate denied this tool call: it would waive review-gate's findings or change the configuration that "
    "judges your work (`review-gate accept`, `baseline`, `gaps --apply` or `init`, or a write into {where}). "
    "Only a person may do that, never the agent whose work is reviewed. Fix what the review found instead; if you "
    "believe a finding is wrong or cannot fix it, stop and ask a person, who can run `review-gate accept ID "
    "--reason TEXT` or change the configuration in a terminal.")

ELSEWHERE = (
    "review-gate denied this tool call: it would commit, push or open a pull request for another repository, work "
    "tree or index than the one the hook reviews (the directory the command starts in), through `git -C DIR`, "
    "`--git-dir`, `--work-tree`, `GIT_DIR=`, `GIT_INDEX_FILE=` or a `cd`/`pushd` earlier on the line, or to a "
    "directory that is not named on the line. Run it from the repository's own directory: `cd DIR` as a command of "
    "its own, then the git command by itself, so that the hook reviews the repository it runs in.")


WAIVER = (
    "review-gate denied this tool call: it adds an inline waiver (`{comment}`), which would waive a finding of the "
    "work under review. An agent never waives its own findings. Fix what the review found instead; if you believe a "
    "finding is wrong, stop and ask a person, who may add the waiver (with its reason) in an editor.")


def _peer_codes(payload: Payload, options: Options) -> list[str]:
    """The peer codes the configuration's rules name (``Rule.peers``), when a tool call writes."""
    if payload.event != TOOL_EVENT or payload.tool_name not in (*SHELL_TOOLS, *EDIT_TOOLS):
        return []
    cwd = Path(payload.cwd) if payload.cwd else Path.cwd()
    try:
        config = api.load(options.config, git.repo_root(cwd) if cwd.is_dir() else None)
    except ReviewGateError:
        return []  # a review of the change will report the configuration; the review-gate marker is still denied
    return [code for rule in config.rules.rules if rule.enabled for code in rule.peers]


def decide(host: str, payload: Payload, options: Options) -> Outcome:
    """The hook's answer to ``payload``: denied when it takes a step only a person may take,
    reviewed when its event calls for a review."""
    with git.one_run():  # the root, HEAD and the default branch asked of git once for the event
        return _decide(host, payload, options)


def _decide(host: str, payload: Payload, options: Options) -> Outcome:
    protected, exempt = configuration(payload, options)
    if persons_step(payload, protected, exempt):
        where = ", ".join(sorted({_shown(p, payload) for p in protected})) or "the configuration"
        return Outcome("deny", reason=PERSONS_STEP.format(where=sanitize(where)))
    if elsewhere(payload):
        return Outcome("deny", reason=ELSEWHERE)
    here = Path(payload.cwd) if payload.cwd else Path.cwd()
    writes = payload.tool_name in (*SHELL_TOOLS, *EDIT_TOOLS) and here.is_dir()
    waiver = adds_waiver(payload, lambda: _peer_codes(payload, options), git.repo_root(here) if writes else None)
    if waiver is not None:
        return Outcome("deny", reason=WAIVER.format(comment=sanitize(waiver)))
    gates = gates_for(payload)
    if not gates:
        return Outcome("allow")
    cwd = Path(payload.cwd) if payload.cwd else Path.cwd()
    root = git.repo_root(cwd) if cwd.is_dir() else None
    if root is None:
        return Outcome("allow", note=f"review-gate: {cwd} is not inside a git repository; nothing was reviewed")
    verdict = review(gates, root, options, intent=session_task(payload.transcript) if host == CLAUDE_CODE else None,
                     hosted=host == CLAUDE_CODE and gates == ("stop",))
    if gates != ("stop",):
        return Outcome("allow", note=verdict.note) if verdict.passed else Outcome("deny", reason=verdict.reason)
    return _stop(host, payload, verdict, root, options)


def configuration(payload: Payload, options: Options) -> tuple[list[Path], list[Path]]:
    """What an agent must not write: the configuration's directories (``.review-gate/`` at the
    repository root, whether or not it exists yet; ``--config``; ``$REVIEW_GATE_CONFIG``) and
    the hosts' hook settings, which would turn the hook off; and inside them what it may: the
    loop's session files, where a coder writes its responses."""
    from review_gate.surfaces.hooks import HOSTS

    cwd = Path(payload.cwd) if payload.cwd else Path.cwd()
    writes = payload.event == TOOL_EVENT and payload.tool_name in (*SHELL_TOOLS, *EDIT_TOOLS)
    root = git.repo_root(cwd) if writes and cwd.is_dir() else None
    found = [Path(given).absolute() for given in (options.config, os.environ.get("REVIEW_GATE_CONFIG")) if given]
    if root is not None:
        found += [root / ".review-gate", *(root / h.SETTINGS for h in HOSTS.values()),
                  root / ".claude" / "settings.local.json"]
    # the loop's session files, where a coder writes its responses; a host review's tasks and answers
    return found, ([root / ".review-gate" / "sessions", root / ".review-gate" / "host"] if root is not None else [])


def _shown(path: Path, payload: Payload) -> str:
    """``path`` as the agent knows it: relative to its directory when inside it."""
    cwd = Path(payload.cwd) if payload.cwd else Path.cwd()
    with contextlib.suppress(ValueError):
        return str(path.relative_to(cwd))
    return str(path)


def review(gates: tuple[Gate, ...], root: Path, options: Options, *, intent: str | None = None,
           hosted: bool = False) -> Verdict:
    """The gate on each change ``gates`` stand for, within the budget; the first that fails
    decides; an error is a failing verdict. ``intent``: what the session was asked to do, for
    the LLM reviewers (``hooks.task``). ``hosted``: the host's sub-agents may answer the LLM
    reviewers when no key is set (``hooks.host_review``: a Claude Code stop)."""
    started = time.monotonic()
    out: list[Verdict] = []

    async def main() -> None:
        notes: list[str] = []
        for request, heading in _changes(gates, root, options.base):
            verdict = await _review(request, root, options, started, intent, hosted)
            if not verdict.passed:
                out.append(Verdict(False, _headed(verdict.reason, heading), verdict.summary))
                return
            notes += [verdict.note] if verdict.note and verdict.note not in notes else []
        out.append(Verdict(True, "", note="\n".join(notes)))

    try:
        anyio.run(main)
    except ReviewGateError as exc:
        fix = f"\nFix: {sanitize(exc.fix)}" if exc.fix else ""
        return Verdict(False, f"review-gate could not review the change, so the gate fails closed: "
                              f"{sanitize(exc.message)}{fix}\nIf you cannot fix this, stop and ask a human.")
    except Exception as exc:  # a hook that crashes blocks nothing: fail closed instead, and say why
        console.err(traceback.format_exc())
        return Verdict(False, f"review-gate failed with an internal error ({type(exc).__name__}), so the gate "
                              "fails closed. Stop and ask a human; the details are on the hook's standard error.")
    return out[0]


STAGED = ("[review-gate reviewed the staged changes (the index against HEAD), which `git commit` records "
          "whatever the working tree now holds. Fix what it found in the index (edit, then `git add`), or "
          "unstage it (`git restore --staged PATH`).]")
PUSHED = "[review-gate reviewed what this command would push.]"
OPENED = "[review-gate reviewed the pull request this command would open: the commits since the base.]"


def _headed(report: str, heading: str) -> str:
    """``heading`` under the report's verdict and summary lines, which come first."""
    if not heading:
        return report
    lines = report.split("\n")
    return "\n".join([*lines[:2], heading, *lines[2:]])


def _changes(gates: tuple[Gate, ...], root: Path, base: str | None) -> list[tuple[DiffRequest, str]]:
    """Each change to review for ``gates``, once, with the line that says what it was when it
    fails. A commit records the index, and the working tree may no longer show what is staged
    (a secret staged, then undone in the file): both are reviewed, the index only when it
    differs from HEAD."""
    changes: list[tuple[DiffRequest, str]] = []
    for gate in gates:
        if gate in ("stop", "commit"):
            head = git.resolve(root, "HEAD") if git.has_head(root) else git.empty_tree(root)
            if git.diff_staged(root, head):
                changes.append((api.change(cwd=root, staged=True), STAGED))
            changes.append((api.change(cwd=root, base=base), ""))
        elif gate == "push" and base is None:
            changes.append((api.change(cwd=root, pushed="HEAD"), PUSHED if len(gates) > 1 else ""))
        else:
            changes.append((api.change(cwd=root, base=base, head="HEAD"),
                            (PUSHED if gate == "push" else OPENED) if len(gates) > 1 else ""))
    unique: list[tuple[DiffRequest, str]] = []
    for request, heading in changes:
        if all(request != seen for seen, _ in unique):
            unique.append((request, heading))
    return unique


async def _review(request: DiffRequest, root: Path, options: Options, started: float,
                  intent: str | None = None, hosted: bool = False) -> Verdict:
    config = api.load(options.config, root)
    left = options.budget_s - (time.monotonic() - started)
    plan = plan_time(config, left, options.budget_s)
    by_host = hosted and host_review.wanted(config)
    with anyio.move_on_after(max(left, 1.0)) as scope:
        if by_host:
            waiting = await host_review.start(request, options.config, options.fail_on, intent)
            if waiting.report is None:
                return Verdict(False, host_review.block_reason(waiting), "REVIEW: PENDING (host review tasks)")
            report = waiting.report
        else:
            report = await api.review_async(request=request, config=options.config, fail_on=options.fail_on,
                                            llm_left_out=plan.left_out, agent_timeout=plan.agent_timeout,
                                            intent=None if plan.left_out else intent, committed_waivers=True)
    if scope.cancelled_caught:
        return Verdict(False, f"review-gate did not finish the review within the hook's budget of "
                              f"{options.budget_s:g} s, so nothing was decided and the gate fails closed. "
                              "Stop and ask a human to raise the hook's timeout and --budget, or to run "
                              "`review-gate` in a terminal.")
    text = quoted_agent_report.render(report, request, max(options.max_chars - FRAME_CHARS, 1000),
                                      rules=config.rules.rules)
    line = None if by_host else plan.line  # the host answered for the LLM reviewers: nothing was left out
    if line is not None:  # the true reason, on a line of its own that the size limit never cuts
        text = _headed(text, line)
    return Verdict(report.exit_code == 0, text, summary_line(report.verdict, report.metrics.total,
                                                             report.metrics.critical, report.metrics.missing_inputs),
                   note=line or "")


def _stop(host: str, payload: Payload, verdict: Verdict, root: Path, options: Options) -> Outcome:
    with _counter(root, options.config) as counter:
        if verdict.passed:
            counter.reset(host, payload.session)
            return Outcome("allow", note=verdict.note)
        if not payload.stop_hook_active:
            counter.reset(host, payload.session)  # a new stop, not the agent working on after a block
        spent = counter.count(host, payload.session)
        if (spent is None and payload.stop_hook_active) or (spent is not None and spent >= options.max_blocks):
            counter.reset(host, payload.session)
            return Outcome("allow", note=_hand_off(spent, verdict))
        number = counter.add(host, payload.session) or 1
    limit = (f"[review-gate blocked this stop ({number} of {options.max_blocks}): fix what it found and stop again. "
             f"After {options.max_blocks} blocked stops in a row it lets you stop and hands over to a person.]")
    return Outcome("block", reason=f"{verdict.reason}\n{limit}")


def _hand_off(spent: int | None, verdict: Verdict) -> str:
    times = f"after {spent} blocked stops in a row" if spent is not None else "(its block count is unreadable)"
    summary = f" ({verdict.summary})" if verdict.summary else ""
    return (f"review-gate: the gate still fails{summary} {times}; the agent was let stop. Over to you: "
            "run `review-gate` to see the findings, fix them or accept them.")


class _Counter:
    """Blocked stops in a row, in the run state; None where it cannot count (no usable state)."""

    def __init__(self, store: Store | None) -> None:
        self.store = store

    def count(self, host: str, session: str) -> int | None:
        return self._safely(lambda store: blocks.count(store, host, session))

    def add(self, host: str, session: str) -> int | None:
        return self._safely(lambda store: blocks.add(store, host, session))

    def reset(self, host: str, session: str) -> None:
        def action(store: Store) -> int:
            blocks.reset(store, host, session)
            return 0

        self._safely(action)

    def _safely(self, action: Callable[[Store], int]) -> int | None:
        if self.store is None:
            return None
        try:
            return action(self.store)
        except (ReviewGateError, sqlite3.Error):
            self.store = None  # from now on, as if there were no count
            return None


@contextlib.contextmanager
def _counter(root: Path, config: str | None) -> Iterator[_Counter]:
    try:
        store = open_store(state_file(api.load(config, root), root))
    except ReviewGateError:
        store = None
    try:
        yield _Counter(store)
    finally:
        if store is not None:
            store.close()
