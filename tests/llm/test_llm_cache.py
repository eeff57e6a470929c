"""Run state and LLM agents: an unchanged re-run asks the model nothing; a new model asks again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff
from tests.llm.conftest import agent_result, llm_agent, run, write_config
from tests.llm.server import LlmServer, Step

DIFF = make_diff("app.py", ["x = 1", "y = eval(x)"])
FINDING = {"severity": "major", "message": "eval on data", "file": "app.py", "line": 2}


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-cache")


def test_an_unchanged_rerun_makes_no_model_call(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = Step(findings=[FINDING], tokens=(300, 20))
    cfg = write_config(tmp_path, [llm_agent("llm", server)])
    _, first = run(cli, cfg, DIFF)
    assert len(server.requests) == 1
    _, second = run(cli, cfg, DIFF)
    assert len(server.requests) == 1  # nothing asked the second time
    assert agent_result(second, "llm")["status"] == "cached"
    assert [f["fingerprint"] for f in second["findings"]] == [f["fingerprint"] for f in first["findings"]]
    assert second["decision"] == first["decision"]

    agents = json.loads((cfg / "review-agents.json").read_text())
    agents["agents"][0]["model"] = "another-model"
    (cfg / "review-agents.json").write_text(json.dumps(agents))
    run(cli, cfg, DIFF)
    assert len(server.requests) == 2  # a new model id makes the pairs stale


def test_editing_the_instructions_or_the_standards_asks_again(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = Step(findings=[FINDING])
    cfg = write_config(tmp_path, [llm_agent("llm", server)], constitution="constitution.md")
    (cfg / "constitution.md").write_text("# Project\n\n## Standards\nAlways use type hints.\n")
    run(cli, cfg, DIFF)
    _, cached = run(cli, cfg, DIFF)
    assert agent_result(cached, "llm")["status"] == "cached" and len(server.requests) == 1

    (cfg / "instructions" / "reviewer.md").write_text("# Reviewer\n\nLook for security bugs only.\n")
    _, again = run(cli, cfg, DIFF)
    assert agent_result(again, "llm")["status"] == "completed" and len(server.requests) == 2

    (cfg / "constitution.md").write_text("# Project\n\n## Standards\nNever use eval.\n")
    _, third = run(cli, cfg, DIFF)
    assert agent_result(third, "llm")["status"] == "completed" and len(server.requests) == 3
    assert "Never use eval." in server.requests[-1].prompt
