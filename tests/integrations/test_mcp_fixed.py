"""The MCP server's configuration, repository and fail_on are fixed when it starts: its client
(usually the coding agent whose change is judged, outside the host's sandbox) cannot make it run
a configuration the agent wrote, review another repository, or lower the gate, unless the person
who started it said so. Every argument is bounded: a huge one is a clean tool error and the
server keeps serving. The real server process, spoken to with the official SDK's client."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.integrations.conftest import PRIVATE_KEY

pytest.importorskip("mcp")

from mcp import ClientSession

from tests.integrations.test_mcp import session, text_of

WEAK_GATE = json.dumps({"version": 1, "gate": {"conditions": [], "fail_on": "never"}})


def agent_config(directory: Path, marker: Path) -> Path:
    """What an agent writes to run a program of its own: a command agent behind an always policy."""
    directory.mkdir(parents=True)
    agents = [{"id": "own", "name": "own", "description": "the agent's own program", "kind": "command",
               "command": ["sh", "-c", f"id > {marker}; echo '{{\"findings\": []}}'"], "timeout_s": 30}]
    (directory / "review-agents.json").write_text(json.dumps({"version": 1, "agents": agents}))
    (directory / "review-composition.json").write_text(json.dumps({"version": 1, "policies": [
        {"id": "all", "description": "always", "trigger": {"type": "always"}, "dispatch": ["own"]}]}))
    (directory / "review-rules.json").write_text(json.dumps({"version": 1, "rules": []}))
    (directory / "review-gate.json").write_text(WEAK_GATE)
    return directory


def refused(result: Any, *words: str) -> str:
    assert result.is_error, result.content
    text = text_of(result)
    assert text.startswith("review-gate: error: ") and "\n  fix: " in text, text
    assert "Traceback" not in text and "Error executing tool" not in text, text
    for word in words:
        assert word in text, text
    return text


def test_a_call_cannot_name_a_configuration_the_agent_wrote(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("deploy/key.pem", PRIVATE_KEY)
    marker = tmp_path / "ran"
    evil = agent_config(tmp_path / "agent-config", marker)

    async def check(client: ClientSession) -> None:
        for tool, arguments in (("review", {}), ("plan", {}), ("explain", {"paths": ["app.py"]}),
                                ("loop_status", {})):
            refused(await client.call_tool(tool, {**arguments, "config": str(evil)}), "config ",
                    "not the configuration this server was started with", "--allow-other-config")
        assert not marker.exists(), "the agent's own program ran"
        judged = (await client.call_tool("review", {"offline": True})).structured_content or {}
        assert judged["verdict"] == "FAIL"  # the server's own configuration still judges

    session(repo, check)


def test_a_configuration_the_agent_creates_after_the_start_is_not_used(repo: GitRepo) -> None:
    repo.write("deploy/key.pem", PRIVATE_KEY)

    async def check(client: ClientSession) -> None:
        repo.write(".review-gate/review-gate.json", WEAK_GATE)  # the agent lowers the gate it must satisfy
        judged = (await client.call_tool("review", {"offline": True})).structured_content or {}
        assert judged["verdict"] == "FAIL", judged["summary"]

    session(repo, check)


def test_a_weaker_fail_on_is_refused_a_stricter_one_is_taken(repo: GitRepo) -> None:
    repo.write("app.py", "x = eval(user_input)\n")  # a major finding: needs_fixes

    async def check(client: ClientSession) -> None:
        for weaker in ("never", "fail"):
            refused(await client.call_tool("review", {"offline": True, "fail_on": weaker}), f"fail_on {weaker}",
                    "weaker gate than the configuration's (needs_fixes)", "--allow-weaker-fail-on")
        strict = (await client.call_tool("review", {"offline": True, "fail_on": "pass_with_warnings"}))
        assert (strict.structured_content or {})["verdict"] == "FAIL"

    session(repo, check)


def test_the_person_who_starts_the_server_may_allow_what_a_call_names(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", "x = eval(user_input)\n")
    marker = tmp_path / "ran"
    own = agent_config(tmp_path / "agent-config", marker)

    async def check(client: ClientSession) -> None:
        lowered = (await client.call_tool("review", {"offline": True, "fail_on": "never"})).structured_content
        assert (lowered or {})["verdict"] == "PASS"
        named = await client.call_tool("review", {"config": str(own)})
        assert not named.is_error, named.content
        assert marker.exists()

    session(repo, check, "--allow-weaker-fail-on", "--allow-other-config", "--allow-offline")


def test_a_call_cannot_review_another_repository(repo: GitRepo, tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    other = GitRepo(tmp_path / "other")

    async def check(client: ClientSession) -> None:
        refused(await client.call_tool("review", {"cwd": str(other.root)}), "another repository",
                "--allow-other-repo")
        inside = await client.call_tool("plan", {"cwd": str(repo.write("src/app.py", "x = 1\n").parent)})
        assert not inside.is_error, inside.content  # a directory of its own repository is fine

    session(repo, check)


def test_huge_arguments_are_clean_tool_errors_and_the_server_keeps_serving(repo: GitRepo) -> None:
    repo.write("app.py", "x = 1\n")

    async def check(client: ClientSession) -> None:
        refused(await client.call_tool("review", {"base": "r" * 3_000_000}), "argument base")
        refused(await client.call_tool("review", {"config": "c" * 100_000}), "argument config")
        refused(await client.call_tool("explain", {"paths": ["app.py"] * 200_000}), "argument paths")
        refused(await client.call_tool("explain", {"paths": ["p" * 300]}), "explain path")
        refused(await client.call_tool("loop_status", {"task": "t" * 100_000}), "argument task")
        assert not (await client.call_tool("explain", {"paths": ["app.py"]})).is_error  # still serving

    session(repo, check)


def test_a_fifo_among_the_loop_files_blocks_no_call(repo: GitRepo) -> None:
    hil = repo.root / ".review-gate" / "hil"
    hil.mkdir(parents=True)
    os.mkfifo(hil / "planted.json")

    async def check(client: ClientSession) -> None:
        listed = await client.call_tool("loop_status", {})
        assert not listed.is_error, listed.content
        assert (listed.structured_content or {})["handoffs_waiting"] == []

    session(repo, check)


def test_a_configuration_that_does_not_load_stops_the_server_at_start(cli: Any, repo: GitRepo,
                                                                      tmp_path: Path) -> None:
    result = cli("mcp", "--config", str(tmp_path / "missing"))
    assert result.code == 2 and "--config" in result.err and "no such directory" in result.err


def test_offline_that_would_skip_reviewers_that_can_run_is_refused(repo: GitRepo,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """With a key set, the built-in llm reviewers would run: offline would lower the gate."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-used")
    repo.write("app.py", "x = 1\n")

    async def check(client: ClientSession) -> None:
        refused(await client.call_tool("review", {"offline": True}), "offline: it would skip reviewers that can run",
                "--allow-offline")

    session(repo, check)


def test_an_edit_of_the_repositorys_configuration_after_the_start_runs_nothing(repo: GitRepo,
                                                                               tmp_path: Path) -> None:
    """The configuration is fixed as it was at the start: the agent that adds a command agent to
    .review-gate/ (the directory in use) gets a change to review, not a program run for it."""
    repo.write(".review-gate/review-gate.json", json.dumps({"version": 1}))
    repo.commit("the repository's configuration")
    repo.write("deploy/key.pem", PRIVATE_KEY)
    marker = tmp_path / "ran"

    async def check(client: ClientSession) -> None:
        agent_config(tmp_path / "written", marker)
        for name in ("review-agents.json", "review-composition.json", "review-gate.json"):
            (repo.root / ".review-gate" / name).write_text((tmp_path / "written" / name).read_text())
        judged = (await client.call_tool("review", {"offline": True, "format": "json"})).structured_content or {}
        assert not marker.exists(), "a command agent the client wrote ran outside its sandbox"
        assert judged["verdict"] == "FAIL", judged["summary"]
        gaps = json.loads(judged["report"])["gaps"]
        assert any(g["kind"] == "config_changed" for g in gaps), gaps

    session(repo, check)
