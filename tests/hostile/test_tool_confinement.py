"""A reviewer's model that uses its repository tools against us (issue 14).

Each test drives the real CLI in a real git repository against the scripted model server: the
model asks for paths out of the repository, into .git, through symbolic links, at private files
and at a 50 MB file, for a pattern RE2 refuses, for more calls than it may make, or for tools
forever. Every refusal is answered to the model as a tool error and recorded in the agent's
result; no byte from outside the repository or from a private file reaches a request; the run
always completes, and a model that never answers fails its agent (the gate fails closed).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo, make_diff
from tests.llm.conftest import KEY, agent_result, llm_agent, write_config
from tests.llm.server import LlmServer, Step, tool_results

OUTSIDE = "OUTSIDE-SECRET-41"
PRIVATE = "ENV-SECRET-77"
BIG = 50 * 1024 * 1024


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as running:
        yield running


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


@pytest.fixture
def hostile(repo: GitRepo, tmp_path: Path) -> GitRepo:
    """main holds a private .env, a link out of the repository, a 50 MB file and a folder;
    feature changes lib.py. Outside the repository a secret waits beside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{OUTSIDE}\n")
    (outside / "inner.txt").write_text(f"{OUTSIDE} inner\n")
    repo.write("lib.py", "def charge(amount):\n    return amount\n")
    repo.write(".env", f"API_TOKEN={PRIVATE}\n")
    repo.write("sub/inner.txt", "harmless\n")
    (repo.root / "link.txt").symlink_to(outside / "secret.txt")
    with (repo.root / "big.bin").open("wb") as handle:
        handle.write(b"x" * BIG)
    repo.commit("base")
    repo.branch("feature")
    repo.write("lib.py", "def charge(amount, currency):\n    return amount, currency\n")
    repo.commit("currency")
    return repo


def refusing_config(tmp_path: Path, server: LlmServer, provider: str = "openai", **fields: Any) -> Path:
    agent = llm_agent("reviewer", server, provider, tools=["read_file", "grep", "list_files"],
                      **{"max_tool_calls": 20, **fields})
    return write_config(tmp_path, [agent])


def read(path: str) -> tuple[str, dict[str, Any]]:
    return ("read_file", {"path": path, "start_line": None, "end_line": None})


ATTEMPTS: list[tuple[tuple[str, dict[str, Any]], str]] = [
    (read("../outside/secret.txt"), "'..' is refused"),
    (read("../../etc/passwd"), "'..' is refused"),
    (read("/etc/passwd"), "absolute paths are refused"),
    (read(".git/config"), ".git is never read"),
    (read("sub/../.git/config"), "'..' is refused"),
    (read("./.GIT/HEAD"), ".git is never read"),
    (read("link.txt"), "link.txt is a symbolic link"),
    (read(".env"), ".env is private"),
    (read("big.bin"), f"big.bin is {BIG} bytes, over the 1000000-byte limit"),
    (read("lib.py\x00.env"), "NUL"),
    (("grep", {"pattern": "(unclosed", "paths": None}), "bad RE2 pattern: missing )"),
    (("grep", {"pattern": "x", "paths": ["[z-a]"]}), "bad glob in paths"),
    (("read_file", {"path": "lib.py", "start_line": "one", "end_line": None}), "start_line must be"),
    (("bash", {"command": "cat /etc/passwd"}), "unknown tool 'bash'"),
]


def run_range(cli: Any, cfg: Path, *extra: str) -> tuple[Any, dict[str, Any]]:
    result = cli("--config", str(cfg), "--base", "main", "--head", "feature", "--format", "json", *extra)
    assert result.out, result.err
    return result, result.json()


def assert_nothing_leaked(server: LlmServer) -> None:
    sent = "".join(json.dumps(r.body) for r in server.requests)
    assert OUTSIDE not in sent and PRIVATE not in sent and "root:x:0" not in sent
    assert "x" * 2000 not in sent  # nothing of the 50 MB file


