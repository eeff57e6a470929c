"""Packed reviews (``packing: agent_packed``): llm agents of one provider, model and endpoint
share requests, and each keeps its own findings, status, tokens and freshness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff
from tests.llm.conftest import agent_result, llm_agent, run
from tests.llm.server import LlmServer, Recorded, Step, every_file
from tests.state.helpers import query, state_db

LENSES = ("build", "security", "tests", "docs", "perf")
DIFF = (make_diff("app.py", ["x = 1"]) + make_diff("test_app.py", ["assert x"])
        + make_diff("README.md", ["# intro"]))


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-packing-0123456789")


def packed_config(tmp_path: Path, server: LlmServer, packing: str = "agent_packed", **fields: Any) -> Path:
    """Five reviewers with different scopes: build and perf see everything, security and tests
    only their files, docs only README.md."""
    cfg = tmp_path / "cfg"
    (cfg / "instructions").mkdir(parents=True, exist_ok=True)
    for lens in LENSES:
        (cfg / "instructions" / f"{lens}.md").write_text(f"# {lens} reviewer\n\nLook for {lens} problems.\n")
    agents = [llm_agent(lens, server, instructions=f"instructions/{lens}.md", **fields) for lens in LENSES]
    policies = [
        {"id": "all", "description": "every file", "trigger": {"type": "always"}, "dispatch": ["build", "perf"]},
        {"id": "code", "description": "code", "trigger": {"type": "paths", "paths": ["*.py"]},
         "dispatch": ["security"]},
        {"id": "tests", "description": "tests", "trigger": {"type": "paths", "paths": ["test_*.py"]},
         "dispatch": ["tests"]},
        {"id": "docs", "description": "docs", "trigger": {"type": "paths", "paths": ["*.md"]}, "dispatch": ["docs"]},
    ]
    files = {"review-agents.json": {"version": 1, "agents": agents},
             "review-composition.json": {"version": 1, "policies": policies},
             "review-rules.json": {"version": 1, "rules": []},
             "review-gate.json": {"version": 1, "packing": packing}}
    for name, data in files.items():
        (cfg / name).write_text(json.dumps(data), encoding="utf-8")
    return cfg


SCOPES = {"build": {"app.py", "test_app.py", "README.md"}, "perf": {"app.py", "test_app.py", "README.md"},
          "security": {"app.py", "test_app.py"}, "tests": {"test_app.py"}, "docs": {"README.md"}}


def findings_by_agent(report: dict[str, Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for finding in report["findings"]:
        for agent in [finding["agent"], *finding["also_reported_by"]]:
            out.setdefault(agent, set()).add(finding["file"])
    return out


def test_packed_agents_share_one_request_and_keep_their_own_findings(cli: Any, tmp_path: Path,
                                                                     server: LlmServer) -> None:
    server.default = every_file
    _, report = run(cli, packed_config(tmp_path, server), DIFF)
    assert len(server.requests) == 1  # five reviewers, one request
    assert {a["id"]: a["status"] for a in report["agents"]} == dict.fromkeys(LENSES, "completed")
    assert findings_by_agent(report) == SCOPES  # each found exactly what is in its scope
    [request] = server.requests
    for lens in LENSES:
        assert f"# Lens {lens}" in request.prompt
    assert "file: README.md [added] (lenses: build, docs, perf)" in request.prompt
    assert "file: test_app.py [added] (lenses: build, perf, security, tests)" in request.prompt
    spent = every_file(request).tokens
    assert sum(a["tokens_in"] for a in report["agents"]) == spent[0]  # the request's tokens, shared out
    assert sum(a["tokens_out"] for a in report["agents"]) == spent[1]
    assert max(a["tokens_in"] for a in report["agents"]) - min(a["tokens_in"] for a in report["agents"]) <= 1
    assert query(state_db(), "SELECT packing FROM review_runs") == [("agent_packed",)]


def test_packing_loses_no_finding_the_agents_find_alone(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = every_file
    _, alone = run(cli, packed_config(tmp_path, server, packing="per_agent"), DIFF, "--no-state")
    asked_alone = len(server.requests)
    _, packed = run(cli, packed_config(tmp_path, server), DIFF, "--no-state")
    assert findings_by_agent(packed) == findings_by_agent(alone) == SCOPES
    assert asked_alone == 5 and len(server.requests) == asked_alone + 1


def test_without_state_each_run_asks_again_every_agent_its_own_request(cli: Any, tmp_path: Path,
                                                                        server: LlmServer) -> None:
    """The 20-agent benchmark row saw one request a run: packing (the default) sent the agents of
    one endpoint together, which is meant; no answer is kept across runs without the state."""
    server.default = every_file
    cfg = packed_config(tmp_path, server, packing="per_agent")
    for turn in (1, 2):
        _, report = run(cli, cfg, DIFF, "--no-state")
        assert {a["status"] for a in report["agents"]} == {"completed"}
        assert len(server.requests) == 5 * turn
    # each request is one agent's own: its instructions and no other lens
    systems = [r.body["messages"][0]["content"] for r in server.requests[:5]]
    for lens in LENSES:
        assert sum(f"Look for {lens} problems." in system for system in systems) == 1
    _, packed = run(cli, packed_config(tmp_path, server), DIFF, "--no-state")
    assert {a["status"] for a in packed["agents"]} == {"completed"}
    assert len(server.requests) == 11  # packed: one request for the five


def test_a_lens_keeps_nothing_outside_its_scope_nor_findings_naming_no_lens(cli: Any, tmp_path: Path,
                                                                           server: LlmServer) -> None:
    server.default = Step(findings=[
        {"agent": "docs", "severity": "major", "message": "docs on code", "file": "app.py", "line": 1},
        {"agent": "ghost", "severity": "major", "message": "who?", "file": "app.py", "line": 1},
        {"severity": "major", "message": "nobody's", "file": "app.py", "line": 1},
        {"agent": "security", "severity": "major", "message": "real", "file": "app.py", "line": 1}])
    _, report = run(cli, packed_config(tmp_path, server), DIFF)
    # docs does not read app.py: its finding goes to the first lens of the request that does (build)
    assert [(f["agent"], f["message"]) for f in report["findings"]] == [("build", "docs on code"),
                                                                        ("security", "real")]
    assert agent_result(report, "docs")["out_of_scope"] == 0
    assert any("credited to build" in note for note in agent_result(report, "build")["notes"])
    assert agent_result(report, "security")["dropped_findings"] == 2  # told to every lens of the request


def test_agents_of_other_models_are_not_packed(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = every_file
    cfg = packed_config(tmp_path, server)
    agents = json.loads((cfg / "review-agents.json").read_text())
    agents["agents"][0]["model"] = "another-model"
    (cfg / "review-agents.json").write_text(json.dumps(agents))
    _, report = run(cli, cfg, DIFF)
    assert len(server.requests) == 2
    assert findings_by_agent(report) == SCOPES


def test_a_failed_packed_request_fails_every_member(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = Step(status=400, body=b'{"error": {"message": "bad request"}}')
    result, report = run(cli, packed_config(tmp_path, server, retries=0), DIFF)
    assert {a["status"] for a in report["agents"]} == {"failed"}
    assert (result.code, report["decision"], report["metrics"]["missing_inputs"]) == (3, "incomplete", 5)


def test_the_same_change_is_the_same_request(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    """The fence comes from the content, not from chance: a repeated request repeats its prefix
    and its whole body, so provider prompt caches and replays can work."""
    server.default = every_file
    cfg = packed_config(tmp_path, server)
    run(cli, cfg, DIFF, "--no-cache")
    run(cli, cfg, DIFF, "--no-cache")
    first, second = server.requests
    assert first.body == second.body


def test_packed_and_per_agent_answers_are_not_reused_for_each_other(cli: Any, tmp_path: Path,
                                                                    server: LlmServer) -> None:
    server.default = every_file
    run(cli, packed_config(tmp_path, server, packing="per_agent"), DIFF)
    _, again = run(cli, packed_config(tmp_path, server, packing="per_agent"), DIFF)
    assert {a["status"] for a in again["agents"]} == {"cached"}
    asked = len(server.requests)
    _, packed = run(cli, packed_config(tmp_path, server), DIFF)
    assert {a["status"] for a in packed["agents"]} == {"completed"} and len(server.requests) == asked + 1


def test_anthropic_marks_its_fixed_prefix_for_the_prompt_cache_and_reads_cached_tokens(
        cli: Any, tmp_path: Path, server: LlmServer) -> None:
    def cached(request: Recorded) -> Step:
        step = every_file(request)
        step.usage = {"cache_read_input_tokens": 900, "cache_creation_input_tokens": 0}
        return step

    server.default = cached
    _, report = run(cli, packed_config(tmp_path, server, provider="anthropic"), DIFF)
    [request] = server.requests
    assert request.body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert report["usage"]["cached_tokens_in"] == 900
    assert {a["status"] for a in report["agents"]} == {"completed"}


def test_a_bundle_keeps_what_each_agent_sent(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = every_file
    run(cli, packed_config(tmp_path, server), DIFF, "--bundle", str(tmp_path / "run1"))
    [request] = server.requests
    for lens in LENSES:
        [sent] = json.loads((tmp_path / "run1" / "prompts" / f"{lens}.json").read_text())
        assert sent["user"] in request.prompt and sent["system"] in request.prompt


def test_a_pack_that_would_pass_the_run_budget_is_skipped_whole(cli: Any, tmp_path: Path,
                                                                server: LlmServer) -> None:
    server.default = every_file
    cfg = packed_config(tmp_path, server)
    settings = json.loads((cfg / "review-gate.json").read_text())
    (cfg / "review-gate.json").write_text(json.dumps({**settings, "max_tokens": 100}))
    result, report = run(cli, cfg, DIFF)
    assert server.requests == []
    assert {a["status"] for a in report["agents"]} == {"skipped"}
    assert all("run budget" in a["error"] for a in report["agents"])
    assert (result.code, report["decision"]) == (3, "incomplete")  # required agents that did not run
