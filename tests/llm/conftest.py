"""Fixtures for the llm kind: the scriptable server and a config dir pointing at it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm.server import LlmServer

KEY = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as running:
        yield running


def llm_agent(agent_id: str, server: LlmServer, provider: str = "openai", **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": agent_id, "name": agent_id, "description": f"test llm agent {agent_id}", "kind": "llm",
        "provider": provider, "model": "test-model", "instructions": "instructions/reviewer.md",
        "base_url": f"{server.url}/v1" if provider == "openai" else server.url,
        "api_key_env": "TEST_LLM_KEY", "timeout_s": 10, "retries": 1,
    }
    entry.update(fields)
    return entry


def write_config(tmp_path: Path, agents: list[dict[str, Any]], rules: list[dict[str, Any]] | None = None,
                 **settings: Any) -> Path:
    cfg = tmp_path / "cfg"
    (cfg / "instructions").mkdir(parents=True, exist_ok=True)
    (cfg / "instructions" / "reviewer.md").write_text("# Reviewer\n\nLook for bugs in the change.\n")
    files: dict[str, Any] = {
        "review-agents.json": {"version": 1, "agents": agents},
        "review-composition.json": {"version": 1, "policies": [{
            "id": "everything", "description": "every change, every agent", "trigger": {"type": "always"},
            "dispatch": [a["id"] for a in agents]}]},
        "review-rules.json": {"version": 1, "rules": rules or []},
    }
    if settings:
        files["review-gate.json"] = {"version": 1, **settings}
    for name, data in files.items():
        (cfg / name).write_text(json.dumps(data, indent=2), encoding="utf-8")
    return cfg


def run(cli: Any, cfg: Path, diff: str, *extra: str) -> tuple[Any, dict[str, Any]]:
    result = cli("--config", str(cfg), "--diff", "-", "--format", "json", *extra, stdin=diff.encode())
    assert result.out, result.err
    return result, result.json()


def agent_result(report: dict[str, Any], agent_id: str) -> dict[str, Any]:
    return next(a for a in report["agents"] if a["id"] == agent_id)
