"""Issue 9, part 3: a change split into many requests must not storm a rate-limited endpoint.

The test server admits 5 requests at once and 10 per 2 s window per provider (a real account
admits more per minute; the short window keeps the test fast while keeping the shape: far
fewer requests per window than the change needs), answers 429 beyond that and sends the
providers' rate-limit headers on every answer. Before the governor every chunk of every agent
was sent at once, the 429s piled into the retries and every agent failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff
from tests.llm.conftest import KEY, agent_result, llm_agent, run, write_config
from tests.llm.server import LlmServer, RateLimit, Recorded, Step

FILES = 12
AGENTS = {"openai": 2, "anthropic": 2}


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as running:
        yield running


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


def by_file(request: Recorded) -> Step:
    """One finding on line 1 of every file the request shows, after a short think."""
    files = [line.split()[1] for line in request.prompt.splitlines() if line.startswith("file: ")]
    return Step(findings=[{"severity": "warning", "message": f"look at {f}", "file": f, "line": 1} for f in files],
                delay=0.1)


def many_files() -> str:
    return "".join(make_diff(f"src/m{i:02d}.py", [f"value_{i}_{n} = {n} * {i}" for n in range(60)])
                   for i in range(FILES))


def test_many_agents_over_many_chunks_stay_under_the_limits_and_none_fails(
        cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.rate_limit = limit = RateLimit(concurrent=5, requests=10, window_s=2.0)
    server.default = by_file
    agents = [llm_agent(f"{provider}-{n}", server, provider, max_input_tokens=1000, timeout_s=60)
              for provider, count in AGENTS.items() for n in range(count)]
    cfg = write_config(tmp_path, agents, packing="per_agent")  # every agent its own requests: a storm
    _, report = run(cli, cfg, many_files())
    statuses = {a["id"]: (a["status"], a["attempts"], a["error"]) for a in report["agents"]}
    assert all(s[0] == "completed" and s[1] <= 2 and s[2] is None for s in statuses.values()), statuses
    assert limit.rejected_late == 0, f"{limit.rejected_late} 429s on a budget after the first answer's headers"
    # The 5 requests at once the server takes are in no header: the governor opens up once the
    # headers tell the budgets, and learns it from the first refusal (a 429 with room in every
    # budget), never again exceeding it. A storm would be dozens (issue 9: 89).
    assert limit.busy_late <= 5 * len(AGENTS), limit.busy_late
    assert limit.most_at_once <= 5
    assert limit.admitted == len(server.requests) > 2 * limit.requests  # more than a window or two holds
    assert report["coverage"]["unreviewed"] == [] and report["decision"] != "incomplete"
    for agent_id in statuses:
        assert agent_result(report, agent_id)["unreviewed"] == []
    flagged = {f["file"] for f in report["findings"]}
    assert flagged == {f"src/m{i:02d}.py" for i in range(FILES)}


def shown(server: LlmServer) -> set[str]:
    """The files the server was shown."""
    return {line.split()[1] for r in server.requests for line in r.prompt.splitlines() if line.startswith("file: ")}


def test_a_chunk_whose_turn_comes_after_the_deadline_is_unreviewed_and_the_rest_is_kept(
        cli: Any, tmp_path: Path, server: LlmServer) -> None:
    # Two requests per 30 s window: the third chunk's turn would come long after the 5 s deadline.
    server.rate_limit = limit = RateLimit(concurrent=5, requests=2, window_s=30.0)
    server.default = by_file
    cfg = write_config(tmp_path, [llm_agent("llm", server, max_input_tokens=1000, timeout_s=5, max_concurrency=1)])
    result, report = run(cli, cfg, many_files())
    agent = agent_result(report, "llm")
    assert (agent["status"], agent["attempts"]) == ("completed", 1), agent
    assert len(server.requests) == 2 and limit.rejected == 0
    reviewed = shown(server)
    assert {f["file"] for f in report["findings"]} == reviewed
    assert set(agent["unreviewed"]) == {f"src/m{i:02d}.py" for i in range(FILES)} - reviewed != set()
    assert report["coverage"]["unreviewed"] == agent["unreviewed"]
    assert (report["decision"], result.code) == ("incomplete", 3)  # a required agent left files: fail closed


def test_the_rpm_budget_of_the_config_is_kept_and_what_it_leaves_out_is_unreviewed(
        cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = by_file
    cfg = write_config(tmp_path, [llm_agent("llm", server, "anthropic", max_input_tokens=1000, timeout_s=5, rpm=3)])
    _, report = run(cli, cfg, many_files())
    agent = agent_result(report, "llm")
    assert agent["status"] == "completed" and len(server.requests) == 3
    assert set(agent["unreviewed"]) == {f"src/m{i:02d}.py" for i in range(FILES)} - shown(server) != set()
    assert report["decision"] == "incomplete"


def test_a_request_still_unanswered_at_the_deadline_leaves_its_files_unreviewed_not_the_others(
        cli: Any, tmp_path: Path, server: LlmServer) -> None:
    def hang_on_m03(request: Recorded) -> Step:
        return Step(delay=30) if "file: src/m03.py" in request.prompt else by_file(request)

    server.default = hang_on_m03
    cfg = write_config(tmp_path, [llm_agent("llm", server, max_input_tokens=1000, timeout_s=3)])
    result, report = run(cli, cfg, many_files())
    agent = agent_result(report, "llm")
    assert agent["status"] == "completed", agent
    assert "src/m03.py" in agent["unreviewed"]
    assert {f["file"] for f in report["findings"]} == {f"src/m{i:02d}.py" for i in range(FILES)} - set(
        agent["unreviewed"])
    assert (report["decision"], result.code) == ("incomplete", 3)


def test_an_agent_whose_every_request_misses_its_turn_did_not_run_and_says_why(
        cli: Any, tmp_path: Path, server: LlmServer) -> None:
    # One request per 30 s window, agents one after the other: the first takes the window.
    server.rate_limit = limit = RateLimit(requests=1, window_s=30.0)
    server.default = by_file
    agents = [llm_agent(name, server, timeout_s=5) for name in ("first", "second")]
    cfg = write_config(tmp_path, agents, concurrency=1, packing="per_agent")
    _, report = run(cli, cfg, make_diff("app.py", ["x = 1"]))
    outcome = sorted((a["status"], a["error"] or "") for a in report["agents"])
    # It sent nothing: skipped (issue 20: "deadline" is a reason an agent did not run), and,
    # required, a missing input all the same.
    assert [status for status, _ in outcome] == ["completed", "skipped"]
    assert report["metrics"]["agents_skipped"] == 1 and report["metrics"]["missing_inputs"] == 1
    assert "could be sent early enough to be answered before its deadline" in outcome[1][1]
    assert "is at its rate limits" in outcome[1][1]
    assert len(server.requests) == 1 and limit.rejected == 0
    assert report["decision"] == "incomplete"
