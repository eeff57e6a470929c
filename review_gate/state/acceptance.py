"""Acceptance events: a person accepts a finding (by fingerprint) or revokes an acceptance.

Events are only ever added; an acceptance is active while no revoke names it and its expiry
date (inclusive, local date) has not passed. Active ones become aggregate's waivers.

Three kinds waive or mark a finding (seed 003): ``accept`` points at the completed review pair
that reported it; ``override`` waives it with no pair (a person's decision over the review, e.g.
for a fingerprint no recorded run holds); ``ack`` records that a person saw it and waives
nothing: the finding still counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from review_gate.errors import StateError
from review_gate.models.findings import Waiver
from review_gate.state.store import Store
from review_gate.state.times import utc_now

WAIVING = ("accept", "override")


@dataclass
class Acceptance:
    id: int
    fingerprint: str
    reason: str
    who: str
    created_at: str
    expires: str | None
    revoked: bool
    kind: str = "accept"

    def active(self, today: date) -> bool:
        return not self.revoked and (self.expires is None or self.expires >= today.isoformat())


FINGERPRINT = re.compile(r"^[0-9a-f]{32}$")
SHORT_ID = re.compile(r"^[0-9a-f]{6,32}$")


def reported(store: Store, prefix: str, limit: int = 6) -> list[tuple[str, int | None]]:
    """Fingerprints recorded runs reported that start with ``prefix`` (a whole fingerprint or a
    short id), each with the newest pair that holds it (None when only a run's report does)."""
    pattern = prefix + "%"  # hex digits only (SHORT_ID): nothing LIKE would read as a wildcard
    found: dict[str, int | None] = {}
    for fingerprint, pair in store.db.execute(
            "SELECT json_extract(f.value, '$.fingerprint') AS fp, MAX(p.id) FROM review_pairs p, "
            "json_each(p.findings) f WHERE fp LIKE ? GROUP BY fp LIMIT ?", (pattern, limit)):
        found[fingerprint] = int(pair)
    for (fingerprint,) in store.db.execute(
            "SELECT DISTINCT json_extract(f.value, '$.fingerprint') AS fp FROM review_runs r, "
            "json_each(r.report, '$.findings') f WHERE r.report IS NOT NULL AND fp LIKE ? UNION "
            "SELECT DISTINCT json_extract(f.value, '$.fingerprint') AS fp FROM review_runs r, "
            "json_each(r.report, '$.waived') f WHERE r.report IS NOT NULL AND fp LIKE ? LIMIT ?",
            (pattern, pattern, limit)):
        found.setdefault(fingerprint, None)
    return sorted(found.items())[:limit]


def described(store: Store, fingerprint: str) -> dict[str, object]:
    """The rule, file and message of the newest recorded run's finding ``fingerprint`` (empty
    when no run's report holds it): what a shared acceptance records beside the fingerprint."""
    for key in ("$.findings", "$.waived"):
        row = store.db.execute(
            "SELECT json_extract(f.value, '$.rule_id'), json_extract(f.value, '$.file'), "
            "json_extract(f.value, '$.message') FROM review_runs r, json_each(r.report, ?) f "
            "WHERE r.report IS NOT NULL AND json_extract(f.value, '$.fingerprint') = ? ORDER BY r.rowid DESC LIMIT 1",
            (key, fingerprint)).fetchone()
        if row is not None:
            return {"rule_id": row[0], "file": row[1], "message": row[2]}
    return {}


def accept(store: Store, fingerprint: str, reason: str, who: str, expires: str | None, pair: int | None) -> int:
    return record(store, "accept", fingerprint, reason, who, expires, pair)


def override(store: Store, fingerprint: str, reason: str, who: str, expires: str | None = None) -> int:
    """Waive a finding with no review pair behind it."""
    return record(store, "override", fingerprint, reason, who, expires, None)


def ack(store: Store, fingerprint: str, reason: str, who: str, pair: int | None = None) -> int:
    """Note that a person saw a finding; it still counts."""
    return record(store, "ack", fingerprint, reason, who, None, pair)


def record(store: Store, kind: str, fingerprint: str, reason: str, who: str, expires: str | None,
           pair: int | None) -> int:
    if kind not in ("accept", "ack", "override"):
        raise ValueError(kind)
    with store.write() as db:
        cursor = db.execute(
            "INSERT INTO acceptance_events (kind, fingerprint, reason, who, created_at, expires, review_pair_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", (kind, fingerprint, reason, who, utc_now(), expires, pair))
        return int(cursor.lastrowid or 0)


def listing(store: Store, kinds: tuple[str, ...] = WAIVING) -> list[Acceptance]:
    marks = ", ".join("?" for _ in kinds)
    rows = store.db.execute(
        "SELECT a.id, a.fingerprint, a.reason, a.who, a.created_at, a.expires, "
        "EXISTS (SELECT 1 FROM acceptance_events r WHERE r.kind = 'revoke' AND r.revokes = a.id), a.kind "
        f"FROM acceptance_events a WHERE a.kind IN ({marks}) ORDER BY a.id", kinds)
    return [Acceptance(i, f, r, w, c, e, bool(rev), k) for i, f, r, w, c, e, rev, k in rows]


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


def waivers(store: Store, today: date | None = None, *, before: str | None = None) -> dict[str, Waiver]:
    """The active acceptances' waivers; with ``before`` (a UTC time stamp), only those recorded
    before it (a loop session's review: what its coder accepted does not waive its findings)."""
    day = today or date.today()
    label = {"accept": "accepted", "override": "overridden"}
    return {a.fingerprint: Waiver(kind="acceptance", reason=f"{label[a.kind]} by {a.who}: {a.reason}")
            for a in listing(store)
            if a.active(day) and (before is None or a.created_at < before)}
