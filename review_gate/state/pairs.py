"""Run-owned review pairs: created before dispatch, finished after it, reused when fresh.

Every path (a live run, a sweep, a provider batch) creates its run's pairs before anything is
asked and completes or marks those same rows at ingest. A completed pair carries its own
outcome beside its findings: a decision (what its findings alone would give: critical fail,
major needs_fixes, warning pass_with_warnings, else pass), a one-line rationale, the evidence
(each finding's fingerprint, line, rule and severity), the commit reviewed and the review kind.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from typing import Literal

from review_gate.models import SEVERITIES, SEVERITY_RANK, AgentResult, Finding
from review_gate.state.freshness import SCOPE, CacheSplit, Known, Lookup
from review_gate.state.store import Store
from review_gate.state.times import utc_now


def dump_findings(findings: Iterable[Finding]) -> str:
    return json.dumps([f.model_dump(mode="json") for f in findings], separators=(",", ":"))


def load_findings(text: str) -> list[Finding]:
    return [Finding.model_validate(item) for item in json.loads(text)] if text != "[]" else []


ReviewKind = Literal["live", "batch", "sweep"]
_DECISIONS = {"critical": "fail", "major": "needs_fixes", "warning": "pass_with_warnings", "info": "pass"}


def outcome(findings: list[Finding]) -> tuple[str, str, str]:
    """A completed pair's decision, rationale and evidence (JSON)."""
    worst = min((SEVERITY_RANK[f.severity] for f in findings), default=None)
    decision = "pass" if worst is None else _DECISIONS[SEVERITIES[worst]]
    counts = [f"{n} {s}" for s in SEVERITIES if (n := sum(1 for f in findings if f.severity == s))]
    rationale = f"{len(findings)} finding{'s' if len(findings) != 1 else ''} ({', '.join(counts)})" if findings \
        else "no findings"
    evidence = json.dumps([{"fingerprint": f.fingerprint, "line": f.line, "rule_id": f.rule_id,
                            "severity": f.severity} for f in findings], separators=(",", ":"))
    return decision, rationale, evidence


def lookup(store: Store, runs: Collection[str] | None = None) -> Lookup:
    """The newest reusable pair per (file, input SHA) of one agent, agent SHA and model id;
    ``runs``: only pairs these runs recorded (a loop session reuses its own reviews' pairs, never
    those of a run its coder made, whatever that run's environment was)."""
    only = sorted(runs) if runs is not None else None
    among = f" AND run_id IN ({', '.join('?' * len(only))})" if only else (" AND 0" if only is not None else "")

    def find(agent: str, agent_sha: str, model: str) -> Known:
        rows = store.db.execute(
            "SELECT file, input_sha, findings, run_id, MAX(id) FROM review_pairs "
            "WHERE agent = ? AND agent_sha = ? AND model_id = ? AND status IN ('completed', 'cached') "
            f"AND input_sha != ''{among} GROUP BY file, input_sha", (agent, agent_sha, model, *(only or ())))
        return {(file, sha): (load_findings(found), run) for file, sha, found, run, _ in rows}

    return find


def own_lookup(store: Store, run_id: str) -> Lookup:
    """The pairs run ``run_id`` itself reused (cached), whatever the keys: rebuilding a run's split
    later (a batch collected) finds the same fresh pairs it found when it began."""

    def find(agent: str, agent_sha: str, model: str) -> Known:
        rows = store.db.execute(
            "SELECT file, input_sha, findings, reason FROM review_pairs WHERE run_id = ? AND agent = ? "
            "AND status = 'cached'", (run_id, agent))
        return {(file, sha): (load_findings(found), (reason or "").removeprefix("reused from run "))
                for file, sha, found, reason in rows}

    return find


