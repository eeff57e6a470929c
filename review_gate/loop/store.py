"""Loop sessions in the run-state database (tables ``loop_sessions`` and ``loop_events``).

Every change of a session is one write transaction (BEGIN IMMEDIATE) that updates its row and
appends the events that explain it, so a process killed between two steps leaves the last
committed transition and nothing half-done. A command that changes a session first claims it
(its pid and process start time in the row): a second process is refused while the first is
alive, and a session whose owner died can be taken over.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from review_gate.errors import UsageError
from review_gate.loop.model import COLUMNS, FINISHED, Session
from review_gate.state.store import Store, process_alive, process_start
from review_gate.state.times import utc_now


@dataclass(frozen=True)
class Event:
    """What happened, recorded beside a transition; ``at`` a position other than the session's."""

    kind: str
    actor: str | None = None
    file: str | None = None
    sha256: str | None = None
    feedback: str | None = None
    detail: dict[str, Any] | None = None
    iteration: int | None = None
    phase: str | None = None
    stage: str | None = None


@dataclass(frozen=True)
class EventRow:
    id: int
    at: str
    iteration: int
    phase: str
    stage: str | None
    kind: str
    actor: str | None
    file: str | None
    sha256: str | None
    feedback: str | None
    detail: dict[str, Any] | None

    @property
    def where(self) -> str:
        return f"{self.phase}.{self.stage}" if self.stage else self.phase


_SELECT = f"SELECT {', '.join(COLUMNS)} FROM loop_sessions"  # the column names are ours


def _session(row: tuple[Any, ...]) -> Session:
    return Session(**dict(zip(COLUMNS, row, strict=True)))


def load(store: Store, task: str) -> Session | None:
    row = store.db.execute(f"{_SELECT} WHERE task = ?", (task,)).fetchone()
    return _session(row) if row else None


def all_sessions(store: Store) -> list[Session]:
    return [_session(row) for row in store.db.execute(f"{_SELECT} ORDER BY updated_at DESC, task")]


def create(store: Store, values: dict[str, Any], events: list[Event], *, replace: bool = False) -> Session:
    """A new session (with ``replace``, a finished one of the same task is replaced, its events
    with it; any other is refused, even one another process created a moment ago)."""
    now = utc_now()
    row = {name: None for name in COLUMNS} | {"attempt": 0, "incomplete": 0, "created_at": now, "updated_at": now,
                                                "owner_pid": os.getpid(), "owner_start": process_start(os.getpid())}
    row |= values
    with store.write() as db:
        old = db.execute("SELECT phase FROM loop_sessions WHERE task = ?", (row["task"],)).fetchone()
        if old is not None and (old[0] not in FINISHED or not replace):  # another process started it meanwhile
            raise UsageError(f"loop session {row['task']!r} exists already ({old[0]})",
                             fix=f"see `review-gate loop status {row['task']}`")
        db.execute("DELETE FROM loop_sessions WHERE task = ?", (row["task"],))
        db.execute(f"INSERT INTO loop_sessions ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                   [row[name] for name in COLUMNS])
        session = _session(tuple(row[name] for name in COLUMNS))
        _insert_events(db, session, events, now)
    return session


def commit(store: Store, session: Session, changes: dict[str, Any], events: Sequence[Event] = ()) -> Session:
    """Apply ``changes`` to the session and record ``events`` (at the session's position before
    the change, unless an event names its own), in one transaction; the session as it now is."""
    unknown = set(changes) - set(COLUMNS)
    assert not unknown, unknown
    now = utc_now()
    changes = {**changes, "updated_at": now}
    with store.write() as db:
        db.execute(f"UPDATE loop_sessions SET {', '.join(f'{k} = ?' for k in changes)} WHERE task = ?",
                   [*changes.values(), session.task])
        _insert_events(db, session, events, now)
    current = {f.name: getattr(session, f.name) for f in fields(session) if not f.name.startswith("_")}
    return Session(**(current | changes))


def _insert_events(db: sqlite3.Connection, session: Session, events: Sequence[Event], now: str) -> None:
    for event in events:
        db.execute(
            "INSERT INTO loop_events (task, at, iteration, phase, stage, kind, actor, file, sha256, feedback, detail) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session.task, now, event.iteration if event.iteration is not None else session.iteration,
             event.phase or session.phase, event.stage if event.phase else session.stage, event.kind, event.actor,
             event.file, event.sha256, event.feedback,
             json.dumps(event.detail, ensure_ascii=False) if event.detail is not None else None))


def events(store: Store, task: str, kind: str | None = None) -> list[EventRow]:
    query = ("SELECT id, at, iteration, phase, stage, kind, actor, file, sha256, feedback, detail FROM loop_events "
             "WHERE task = ?" + (" AND kind = ?" if kind else "") + " ORDER BY id")
    rows = store.db.execute(query, (task, kind) if kind else (task,)).fetchall()
    names = [f.name for f in fields(EventRow)]
    return [EventRow(**dict(zip(names, (*row[:-1], json.loads(row[-1]) if row[-1] else None), strict=True)))
            for row in rows]


def decisions(store: Store, task: str) -> list[dict[str, Any]]:
    """The session's decision records, oldest first (the run state's copy of the decision log)."""
    return [e.detail for e in events(store, task, "decision") if e.detail]


def owner_alive(session: Session) -> bool:
    """Another live process is advancing the session."""
    if session.owner_pid is None or session.owner_pid == os.getpid():
        return False
    return process_alive(session.owner_pid, session.owner_start or "")


def claim(store: Store, task: str) -> Session | None:
    """Take the session for this process (None when there is none); refused while its owner lives."""
    with store.write() as db:
        row = db.execute(f"{_SELECT} WHERE task = ?", (task,)).fetchone()
        if row is None:
            return None
        session = _session(row)
        if owner_alive(session):
            raise UsageError(f"loop session {task!r} is being advanced by process {session.owner_pid}",
                             fix="wait for that command to finish, or stop it (Ctrl-C) first")
        pid = os.getpid()
        db.execute("UPDATE loop_sessions SET owner_pid = ?, owner_start = ? WHERE task = ?",
                   (pid, process_start(pid), task))
    if session.coder_mark:
        # The process that started this coder is gone (the session was free to claim): anything
        # still carrying the coder's mark was left by a killed command and must not edit on.
        from review_gate.agents import strays

        strays.kill_marked(session.coder_mark)
    return load(store, task)


def release(store: Store, task: str) -> None:
    with store.write() as db:
        db.execute("UPDATE loop_sessions SET owner_pid = NULL, owner_start = NULL WHERE task = ? AND owner_pid = ?",
                   (task, os.getpid()))
