"""The stops a coding agent's hook blocked in a row, per host and session.

A Stop hook that blocks whenever the gate fails would keep an agent that cannot fix a finding
working forever. The hook counts its consecutive blocks here and lets the stop through after
its limit, handing over to a person; a stop it lets through (the gate passed, or the hand-off)
starts the count again. Rows of sessions idle for ``KEEP_DAYS`` are dropped as others are written.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from review_gate.state.store import Store
from review_gate.state.times import utc_now

KEEP_DAYS = 30
MAX_SESSION_CHARS = 200  # a host's session id is a UUID; anything longer is cut, not stored whole


def count(store: Store, host: str, session: str) -> int:
    """The blocks in a row so far in ``session``."""
    row = store.db.execute("SELECT blocks FROM hook_blocks WHERE host = ? AND session_id = ?",
                           (host, session[:MAX_SESSION_CHARS])).fetchone()
    return int(row[0]) if row else 0


def add(store: Store, host: str, session: str) -> int:
    """One more block in ``session``; the count after it."""
    now = utc_now()
    stale = (datetime.now(timezone.utc) - timedelta(days=KEEP_DAYS)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with store.write() as db:
        db.execute("DELETE FROM hook_blocks WHERE updated_at < ?", (stale,))
        db.execute("INSERT INTO hook_blocks (host, session_id, blocks, updated_at) VALUES (?, ?, 1, ?) "
                   "ON CONFLICT (host, session_id) DO UPDATE SET blocks = blocks + 1, updated_at = excluded.updated_at",
                   (host, session[:MAX_SESSION_CHARS], now))
    return count(store, host, session)


def reset(store: Store, host: str, session: str) -> None:
    """The session's count starts again (a stop went through)."""
    with store.write() as db:
        db.execute("DELETE FROM hook_blocks WHERE host = ? AND session_id = ?", (host, session[:MAX_SESSION_CHARS]))
