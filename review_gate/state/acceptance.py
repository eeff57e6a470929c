"""Acceptance events: a person accepts a finding (by fingerprint) or revokes an acceptance.

Events are only ever added; an acceptance is active while no revoke names it and its expiry
date (inclusive, local date) has not passed. Active ones become aggregate's waivers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from review_gate.errors import StateError
from review_gate.state.store import Store
from review_gate.state.times import utc_now


@dataclass
class Acceptance:
    id: int
    fingerprint: str
    reason: str
    who: str
    created_at: str
    expires: str | None
    revoked: bool

    def active(self, today: date) -> bool:
        return not self.revoked and (self.expires is None or self.expires >= today.isoformat())


def known(store: Store, fingerprint: str) -> tuple[bool, int | None]:
    """Whether a recorded run reported exactly ``fingerprint`` (as a finding's fingerprint, not
    anywhere in its text), and the newest pair that did (if kept)."""
    row = store.db.execute(
        "SELECT p.id FROM review_pairs p, json_each(p.findings) f "
        "WHERE json_extract(f.value, '$.fingerprint') = ? ORDER BY p.id DESC LIMIT 1", (fingerprint,)).fetchone()
    if row is not None:
        return True, int(row[0])
    row = store.db.execute(
        "SELECT 1 FROM review_runs r, json_each(r.report, '$.findings') f "
        "WHERE r.report IS NOT NULL AND json_extract(f.value, '$.fingerprint') = ? UNION ALL "
        "SELECT 1 FROM review_runs r, json_each(r.report, '$.waived') f "
        "WHERE r.report IS NOT NULL AND json_extract(f.value, '$.fingerprint') = ? LIMIT 1",
        (fingerprint, fingerprint)).fetchone()
    return row is not None, None


def accept(store: Store, fingerprint: str, reason: str, who: str, expires: str | None, pair: int | None) -> int:
    with store.write() as db:
        cursor = db.execute(
            "INSERT INTO acceptance_events (kind, fingerprint, reason, who, created_at, expires, review_pair_id) "
            "VALUES ('accept', ?, ?, ?, ?, ?, ?)", (fingerprint, reason, who, utc_now(), expires, pair))
        return int(cursor.lastrowid or 0)


def listing(store: Store) -> list[Acceptance]:
    rows = store.db.execute(
        "SELECT a.id, a.fingerprint, a.reason, a.who, a.created_at, a.expires, "
        "EXISTS (SELECT 1 FROM acceptance_events r WHERE r.kind = 'revoke' AND r.revokes = a.id) "
        "FROM acceptance_events a WHERE a.kind = 'accept' ORDER BY a.id")
    return [Acceptance(i, f, r, w, c, e, bool(rev)) for i, f, r, w, c, e, rev in rows]


def revoke(store: Store, event_id: int, who: str) -> Acceptance:
    today = date.today()
    found = next((a for a in listing(store) if a.id == event_id), None)
    if found is None or not found.active(today):
        state = "no acceptance" if found is None else "not an active acceptance"
        raise StateError(f"{event_id} is {state}", fix="see the active ones with `review-gate accepted`")
    with store.write() as db:
        db.execute("INSERT INTO acceptance_events (kind, fingerprint, reason, who, created_at, revokes) "
                   "VALUES ('revoke', ?, 'revoked', ?, ?, ?)", (found.fingerprint, who, utc_now(), event_id))
    return found


def waivers(store: Store, today: date | None = None) -> dict[str, str]:
    day = today or date.today()
    return {a.fingerprint: f"accepted: {a.reason}" for a in listing(store) if a.active(day)}
