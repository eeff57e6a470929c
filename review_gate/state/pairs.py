"""Run-owned review pairs: created before dispatch, finished after it, reused when fresh."""

from __future__ import annotations

import json
from collections.abc import Iterable

from review_gate.models import AgentResult, Finding
from review_gate.state.freshness import SCOPE, CacheSplit, Known, Lookup
from review_gate.state.store import Store
from review_gate.state.times import utc_now


def dump_findings(findings: Iterable[Finding]) -> str:
    return json.dumps([f.model_dump(mode="json") for f in findings], separators=(",", ":"))


def load_findings(text: str) -> list[Finding]:
    return [Finding.model_validate(item) for item in json.loads(text)] if text != "[]" else []


def lookup(store: Store) -> Lookup:
    """The newest reusable pair per (file, input SHA) of one agent, agent SHA and model id."""

    def find(agent: str, agent_sha: str, model: str) -> Known:
        rows = store.db.execute(
            "SELECT file, input_sha, findings, run_id, MAX(id) FROM review_pairs "
            "WHERE agent = ? AND agent_sha = ? AND model_id = ? AND status IN ('completed', 'cached') "
            "AND input_sha != '' GROUP BY file, input_sha", (agent, agent_sha, model))
        return {(file, sha): (load_findings(found), run) for file, sha, found, run, _ in rows}

    return find


def record_planned(store: Store, run_id: str, split: CacheSplit) -> None:
    """Before dispatch: a pending pair for every stale file, a cached one for every fresh file."""
    now = utc_now()
    rows: list[tuple[object, ...]] = []
    for cache in split.agents:
        keys = (cache.entry.agent, cache.agent_sha, cache.model_id)
        if cache.cached and cache.scope_reused is not None:
            found, source = cache.scope_reused
            rows.append((run_id, SCOPE, 0, "cached", f"reused from run {source}", dump_findings(found),
                         cache.scope_sha, cache.scope_sha, *keys, now))
        else:
            rows.append((run_id, SCOPE, 0, "pending", None, "[]", cache.scope_sha, cache.scope_sha, *keys, None))
        for ordinal, path in enumerate(cache.entry.files, start=1):
            shas = (cache.file_shas[path], cache.input_shas[path])
            if path in cache.reused:
                found, source = cache.reused[path]
                rows.append((run_id, path, ordinal, "cached", f"reused from run {source}", dump_findings(found),
                             *shas, *keys, now))
            else:
                rows.append((run_id, path, ordinal, "pending", None, "[]", *shas, *keys, None))
    with store.write() as db:
        db.executemany(
            "INSERT INTO review_pairs (run_id, file, ordinal, status, reason, findings, file_sha, input_sha, agent, "
            "agent_sha, model_id, reviewed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


def record_results(store: Store, run_id: str, split: CacheSplit, results: list[AgentResult]) -> None:
    """After dispatch: each pending pair becomes completed (with its findings) or missing."""
    now = utc_now()
    by_agent = {r.id: r for r in results}
    done: list[tuple[str, str, str, str, int]] = []
    missing: list[tuple[str, str, str, int]] = []
    for cache in split.agents:
        if cache.cached:
            continue
        agent = cache.entry.agent
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
                done.append((dump_findings(per_file.get(path, [])), now, "reviewed", agent, ordinal))
    with store.write() as db:
        db.executemany("UPDATE review_pairs SET status = 'completed', findings = ?, reviewed_at = ?, reason = ? "
                       "WHERE run_id = ? AND agent = ? AND ordinal = ? AND status = 'pending'",
                       [(f, t, r, run_id, a, o) for f, t, r, a, o in done])
        db.executemany("UPDATE review_pairs SET status = 'missing', reason = ?, reviewed_at = ? "
                       "WHERE run_id = ? AND agent = ? AND ordinal = ? AND status = 'pending'",
                       [(r, t, run_id, a, o) for r, t, a, o in missing])
        db.execute("UPDATE review_pairs SET status = 'missing', reason = 'no result' "
                   "WHERE run_id = ? AND status = 'pending'", (run_id,))
