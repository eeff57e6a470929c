"""The LLM gap detector (``gap_detector`` in review-gate.json) through the real CLI and the test server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff
from tests.llm.conftest import KEY, agent_result, llm_agent, run, write_config
from tests.llm.server import LlmServer, Step

DIFF = make_diff("app.py", ["x = eval(input())"]) + make_diff("notes.txt", ["eval is fine here"])
BASE = {"id": "base", "name": "base", "description": "baseline pattern agent", "kind": "pattern"}
SEC = {"id": "sec", "name": "sec", "description": "finds eval calls", "kind": "pattern"}
RULE = {"id": "no-eval", "name": "eval", "severity": "warning", "agent": "sec", "category": "security",
        "description": "eval", "detection": "eval(", "recommendation": "no", "pattern": r"eval\("}


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


def config(tmp_path: Path, server: LlmServer) -> Path:
    """``base`` always runs; ``sec`` only on a path this change does not touch; ``gaps`` detects."""
    cfg = write_config(tmp_path, [BASE, SEC, llm_agent("gaps", server)], rules=[RULE], gap_detector="gaps")
    (cfg / "review-composition.json").write_text(json.dumps({"version": 1, "policies": [
        {"id": "baseline", "description": "every change", "trigger": {"type": "always"}, "dispatch": ["base"]},
        {"id": "vendored", "description": "vendored code", "trigger": {"type": "paths", "paths": ["vendor/**"]},
         "dispatch": ["sec"]},
    ]}), encoding="utf-8")
    return cfg


def answering(*additions: dict[str, Any]) -> Step:
    return Step(content=json.dumps({"additions": list(additions)}), tokens=(300, 40))


def test_an_addition_is_dispatched_and_logged(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = answering({"agent": "sec", "files": ["app.py"], "reason": "eval of user input"})
    _, report = run(cli, config(tmp_path, server), DIFF)
    assert agent_result(report, "sec")["status"] == "completed"
    assert [(f["rule_id"], f["file"]) for f in report["findings"]] == [("no-eval", "app.py")]
    [gap] = [g for g in report["gaps"] if g["kind"] == "llm_addition"]
    assert gap["subject"] == "sec"
    assert "eval of user input" in gap["reason"] and "300+40 tokens" in gap["reason"]
    snippet = json.loads(gap["suggestion"].split('"policies": ', 1)[1])
    assert snippet["trigger"] == {"type": "paths", "paths": ["app.py"]} and snippet["dispatch"] == ["sec"]
    [request] = server.requests
    body = request.body
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["additions"]["items"]["properties"]["agent"]["enum"] == ["base", "sec"]
    assert "app.py" in request.prompt and "finds eval calls" in request.prompt and "<<<DIFF" in request.prompt
    assert KEY not in json.dumps(report)


def test_plan_shows_the_amended_manifest(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = answering({"agent": "sec", "files": ["notes.txt"], "reason": "text mentions eval"})
    result = cli("plan", "--config", str(config(tmp_path, server)), "--diff", "-", "--format", "json",
                 stdin=DIFF.encode())
    assert result.code == 0, result.err
    data = result.json()
    entry = next(e for e in data["manifest"] if e["agent"] == "sec")
    assert entry == {"agent": "sec", "files": ["notes.txt"], "policies": ["gap-detector"], "priority": 0}
    [gap] = [g for g in data["gaps"] if g["kind"] == "llm_addition"]
    assert "notes.txt" in gap["suggestion"] and "\"dispatch\": [\"sec\"]" in gap["suggestion"]


def test_unknown_agents_and_files_outside_the_change_are_ignored(cli: Any, tmp_path: Path,
                                                                 server: LlmServer) -> None:
    server.default = answering({"agent": "ghost", "files": ["app.py"], "reason": "x"},
                               {"agent": "sec", "files": ["elsewhere.py"], "reason": "y"},
                               {"agent": "gaps", "files": ["app.py"], "reason": "itself"})
    _, report = run(cli, config(tmp_path, server), DIFF)
    assert {a["id"] for a in report["agents"]} == {"base"}
    assert not [g for g in report["gaps"] if g["kind"].startswith(("llm", "gap_detector"))]


def test_an_addition_for_a_dispatched_agent_extends_its_scope(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = answering({"agent": "base", "files": ["app.py", "notes.txt"], "reason": "already there"})
    result = cli("plan", "--config", str(config(tmp_path, server)), "--diff", "-", "--format", "json",
                 stdin=DIFF.encode())
    data = result.json()
    assert [e["agent"] for e in data["manifest"]] == ["base"]  # both files were in its scope already
    assert not [g for g in data["gaps"] if g["kind"] == "llm_addition"]


def test_a_server_error_is_a_gap_and_the_run_completes(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = Step(status=500)
    result, report = run(cli, config(tmp_path, server), DIFF)
    assert {a["id"] for a in report["agents"]} == {"base"}
    assert agent_result(report, "base")["status"] == "completed"
    [gap] = [g for g in report["gaps"] if g["kind"] == "gap_detector_failed"]
    assert "HTTP 500" in gap["reason"] and gap["subject"] == "gaps"
    assert report["decision"] != "incomplete" and result.code == 0


def test_an_unset_key_is_a_gap(cli: Any, tmp_path: Path, server: LlmServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEST_LLM_KEY")
    _, report = run(cli, config(tmp_path, server), DIFF)
    [gap] = [g for g in report["gaps"] if g["kind"] == "gap_detector_failed"]
    assert "TEST_LLM_KEY is not set" in gap["reason"]
    assert not server.requests


def test_offline_makes_no_request(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    cfg = config(tmp_path, server)
    _, report = run(cli, cfg, DIFF, "--offline")
    assert {a["id"] for a in report["agents"]} == {"base"}
    result = cli("plan", "--offline", "--config", str(cfg), "--diff", "-", "--format", "json", stdin=DIFF.encode())
    assert result.code == 0, result.err
    assert not server.requests


@pytest.mark.parametrize(("detector", "message"), [
    ("nobody", "unknown agent"),
    ("sec", "must be an 'llm' agent"),
])
def test_config_validation(cli: Any, tmp_path: Path, server: LlmServer, detector: str, message: str) -> None:
    cfg = config(tmp_path, server)
    gate = json.loads((cfg / "review-gate.json").read_text())
    (cfg / "review-gate.json").write_text(json.dumps({**gate, "gap_detector": detector}), encoding="utf-8")
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 2
    assert str(cfg / "review-gate.json") in result.err and "/gap_detector" in result.err
    assert message in result.err and "fix:" in result.err and "gaps" in result.err
