"""The gap log: each finished run's gaps, grouped by kind and subject to see what recurs.

A gap's id (``Gap.id``) hashes its kind and subject, so the same unrouted path or missing agent
has the same id in every run. ``grouped`` counts the runs that reported each one; ``mark_fixed``
records that its patch was applied, which closes it until a later run reports it again; ``link``
records the issue opened for it (the Action's ``open-gap-issues``), so that it is opened once.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from review_gate.errors import StateError
from review_gate.models import ConfigPatch, Gap
from review_gate.state.store import Store
from review_gate.state.times import utc_now

MIN_ID = 4  # hex digits of a gap id a user must give


def insert(db: sqlite3.Connection, run_id: str, gaps: Iterable[Gap], when: str) -> None:
    """Record a run's gaps (inside the caller's transaction: the run's own finish)."""
    db.executemany(
        "INSERT OR IGNORE INTO review_gaps (run_id, gap_id, kind, subject, reason, suggestion, patch, recorded_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(run_id, g.id, g.kind, g.subject, g.reason, g.suggestion,
          g.patch.model_dump_json() if g.patch is not None else None, when) for g in gaps])


@dataclass(frozen=True)
class GapGroup:
    """One gap as every recorded run reported it: how often, when first and last, and the
    latest run's reason, suggestion and patch."""

    id: str
    kind: str
    subject: str
    runs: int
    first_seen: str
    last_seen: str
    last_run: str
    reason: str
    suggestion: str
    patch: ConfigPatch | None
    fixed_at: str | None  # when its patch was applied, while no later run reported it again
    issue_url: str | None = None  # the issue opened for it, whatever became of the gap since
    files: list[str] = field(default_factory=list)  # the files it is about, as the latest run's report lists them

    @property
    def open(self) -> bool:
        return self.fixed_at is None


def grouped(store: Store) -> list[GapGroup]:
    """Every gap recorded, most runs first, then the most recently seen."""
    rows = store.db.execute(
        "SELECT g.gap_id, g.kind, g.subject, c.runs, c.first_seen, c.last_seen, g.run_id, g.reason, g.suggestion, "
        "g.patch, CASE WHEN f.last_row >= c.newest THEN f.applied_at END, i.issue_url, "
        "(SELECT json_extract(v.value, '$.files') FROM review_runs r, json_each(r.report, '$.gaps') v "
        " WHERE r.id = g.run_id AND r.report IS NOT NULL AND json_extract(v.value, '$.kind') = g.kind "
        " AND json_extract(v.value, '$.subject') = g.subject LIMIT 1) "
        "FROM (SELECT gap_id, COUNT(DISTINCT run_id) AS runs, MIN(recorded_at) AS first_seen, "
        "      MAX(recorded_at) AS last_seen, MAX(id) AS newest FROM review_gaps GROUP BY gap_id) c "
        "JOIN review_gaps g ON g.id = c.newest LEFT JOIN gap_fixes f ON f.gap_id = c.gap_id "
        "LEFT JOIN gap_issues i ON i.gap_id = c.gap_id "
        "ORDER BY c.runs DESC, c.last_seen DESC, g.gap_id").fetchall()
    return [GapGroup(gap_id, kind, subject, runs, first, last, run, reason, suggestion,
                     ConfigPatch.model_validate_json(patch) if patch is not None else None, fixed, issue,
                     _files(files))
            for gap_id, kind, subject, runs, first, last, run, reason, suggestion, patch, fixed, issue, files in rows]


def _files(raw: str | None) -> list[str]:
    try:
        value = json.loads(raw) if raw else []
    except json.JSONDecodeError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def find(store: Store, given: str) -> GapGroup:
    """The one recorded gap whose id is ``given`` or starts with it."""
    wanted = given.strip().lower()
    if len(wanted) < MIN_ID or any(c not in "0123456789abcdef" for c in wanted):
        raise StateError(f"{given!r} is not a gap id",
                         fix=f"give the id `review-gate gaps` lists ({MIN_ID} or more hex digits)")
    found = [g for g in grouped(store) if g.id.startswith(wanted)]
    if not found:
        raise StateError(f"no recorded gap has the id {wanted}", fix="see the recorded gaps with `review-gate gaps`")
    if len(found) > 1:
        raise StateError(f"{wanted} is the start of several gap ids: {', '.join(g.id for g in found[:5])}",
                         fix="give more of the id")
    return found[0]


def mark_fixed(store: Store, gap_id: str, file: str, directory: str, who: str) -> None:
    """The gap's patch was applied: it is closed until a run recorded from now on reports it."""
    with store.write() as db:
        newest = db.execute("SELECT COALESCE(MAX(id), 0) FROM review_gaps").fetchone()[0]
        db.execute("INSERT OR REPLACE INTO gap_fixes (gap_id, applied_at, last_row, file, directory, who) "
                   "VALUES (?, ?, ?, ?, ?, ?)", (gap_id, utc_now(), newest, file, directory, who))


def link(store: Store, given: str, url: str, who: str, *, replace: bool = False) -> tuple[GapGroup, bool]:
    """Record ``url`` as the issue opened for the gap ``given`` names; whether anything changed
    (a gap linked to that issue already is left as it is; to another, refused unless ``replace``)."""
    from review_gate.state.debt import check_url

    check_url(url)
    group = find(store, given)
    if group.issue_url == url:
        return group, False
    if group.issue_url is not None and not replace:
        raise StateError(f"gap {group.id} is linked to {group.issue_url} already",
                         fix=f"keep it, or link another issue with `review-gate gaps link {group.id} URL --replace`")
    with store.write() as db:
        db.execute("INSERT OR REPLACE INTO gap_issues (gap_id, issue_url, linked_at, linked_by) VALUES (?, ?, ?, ?)",
                   (group.id, url, utc_now(), who))
    return find(store, group.id), True