@pytest.mark.parametrize("mode", ["range", "worktree"])
def test_every_escape_is_refused_answered_and_recorded(cli: Any, tmp_path: Path, server: LlmServer,
                                                       hostile: GitRepo, mode: str) -> None:
    attempts = list(ATTEMPTS)
    if mode == "worktree":
        # A tracked folder turned into a link out of the repository after it was committed.
        (hostile.root / "sub" / "inner.txt").unlink()
        (hostile.root / "sub").rmdir()
        (hostile.root / "sub").symlink_to(tmp_path / "outside", target_is_directory=True)
        attempts.append((read("sub/inner.txt"), "sub is a symbolic link"))
    calls = [call for call, _ in attempts]
    server.script(Step(tool_calls=[("grep", {"pattern": "SECRET", "paths": None}), ("list_files", {"glob": "**"})]),
                  Step(tool_calls=calls), Step(findings=[]))
    cfg = refusing_config(tmp_path, server, max_tool_calls=len(calls) + 2)
    result = cli("--config", str(cfg), "--base", "main", "--format", "json") if mode == "worktree" \
        else run_range(cli, cfg)[0]
    report = result.json()
    agent = agent_result(report, "reviewer")
    assert agent["status"] == "completed", result.err
    assert result.code == 0
    grep, listing = agent["tool_calls"][:2]
    assert not grep["refused"] and not listing["refused"]
    recorded = agent["tool_calls"][2:]
    assert [(c["tool"], c["refused"]) for c in recorded] == [(name, True) for name, _ in calls]
    for call, (_, reason) in zip(recorded, attempts, strict=True):
        assert reason in call["reason"], (call, reason)
    answered = tool_results(server.requests[2])
    assert [error for _, _, error in answered[2:]] == [True] * len(calls)
    assert all(text == f"error: {c['reason']}" for (_, text, _), c in zip(answered[2:], recorded, strict=True))
    searched, listed = answered[0][1], answered[1][1]
    assert "(no match)" in searched  # neither the private .env nor anything outside is searched
    assert ".env" not in listed and ".git/" not in listed and "state.db" not in listed
    assert "link.txt  (symbolic link, not followed)" in listed and "lib.py" in listed
    assert_nothing_leaked(server)


def test_the_run_state_is_never_shown_wherever_it_lives(cli: Any, tmp_path: Path, server: LlmServer,
                                                         hostile: GitRepo) -> None:
    cfg = refusing_config(tmp_path, server)
    settings = {"version": 1, "state_path": "var/review state [1].db"}
    (cfg / "review-gate.json").write_text(json.dumps(settings))
    run_range(cli, cfg)  # a first run creates the state there
    assert (hostile.root / "var" / "review state [1].db").is_file()
    server.requests.clear()
    server.script(Step(tool_calls=[read("var/review state [1].db"), ("list_files", {"glob": "var/**"})]),
                  Step(findings=[]))
    _, report = run_range(cli, cfg, "--no-cache")
    refused, listed = agent_result(report, "reviewer")["tool_calls"]
    assert refused["refused"] and "is private" in refused["reason"]
    assert not listed["refused"]
    assert "state" not in tool_results(server.requests[-1])[1][1].split(">>>")[0].split("\n", 2)[-1]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_model_that_calls_tools_forever_stops_at_the_limit_and_fails_closed(
        cli: Any, tmp_path: Path, server: LlmServer, hostile: GitRepo, provider: str) -> None:
    server.default = Step(tool_calls=[("list_files", {"glob": "*.py"})])
    result, report = run_range(cli, refusing_config(tmp_path, server, provider, max_tool_calls=3))
    agent = agent_result(report, "reviewer")
    assert agent["status"] == "failed" and "after its 3 were spent" in agent["error"]
    assert report["decision"] == "incomplete" and result.code == 3
    assert len(server.requests) == 4  # three rounds of tools, then the request for the answer
    final = server.requests[-1].body
    if provider == "openai":
        assert final["tool_choice"] == "none" and "answer now" in final["messages"][-1]["content"]
    else:
        assert final["tool_choice"] == {"type": "tool", "name": "report_findings"}
        assert "answer now" in final["messages"][-1]["content"][-1]["text"]
    assert [c["tool"] for c in agent["tool_calls"]] == ["list_files"] * 3  # kept on the failed result
    assert agent["tokens_in"] == 400  # every round was billed


