"""Issue 20, part 4: the gate is never green on reviewers that did not review. ``agents_failed``
(run, and failed) makes the built-in gate incomplete, ``agents_skipped`` (routed, did not run)
pass_with_warnings; a team that fails open says so in its config, visibly; every format names
the agents that did not review and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from review_gate.config import load_config
from tests.conftest import make_diff
from tests.llm.conftest import KEY, agent_result, llm_agent, run, write_config
from tests.llm.server import LlmServer, Step

DIFF = make_diff("app.py", ["x = 1"])
PATTERN = {"id": "pat", "name": "pat", "description": "a pattern agent", "kind": "pattern"}  # covers the change
FORMATS = ("text", "markdown", "github", "json", "agent", "sarif")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


def built_in_llm_agents(server: LlmServer) -> list[dict[str, Any]]:
    """The built-in registry with its LLM reviewers pointed at the test server (keys set)."""
    agents = []
    for agent in load_config(None).agents.agents:
        entry = agent.model_dump(mode="json", exclude_defaults=True)
        if agent.kind == "llm":
            entry["base_url"] = server.url + ("/v1" if agent.provider == "openai" else "")
            entry["api_key_env"] = "TEST_LLM_KEY"
        agents.append(entry)
    return agents


def test_optional_reviewers_that_all_fail_make_the_gate_incomplete(cli: Any, tmp_path: Path,
                                                                   server: LlmServer) -> None:
    # Issue 20: the built-in LLM agents are required: false, so when every one of them failed
    # (the endpoint answers 500) the run said pass, exit 0, REVIEW: PASS.
    server.default = Step(status=500)
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "review-agents.json").write_text(json.dumps({"version": 1, "agents": built_in_llm_agents(server)}))
    result = cli("--config", str(cfg), "--diff", "-", "--format", "json", stdin=DIFF.encode())
    report = result.json()
    llm = [a for a in report["agents"] if a["kind"] == "llm"]
    assert llm and {a["status"] for a in llm} == {"failed"} and not any(a["required"] for a in llm)
    assert (report["decision"], report["exit_code"], result.code) == ("incomplete", 3, 3)
    assert report["metrics"]["agents_failed"] == len(llm) and report["metrics"]["missing_inputs"] == 0
    summary = cli("--config", str(cfg), "--diff", "-", stdin=DIFF.encode()).out.splitlines()[-1]
    assert summary.startswith("REVIEW: FAIL | issues=0 (critical=0) | missing_inputs=0")


def test_seed_004_finance_sme_skipped_for_want_of_a_key_is_no_plain_pass(cli: Any, tmp_path: Path) -> None:
    # "Financial calculations merged without finance-sme" is the problem seed 004 exists to solve.
    diff = make_diff("src/billing/invoice.py", ["def total(lines):", "    return sum(l.amount for l in lines)"])
    out = tmp_path / "out"
    out.mkdir()
    args = [arg for fmt in FORMATS for arg in ("--format", fmt, "--output", str(out / fmt))]
    result = cli("--diff", "-", *args, stdin=diff.encode())
    report = json.loads((out / "json").read_text())
    finance = agent_result(report, "finance-sme")
    assert (finance["status"], finance["error"]) == ("skipped", "ANTHROPIC_API_KEY is not set")
    assert (report["decision"], result.code) == ("pass_with_warnings", 0)
    assert report["metrics"]["agents_skipped"] >= 1 and report["metrics"]["agents_failed"] == 0
    assert {"agent": "finance-sme", "status": "skipped", "reason": "ANTHROPIC_API_KEY is not set",
            "counted": "agents_skipped", "required": False, "fails_open": False} in report["did_not_review"]
    for fmt in FORMATS:  # every format names the agent that did not review, and why
        text = (out / fmt).read_text()
        key = "ANTHROPIC\\_API\\_KEY" if fmt == "markdown" else "ANTHROPIC_API_KEY"  # escaped for Markdown
        assert "finance-sme" in text and f"{key} is not set" in text, fmt
    sarif = json.loads((out / "sarif").read_text())["runs"][0]["properties"]
    assert any(a["agent"] == "finance-sme" for a in sarif["didNotReview"])
    assert sarif["metrics"]["agents_skipped"] == report["metrics"]["agents_skipped"]
    assert (out / "text").read_text().splitlines()[-1].startswith("REVIEW: PASS |")  # seed 000: PASS on exit 0


def test_a_team_that_fails_open_says_so_and_every_report_shows_it(cli: Any, tmp_path: Path,
                                                                 server: LlmServer) -> None:
    server.default = Step(status=500)
    agent = llm_agent("llm", server, required=False, on_failure="fail_open", retries=0)
    cfg = write_config(tmp_path, [agent, PATTERN])
    result, report = run(cli, cfg, DIFF)
    assert agent_result(report, "llm")["status"] == "failed"
    assert (report["metrics"]["agents_failed"], report["metrics"]["agents_skipped"]) == (0, 1)
    assert (report["decision"], result.code) == ("pass_with_warnings", 0)
    assert report["did_not_review"][0]["fails_open"] is True
    text = cli("--config", str(cfg), "--diff", "-", stdin=DIFF.encode()).out
    assert "fails open: on_failure is fail_open" in text and "on_failure: fail_open in review-agents.json" in text
    markdown = cli("--config", str(cfg), "--diff", "-", "--format", "markdown", stdin=DIFF.encode()).out
    assert "agents_skipped (fails open)" in markdown


def test_the_new_metrics_drive_gate_conditions_like_any_other(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = Step(status=500)
    agents = [llm_agent("llm", server, required=False, retries=0),
              llm_agent("later", server, required=False, api_key_env="UNSET_TEST_KEY"), PATTERN]
    conditions = [{"metric": "agents_skipped", "op": ">=", "value": 1, "decision": "needs_fixes"},
                  {"metric": "agents_failed", "op": ">", "value": 5, "decision": "incomplete"}]
    cfg = write_config(tmp_path, agents, gate={"conditions": conditions})
    result, report = run(cli, cfg, DIFF)
    assert (report["metrics"]["agents_failed"], report["metrics"]["agents_skipped"]) == (1, 1)
    assert (report["decision"], result.code) == ("needs_fixes", 1)
    # A team that removes agents_failed from its gate fails open through the conditions: every
    # report still names the agent that failed, and says the gate let it pass.
    open_gate = write_config(tmp_path, agents, gate={"conditions": []})
    result = cli("--config", str(open_gate), "--diff", "-", stdin=DIFF.encode())
    assert result.code == 0 and "the gate conditions of review-gate.json let it pass" in result.out


def test_a_required_agent_that_did_not_run_is_still_a_missing_input(cli: Any, tmp_path: Path,
                                                                    server: LlmServer) -> None:
    cfg = write_config(tmp_path, [llm_agent("llm", server, api_key_env="UNSET_TEST_KEY")])
    result, report = run(cli, cfg, DIFF)
    assert (report["metrics"]["missing_inputs"], report["metrics"]["agents_skipped"]) == (1, 1)
    assert (report["decision"], result.code) == ("incomplete", 3)


@pytest.mark.parametrize(("field", "value", "pointer", "fix"), [
    ("max_concurrency", 0, "/agents/0/max_concurrency", "use a value from 1 to 256"),
    ("max_concurrency", -4, "/agents/0/max_concurrency", "use a value from 1 to 256"),
    ("on_failure", "ignore", "/agents/0/on_failure", "use one of: 'fail_closed', 'fail_open'"),
    ("on_failure", "fail_open", "/agents/0/on_failure", 'set "required": false'),
])
def test_a_bad_setting_is_a_config_error_naming_its_pointer_and_fix(cli: Any, tmp_path: Path, server: LlmServer,
                                                                    field: str, value: object, pointer: str,
                                                                    fix: str) -> None:
    cfg = write_config(tmp_path, [llm_agent("llm", server, **{field: value})])
    result = cli("--config", str(cfg), "--diff", "-", stdin=DIFF.encode())
    assert result.code == 2 and "Traceback" not in result.err
    assert f"review-agents.json: {pointer}:" in result.err and fix in result.err
    assert server.requests == []
