"""One row per run: begun before dispatch, finished after it; abandoned runs; history; gc."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from review_gate.errors import StateError
from review_gate.models import PRFacts, ReviewReport
from review_gate.state import gaps
from review_gate.state.store import Store, process_alive, process_start
from review_gate.state.times import parse, utc_now

# A run on another host cannot be checked; after this long it is taken as abandoned.
FOREIGN_HOST_GRACE = timedelta(hours=24)


def begin(store: Store, run_id: str, facts: PRFacts, config_sha: str, packing: str = "per_agent", *,
          runner: str = "live", model: str = "") -> None:
    """Record the run as running; first mark runs whose process is gone as abandoned.
    ``runner``: how it executes (live, batch); ``model``: the models its llm agents use."""
    pid = os.getpid()
    with store.write() as db:
        mark_abandoned(db, run_id)
        db.execute(
            "INSERT INTO review_runs (id, started_at, base, head, source, config_sha, status, pid, host, proc_start, "
            "packing, runner, model) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)",
            (run_id, utc_now(), facts.base, facts.head, facts.source, config_sha, pid, socket.gethostname(),
             process_start(pid), packing, runner, model))


def mark_abandoned(db: sqlite3.Connection, current: str | None = None) -> int:
    """Runs still 'running' whose process is gone: their pending pairs become missing (never
    reused) and the run incomplete. A run whose process lives, even a concurrent one, is left alone."""
    host = socket.gethostname()
    now = datetime.now(timezone.utc)
    dead = []
    # A run waiting for a provider's batch has no process: it lives until it is collected.
    for run_id, pid, run_host, start, started in db.execute(
            "SELECT id, pid, host, proc_start, started_at FROM review_runs r WHERE status = 'running' AND NOT EXISTS "
            "(SELECT 1 FROM batch_runs b WHERE b.run_id = r.id AND b.state = 'submitted')").fetchall():
        if run_id == current:
            continue
        if run_host == host:
            gone = pid == os.getpid() or not process_alive(pid, start)
        else:
            gone = now - parse(started) > FOREIGN_HOST_GRACE
        if gone:
            dead.append(run_id)
    for run_id in dead:
        db.execute("UPDATE review_pairs SET status = 'missing', reason = 'run abandoned' "
                   "WHERE run_id = ? AND status = 'pending'", (run_id,))
        db.execute("UPDATE review_runs SET status = 'incomplete', finished_at = ?, failure = 'run abandoned: its "
                   "process is gone' WHERE id = ?", (utc_now(), run_id))
    return len(dead)


def finish(store: Store, report: ReviewReport, duration_s: float, *, raw_output: str | None = None,
           failure: str | None = None) -> None:
    """The run's outcome and its gaps (the gap log); ``failure``: what it lacks (its missing pairs),
    kept even when it decided. ``raw_output``: where its raw answers are (a bundle directory)."""
    agents = report.agents
    now = utc_now()
    with store.write() as db:
        # A run whose decision is incomplete did not review everything: it is recorded as such.
        db.execute(
            "UPDATE review_runs SET status = ?, finished_at = ?, decision = ?, metrics = ?, "
            "tokens_in = ?, tokens_out = ?, cost_usd = ?, duration_s = ?, report = ?, failure = ?, "
            "raw_output = COALESCE(?, raw_output) WHERE id = ?",
            ("incomplete" if report.decision == "incomplete" else "completed", now, report.decision,
             report.metrics.model_dump_json(), sum(a.tokens_in for a in agents),
             sum(a.tokens_out for a in agents), sum(a.cost_usd for a in agents), round(duration_s, 3),
             report.model_dump_json(), failure, raw_output, report.run_id))
        gaps.insert(db, report.run_id, report.gaps, now)


def fail(store: Store, run_id: str, reason: str) -> None:
    with store.write() as db:
        db.execute("UPDATE review_pairs SET status = 'missing', reason = ? WHERE run_id = ? AND status = 'pending'",
                   (reason, run_id))
        db.execute("UPDATE review_runs SET status = 'failed', finished_at = ?, failure = ? "
                   "WHERE id = ? AND status = 'running'", (utc_now(), reason, run_id))


def set_debug_log(store: Store, run_id: str, path: str) -> None:
    """Where the run's debug log (a crash's traceback) is."""
    with store.write() as db:
        db.execute("UPDATE review_runs SET debug_log = ? WHERE id = ?", (path, run_id))


@dataclass
class RunRow:
    id: str
    started_at: str
    source: str
    status: str
    decision: str | None
    metrics: dict[str, int]
    duration_s: float | None
    cached_pairs: int
    pairs: int


def history(store: Store, limit: int | None) -> list[RunRow]:
    rows = store.db.execute(
        "SELECT r.id, r.started_at, r.source, CASE WHEN r.status = 'running' AND EXISTS (SELECT 1 FROM batch_runs b "
        "WHERE b.run_id = r.id AND b.state = 'submitted') THEN 'submitted' ELSE r.status END, r.decision, "
        "r.metrics, r.duration_s, "
        "(SELECT COUNT(*) FROM review_pairs p WHERE p.run_id = r.id AND p.file != '' AND p.status = 'cached'), "
        "(SELECT COUNT(*) FROM review_pairs p WHERE p.run_id = r.id AND p.file != '') "
        "FROM review_runs r ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?", (-1 if limit is None else limit,))
    return [RunRow(i, s, src, st, d, json.loads(m) if m else {}, dur, c, n)
            for i, s, src, st, d, m, dur, c, n in rows]


def find_report(store: Store, ref: str) -> ReviewReport:
    """The stored report of run ``ref``: a full id, a unique prefix or suffix of one, or ``last``."""
    db = store.db
    if ref == "last":
        rows = db.execute("SELECT id, status, report FROM review_runs WHERE report IS NOT NULL "
                          "ORDER BY started_at DESC, rowid DESC LIMIT 1").fetchall()
        if not rows:
            raise StateError(f"no finished run is recorded in {store.path}", fix="run `review-gate` first")
    else:
        escaped = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        # A run id is a time then a random part: either end of it names a run.
        rows = db.execute("SELECT id, status, report FROM review_runs WHERE id LIKE ? ESCAPE '\\' "
                          "OR id LIKE ? ESCAPE '\\' ORDER BY started_at DESC LIMIT 6",
                          (escaped + "%", "%" + escaped)).fetchall()
        exact = [r for r in rows if r[0] == ref]
        rows = exact or rows
        if not rows:
            raise StateError(f"no run {ref!r} in {store.path}", fix="see the run ids with `review-gate history`")
        if len(rows) > 1:
            some = ", ".join(r[0] for r in rows[:5])
            raise StateError(f"{ref!r} names several runs: {some}", fix="give more of the run id")
    run_id, status, report = rows[0]
    if report is None:
        raise StateError(f"run {run_id} has no report (it is {status})",
                         fix="show another run; see `review-gate history`")
    return ReviewReport.model_validate_json(report)


def gc(store: Store, days: int | None, keep: int | None, keep_ids: tuple[str, ...] = ()) -> tuple[list[str], int]:
    """Drop runs started more than ``days`` ago or beyond the newest ``keep``, with their pairs.
    Live runs and ``keep_ids`` are never dropped. Returns the dropped run ids and how many pairs
    went with them."""
    with store.write() as db:
        mark_abandoned(db)
        rows = [r for r in db.execute("SELECT id, started_at FROM review_runs WHERE status != 'running' "
                                      "ORDER BY started_at DESC, rowid DESC").fetchall() if r[0] not in keep_ids]
        cutoff = datetime.now(timezone.utc) - timedelta(days=days) if days is not None else None
        drop = [run_id for n, (run_id, started) in enumerate(rows)
                if (keep is not None and n >= keep) or (cutoff is not None and parse(started) < cutoff)]
        pairs = 0
        for run_id in drop:
            pairs += db.execute("SELECT COUNT(*) FROM review_pairs WHERE run_id = ?", (run_id,)).fetchone()[0]
            db.execute("DELETE FROM review_runs WHERE id = ?", (run_id,))
    return drop, pairs


def gc_obsolete(store: Store) -> tuple[int, list[str]]:
    """Drop review pairs that a newer pair of the same (file, agent) supersedes, completed or reused,
    and the runs left with no pair at all; a run whose other pairs are current is kept. Pairs of
    live runs, runs waiting for a batch, and pairs an acceptance points to are kept. Returns the
    pairs dropped and the runs that went with them."""
    with store.write() as db:
        mark_abandoned(db)
        obsolete = db.execute(
            "SELECT p.id, p.run_id FROM review_pairs p JOIN review_runs r ON r.id = p.run_id "
            "WHERE r.status != 'running' "
            "AND p.id NOT IN (SELECT review_pair_id FROM acceptance_events WHERE review_pair_id IS NOT NULL) "
            "AND EXISTS (SELECT 1 FROM review_pairs newer WHERE newer.file = p.file AND newer.agent = p.agent "
            "AND newer.id > p.id AND newer.status IN ('completed', 'cached'))").fetchall()
        db.executemany("DELETE FROM review_pairs WHERE id = ?", [(pair,) for pair, _ in obsolete])
        touched = sorted({run_id for _, run_id in obsolete})
        emptied = [run_id for run_id in touched
                   if db.execute("SELECT 1 FROM review_pairs WHERE run_id = ? LIMIT 1", (run_id,)).fetchone() is None]
        db.executemany("DELETE FROM review_runs WHERE id = ?", [(r,) for r in emptied])
    return len(obsolete), emptied


def prune(store: Store, max_age_days: int, max_bytes: int, current: str) -> list[str]:
    """After a run: drop finished runs older than ``max_age_days``, then the oldest ones until the
    database holds no more than ``max_bytes`` of data, so the state never grows without bound.
    The current run and live runs are kept. Freed pages are reused by SQLite, so the file stops
    growing; ``gc`` and VACUUM shrink it."""
    dropped, _ = gc(store, max_age_days, None, keep_ids=(current,))
    while _used_bytes(store) > max_bytes:
        rows = store.db.execute("SELECT id FROM review_runs WHERE status != 'running' AND id != ? "
                                "ORDER BY started_at, rowid", (current,)).fetchall()
        if not rows:
            break
        batch = [r[0] for r in rows[:max(1, len(rows) // 10)]]
        with store.write() as db:
            db.executemany("DELETE FROM review_runs WHERE id = ?", [(r,) for r in batch])
        dropped += batch
    return dropped


def _used_bytes(store: Store) -> int:
    db = store.db
    pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
    return int(pages) * int(db.execute("PRAGMA page_size").fetchone()[0])
