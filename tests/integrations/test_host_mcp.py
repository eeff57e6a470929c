"""Host reviews over MCP, spoken to with the MCP SDK's own stdio client: ``host_review`` returns the
tasks, ``host_answer`` takes one answer (the last one decides), ``host_collect`` decides without
the tasks not answered."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.conftest import GitRepo

pytest.importorskip("mcp")

from mcp import ClientSession

from tests.integrations.test_mcp import session as mcp_session

KEYS = ("CI", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")
CHANGE = "import subprocess\n\n\ndef run(name):\n    return subprocess.call('ls ' + name, shell=True)\n"


def session(repo: GitRepo, check: Callable[[ClientSession], Awaitable[None]]) -> None:
    """The server in ``repo`` on a developer's machine: not CI, no provider key."""
    mcp_session(repo, check, env={k: v for k, v in os.environ.items() if k not in KEYS})


def reply(task: dict[str, Any], *files: str) -> dict[str, Any]:
    """A valid answer to ``task``: one critical finding on each of ``files``."""
    packed = "agent" in task["answer_schema"]["properties"]["findings"]["items"]["properties"]
    return {"findings": [{**({"agent": task["agents"][-1]} if packed else {}), "severity": "critical",
                          "message": "a shell command built from user input", "file": path, "line": 5,
                          "end_line": 5, "rule_id": None, "category": "injection",
                          "recommendation": "pass an argument list", "confidence": 0.9} for path in files]}


async def started(client: ClientSession) -> dict[str, Any]:
    result = await client.call_tool("host_review", {})
    assert not result.is_error, result.content
    out: dict[str, Any] = result.structured_content or {}
    assert out["tasks"] and out["decided"] is None
    return out


def text(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def test_the_host_tools_are_listed_typed_and_described(repo: GitRepo) -> None:
    async def check(client: ClientSession) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"host_review", "host_answer", "host_collect"} <= set(tools)
        for name in ("host_review", "host_answer", "host_collect"):
            assert tools[name].description and tools[name].output_schema
            for field in tools[name].input_schema["properties"].values():
                assert field.get("description"), name
        assert {"run_id", "task", "answer"} <= set(tools["host_answer"].input_schema["properties"])

    session(repo, check)


def test_a_host_review_round_trip_over_mcp(repo: GitRepo) -> None:
    repo.write("app.py", CHANGE)

    async def check(client: ClientSession) -> None:
        out = await started(client)
        run_id, tasks = out["run_id"], out["tasks"]
        assert "sub-agent" in out["how"] and out["ran"]
        first = tasks[0]
        assert [m["role"] for m in first["messages"]] == ["system", "user"] and first["files"] == ["app.py"]
        # malformed: refused, naming the task; out of scope: refused; the task stays unanswered
        bad = await client.call_tool("host_answer", {"run_id": run_id, "task": first["task"],
                                                     "answer": {"findings": [{"severity": "major"}]}})
        assert bad.is_error and f"task {first['task']} of run {run_id}" in text(bad) and "unanswered" in text(bad)
        outside = await client.call_tool("host_answer", {"run_id": run_id, "task": first["task"],
                                                         "answer": reply(first, "elsewhere.py")})
        assert outside.is_error and "'elsewhere.py', a file outside the task" in text(outside)
        decided = None
        for index, task in enumerate(tasks):  # the answer as text, as a sub-agent gives it, is taken too
            given = reply(task, "app.py")
            taken = await client.call_tool("host_answer", {"run_id": run_id, "task": task["task"],
                                                           "answer": json.dumps(given) if index == 0 else given})
            assert not taken.is_error, text(taken)
            decided = (taken.structured_content or {})["decided"]
        assert decided is not None  # the last answer decided the review
        assert decided["verdict"] == "FAIL" and decided["decision"] == "fail"
        assert "host sub-agent" in decided["report"]
        assert any(f["severity"] == "critical" and f["agent"] in first["agents"] for f in decided["findings"])
        late = await client.call_tool("host_answer", {"run_id": run_id, "task": first["task"],
                                                      "answer": reply(first, "app.py")})
        assert late.is_error and "the run is finished" in text(late)
        unknown = await client.call_tool("host_collect", {"run_id": "20990101T000000Z-00000000"})
        assert unknown.is_error and "no host review run" in text(unknown)

    session(repo, check)


def test_tasks_left_unanswered_are_reviewers_that_did_not_run(repo: GitRepo) -> None:
    repo.write("app.py", "def add(a, b):\n    return a + b\n")

    async def check(client: ClientSession) -> None:
        out = await started(client)
        result = await client.call_tool("host_collect", {"run_id": out["run_id"]})
        assert not result.is_error, text(result)
        decided: dict[str, Any] = result.structured_content or {}
        assert decided["decision"] == "pass_with_warnings"  # never a pass
        assert "did not run" in decided["report"] and "no answer came back from the host" in decided["report"]

    session(repo, check)
