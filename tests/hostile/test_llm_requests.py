"""LLM review that real providers accept (issue 9, parts 4 and 5).

Each test drives the real CLI against the scripted model server (tests/llm/server.py) and
reproduces one way a real provider's answer or refusal used to cost the review: a float out of
range losing every finding, a failed agent reporting no tokens, a reasoning model refusing every
request with HTTP 400, and a refused parameter whose error did not say what to change.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff
from tests.llm.conftest import agent_result, llm_agent, run, write_config
from tests.llm.server import LlmServer, Recorded, Step

DIFF = make_diff("app.py", ["import os", "x = eval(input())", "y = 2"])
EVAL = {"severity": "critical", "message": "eval of user input", "file": "app.py", "line": 2}
NAMING = {"severity": "info", "message": "name y says nothing", "file": "app.py", "line": 3}
PRICES = {"test-model": {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as running:
        yield running


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-requests-0123456789")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_confidence_out_of_range_costs_no_finding(cli: Any, tmp_path: Path, server: LlmServer,
                                                     provider: str) -> None:
    """llama-server's grammar does not bound floats: it answered "confidence": 2.0, the whole
    answer was refused, the required agent failed and the gate said incomplete."""
    server.default = Step(findings=[{**EVAL, "confidence": 2.0}, NAMING])
    cfg = write_config(tmp_path, [llm_agent("llm", server, provider, retries=0)])
    result, report = run(cli, cfg, DIFF)
    agent = agent_result(report, "llm")
    assert agent["status"] == "completed", agent
    assert len(server.requests) == 1  # kept as it came: no retry was needed
    assert [(f["message"], f["confidence"]) for f in report["findings"]] == [
        ("eval of user input", 1.0), ("name y says nothing", None)]
    assert agent["notes"] == ["findings[0].confidence 2 clamped to 1"]
    assert (report["decision"], result.code) == ("fail", 1)


def test_a_finding_without_a_severity_is_dropped_and_counted_the_rest_gates(
        cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = Step(content='{"findings": [{"message": "no severity given", "line": 2},'
                                  ' {"severity": "critical", "message": "eval of user input", "line": "two"}]}')
    cfg = write_config(tmp_path, [llm_agent("llm", server, retries=0)])
    result, report = run(cli, cfg, DIFF)
    agent = agent_result(report, "llm")
    assert (agent["status"], agent["dropped_findings"]) == ("completed", 1)
    assert [f["message"] for f in report["findings"]] == ["eval of user input"]
    assert agent["notes"] == [
        "findings[0].severity must be one of critical, major, warning, info; the finding was dropped",
        "findings[1].line dropped: a string, not a line number"]
    assert (report["decision"], result.code) == ("fail", 1)
    text = cli("--config", str(cfg), "--diff", "-", "--no-cache", stdin=DIFF.encode())
    assert "1 malformed finding dropped" in text.out


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_failed_agent_reports_the_tokens_it_spent(cli: Any, tmp_path: Path, server: LlmServer,
                                                    provider: str) -> None:
    """Two unusable answers fail the agent; both were billed, and the result said 0 tokens."""
    server.default = Step(content="I could not find the JSON format, sorry.", tokens=(1000, 40))
    cfg = write_config(tmp_path, [llm_agent("llm", server, provider, retries=0)], prices=PRICES)
    result, report = run(cli, cfg, DIFF)
    agent = agent_result(report, "llm")
    assert agent["status"] == "failed" and len(server.requests) == 2
    assert (agent["tokens_in"], agent["tokens_out"]) == (2000, 80)
    assert agent["cost_usd"] == pytest.approx((2000 * 3 + 80 * 15) / 1e6)
    assert (report["usage"]["tokens_in"], report["usage"]["tokens_out"]) == (2000, 80)
    assert (report["decision"], result.code) == ("incomplete", 3)


def test_tokens_of_an_attempt_that_failed_transiently_are_kept(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    # sent 1: an unusable answer (billed); asked again: HTTP 500; sent once more: answers well
    server.script(Step(content="no json", tokens=(700, 30)), Step(status=500, headers={"retry-after-ms": "10"}))
    server.default = Step(findings=[EVAL], tokens=(1000, 50))
    cfg = write_config(tmp_path, [llm_agent("llm", server, retries=1)])
    _, report = run(cli, cfg, DIFF)
    agent = agent_result(report, "llm")
    assert (agent["status"], agent["attempts"]) == ("completed", 3)  # the server saw the chunk 3 times
    assert (agent["tokens_in"], agent["tokens_out"]) == (1700, 80)


def openai_like(request: Recorded) -> Step:
    """What OpenAI answers a reasoning model's request: 400 for max_tokens or a temperature."""
    body = request.body
    if "max_tokens" in body:
        return Step(status=400, error={
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                       "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"})
    if "temperature" in body and body["temperature"] != 1:
        return Step(status=400, error={
            "message": "Unsupported value: 'temperature' does not support 0 with this model. "
                       "Only the default (1) value is supported.",
            "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"})
    return Step(findings=[EVAL], usage={"completion_tokens_details": {"reasoning_tokens": 12}})


