"""Deferred debt: the findings a passing gate let through, kept across runs until they are gone.

Seed 004 says a ``pass_with_warnings`` gate means "create tech-debt issues for deferred items".
``record`` applies these rules when a run finishes (``RunState.finish``):

- A run *defers* findings when its gate let the change through on its own terms: its decision
  is ``pass`` or ``pass_with_warnings`` and it exited 0. What it defers are its counting
  findings (not accepted, not baselined) of severity ``warning`` or worse (a custom gate may
  let a ``major`` through); ``info`` never counts towards a gate and is not debt. A run that
  decided ``needs_fixes``, ``fail`` or ``incomplete`` defers nothing, even when ``--fail-on`` or
  ``--exit-zero`` let it exit 0: its findings are to fix now, not to defer.
- One item per fingerprint: a fingerprint reported again by any run updates its item (last
  seen, runs, and the finding's latest severity, message, place and rule) instead of adding one.
- Waived findings are not debt: a run that reports an open item's finding as accepted or
  baselined closes it as ``waived``, with the waiver's reason.
- An open item is ``resolved`` by a later run that showed its agent the item's lines and got no
  finding with its fingerprint back (among everything the agent reported, filtered out or not):
  the agent completed on the item's file without leaving it unreviewed, and either the run saw
  the whole file (a sweep, or a file the change adds), or it compares with the same base commit
  as the run that last reported the item and that run counted it on an added line (filter mode
  ``added``: a line still there is still an added line, so it was shown again). A change that
  deletes the file, or renames it away, resolves its items. Nothing else resolves an item: a
  run that did not look at its lines (another base, a file it left out, an agent that did not
  run) leaves it open.
- A resolved or waived item that a later passing run defers again is reopened, keeping its
  issue link: an item is never opened as an issue twice.

Items do not point at run rows (runs are pruned after 30 days; debt is kept until resolved).
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from typing import Any

from review_gate.errors import StateError
from review_gate.models import SEVERITY_RANK, AgentResult, DebtItem, FileChange, Finding, PRFacts, ReviewReport
from review_gate.state.store import Store
from review_gate.state.times import utc_now

DEFERRING = ("pass", "pass_with_warnings")
REVIEWED = ("completed", "cached")
COLUMNS = tuple(DebtItem.model_fields)
URL = re.compile(r"^https?://[^\s<>\"'`\\\x00-\x1f\x7f]{1,2000}$")
SHORT_ID = re.compile(r"^[0-9a-f]{6,32}$")


@dataclass
class Changes:
    """What one run did to the debt: items added, seen again, reopened, resolved, waived."""

    added: int = 0
    seen: int = 0
    reopened: int = 0
    resolved: int = 0
    waived: int = 0


def deferred(report: ReviewReport) -> list[Finding]:
    """The findings ``report``'s run defers (see the module docstring)."""
    if report.decision not in DEFERRING or report.exit_code != 0:
        return []
    worst_kept = SEVERITY_RANK["warning"]
    return [f for f in report.findings if SEVERITY_RANK[f.severity] <= worst_kept]


def record(store: Store, report: ReviewReport, facts: PRFacts) -> Changes:
    """Add what the run defers, update what it reported again, close what it shows gone or waived."""
    now, run = utc_now(), report.run_id
    raw = {f.fingerprint: f for a in report.agents for f in a.findings}
    # a pre-existing finding is listed as waived, but nobody waived it: the debt is still there
    waived = {f.fingerprint: f for f in report.waived if not f.preexisting}
    seen = {fp: f for fp, f in {**raw, **{f.fingerprint: f for f in report.findings}}.items() if fp not in waived}
    defer = {f.fingerprint: f for f in deferred(report)}
    place = _Place(report, facts)
    changes = Changes()
    with store.write() as db:
        known = {fp: (item_id, status, row) for item_id, fp, status, *row in db.execute(
            "SELECT id, fingerprint, status, file, agent, base, filter_mode FROM debt_items WHERE status = 'open' "
            "OR fingerprint IN (SELECT value FROM json_each(?))", (json.dumps([*seen, *waived]),))}
        for fp, finding in waived.items():
            if fp in known and known[fp][1] == "open":
                _close(db, known[fp][0], "waived", finding.waived or "waived", now, run)
                changes.waived += 1
        for fp, finding in seen.items():
            if fp in known:
                item_id, status, _ = known[fp]
                if status == "open" or fp in defer:
                    changes.reopened += status != "open"
                    changes.seen += status == "open"
                    _touch(db, item_id, finding, now, run, facts.base, report, reopen=status != "open")
            elif fp in defer:
                _insert(db, finding, now, run, facts.base, report)
                changes.added += 1
        for fp, (item_id, status, (file, agent, base, mode)) in known.items():
            if status != "open" or fp in seen or fp in waived:
                continue
            why = place.gone(file, agent, base, mode)
            if why is not None:
                _close(db, item_id, "resolved", why, now, run)
                changes.resolved += 1
    return changes


