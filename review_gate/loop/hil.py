"""The hand-off item (seed 001's HIL queue): ``.review-gate/hil/<task>.json``, written when a
session has had ``max_iterations`` NO_GO verdicts, with the whole review history, and marked
resolved when a person moves the session on (approve, retry, cancel)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from review_gate.errors import InputError
from review_gate.loop.files import GATE_DIR, Files, read_text, write_text
from review_gate.loop.model import Session
from review_gate.state.times import utc_now


def write(files: Files, session: Session, decisions: list[dict[str, Any]], review_file: Path) -> Path:
    item = {
        "task_id": session.task,
        "status": "waiting",
        "reason": f"{sum(d.get('decision') == 'NO_GO' for d in decisions)} NO_GO verdict(s); max_iterations is "
                  f"{session.settings.max_iterations}",
        "created_at": utc_now(),
        "phase": "review", "stage": "response", "iteration": session.iteration,
        "task": session.task_prompt,
        "last_review": files.shown(review_file),
        "history": decisions,
        "next": [f"review-gate loop approve {session.task} --complete   # accept the change as it is",
                 f"review-gate loop approve {session.task} --revise     # one more revise round",
                 f"review-gate loop retry {session.task} --feedback TEXT   # review again (after fixing it by hand)",
                 f"review-gate loop cancel {session.task}"],
    }
    write_text(files, files.handoff, json.dumps(item, indent=2, ensure_ascii=False) + "\n")
    return files.handoff


def resolve(files: Files, how: str) -> None:
    """Mark a waiting hand-off item resolved (a person acted), if there is one."""
    item = _read(files.handoff)
    if item is None or item.get("status") != "waiting":
        return
    item.update(status="resolved", resolved_at=utc_now(), resolution=how)
    write_text(files, files.handoff, json.dumps(item, indent=2, ensure_ascii=False) + "\n")


def waiting(root: Path) -> list[tuple[str, Path]]:
    """(task, path) of every hand-off item still waiting for a person."""
    folder = root / GATE_DIR / "hil"
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        item = _read(path)
        if item is not None and item.get("status") == "waiting":
            found.append((str(item.get("task_id", path.stem)), path))
    return found


def _read(path: Path) -> dict[str, Any] | None:
    try:
        text = read_text(path)
    except InputError:  # too large or unreadable: no hand-off item the gate wrote
        return None
    if text is None:
        return None
    try:
        item = json.loads(text)
    except json.JSONDecodeError:
        return None
    return item if isinstance(item, dict) else None
