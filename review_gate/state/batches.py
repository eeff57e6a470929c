"""Runs sent to a provider's batch API: the frozen run (what collecting it needs) and each
provider batch (its id, status and request counts). A run waiting for its batches stays
``running`` with no process behind it: ``runs.mark_abandoned`` leaves it alone until collected.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass, field
from typing import Any

from review_gate.errors import StateError
from review_gate.state.store import Store, process_start
from review_gate.state.times import utc_now


@dataclass
class ProviderBatch:
    ordinal: int
    provider: str
    endpoint: str
    batch_id: str
    input_file_id: str | None
    status: str
    requests: int
    counts: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    checked_at: str | None = None


@dataclass
class BatchRun:
    run_id: str
    state: str  # submitted | collected
    frozen: str  # JSON: what collecting the run needs (review_gate.scale.batch.models.Frozen)
    submitted_at: str
    collected_at: str | None
    batches: list[ProviderBatch]


def record(store: Store, run_id: str, frozen: str, batches: list[ProviderBatch], runner: str = "batch") -> None:
    """The run was submitted: its frozen state and its provider batches, in one transaction.
    ``runner``: ``host`` for a run whose requests wait for the coding agent's host (no batch)."""
    now = utc_now()
    with store.write() as db:
        db.execute("INSERT INTO batch_runs (run_id, state, frozen, submitted_at) VALUES (?, 'submitted', ?, ?)",
                   (run_id, frozen, now))
        db.executemany(
            "INSERT INTO review_batches (run_id, ordinal, provider, endpoint, batch_id, input_file_id, status, "
            "requests, counts, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(run_id, b.ordinal, b.provider, b.endpoint, b.batch_id, b.input_file_id, b.status, b.requests,
              json.dumps(b.counts), now) for b in batches])
        db.execute("UPDATE review_runs SET runner = ? WHERE id = ?", (runner, run_id))


RUNNERS = {"batch": ("batch", "submit one with `review-gate batch submit`"),
           "host": ("host review", "start one with `review-gate --llm host`")}


def find(store: Store, ref: str | None, runner: str = "batch") -> str:
    """The run id of a batch run: ``ref`` (a run id, a unique prefix or suffix of one, ``last``)
    or, without one, the newest run still waiting for its batches, else the newest batch run.
    ``runner``: ``host``, the runs waiting for the coding agent's host instead."""
    db = store.db
    name, how = RUNNERS[runner]
    mine = "b.run_id IN (SELECT id FROM review_runs WHERE runner = ?)"
    if ref is None or ref == "last":
        order = "b.state = 'submitted' DESC, " if ref is None else ""
        row = db.execute(f"SELECT b.run_id FROM batch_runs b WHERE {mine} ORDER BY {order}b.submitted_at DESC, "
                         "b.rowid DESC LIMIT 1", (runner,)).fetchone()
        if row is None:
            raise StateError(f"no {name} run is recorded in {store.path}", fix=how)
        return str(row[0])
    escaped = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    rows = [r[0] for r in db.execute(
        f"SELECT b.run_id FROM batch_runs b WHERE {mine} AND (b.run_id LIKE ? ESCAPE '\\' OR b.run_id LIKE ? "
        "ESCAPE '\\') ORDER BY b.submitted_at DESC LIMIT 6", (runner, escaped + "%", "%" + escaped))]
    exact = [r for r in rows if r == ref]
    rows = exact or rows
    if not rows:
        raise StateError(f"no {name} run {ref!r} in {store.path}",
                         fix=f"see the runs with `review-gate history` ({name} runs wait as 'submitted')")
    if len(rows) > 1:
        raise StateError(f"{ref!r} names several {name} runs: {', '.join(rows[:5])}", fix="give more of the run id")
    return str(rows[0])


def load(store: Store, run_id: str) -> BatchRun:
    row = store.db.execute("SELECT run_id, state, frozen, submitted_at, collected_at FROM batch_runs "
                           "WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        raise StateError(f"run {run_id} was not sent to a batch API", fix="name a run `batch submit` printed")
    batches = [ProviderBatch(o, p, e, b, f, s, n, json.loads(c), t, k) for o, p, e, b, f, s, n, c, t, k in
               store.db.execute("SELECT ordinal, provider, endpoint, batch_id, input_file_id, status, requests, "
                                "counts, created_at, checked_at FROM review_batches WHERE run_id = ? "
                                "ORDER BY ordinal", (run_id,))]
    return BatchRun(row[0], row[1], row[2], row[3], row[4], batches)


def update(store: Store, run_id: str, ordinal: int, status: str, counts: dict[str, Any]) -> None:
    with store.write() as db:
        db.execute("UPDATE review_batches SET status = ?, counts = ?, checked_at = ? WHERE run_id = ? AND ordinal = ?",
                   (status, json.dumps(counts), utc_now(), run_id, ordinal))


def claim(store: Store, run_id: str) -> bool:
    """Mark the run collected, and this process as the one finishing it (so that a run meanwhile
    sees a live run, not an abandoned one); False when another collect got there first."""
    pid = os.getpid()
    with store.write() as db:
        cursor = db.execute("UPDATE batch_runs SET state = 'collected', collected_at = ? "
                            "WHERE run_id = ? AND state = 'submitted'", (utc_now(), run_id))
        if cursor.rowcount != 1:
            return False
        db.execute("UPDATE review_runs SET pid = ?, host = ?, proc_start = ? WHERE id = ?",
                   (pid, socket.gethostname(), process_start(pid), run_id))
        return True