@pytest.mark.parametrize(("model", "fields"), [
    ("o3-mini", {}),
    ("gpt-5.1", {"reasoning_effort": "low"}),
    ("openai/o4-mini", {}),
    ("our-azure-deployment", {"reasoning": True}),
])
def test_a_reasoning_model_gets_a_request_it_accepts(cli: Any, tmp_path: Path, server: LlmServer, model: str,
                                                     fields: dict[str, Any]) -> None:
    """max_tokens and temperature 0 went to every OpenAI model: HTTP 400 on every request."""
    server.default = openai_like
    cfg = write_config(tmp_path, [llm_agent("llm", server, model=model, **fields)])
    _, report = run(cli, cfg, DIFF)
    agent = agent_result(report, "llm")
    assert agent["status"] == "completed", agent["error"]
    assert agent["reasoning_tokens"] == 12
    [request] = server.requests
    assert request.body["max_completion_tokens"] == 2048
    assert "max_tokens" not in request.body and "temperature" not in request.body
    assert request.body.get("reasoning_effort") == fields.get("reasoning_effort")


@pytest.mark.parametrize(("provider", "fields", "error", "fix"), [
    ("openai", {"model": "our-gateway-name"},
     {"message": "Unsupported parameter: 'max_tokens' is not supported with this model.", "param": "max_tokens",
      "code": "unsupported_parameter", "type": "invalid_request_error"},
     "set \"reasoning\": true on agent 'llm' in review-agents.json"),
    ("openai", {"model": "deepseek-chat"},
     {"message": "This response_format type is unavailable now", "param": None, "type": "invalid_request_error"},
     "set \"structured_output\": \"json_object\" on agent 'llm' in review-agents.json"),
    ("openai", {"model": "o3", "reasoning_effort": "minimal"},
     {"message": "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model.",
      "param": "reasoning_effort", "code": "unsupported_value", "type": "invalid_request_error"},
     "remove \"reasoning_effort\" on agent 'llm' in review-agents.json"),
    ("anthropic", {"temperature": 0.2},
     {"type": "invalid_request_error", "message": "temperature: is not supported for this model"},
     "remove \"temperature\" on agent 'llm' in review-agents.json"),
])
def test_a_refused_parameter_names_the_config_key_that_controls_it(
        cli: Any, tmp_path: Path, server: LlmServer, provider: str, fields: dict[str, Any], error: dict[str, Any],
        fix: str) -> None:
    server.default = Step(status=400, error=error)
    cfg = write_config(tmp_path, [llm_agent("llm", server, provider, **fields)])
    _, report = run(cli, cfg, DIFF)
    agent = agent_result(report, "llm")
    assert (agent["status"], agent["attempts"]) == ("failed", 1)
    assert error["message"] in agent["error"]  # the provider's own words stay
    assert f"Fix: {fix}" in agent["error"]


@pytest.mark.parametrize(("fields", "pointer", "words"), [
    ({"structured_output": "xml"}, "/agents/0/structured_output", "use one of: 'json_schema', 'json_object', 'none'"),
    ({"model": "gpt-4o", "reasoning_effort": "high"}, "/agents/0/reasoning_effort",
     "'reasoning' is not detected for model 'gpt-4o'"),
    ({"model": "gpt-5-mini", "temperature": 0.5}, "/agents/0/temperature", "takes only its default temperature"),
    ({"provider": "anthropic", "reasoning_effort": "low"}, "/agents/0/reasoning_effort",
     "this agent's provider is anthropic"),
])
def test_request_settings_a_provider_would_refuse_are_config_errors(
        cli: Any, tmp_path: Path, server: LlmServer, fields: dict[str, Any], pointer: str, words: str) -> None:
    cfg = write_config(tmp_path, [llm_agent("llm", server, **fields)])
    for args in (("config", "validate", "--config", str(cfg)), ("--config", str(cfg), "--diff", "-")):
        result = cli(*args, stdin=DIFF.encode())
        assert result.code == 2, result.out + result.err
        assert pointer in result.err and words in result.err
        assert "Traceback" not in result.err
    assert server.requests == []
