"""Run-owned review pairs as a cache: what is fresh is reused, only what changed is reviewed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.state.helpers import DIFF, DIFF_A_CHANGED, calls, counting_config, query, run_json, state_db, statuses


def comparable(report: dict[str, object]) -> list[tuple[object, ...]]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return sorted((f["fingerprint"], f["severity"], f["file"], f["line"], f["message"]) for f in findings)


def test_second_run_on_an_unchanged_diff_calls_no_agent(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    code1, first = run_json(cli, cfg, DIFF)
    assert statuses(first) == {"one": "completed", "two": "completed"}
    assert calls(tmp_path, "one") == ["a.py,b.py"] and calls(tmp_path, "two") == ["a.py,b.py"]

    code2, second = run_json(cli, cfg, DIFF)
    assert calls(tmp_path, "one") == ["a.py,b.py"] and calls(tmp_path, "two") == ["a.py,b.py"]  # zero calls
    assert statuses(second) == {"one": "cached", "two": "cached"}
    assert all(a["attempts"] == 0 for a in second["agents"])
    assert comparable(second) == comparable(first)
    assert any(f["file"] is None for f in second["findings"])  # the scope finding came back too
    assert (code2, second["decision"], second["metrics"]) == (code1, first["decision"], first["metrics"])
    assert second["run_id"] != first["run_id"]
    db = state_db()
    rows = query(db, "SELECT status, COUNT(*) FROM review_pairs WHERE run_id = ? GROUP BY status", second["run_id"])
    assert dict(rows) == {"cached": 6}  # 2 agents x (2 files + the scope pair)


def test_a_change_in_one_file_reviews_only_that_file(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    _, first = run_json(cli, cfg, DIFF)
    _, second = run_json(cli, cfg, DIFF_A_CHANGED)
    assert calls(tmp_path, "one") == ["a.py,b.py", "a.py"]
    assert calls(tmp_path, "two") == ["a.py,b.py", "a.py"]
    assert statuses(second) == {"one": "completed", "two": "completed"}
    agent = next(a for a in second["agents"] if a["id"] == "one")
    assert agent["files"] == ["a.py", "b.py"]  # its scope, though it was called with a.py only
    assert comparable(second) == comparable(first)  # same lines flagged, same fingerprints
    cached = query(state_db(),
                   "SELECT agent, file FROM review_pairs WHERE run_id = ? AND status = 'cached' ORDER BY agent",
                   second["run_id"])
    assert cached == [("one", "b.py"), ("two", "b.py")]
    _, third = run_json(cli, cfg, DIFF_A_CHANGED)
    assert statuses(third) == {"one": "cached", "two": "cached"}
    assert len(calls(tmp_path, "one")) == 2


def test_changing_a_rule_makes_only_its_agent_stale(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    run_json(cli, cfg, DIFF)
    rules_file = cfg / "review-rules.json"
    rules = json.loads(rules_file.read_text())
    rules["rules"][1]["description"] = "a different text"  # the rule of agent "two"
    rules_file.write_text(json.dumps(rules))
    _, report = run_json(cli, cfg, DIFF)
    assert statuses(report) == {"one": "cached", "two": "completed"}
    assert len(calls(tmp_path, "one")) == 1
    assert calls(tmp_path, "two") == ["a.py,b.py", "a.py,b.py"]


def test_changing_an_agent_entry_makes_only_that_agent_stale(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    run_json(cli, cfg, DIFF)
    agents_file = cfg / "review-agents.json"
    agents = json.loads(agents_file.read_text())
    agents["agents"][0]["timeout_s"] = 31
    agents_file.write_text(json.dumps(agents))
    _, report = run_json(cli, cfg, DIFF)
    assert statuses(report) == {"one": "completed", "two": "cached"}


def test_no_cache_calls_everything_and_still_records_the_run(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    run_json(cli, cfg, DIFF)
    _, report = run_json(cli, cfg, DIFF, "--no-cache")
    assert statuses(report) == {"one": "completed", "two": "completed"}
    assert len(calls(tmp_path, "one")) == 2 and len(calls(tmp_path, "two")) == 2
    runs = query(state_db(), "SELECT id, status FROM review_runs")
    assert (report["run_id"], "completed") in runs and len(runs) == 2


def test_no_state_writes_no_file(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    before = sorted(p.name for p in Path.cwd().iterdir())
    _, report = run_json(cli, cfg, DIFF, "--no-state")
    run_json(cli, cfg, DIFF, "--no-state")
    assert statuses(report) == {"one": "completed", "two": "completed"}
    assert len(calls(tmp_path, "one")) == 2
    assert sorted(p.name for p in Path.cwd().iterdir()) == before
    assert not Path(".review-gate").exists()


def test_a_failed_agent_is_not_cached(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    agents_file = cfg / "review-agents.json"
    good = agents_file.read_text()
    agents = json.loads(good)
    agents["agents"][0]["command"] = ["/bin/false"]
    agents_file.write_text(json.dumps(agents))
    _, report = run_json(cli, cfg, DIFF)
    assert statuses(report)["one"] == "failed"
    _, again = run_json(cli, cfg, DIFF)
    assert statuses(again) == {"one": "failed", "two": "cached"}
    missing = query(state_db(),
                    "SELECT DISTINCT status FROM review_pairs WHERE agent = 'one'")
    assert missing == [("missing",)]


def test_worktree_reviews_never_see_the_state_files(cli, repo, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    repo.write("a.py", "x = 1\n")
    first = cli("--config", str(cfg), "--format", "json")
    assert first.code == 0, first.err
    assert (repo.root / ".review-gate" / "state.db").exists()
    assert (repo.root / ".review-gate" / ".gitignore").exists()
    second = cli("--config", str(cfg), "--format", "json")
    report = json.loads(second.out)
    assert [a["files"] for a in report["agents"]] == [["a.py"], ["a.py"]]
    assert statuses(report) == {"one": "cached", "two": "cached"}
    assert "state.db" not in repo.git("status", "--porcelain", "--untracked-files=all")