def test_a_model_told_to_answer_that_answers_completes(cli: Any, tmp_path: Path, server: LlmServer,
                                                        hostile: GitRepo) -> None:
    many = [read("lib.py")] * 10
    server.script(Step(tool_calls=many), Step(findings=[{"severity": "info", "message": "fine", "file": "lib.py",
                                                         "line": 1}]))
    result, report = run_range(cli, refusing_config(tmp_path, server, max_tool_calls=3))
    agent = agent_result(report, "reviewer")
    assert agent["status"] == "completed", result.err
    assert [c["refused"] for c in agent["tool_calls"]] == [False] * 3 + [True] * 7
    assert all("budget (3 calls) is spent" in c["reason"] for c in agent["tool_calls"][3:])
    assert len(tool_results(server.requests[1])) == 10  # every call answered, as the protocol wants
    assert server.requests[1].body["tool_choice"] == "none"


def test_a_turn_of_a_hundred_calls_fails_the_agent(cli: Any, tmp_path: Path, server: LlmServer,
                                                    hostile: GitRepo) -> None:
    server.default = Step(tool_calls=[read("lib.py")] * 100)
    result, report = run_range(cli, refusing_config(tmp_path, server))
    agent = agent_result(report, "reviewer")
    assert agent["status"] == "failed" and "100 tool calls in one turn" in agent["error"]
    assert result.code == 3 and agent["tool_calls"] == []


def test_the_tool_output_budget_cuts_then_refuses(cli: Any, tmp_path: Path, server: LlmServer,
                                                  hostile: GitRepo) -> None:
    hostile.git("checkout", "-q", "main")
    hostile.write("long.py", "".join(f"value_{n} = {n}\n" for n in range(2000)))
    hostile.commit("long")
    hostile.git("checkout", "-q", "feature")
    hostile.git("merge", "-q", "main")
    server.script(Step(tool_calls=[read("long.py")]), Step(tool_calls=[read("lib.py")]), Step(findings=[]))
    _, report = run_range(cli, refusing_config(tmp_path, server, max_tool_bytes=2048))
    first, second = agent_result(report, "reviewer")["tool_calls"]
    assert not first["refused"] and first["bytes"] <= 2048
    assert second["refused"] and "output budget (2048 bytes) is spent" in second["reason"]
    [(_, text, _)] = tool_results(server.requests[1])
    assert "[cut: the tool output budget is spent]" in text and "value_0 = 0" in text
    assert "value_1999" not in text


def test_arguments_that_are_not_json_are_a_tool_error(cli: Any, tmp_path: Path, server: LlmServer,
                                                      hostile: GitRepo) -> None:
    server.script(Step(tool_calls=[("read_file", '{"path": "lib.py", ')]), Step(findings=[]))
    _, report = run_range(cli, refusing_config(tmp_path, server))
    [call] = agent_result(report, "reviewer")["tool_calls"]
    assert call["refused"] and call["reason"] == "the arguments are not a JSON object"
    assert call["arguments"] == {"raw": '{"path": "lib.py", '}


def test_a_model_that_hangs_between_tool_rounds_times_out(cli: Any, tmp_path: Path, server: LlmServer,
                                                          hostile: GitRepo) -> None:
    server.script(Step(tool_calls=[read("lib.py")]), Step(delay=60))
    result, report = run_range(cli, refusing_config(tmp_path, server, timeout_s=1, retries=0))
    agent = agent_result(report, "reviewer")
    assert agent["status"] == "timed_out" and result.code == 3
    assert agent["duration_s"] < 10


def test_a_file_that_changes_into_a_fifo_is_refused_without_blocking(cli: Any, tmp_path: Path, server: LlmServer,
                                                                      hostile: GitRepo) -> None:
    (hostile.root / "sub" / "inner.txt").unlink()
    os.mkfifo(hostile.root / "sub" / "inner.txt")  # still listed: git tracks the path
    server.script(Step(tool_calls=[read("sub/inner.txt"), ("grep", {"pattern": "x", "paths": ["sub/**"]})]),
                  Step(findings=[]))
    # git cannot diff a working tree with a FIFO in it; a diff given on stdin reads the working tree too
    diff = make_diff("lib.py", ["x = 1"], start=3, new_file=False)
    result = cli("--config", str(refusing_config(tmp_path, server)), "--diff", "-", "--format", "json",
                 stdin=diff.encode())
    assert result.out, result.err
    fifo, searched = agent_result(result.json(), "reviewer")["tool_calls"]
    assert fifo["refused"] and "not a regular file" in fifo["reason"]
    assert not searched["refused"]
