"""structured_output modes and token usage through the real CLI, against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff
from tests.llm.conftest import agent_result, llm_agent, run, write_config
from tests.llm.server import LlmServer, Step

DIFF = make_diff("app.py", ["import os", "x = eval(input())"])
FINDING = {"severity": "major", "message": "eval of user input", "file": "app.py", "line": 2}
PRICES = {"test-model": {"input_per_mtok": 3.0, "output_per_mtok": 15.0, "cached_input_per_mtok": 0.3,
                         "cache_write_per_mtok": 3.75}}


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-modes-0123456789")


@pytest.mark.parametrize(("provider", "mode"), [
    ("openai", "json_object"), ("openai", "none"), ("anthropic", "json_object"), ("anthropic", "none")])
def test_prompted_json_modes_carry_the_schema_and_read_a_text_answer(
        cli: Any, tmp_path: Path, server: LlmServer, provider: str, mode: str) -> None:
    server.default = Step(content="Sure! Here you go:\n```json\n" + json.dumps({"findings": [FINDING]}) + "\n```")
    cfg = write_config(tmp_path, [llm_agent("llm", server, provider, structured_output=mode)])
    _, report = run(cli, cfg, DIFF)
    assert agent_result(report, "llm")["status"] == "completed"
    assert [f["message"] for f in report["findings"]] == ["eval of user input"]
    [request] = server.requests
    system = request.body["messages"][0]["content"] if provider == "openai" else request.body["system"][0]["text"]
    schema = json.loads(system.split("It must validate against this JSON Schema:\n\n", 1)[1])
    assert schema["properties"]["findings"]["items"]["properties"]["severity"]["enum"][0] == "critical"
    if provider == "openai":
        assert request.body.get("response_format") == ({"type": "json_object"} if mode == "json_object" else None)
    else:
        assert "tools" not in request.body and "tool_choice" not in request.body


def test_the_default_mode_does_not_repeat_the_schema_in_the_prompt(cli: Any, tmp_path: Path,
                                                                   server: LlmServer) -> None:
    server.default = Step(findings=[FINDING])
    cfg = write_config(tmp_path, [llm_agent("llm", server)])
    run(cli, cfg, DIFF)
    assert "## Answer format" not in server.requests[0].prompt


@pytest.mark.parametrize(("provider", "usage", "tokens", "expected"), [
    ("openai", {"prompt_tokens_details": {"cached_tokens": 800},
                "completion_tokens_details": {"reasoning_tokens": 30}}, (1000, 50),
     {"tokens_in": 1000, "cached_tokens_in": 800, "cache_write_tokens_in": 0, "tokens_out": 50,
      "reasoning_tokens": 30, "cost_usd": (200 * 3.0 + 800 * 0.3 + 50 * 15.0) / 1e6}),
    ("anthropic", {"cache_read_input_tokens": 800, "cache_creation_input_tokens": 100}, (100, 50),
     {"tokens_in": 1000, "cached_tokens_in": 800, "cache_write_tokens_in": 100, "tokens_out": 50,
      "reasoning_tokens": 0, "cost_usd": (100 * 3.0 + 800 * 0.3 + 100 * 3.75 + 50 * 15.0) / 1e6}),
])
def test_cached_and_reasoning_tokens_reach_the_result_and_the_usage_at_their_own_price(
        cli: Any, tmp_path: Path, server: LlmServer, provider: str, usage: dict[str, Any], tokens: tuple[int, int],
        expected: dict[str, Any]) -> None:
    server.default = Step(findings=[FINDING], tokens=tokens, usage=usage)
    cfg = write_config(tmp_path, [llm_agent("llm", server, provider)], prices=PRICES)
    _, report = run(cli, cfg, DIFF)
    agent = agent_result(report, "llm")
    for name, value in expected.items():
        assert agent[name] == pytest.approx(value), name
        assert report["usage"][name] == pytest.approx(value), name
    text = cli("--config", str(cfg), "--diff", "-", "--no-cache", stdin=DIFF.encode()).out
    assert "model usage: 1000 tokens in (800 cached), 50 out" in text


@pytest.mark.parametrize(("provider", "fields", "param", "code", "message", "hint"), [
    ("openai", {"model": "gw-model"}, "max_tokens", None,
     "max_tokens is too large: 300000. This model supports at most 16384 completion tokens",
     'check "max_output_tokens"'),
    ("openai", {"model": "gw-model"}, None, None, "Unrecognized request argument supplied: max_tokens",
     'set "reasoning": true'),
    ("openai", {"model": "o3"}, "max_completion_tokens", "unsupported_parameter", "Unsupported parameter",
     'set "reasoning": false'),
    ("openai", {"model": "gw-model"}, "temperature", "unsupported_value", "Unsupported value",
     'set "reasoning": true'),
    ("openai", {"model": "gw-model", "structured_output": "json_object"}, "response_format", None, "Invalid",
     'set "structured_output": "none"'),
    ("anthropic", {}, None, None, "tools.0.custom.input_schema: JSON schema is invalid",
     'set "structured_output": "none"'),
    ("anthropic", {}, None, None, "prompt is too long: 210000 tokens > 200000 maximum", None),
])
def test_a_refused_parameter_hint_names_the_key_that_fixes_it(provider: str, fields: dict[str, Any],
                                                               param: str | None, code: str | None, message: str,
                                                               hint: str | None) -> None:
    from review_gate.llm.providers.common import param_hint
    from review_gate.models import LlmAgent

    spec = LlmAgent.model_validate({"id": "x", "name": "x", "description": "d", "kind": "llm", "provider": provider,
                                    "model": "m", "instructions": "i.md", **fields})
    found = param_hint(spec, param, code, message)
    assert (found is None) if hint is None else (found is not None and found.startswith(hint)), found
