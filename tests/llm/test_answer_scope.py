"""Issue 20, part 5: answers read for what they are. A packed finding put under the wrong lens
goes to the lens of its request whose scope holds its file, or is shown dropped, with its
severity, in every format (a critical one makes its agent's review incomplete); an answer
withheld by a content filter or refused is unusable, like one cut off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff
from tests.llm.conftest import KEY, agent_result, llm_agent
from tests.llm.server import LlmServer, Step

DIFF = make_diff("app.py", ["x = 1"]) + make_diff("db.sql", ["DROP TABLE users;"])
FORMATS = ("text", "markdown", "github", "json", "agent", "sarif")


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


def two_lenses(tmp_path: Path, server: LlmServer, **fields: Any) -> Path:
    """``web`` reads app.py, ``db`` reads db.sql: one packed request holds both."""
    cfg = tmp_path / "cfg"
    (cfg / "instructions").mkdir(parents=True)
    (cfg / "instructions" / "reviewer.md").write_text("# Reviewer\n\nLook for bugs.\n")
    agents = [*(llm_agent(name, server, **fields) for name in ("web", "db")),
              {"id": "pat", "name": "pat", "description": "a pattern agent", "kind": "pattern"}]
    policies = [{"id": "base", "description": "all", "trigger": {"type": "always"}, "dispatch": ["pat"]},
                {"id": "web", "description": "code", "trigger": {"type": "paths", "paths": ["*.py"]},
                 "dispatch": ["web"]},
                {"id": "db", "description": "sql", "trigger": {"type": "paths", "paths": ["*.sql"]},
                 "dispatch": ["db"]}]
    for name, data in (("review-agents.json", {"version": 1, "agents": agents}),
                       ("review-composition.json", {"version": 1, "policies": policies}),
                       ("review-rules.json", {"version": 1, "rules": []})):
        (cfg / name).write_text(json.dumps(data), encoding="utf-8")
    return cfg


def finding(lens: str, path: str, severity: str = "critical") -> dict[str, Any]:
    return {"agent": lens, "severity": severity, "message": f"dangerous change in {path}", "file": path, "line": 1}


def test_a_finding_under_the_wrong_lens_goes_to_the_lens_whose_scope_holds_its_file(
        cli: Any, tmp_path: Path, server: LlmServer) -> None:
    # Issue 20: a critical finding on db.sql tagged with the lens whose scope is app.py was
    # dropped silently (out_of_scope: 1; both lenses completed; PASS).
    server.default = Step(findings=[finding("web", "db.sql")])
    result = cli("--config", str(two_lenses(tmp_path, server)), "--diff", "-", "--format", "json",
                 stdin=DIFF.encode())
    report = result.json()
    assert len(server.requests) == 1
    [found] = report["findings"]
    assert (found["agent"], found["file"], found["severity"]) == ("db", "db.sql", "critical")
    assert any("named lens web" in note and "credited to db" in note for note in agent_result(report, "db")["notes"])
    assert agent_result(report, "web")["out_of_scope"] == 0
    assert (report["decision"], result.code) == ("fail", 1)


def test_a_finding_no_lens_may_keep_is_shown_dropped_with_its_severity_everywhere(
        cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = Step(findings=[finding("web", "elsewhere.py"), finding("db", "notes.txt", "major")])
    out = tmp_path / "out"
    out.mkdir()
    args = [arg for fmt in FORMATS for arg in ("--format", fmt, "--output", str(out / fmt))]
    result = cli("--config", str(two_lenses(tmp_path, server, required=False)), "--diff", "-", *args,
                 stdin=DIFF.encode())
    report = json.loads((out / "json").read_text())
    assert report["findings"] == []
    web, db = agent_result(report, "web"), agent_result(report, "db")
    assert web["out_of_scope_findings"] == [
        {"severity": "critical", "file": "elsewhere.py", "message": "dangerous change in elsewhere.py"}]
    assert db["out_of_scope_findings"][0]["severity"] == "major"
    # a critical finding dropped: web's review is incomplete; a major one: shown, nothing more
    assert [(a["agent"], a["counted"]) for a in report["did_not_review"]] == [("web", "agents_failed")]
    assert "dropped a critical finding about elsewhere.py" in report["did_not_review"][0]["reason"]
    assert (report["decision"], result.code) == ("incomplete", 3)
    for fmt in ("text", "markdown", "github", "agent"):  # json and sarif: as data, above and below
        text = (out / fmt).read_text()
        assert "dropped a critical finding about elsewhere.py" in text, fmt
        assert "dropped a major finding about notes.txt" in text, fmt
    sarif = json.loads((out / "sarif").read_text())["runs"][0]["properties"]
    assert [(d["agent"], d["severity"]) for d in sarif["droppedFindings"]] == [("web", "critical"), ("db", "major")]


@pytest.mark.parametrize(("provider", "finish", "why"), [
    ("openai", "content_filter", "content filter"),
    ("anthropic", "refusal", "the model refused"),
])
def test_an_answer_withheld_or_refused_is_unusable_like_one_cut_off(cli: Any, tmp_path: Path, server: LlmServer,
                                                                    provider: str, finish: str, why: str) -> None:
    # Issue 20: finish_reason content_filter with {"findings": []} counted as a finished review (PASS).
    server.default = Step(findings=[], finish=finish)
    cfg = two_lenses(tmp_path, server, provider=provider, retries=0)
    result = cli("--config", str(cfg), "--diff", "-", "--format", "json", stdin=DIFF.encode())
    report = result.json()
    llm = [a for a in report["agents"] if a["kind"] == "llm"]
    assert {a["status"] for a in llm} == {"failed"}
    assert all("no usable answer after a retry" in a["error"] and why in a["error"] for a in llm)
    assert len(server.requests) == 2  # asked once more with the reason, as a cut-off answer is
    assert (report["decision"], result.code) == ("incomplete", 3)


@pytest.mark.parametrize("named", ["./db.sql", "b/db.sql", "a/db.sql"])
def test_a_finding_on_the_diffs_path_with_a_prefix_is_kept_on_the_changed_file(
        cli: Any, tmp_path: Path, server: LlmServer, named: str) -> None:
    # A trial: models copy the diff's a/ and b/ prefixes or write ./path; a critical finding was
    # dropped as outside the request and the run said incomplete instead of fail.
    server.default = Step(findings=[finding("db", named)])
    result = cli("--config", str(two_lenses(tmp_path, server)), "--diff", "-", "--format", "json",
                 stdin=DIFF.encode())
    report = result.json()
    [found] = report["findings"]
    assert (found["agent"], found["file"], found["severity"]) == ("db", "db.sql", "critical")
    assert agent_result(report, "db")["out_of_scope"] == 0
    assert (report["decision"], result.code) == ("fail", 1)
