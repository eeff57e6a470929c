"""llm agents in the loop, against the scriptable local model server: one writes the plan, another
approves it (rejecting once, so the planner gets seed 002's retry prompt)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm.server import LlmServer, Step
from tests.loop.conftest import LoopRig

KEY = "sk-loop-test-SECRET-0123456789"


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as running:
        yield running


def llm(agent_id: str, server: LlmServer) -> dict[str, Any]:
    return {"id": agent_id, "name": agent_id, "description": f"test llm {agent_id}", "kind": "llm",
            "provider": "openai", "model": "test-model", "instructions": "instructions/security-reviewer.md",
            "base_url": f"{server.url}/v1", "api_key_env": "TEST_LLM_KEY", "timeout_s": 20, "retries": 0}


def test_an_llm_plans_and_an_llm_approves_the_plan(rig: LoopRig, server: LlmServer, task_file,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    rig.write_config(agents=[llm("planner", server), llm("judge", server)], loop={"mode": "automated", "phases": {
        "plan": {"ai": "planner", "approver": {"prompt": "skip", "response": "judge"}},
        "generate": {"ai": "fixer"}, "revise": {"ai": "fixer"}}})
    server.script(Step(content=json.dumps({"plan": "1. Call requests.get with verification on."})),
                  Step(content=json.dumps({"approved": False, "feedback": "say how long the timeout is"})),
                  Step(content=json.dumps({"plan": "1. Call requests.get with verification on, timeout 5 s."})),
                  Step(content=json.dumps({"approved": True, "feedback": "good"})))
    result = rig.loop("start", "planned", "--prompt", str(task_file))
    assert result.code == 0, result.err
    assert len(server.requests) == 4
    first, judged, retried, _ = (r.prompt for r in server.requests)
    assert "Fetch the status page" in first
    assert "verification on." in judged and '"stage": "response"' in judged
    assert "The previous attempt was rejected" in retried and "say how long the timeout is" in retried
    plan = rig.session_file("planned", 1, "plan.response.md").read_text()
    assert "timeout 5 s." in plan
    [generate] = rig.prompts()
    assert "## The plan" in generate and "timeout 5 s." in generate
    stored = "".join(p.read_text(errors="replace") for p in (rig.repo.root / ".review-gate").rglob("*")
                     if p.is_file() and p.suffix in (".md", ".json", ".jsonl"))
    assert KEY not in stored


def test_an_llm_cannot_be_the_coder_that_edits_the_tree(rig: LoopRig, server: LlmServer) -> None:
    rig.write_config(agents=[llm("planner", server)])
    result = rig.loop("start", "nope", "--coder", "planner")
    assert result.code == 2
    assert "an llm agent can write the plan, but cannot edit the working tree" in result.err
