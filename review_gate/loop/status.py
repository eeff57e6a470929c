"""Where a session stands, for ``loop status`` and after every loop command: as a JSON-able dict
and as lines for people (what is awaited, which file, the next commands, drift after GO)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from review_gate.loop import hil
from review_gate.loop.files import Files, sha256
from review_gate.loop.model import WAITING, Session
from review_gate.loop.store import all_sessions, decisions, events, owner_alive
from review_gate.models.loop import GATE, MANUAL
from review_gate.state.store import Store


def collect(root: Path, store: Store | None,
            task: str | None = None) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Every session (or ``task``'s) as ``state`` describes it, and the hand-off items waiting for
    a person; for ``loop status`` and the MCP server's ``loop_status``."""
    from review_gate.loop.tree import tree_hash

    infos = []
    for session in all_sessions(store) if store is not None else []:
        if task and session.task != task:
            continue
        current = tree_hash(root) if session.tree_hash else None
        files = Files(root, session.task)
        infos.append(state(session, files, current_tree=current,
                           decisions=decisions(store, session.task) if store is not None else [],
                           made=made_by_gate(store, session, files) if store is not None else None))
    handoffs = [{"task": name, "file": Files(root, name).shown(path)} for name, path in hil.waiting(root)]
    return infos, handoffs


def interrupted(s: Session) -> bool:
    """Automatic work left half-way by a process that is gone (killed, crashed)."""
    return s.step in ("work", "judge") and not owner_alive(s)


def made_by_gate(store: Store, s: Session, files: Files) -> str | None:
    """The digest of the review the gate wrote for the session's current iteration, if it did."""
    shown = files.shown(files.content(s.iteration, "review", "response"))
    made = [e.sha256 for e in events(store, s.task, "made")
            if e.actor == GATE and e.file == shown and e.iteration == s.iteration and e.at >= s.created_at]
    return made[-1] if made else None


def state(s: Session, files: Files, *, current_tree: str | None = None,
          decisions: list[dict[str, Any]] | None = None, made: str | None = None) -> dict[str, Any]:
    """The session as ``loop status --format json`` prints it. ``made``: the digest of the review
    the gate wrote, to show a pending review a person (or anyone) has edited since."""
    pending = None
    if s.step == "human" and s.stage is not None:
        path = files.content(s.iteration, s.phase, s.stage)
        approver = s.settings.phases.get(s.work_phase).approver_for(s.stage)
        digest = sha256(path)
        pending = {"waiting_for": s.waiting, "file": files.shown(path), "sha256": digest,
                   "approver": approver if s.waiting == "approval" else MANUAL,
                   "edited": made is not None and (s.phase, s.stage) == ("review", "response") and digest != made}
    last: list[dict[str, Any] | None] = [*(decisions or [])[-1:]] or [None]
    return {
        "task": s.task, "phase": s.phase, "stage": s.stage, "step": s.step, "iteration": s.iteration,
        "max_iterations": s.settings.max_iterations, "mode": s.settings.mode, "started_from": s.start_phase,
        "pending_approval": pending,
        "waiting_for_person": s.step == "human",
        "handoff": files.shown(files.handoff) if s.waiting == "handoff" else None,
        "interrupted": interrupted(s),
        "verdict": s.verdict, "run_id": s.run_id, "last_decision": last[0],
        "error": s.reason if s.phase == "error" else None,
        # `loop approve` resumes an error only where the content was made and its approval failed
        "approvable": s.phase == "error" and s.resume_phase is not None and s.waiting == "judge",
        "tree_hash": s.tree_hash,
        "drift": (current_tree != s.tree_hash) if s.tree_hash and current_tree else None,
        "current_tree": current_tree if s.tree_hash else None,
        "updated_at": s.updated_at,
    }


def lines(info: dict[str, Any]) -> list[str]:
    task = info["task"]
    where = f"{info['phase']}.{info['stage']}" if info["stage"] else info["phase"]
    head = f"loop {task}: {where}, iteration {info['iteration']} of {info['max_iterations']} ({info['mode']})"
    out = [head]
    last = info.get("last_decision")
    if last:
        out.append(f"  last review: {last.get('summary', '')} -> {last.get('decision')}")
    pending = info["pending_approval"]
    if info["phase"] == "complete":
        out.append(f"  GO: complete; the artifact is locked at tree {info['tree_hash']}")
        if info["drift"]:
            out.append(f"  warning: the working tree has changed since the GO (now tree {info['current_tree']}); "
                       f"review it again with a new session")
    elif info["phase"] == "cancelled":
        out.append("  cancelled")
    elif info["phase"] == "error":
        out.append(f"  stopped with an error: {info['error']}")
        approve = f" | loop approve {task} (content already made)" if info.get("approvable") else ""
        out.append(f"  next: review-gate loop retry {task} --feedback TEXT{approve} | loop cancel {task}")
    elif info["interrupted"]:
        out.append(f"  interrupted during {info['step']} (the process that ran it is gone)")
        out.append(f"  next: review-gate loop start {task}   # resumes from the last committed step")
    elif pending:
        waiting = WAITING.get(pending["waiting_for"], pending["waiting_for"])
        edited = " (edited since the gate wrote it: approving takes the edit as a person's)" \
            if pending.get("edited") else ""
        out.append(f"  waiting for {waiting}: {pending['file']}{edited}")
        if info["handoff"]:
            out.append(f"  hand-off item: {info['handoff']}")
        out.append("  next: " + _next(task, where, pending["waiting_for"]))
    else:
        out.append(f"  running ({info['step']})")
    return out


def _next(task: str, where: str, waiting: str) -> str:
    """The commands that move a session waiting for a person on."""
    if waiting == "response":
        return f"write that file, then review-gate loop approve {task} | loop cancel {task}"
    if waiting == "rejected":
        return (f"review-gate loop retry {task} --feedback TEXT | loop approve {task} (as it is now) | "
                f"loop cancel {task}")
    flags = " [--complete | --revise]" if where == "review.response" else ""
    return (f"review-gate loop approve {task}{flags} [--feedback TEXT] | loop reject {task} --feedback TEXT | "
            f"loop retry {task} --feedback TEXT | loop cancel {task}")