def record_planned(store: Store, run_id: str, split: CacheSplit, kind: ReviewKind = "live",
                   commit: str | None = None) -> None:
    """Before dispatch: a pending pair for every stale file, a cached one for every fresh file.
    ``kind``: how the run reviews (live, batch, sweep); ``commit``: the commit it reviews."""
    now = utc_now()
    rows: list[tuple[object, ...]] = []

    def cached(path: str, ordinal: int, found: list[Finding], source: str, shas: tuple[str, str]) -> None:
        rows.append((run_id, path, ordinal, "cached", f"reused from run {source}", dump_findings(found), *shas,
                     *keys, now, *outcome(found), commit, kind))

    def pending(path: str, ordinal: int, shas: tuple[str, str]) -> None:
        rows.append((run_id, path, ordinal, "pending", None, "[]", *shas, *keys, None, None, None, "[]", commit,
                     kind))

    for cache in split.agents:
        keys = (cache.entry.agent, cache.agent_sha, cache.model_id)
        if cache.cached and cache.scope_reused is not None:
            cached(SCOPE, 0, *cache.scope_reused, (cache.scope_sha, cache.scope_sha))
        else:
            pending(SCOPE, 0, (cache.scope_sha, cache.scope_sha))
        for ordinal, path in enumerate(cache.entry.files, start=1):
            shas = (cache.file_shas[path], cache.input_shas[path])
            if path in cache.reused:
                cached(path, ordinal, *cache.reused[path], shas)
            else:
                pending(path, ordinal, shas)
    with store.write() as db:
        db.executemany(
            "INSERT INTO review_pairs (run_id, file, ordinal, status, reason, findings, file_sha, input_sha, agent, "
            "agent_sha, model_id, reviewed_at, decision, rationale, evidence, reviewed_commit, review_kind) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


def record_results(store: Store, run_id: str, split: CacheSplit, results: list[AgentResult],
                   agents: Collection[str] | None = None) -> None:
    """After dispatch: each pending pair becomes completed (with its findings) or missing.
    ``agents``: only those agents' pairs (a batch finishes its local agents at submit and the
    others at collect); otherwise every pair, and any left pending becomes missing."""
    now = utc_now()
    by_agent = {r.id: r for r in results}
    done: list[tuple[str, str, str, str, str, str, str, int]] = []
    missing: list[tuple[str, str, str, int]] = []
    for cache in split.agents:
        agent = cache.entry.agent
        if cache.cached or (agents is not None and agent not in agents):
            continue
        result = by_agent.get(agent)
        pending = [(SCOPE, 0), *((p, i) for i, p in enumerate(cache.entry.files, start=1) if p not in cache.reused)]
        if result is None or result.status != "completed":
            reason = f"{result.status}: {result.error}" if result is not None else "no result"
            missing.extend((reason, now, agent, ordinal) for _, ordinal in pending)
            continue
        in_scope = set(cache.entry.files)
        per_file: dict[str | None, list[Finding]] = {}
        for finding in result.findings:
            key = finding.file if finding.file in in_scope else SCOPE
            per_file.setdefault(key, []).append(finding)
        # A file the agent could not review is no reviewed pair: a later run must review it.
        left_out = set(result.unreviewed)
        for path, ordinal in pending:
            if path in left_out or (path == SCOPE and left_out):
                missing.append(("not reviewed: " + (path or "part of its scope"), now, agent, ordinal))
            else:
                found = per_file.get(path, [])
                done.append((dump_findings(found), now, "reviewed", *outcome(found), agent, ordinal))
    with store.write() as db:
        db.executemany("UPDATE review_pairs SET status = 'completed', findings = ?, reviewed_at = ?, reason = ?, "
                       "decision = ?, rationale = ?, evidence = ? "
                       "WHERE run_id = ? AND agent = ? AND ordinal = ? AND status = 'pending'",
                       [(*row[:6], run_id, *row[6:]) for row in done])
        db.executemany("UPDATE review_pairs SET status = 'missing', reason = ?, rationale = ?, reviewed_at = ? "
                       "WHERE run_id = ? AND agent = ? AND ordinal = ? AND status = 'pending'",
                       [(r, r, t, run_id, a, o) for r, t, a, o in missing])
        if agents is None:
            db.execute("UPDATE review_pairs SET status = 'missing', reason = 'no result', rationale = 'no result' "
                       "WHERE run_id = ? AND status = 'pending'", (run_id,))


def missing_summary(store: Store, run_id: str) -> str | None:
    """The run's missing pairs in one line (how many of how many, and the first reasons); None when none."""
    total, lacking = store.db.execute(
        "SELECT COUNT(*), SUM(status = 'missing') FROM review_pairs WHERE run_id = ?", (run_id,)).fetchone()
    if not lacking:
        return None
    reasons = [r for (r,) in store.db.execute(
        "SELECT DISTINCT reason FROM review_pairs WHERE run_id = ? AND status = 'missing' LIMIT 3", (run_id,))]
    return f"{lacking} of {total} review pairs missing: " + "; ".join(str(r)[:200] for r in reasons)
