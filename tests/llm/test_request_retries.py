"""Issue 20, part 1: a transient fault retries the request it hit, not the agent. The chunks
already answered are kept and never sent again; a packed request's fault costs one request."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff
from tests.llm.conftest import KEY, agent_result, llm_agent, run, write_config
from tests.llm.server import EveryNth, LlmServer, Recorded, Step, every_file

FILES = 8


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


def many_files(count: int = FILES) -> str:
    """``count`` files, each one request at max_input_tokens 1000."""
    return "".join(make_diff(f"src/m{i:02d}.py", [f"value_{i}_{n} = {n} * {i}" for n in range(60)])
                   for i in range(count))


def chunk(request: Recorded) -> str:
    """What a request carries: its user message (a retry sends the same one again)."""
    return next(str(m["content"]) for m in request.body["messages"] if m["role"] == "user")


def packed(tmp_path: Path, server: LlmServer, provider: str = "openai", **fields: Any) -> Path:
    agents = [llm_agent(name, server, provider, max_input_tokens=1000, timeout_s=30, **fields)
              for name in ("build", "security")]
    return write_config(tmp_path, agents)


class FirstTimeFails:
    """An endpoint whose first answer to a request showing one of ``files`` is a 500."""

    def __init__(self, files: set[str]) -> None:
        self.files = files
        self.failed: set[str] = set()

    def __call__(self, request: Recorded) -> Step:
        hit = {f for f in self.files - self.failed if f"file: {f} " in request.prompt}
        if hit:
            self.failed |= hit
            return Step(status=500)
        return every_file(request)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_fault_of_one_packed_request_costs_one_request(cli: Any, tmp_path: Path, server: LlmServer,
                                                         provider: str) -> None:
    # Before: a fault of any request failed the packed review, and dispatch then sent every chunk
    # again (the agent's retry), those already answered included.
    server.default = FirstTimeFails({"src/m01.py", "src/m05.py"})
    result, report = run(cli, packed(tmp_path, server, provider), many_files())
    chunks = Counter(chunk(r) for r in server.requests)
    assert len(chunks) == FILES
    assert len(server.requests) == FILES + 2  # each fault cost its own request once more, no other
    assert sorted(chunks.values()) == [1] * (FILES - 2) + [2, 2]
    for agent_id in ("build", "security"):
        agent = agent_result(report, agent_id)
        assert (agent["status"], agent["attempts"], agent["unreviewed"]) == ("completed", 2, []), agent
    assert {f["file"] for f in report["findings"]} == {f"src/m{i:02d}.py" for i in range(FILES)}
    assert result.code == 0 and report["metrics"]["agents_failed"] == 0


def test_scattered_500s_fail_no_reviewer(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    # Issue 20: a 60-file change against an endpoint answering 500 to every 7th request failed
    # every LLM reviewer. Every 4th here, and no retries allowed: a fault while the endpoint
    # answers other requests is scattered noise, retried without using one.
    faulty = EveryNth(4, every_file, delay=0.2)
    server.default = faulty
    _, report = run(cli, packed(tmp_path, server, retries=0), many_files(12))
    assert {a["status"] for a in report["agents"]} == {"completed"}
    assert report["coverage"]["unreviewed"] == [] and faulty.faults >= 3
    assert len(server.requests) == len({chunk(r) for r in server.requests}) + faulty.faults


@pytest.mark.parametrize("step", [Step(status=502), Step(status=529), Step(drop=True), Step(body=b"<html>")])
def test_transient_faults_of_a_request_retry_that_request(cli: Any, tmp_path: Path, server: LlmServer,
                                                          step: Step) -> None:
    server.script(Step(findings=[]), step)  # the second request fails once
    server.default = every_file
    _, report = run(cli, packed(tmp_path, server, "anthropic" if step.status == 529 else "openai"), many_files(3))
    assert len(server.requests) == 4 and len({chunk(r) for r in server.requests}) == 3
    assert {a["status"] for a in report["agents"]} == {"completed"}


def test_a_429_waits_its_retry_after_and_spends_no_retry(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.script(Step(status=429, headers={"retry-after-ms": "200"}), Step(status=429, headers={"retry-after": "0"}))
    server.default = every_file
    _, report = run(cli, packed(tmp_path, server, retries=0), many_files(2))
    assert {a["status"] for a in report["agents"]} == {"completed"}  # retries 0: a 429 is no fault of its own
    assert len(server.requests) == 4 and len({chunk(r) for r in server.requests}) == 2


def test_a_request_that_keeps_failing_leaves_its_files_unreviewed_and_the_rest_is_kept(
        cli: Any, tmp_path: Path, server: LlmServer) -> None:
    def broken_m01(request: Recorded) -> Step:
        return Step(status=500, delay=0.3) if "file: src/m01.py" in request.prompt else every_file(request)

    server.default = broken_m01
    result, report = run(cli, packed(tmp_path, server, retries=2), many_files(4))
    # Its first fault came while the other three were answered (scattered: no retry used), then
    # the endpoint answered nothing else: its 2 retries, and it gives up.
    assert len(server.requests) == 3 + 4
    for agent_id in ("build", "security"):
        agent = agent_result(report, agent_id)
        assert (agent["status"], agent["unreviewed"], agent["attempts"]) == ("completed", ["src/m01.py"], 4)
        assert any("request 2 of 4 failed after 4 attempts" in note for note in agent["notes"]), agent["notes"]
    assert {f["file"] for f in report["findings"]} == {"src/m00.py", "src/m02.py", "src/m03.py"}
    assert (report["decision"], result.code) == ("incomplete", 3)


def test_an_agent_none_of_whose_requests_is_answered_fails_once(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = Step(status=500)
    cfg = write_config(tmp_path, [llm_agent("llm", server, retries=2, timeout_s=30)])
    result, report = run(cli, cfg, make_diff("app.py", ["x = 1"]))
    agent = agent_result(report, "llm")
    assert (agent["status"], agent["attempts"]) == ("failed", 3), agent
    assert "1 of its 1 request(s) failed after 3 attempts" in agent["error"] and "HTTP 500" in agent["error"]
    assert len(server.requests) == 3  # not 3 more a retry of the agent, as before
    assert result.code == 3


def test_an_unusable_answer_is_still_asked_again_with_the_error(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.script(Step(content="not json at all"))
    server.default = Step(findings=[])
    cfg = write_config(tmp_path, [llm_agent("llm", server, retries=0)])
    _, report = run(cli, cfg, make_diff("app.py", ["x = 1"]))
    assert agent_result(report, "llm")["status"] == "completed"
    assert "Your previous answer could not be used" in server.requests[1].prompt


def test_a_command_agent_is_still_retried_whole(cli: Any, tmp_path: Path) -> None:
    script = tmp_path / "flaky.py"
    marker = tmp_path / "ran-once"
    script.write_text("import pathlib, sys\n"
                      f"m = pathlib.Path({str(marker)!r})\n"
                      "if not m.exists():\n    m.write_text('x'); sys.exit(75)\n"  # EX_TEMPFAIL: transient
                      "sys.stdin.read(); print('{\"findings\": []}')\n")
    import sys
    agent = {"id": "cmd", "name": "cmd", "description": "a flaky program", "kind": "command",
             "command": [sys.executable, str(script)], "retries": 1}
    cfg = write_config(tmp_path, [agent])
    _, report = run(cli, cfg, make_diff("app.py", ["x = 1"]))
    assert (agent_result(report, "cmd")["status"], agent_result(report, "cmd")["attempts"]) == ("completed", 2)
    assert json.loads(json.dumps(report["metrics"]))["agents_failed"] == 0


def test_an_endpoint_that_answers_only_garbage_uses_up_the_retries(cli: Any, tmp_path: Path,
                                                                    server: LlmServer) -> None:
    """A trial: a 200 whose body is not JSON counted as an answer, so two chunks failing side by
    side took each other's garbage for 'the endpoint answers other requests' and spent the five
    scattered-noise retries as well: 8 attempts a chunk, 38 s, where an all-500 endpoint takes 3."""
    server.default = Step(body=b'{"choices": [ {oops')
    cfg = write_config(tmp_path, [llm_agent("llm", server, retries=2, max_input_tokens=1000, timeout_s=60)])
    result, report = run(cli, cfg, many_files(2))
    agent = agent_result(report, "llm")
    assert (agent["status"], agent["attempts"]) == ("failed", 3), agent
    assert "not JSON" in agent["error"]
    assert len(server.requests) == 2 * 3
    assert result.code == 3


def test_asking_again_after_an_unusable_answer_counts_in_attempts(cli: Any, tmp_path: Path,
                                                                   server: LlmServer) -> None:
    """A trial: the server got two requests ("Looks good to me!", then the findings) and the
    agent said attempts 1; attempts is the most times one of its requests was sent."""
    server.script(Step(content="Looks good to me!"))
    server.default = Step(findings=[])
    cfg = write_config(tmp_path, [llm_agent("llm", server, retries=0)])
    _, report = run(cli, cfg, make_diff("app.py", ["x = 1"]))
    agent = agent_result(report, "llm")
    assert (agent["status"], agent["attempts"], len(server.requests)) == ("completed", 2, 2), agent

    server.requests.clear()
    server.default = Step(content="Looks good to me!")
    _, report = run(cli, cfg, make_diff("app.py", ["x = 2"]))
    agent = agent_result(report, "llm")
    assert (agent["status"], agent["attempts"], len(server.requests)) == ("failed", 2, 2), agent
