"""Seed 003's pairs whole: what runs and pairs record, acceptance kinds, gc of obsolete pairs,
and the migration from schema 3 that keeps every row."""

from __future__ import annotations

import json
import sqlite3
from datetime import date
from pathlib import Path

from review_gate.models import Waiver
from review_gate.state import acceptance, runs
from review_gate.state.migrations import MIGRATIONS, SCHEMA_VERSION
from review_gate.state.store import open_store
from tests.conftest import make_diff
from tests.state.helpers import DIFF, DIFF_A_CHANGED, counting_config, query, run_json, state_db


def schema_3(path: Path) -> None:
    """A state file as review-gate wrote it at schema 3 (before loops, hooks and batches),
    with a run, pairs and acceptances."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('application', 'review-gate'), ('schema_version', '3')")
    for version in (1, 2, 3):
        for statement in MIGRATIONS[version]:
            db.execute(statement)
    db.execute("INSERT INTO review_runs (id, started_at, source, config_sha, status, pid, host, packing) "
               "VALUES ('20250101T000000Z-aaaaaaaa', '2025-01-01T00:00:00Z', 'stdin', 'c', 'completed', 1, 'h', "
               "'agent_packed')")
    db.execute("INSERT INTO review_pairs (run_id, file, agent, ordinal, status, findings, file_sha, agent_sha, "
               "input_sha) VALUES ('20250101T000000Z-aaaaaaaa', 'a.py', 'one', 1, 'completed', '[]', 'f', 's', 'i')")
    db.execute("INSERT INTO acceptance_events (kind, fingerprint, reason, who, created_at, review_pair_id) "
               "VALUES ('accept', 'f0', 'fine', 'me', '2025-01-01T00:00:00Z', 1)")
    db.execute("INSERT INTO acceptance_events (kind, fingerprint, reason, who, created_at) "
               "VALUES ('accept', 'f1', 'also', 'me', '2025-01-01T00:00:00Z')")
    db.execute("INSERT INTO acceptance_events (kind, fingerprint, reason, who, created_at, revokes) "
               "VALUES ('revoke', 'f1', 'revoked', 'me', '2025-01-02T00:00:00Z', 2)")
    db.close()


def test_the_migration_from_schema_3_keeps_every_row(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    schema_3(path)
    store = open_store(path)
    assert store is not None
    with store:
        assert store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            str(SCHEMA_VERSION),)
        assert store.db.execute("SELECT id, packing, runner, model, failure FROM review_runs").fetchall() == [
            ("20250101T000000Z-aaaaaaaa", "agent_packed", "live", "", None)]
        assert store.db.execute("SELECT file, status, review_kind, evidence FROM review_pairs").fetchall() == [
            ("a.py", "completed", "live", "[]")]
        assert acceptance.waivers(store, date(2025, 6, 1)) == {
            "f0": Waiver(kind="acceptance", reason="accepted by me: fine")}  # f1 stays revoked
        assert store.db.execute("SELECT review_pair_id FROM acceptance_events WHERE id = 1").fetchone() == (1,)
        acceptance.override(store, "f2", "the reviewer is wrong here", "me")
        acceptance.ack(store, "f3", "seen, fixing next sprint", "me")
        waivers = acceptance.waivers(store, date(2025, 6, 1))
        # ack waives nothing
        assert waivers == {"f0": Waiver(kind="acceptance", reason="accepted by me: fine"),
                           "f2": Waiver(kind="acceptance", reason="overridden by me: the reviewer is wrong here")}
        assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []
        # the pair an acceptance points to goes: the acceptance stays, pointing nowhere
        store.db.execute("DELETE FROM review_runs")
        assert store.db.execute("SELECT COUNT(*), MAX(review_pair_id) FROM acceptance_events").fetchone() == (5, None)


def test_pairs_and_runs_record_their_outcome(cli, repo, tmp_path: Path) -> None:
    repo.branch("feature")
    repo.write("a.py", "x = 1\n")
    head = repo.commit("a")
    cfg = counting_config(tmp_path, settings={"packing": "per_agent"})
    result = cli("--config", str(cfg), "--base", "main", "--head", "HEAD", "--format", "json")
    report = json.loads(result.out)
    db = repo.root / ".review-gate" / "state.db"
    rows = query(db, "SELECT file, status, decision, rationale, evidence, reviewed_commit, review_kind "
                     "FROM review_pairs WHERE agent = 'one' ORDER BY ordinal")
    assert rows[0][:4] == ("", "completed", "pass", "1 finding (1 info)")  # the scope pair
    file_row = rows[1]
    assert file_row[:4] == ("a.py", "completed", "pass_with_warnings", "1 finding (1 warning)")
    [evidence] = json.loads(file_row[4])
    assert evidence["line"] == 1 and evidence["severity"] == "warning"
    assert evidence["fingerprint"] in {f["fingerprint"] for f in report["findings"]}
    assert file_row[5:] == (head, "live")
    assert query(db, "SELECT runner, packing, failure FROM review_runs") == [("live", "per_agent", None)]
    repo.write("a.py", "x = 22\n")  # the working tree is no commit: its pairs name none
    cli("--config", str(cfg), "--format", "json")
    assert query(db, "SELECT DISTINCT reviewed_commit FROM review_pairs WHERE run_id != ?", report["run_id"]) == [
        (None,)]


def test_a_run_with_missing_pairs_records_its_failure(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    agents = json.loads((cfg / "review-agents.json").read_text())
    agents["agents"][1]["command"] = ["/bin/false"]
    (cfg / "review-agents.json").write_text(json.dumps(agents))
    code, _ = run_json(cli, cfg, DIFF)
    assert code == 3
    [(status, failure)] = query(state_db(), "SELECT status, failure FROM review_runs")
    assert status == "incomplete" and failure.startswith("3 of 6 review pairs missing: failed:")


def test_gc_drops_obsolete_pairs_but_keeps_a_run_whose_other_pairs_are_current(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    run_json(cli, cfg, DIFF)  # a.py and b.py
    run_json(cli, cfg, make_diff("a.py", ["x = 1", "y = 22"]))  # a.py only, changed
    _, third = run_json(cli, cfg, DIFF_A_CHANGED)  # a.py as the second run has it, b.py as the first
    before = query(state_db(), "SELECT run_id, agent, file FROM review_pairs ORDER BY id")
    result = cli("gc", "--obsolete", "--config", str(cfg))
    assert result.code == 0 and "obsolete review pair" in result.out
    after = query(state_db(), "SELECT run_id, agent, file FROM review_pairs ORDER BY id")
    kept_runs = {r for (r,) in query(state_db(), "SELECT id FROM review_runs")}
    # the third run reuses a.py from the second and b.py from the first: those earlier pairs are
    # superseded by its cached copies; only the newest pair of each (file, agent) stays
    assert kept_runs == {third["run_id"]}
    assert sorted(after) == sorted((third["run_id"], a, f) for a in ("one", "two") for f in ("", "a.py", "b.py"))
    assert len(before) > len(after)
    _, again = run_json(cli, cfg, DIFF_A_CHANGED)
    assert {a["status"] for a in again["agents"]} == {"cached"}  # what stays is what the cache needs


def test_gc_keeps_a_run_with_a_current_pair(tmp_path: Path, cli) -> None:
    cfg = counting_config(tmp_path, agents=("one",))
    _, first = run_json(cli, cfg, DIFF)  # a.py and b.py
    _, second = run_json(cli, cfg, make_diff("a.py", ["other"]))  # a.py only: b.py of the first run is current
    store = open_store(state_db())
    assert store is not None
    with store:
        dropped, emptied = runs.gc_obsolete(store)
    assert dropped == 2 and emptied == []  # first run's a.py pair and its scope pair
    assert query(state_db(), "SELECT file FROM review_pairs WHERE run_id = ?", first["run_id"]) == [("b.py",)]
    assert {r for (r,) in query(state_db(), "SELECT id FROM review_runs")} == {first["run_id"], second["run_id"]}


def test_a_run_that_breaks_records_its_failure_and_a_debug_log(tmp_path: Path) -> None:
    import anyio
    import pytest

    from review_gate.config import load_config
    from review_gate.pipeline import runner
    from review_gate.pipeline.normalize import DiffRequest
    from review_gate.state.session import RunState

    config = load_config(counting_config(tmp_path))

    async def planned() -> object:
        facts = await runner.read_change(DiffRequest(mode="stdin", stdin_data=DIFF.encode()))
        return await runner.plan(facts, config)

    plan = anyio.run(planned)
    with pytest.raises(RuntimeError), RunState(config, None, use_cache=True) as state:
        state.start(plan, "20260101T000000Z-deadbeef")  # type: ignore[arg-type]
        raise RuntimeError("a bug in the middle of a run")
    [(status, failure, log)] = query(state_db(), "SELECT status, failure, debug_log FROM review_runs")
    assert status == "failed" and failure == "run failed: RuntimeError: a bug in the middle of a run"
    assert "a bug in the middle of a run" in Path(log).read_text() and "Traceback" in Path(log).read_text()
    assert query(state_db(), "SELECT DISTINCT status FROM review_pairs") == [("missing",)]
