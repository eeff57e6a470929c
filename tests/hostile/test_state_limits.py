"""The run state stays honest and bounded (issue 8 items 5 and 12): a file an agent could not
review is never cached as reviewed, and old or oversized history is dropped after each run."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from review_gate.config import load_config
from review_gate.llm import prompt
from review_gate.models import AgentResult, Coverage, PRClassification, PRFacts
from review_gate.pipeline.aggregate import aggregate
from tests.conftest import make_diff
from tests.llm.conftest import llm_agent, write_config
from tests.llm.server import LlmServer
from tests.state.helpers import DIFF, counting_config, query, run_json, state_db


def execute(db: Path, sql: str, *params: Any) -> None:
    connection = sqlite3.connect(db)
    try:
        with connection:
            connection.execute(sql, params)
    finally:
        connection.close()


SCANNER = {"id": "scan", "name": "scan", "description": "a pattern agent that covers every file", "kind": "pattern"}


def _starved_instructions(cfg: Path) -> None:
    """Instructions so long that the 1000-token budget keeps room for no code at all."""
    fixed = len(prompt.system_message("", [], None)) + prompt.preamble_size()
    (cfg / "instructions" / "reviewer.md").write_text("x" * ((1000 - 64 - 6) * 4 - fixed))


def test_a_file_left_unreviewed_is_recorded_missing_and_reviewed_again(cli: Any, tmp_path: Path,
                                                                       monkeypatch: Any) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-starved-0123456789")
    diff = make_diff("x.py", [f"value_{n} = {n}" for n in range(50)])
    with LlmServer() as server:
        cfg = write_config(tmp_path, [llm_agent("reviewer", server, required=True, max_input_tokens=1000), SCANNER])
        _starved_instructions(cfg)
        code, first = run_json(cli, cfg, diff)
        code2, second = run_json(cli, cfg, diff)
    for result, report in ((code, first), (code2, second)):
        agent = next(a for a in report["agents"] if a["id"] == "reviewer")
        assert agent["status"] == "completed" and agent["unreviewed"] == ["x.py"]
        assert (result, report["decision"], report["coverage"]["unreviewed"]) == (3, "incomplete", ["x.py"])
    rows = query(state_db(),
                 "SELECT run_id, status FROM review_pairs WHERE agent = 'reviewer' AND file = 'x.py' ORDER BY id")
    assert [status for _, status in rows] == ["missing", "missing"]


def test_an_optional_agent_leaving_a_file_unreviewed_is_no_missing_input_but_counts_as_failed() -> None:
    config = load_config(None)
    facts = PRFacts(source="t", files=[])
    classification = PRClassification(files=[], domains=[], unclassified=[], risk_score=0, risk_level="low",
                                       pr_type="mixed")
    results = [AgentResult(id="opt", kind="llm", status="completed", required=False, attempts=1, duration_s=0,
                           files=["a.py"], unreviewed=["a.py"]),
               AgentResult(id="req", kind="llm", status="completed", required=True, attempts=1, duration_s=0,
                           files=["a.py"], unreviewed=["a.py"])]
    optional = aggregate(facts, classification, [], [], results[:1], config, run_id="r", tool_version="t")
    required = aggregate(facts, classification, [], [], results, config, run_id="r", tool_version="t")
    assert (optional.metrics.missing_inputs, optional.metrics.agents_failed, optional.decision) == (
        0, 1, "incomplete")  # issue 20: an optional reviewer that left a file unreviewed is no pass
    assert (required.metrics.missing_inputs, required.decision) == (1, "incomplete")
    assert isinstance(required.coverage, Coverage)


def test_old_runs_are_dropped_after_a_run(cli: Any, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    _, first = run_json(cli, cfg, DIFF)
    db = state_db()
    execute(db, "UPDATE review_runs SET started_at = '2000-01-01T00:00:00Z' WHERE id = ?", first["run_id"])
    _, second = run_json(cli, cfg, DIFF)
    assert [r[0] for r in query(db, "SELECT id FROM review_runs")] == [second["run_id"]]
    assert query(db, "SELECT COUNT(*) FROM review_pairs WHERE run_id = ?", first["run_id"]) == [(0,)]


def test_the_state_is_kept_under_its_size_limit(cli: Any, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path, settings={"state_max_mb": 1})
    _, first = run_json(cli, cfg, DIFF)
    db = state_db()
    execute(db, "UPDATE review_runs SET report = json_object('padding', hex(randomblob(1100000))) WHERE id = ?",
            first["run_id"])
    assert query(db, "PRAGMA page_count")[0][0] * query(db, "PRAGMA page_size")[0][0] > 2 << 20
    _, second = run_json(cli, cfg, DIFF)
    assert [r[0] for r in query(db, "SELECT id FROM review_runs")] == [second["run_id"]]
    assert json.loads(query(db, "SELECT metrics FROM review_runs")[0][0])["total"] >= 0
