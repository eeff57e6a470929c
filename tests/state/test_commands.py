"""history, show, accept, accepted and gc through the CLI, and acceptances as waivers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.state.helpers import DIFF, counting_config, query, run_json, state_db


@pytest.fixture
def critical(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTER_SEVERITY", "critical")


def test_history_and_show(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    assert cli("history", "--config", str(cfg)).code == 0  # nothing recorded yet: not an error
    _, first = run_json(cli, cfg, DIFF)
    _, second = run_json(cli, cfg, DIFF)
    result = cli("history", "--config", str(cfg))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].split()[:3] == ["run", "when", "source"]
    assert second["run_id"] in lines[1] and first["run_id"] in lines[2]  # newest first
    assert "4/4" in lines[1] and "0/4" in lines[2]  # cached pairs (2 agents x 2 files)
    assert "pass_with_warnings" in lines[1] and "3/0" in lines[1]
    assert len(cli("history", "--limit", "1", "--config", str(cfg)).out.splitlines()) == 2

    shown = cli("show", "last", "--format", "json", "--config", str(cfg))
    assert shown.code == 0, shown.err
    report = json.loads(shown.out)
    assert report["run_id"] == second["run_id"]
    assert report["findings"] == second["findings"]
    prefix = first["run_id"][:-3]
    by_prefix = cli("show", prefix, "--format", "sarif", "--config", str(cfg), "--output", "out.sarif")
    assert by_prefix.code == 0, by_prefix.err
    assert json.loads(Path("out.sarif").read_text())["version"] == "2.1.0"
    assert cli("show", first["run_id"], "--config", str(cfg)).code == 0  # text
    by_suffix = cli("show", second["run_id"][-8:], "--format", "json", "--config", str(cfg))  # the random part
    assert by_suffix.code == 0 and json.loads(by_suffix.out)["run_id"] == second["run_id"]

    ambiguous = cli("show", "20", "--config", str(cfg))
    assert ambiguous.code == 2 and "several runs" in ambiguous.err and "Traceback" not in ambiguous.err
    unknown = cli("show", "nope", "--config", str(cfg))
    assert unknown.code == 2 and "no run 'nope'" in unknown.err and "history" in unknown.err


def test_an_accepted_critical_finding_no_longer_fails_the_gate(cli, tmp_path: Path, critical: None) -> None:
    cfg = counting_config(tmp_path, agents=("one",))
    code, report = run_json(cli, cfg, DIFF)
    assert (code, report["decision"]) == (1, "fail")
    fingerprints = [f["fingerprint"] for f in report["findings"] if f["severity"] == "critical"]
    assert len(fingerprints) == 2
    for fp in fingerprints:
        result = cli("accept", fp, "--reason", "known, tracked in ISSUE-1", "--config", str(cfg))
        assert result.code == 0, result.err
    code, report = run_json(cli, cfg, DIFF)
    assert (code, report["decision"]) == (0, "pass")
    assert sorted(f["fingerprint"] for f in report["waived"]) == sorted(fingerprints)
    assert {f["waived"] for f in report["waived"]} == {"accepted by test@example.com: known, tracked in ISSUE-1"}
    assert report["metrics"]["critical"] == 0
    who = query(state_db(), "SELECT DISTINCT who, kind FROM acceptance_events")
    assert who == [("test@example.com", "accept")]
    assert query(state_db(), "SELECT COUNT(*) FROM acceptance_events WHERE review_pair_id IS NOT NULL") == [(2,)]

    listed = cli("accepted", "--config", str(cfg))
    assert listed.code == 0 and all(fp in listed.out for fp in fingerprints)
    [first_id] = [line.split()[0] for line in listed.out.splitlines() if fingerprints[0] in line]
    revoked = cli("accepted", "--revoke", first_id, "--config", str(cfg))
    assert revoked.code == 0, revoked.err
    assert fingerprints[0] not in cli("accepted", "--config", str(cfg)).out
    assert "revoked" in cli("accepted", "--all", "--config", str(cfg)).out
    again = cli("accepted", "--revoke", first_id, "--config", str(cfg))
    assert again.code == 2 and "not an active acceptance" in again.err
    code, report = run_json(cli, cfg, DIFF)
    assert (code, report["decision"]) == (1, "fail")
    assert [f["fingerprint"] for f in report["waived"]] == [fingerprints[1]]


def test_an_expired_acceptance_no_longer_applies(cli, tmp_path: Path, critical: None) -> None:
    cfg = counting_config(tmp_path, agents=("one",))
    _, report = run_json(cli, cfg, DIFF)
    for f in report["findings"]:
        assert cli("accept", f["fingerprint"], "--reason", "for now", "--expires", "2999-12-31",
                   "--config", str(cfg)).code == 0
    code, report = run_json(cli, cfg, DIFF)
    assert code == 0 and report["findings"] == []
    connection_sql = "UPDATE acceptance_events SET expires = '2000-01-01'"
    connection = sqlite3.connect(state_db())
    with connection:
        connection.execute(connection_sql)
    connection.close()
    code, report = run_json(cli, cfg, DIFF)
    assert (code, report["decision"], report["waived"]) == (1, "fail", [])
    assert "expired" in cli("accepted", "--all", "--config", str(cfg)).out


def test_accept_refuses_an_unknown_fingerprint_unless_forced(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    unknown_fp = "abc123" + "0" * 26
    nothing = cli("accept", "abc123", "--reason", "x", "--config", str(cfg))
    assert nothing.code == 2 and "--force" in nothing.err and not state_db().exists()
    run_json(cli, cfg, DIFF)
    unknown = cli("accept", "abc123", "--reason", "x", "--config", str(cfg))
    assert unknown.code == 2 and "no recorded run reported a finding abc123" in unknown.err
    assert "--force" in unknown.err
    short = cli("accept", "abc123", "--reason", "x", "--force", "--config", str(cfg))
    assert short.code == 2  # --force takes only a whole fingerprint
    forced = cli("accept", unknown_fp, "--reason", "x", "--force", "--config", str(cfg))
    assert forced.code == 0, forced.err
    assert forced.out.startswith(f"overridden (no recorded run reported it) {unknown_fp}")
    assert unknown_fp in cli("accepted", "--config", str(cfg)).out
    # seed 003: a waiver with no review pair behind it is an override, not an acceptance of a pair
    events = "SELECT kind, review_pair_id FROM acceptance_events WHERE fingerprint = ?"
    assert query(state_db(), events, unknown_fp) == [("override", None)]
    for bad in (["--expires", "2001-01-01"], ["--expires", "tomorrow"], ["--reason", " "]):
        args = ["accept", unknown_fp, "--reason", "x", *bad, "--force", "--config", str(cfg)]
        result = cli(*args)
        assert result.code == 2 and "Traceback" not in result.err, bad


def test_gc_drops_old_runs_with_their_pairs(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    ids = [run_json(cli, cfg, DIFF)[1]["run_id"] for _ in range(3)]
    nothing = cli("gc", "--config", str(cfg))  # default: older than 30 days
    assert nothing.code == 0 and "nothing to drop" in nothing.out
    result = cli("gc", "--keep", "1", "--config", str(cfg))
    assert result.code == 0, result.err
    assert "dropped 2 runs and 12 review pairs" in result.out
    assert query(state_db(), "SELECT id FROM review_runs") == [(ids[2],)]
    assert query(state_db(), "SELECT DISTINCT run_id FROM review_pairs") == [(ids[2],)]
    # the newest run's cached pairs keep the cache alive
    _, report = run_json(cli, cfg, DIFF)
    assert {a["status"] for a in report["agents"]} == {"cached"}
    connection_sql = "UPDATE review_runs SET started_at = '2000-01-01T00:00:00Z'"
    connection = sqlite3.connect(state_db())
    with connection:
        connection.execute(connection_sql)
    connection.close()
    assert "dropped 2 runs" in cli("gc", "--days", "7", "--config", str(cfg)).out
    assert cli("gc", "--days", "-1", "--config", str(cfg)).code == 2
    assert cli("history", "--limit", "0", "--config", str(cfg)).code == 2