class _Place:
    """What the run showed each agent: the files of the change, and each agent's result."""

    def __init__(self, report: ReviewReport, facts: PRFacts) -> None:
        self.run = report.run_id
        self.base = facts.base
        self.files: dict[str, FileChange] = {f.path: f for f in facts.files}
        self.moved = {f.old_path: f.path for f in facts.files
                      if f.status == "renamed" and f.old_path is not None and f.old_path != f.path}
        self.agents: dict[str, AgentResult] = {a.id: a for a in report.agents}

    def gone(self, file: str | None, agent: str, base: str | None, mode: str) -> str | None:
        """Why an open item this run did not report is gone, or None when the run cannot tell."""
        if file is not None:
            change = self.files.get(file)
            if change is not None and change.status == "deleted":
                return f"{file} was deleted (run {self.run})"
            if file in self.moved:
                return f"{file} was renamed to {self.moved[file]} (run {self.run})"
            if change is None:
                return None
        result = self.agents.get(agent)
        if result is None or result.status not in REVIEWED or result.unreviewed:
            return None
        same_base = base is not None and base == self.base and mode == "added"
        if file is None:
            return f"{agent} no longer reports it (run {self.run})" if same_base else None
        whole = self.files[file].status == "added"
        if file in result.files and (whole or same_base):
            return f"{agent} no longer reports it in {file} (run {self.run})"
        return None


def _fields(finding: Finding) -> tuple[Any, ...]:
    return (finding.severity, finding.agent, finding.rule_id, finding.category, finding.file, finding.line,
            finding.end_line, finding.message, finding.recommendation)


def _insert(db: sqlite3.Connection, finding: Finding, now: str, run: str, base: str | None,
            report: ReviewReport) -> None:
    db.execute(
        "INSERT INTO debt_items (fingerprint, status, severity, agent, rule_id, category, file, line, end_line, "
        "message, recommendation, first_seen, first_run, last_seen, last_run, runs, base, filter_mode) "
        "VALUES (?, 'open', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
        (finding.fingerprint, *_fields(finding), now, run, now, run, base, report.coverage.filter_mode))


def _touch(db: sqlite3.Connection, item_id: int, finding: Finding, now: str, run: str, base: str | None,
           report: ReviewReport, *, reopen: bool) -> None:
    """The finding as this run reported it; once per run (``last_run``), reopened when asked."""
    reopened = ", status = 'open', closed_at = NULL, closed_run = NULL, resolution = NULL" if reopen else ""
    db.execute(
        "UPDATE debt_items SET severity = ?, agent = ?, rule_id = ?, category = ?, file = ?, line = ?, end_line = ?, "
        "message = ?, recommendation = ?, last_seen = ?, last_run = ?, runs = runs + 1, base = ?, filter_mode = ?"
        f"{reopened} WHERE id = ? AND last_run != ?",
        (*_fields(finding), now, run, base, report.coverage.filter_mode, item_id, run))


def _close(db: sqlite3.Connection, item_id: int, status: str, why: str, now: str, run: str) -> None:
    db.execute("UPDATE debt_items SET status = ?, resolution = ?, closed_at = ?, closed_run = ? WHERE id = ?",
               (status, why[:500], now, run, item_id))


def listing(store: Store, *, closed: bool = False, unlinked: bool = False) -> list[DebtItem]:
    """Open items (``closed``: resolved and waived ones too; ``unlinked``: only those no issue was
    opened for), open first, then the most severe, then the oldest."""
    where = [] if closed else ["status = 'open'"]
    if unlinked:
        where.append("issue_url IS NULL")
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    items = _select(store, clause + " ORDER BY id", ())
    return sorted(items, key=lambda i: (i.status != "open", SEVERITY_RANK[i.severity], i.id))


def find(store: Store, ref: str) -> DebtItem:
    """Item ``ref``: its number, or a fingerprint or a prefix of one (at least 6 hex digits)."""
    ref = ref.strip().removeprefix("#")
    if ref.isdigit():
        found = _select(store, " WHERE id = ?", (int(ref),))
        if found:
            return found[0]
    if SHORT_ID.match(ref):
        found = _select(store, " WHERE fingerprint LIKE ? ORDER BY id LIMIT 6", (ref + "%",))
        if len(found) == 1:
            return found[0]
        if found:
            raise StateError(f"{ref!r} names several debt items: {', '.join(str(i.id) for i in found[:5])}",
                             fix="give the item's number (the first column of `review-gate debt --all`)")
    raise StateError(f"no debt item {ref!r} in {store.path}",
                     fix="see the items and their numbers with `review-gate debt --all`")


def check_url(url: str) -> None:
    """An issue's URL as an issue tracker gives it (http or https, no space or quote in it)."""
    if not URL.match(url):
        raise StateError(f"{url[:200]!r} is not an issue URL", fix="give the http(s) URL the issue tracker gave "
                                                                  "(e.g. the one `gh issue create` prints)")


def link(store: Store, ref: str, url: str, who: str, *, replace: bool = False) -> tuple[DebtItem, bool]:
    """Record that the issue at ``url`` was opened for item ``ref``; False when it already was.
    An item linked to another issue is refused unless ``replace``: it must never be opened twice."""
    check_url(url)
    item = find(store, ref)
    if item.issue_url == url:
        return item, False
    if item.issue_url is not None and not replace:
        raise StateError(f"debt item {item.id} is already linked to {item.issue_url}",
                         fix="pass --replace to link it to another issue instead")
    with store.write() as db:
        db.execute("UPDATE debt_items SET issue_url = ?, linked_at = ?, linked_by = ? WHERE id = ?",
                   (url, utc_now(), who, item.id))
    return find(store, str(item.id)), True


def _select(store: Store, clause: str, args: tuple[Any, ...]) -> list[DebtItem]:
    rows = store.db.execute(f"SELECT {', '.join(COLUMNS)} FROM debt_items{clause}", args)
    return [DebtItem.model_validate(dict(zip(COLUMNS, row, strict=True))) for row in rows]
