"""The Claude Code Stop hook with no provider key: the LLM reviewers' requests go to the agent's
own sub-agents as review tasks, through the hook's JSON protocol; the agent may write the answers
where the tasks say and collect them; the next stop is decided on the host's answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.integrations.test_hooks import answer, bash, edit, hook, stop

CHANGE = "import subprocess\n\n\ndef run(name):\n    return subprocess.call('ls ' + name, shell=True)\n"


@pytest.fixture(autouse=True)
def local(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's machine (not CI) with no provider key: the host answers."""
    for name in ("CI", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def tasks_of(reason: str) -> list[tuple[Path, Path]]:
    """(task file, answer file) of each task the block reason lists."""
    found = []
    for line in reason.splitlines():
        if line.startswith("- ") and ": task " in line and " -> answer " in line:
            task, answer_file = line.split(": task ", 1)[1].split(" -> answer ")
            found.append((Path(task), Path(answer_file)))
    return found


def reply(task: dict[str, Any], severity: str = "critical") -> dict[str, Any]:
    packed = "agent" in task["answer_schema"]["properties"]["findings"]["items"]["properties"]
    return {"findings": [{**({"agent": task["agents"][-1]} if packed else {}), "severity": severity,
                          "message": "a shell command built from user input", "file": "app.py", "line": 5,
                          "end_line": 5, "rule_id": None, "category": "injection",
                          "recommendation": "pass an argument list", "confidence": 0.9}]}


def test_a_stop_with_no_key_hands_the_reviews_to_the_agents_sub_agents(cli, repo: GitRepo) -> None:
    repo.write("app.py", CHANGE)
    blocked = answer(hook(cli, stop(repo)))
    assert blocked["decision"] == "block"
    reason = blocked["reason"]
    assert reason.startswith("review-gate: REVIEW PENDING |")
    assert "sub-agent (the Task tool" in reason and "reviewed by: host sub-agent" in reason
    run_id = reason.split("review-gate collect ")[1].split()[0]
    assert f"review-gate collect {run_id}`: it checks every answer" in reason
    listed = tasks_of(reason)
    assert listed and all(task.is_file() and not answer_file.exists() for task, answer_file in listed)
    assert "(1 of 3)" in reason  # a block like any other: the agent cannot be trapped

    # The agent may write the answers where the tasks say, and hand them back; nothing else of the
    # configuration is opened to it.
    task, answer_file = listed[0]
    assert answer(hook(cli, edit(repo, "Write", str(answer_file.relative_to(repo.root))))) == {}
    assert answer(hook(cli, bash(repo, f"review-gate collect {run_id} --answer u0-c0 - < /tmp/a.json"))) == {}
    denied = answer(hook(cli, edit(repo, "Write", ".review-gate/review-rules.json")))
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"

    for task, answer_file in listed:
        answer_file.write_text(json.dumps(reply(json.loads(task.read_text()))))
    collected = cli("collect", run_id, "--format", "agent")
    assert collected.code == 1, collected.err
    assert "host sub-agent" in collected.out

    # The next stop asks nothing again: the answered files are cached, the host's finding counts.
    again = answer(hook(cli, stop(repo, active=True)))
    assert again["decision"] == "block"
    assert again["reason"].startswith("review-gate: FAIL") and "REVIEW PENDING" not in again["reason"]
    assert "reviewed by: host sub-agent" in again["reason"] and "a shell command built from user input" in \
        again["reason"]


def test_init_installs_the_skill_with_the_steps(cli, repo: GitRepo) -> None:
    result = cli("init", "--hooks", "claude-code")
    assert result.code == 0, result.err
    skill = repo.root / ".claude" / "skills" / "review-gate" / "SKILL.md"
    text = skill.read_text()
    assert text.startswith("---\nname: review-gate\n") and "## When the LLM reviewers are yours to answer" in text
    assert "review-gate on this machine: `/" in text  # the absolute program the hooks run
    assert "up to date" in cli("init", "--hooks", "claude-code").out
    skill.write_text("my own skill\n")
    assert "left as it is" in cli("init", "--hooks", "claude-code").out and skill.read_text() == "my own skill\n"


def test_the_tasks_of_a_stop_not_answered_never_pass(cli, repo: GitRepo) -> None:
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
    reason = answer(hook(cli, stop(repo)))["reason"]
    run_id = reason.split("review-gate collect ")[1].split()[0]
    collected = cli("collect", run_id, "--format", "json")
    report = collected.json()
    assert report["decision"] == "pass_with_warnings" and report["metrics"]["agents_skipped"] > 0
    assert all(a["status"] == "skipped" for a in report["agents"] if a["kind"] == "llm")


@pytest.mark.parametrize("where", ["ci", "keys"])
def test_in_ci_or_with_a_key_the_stop_is_reviewed_as_before(cli, repo: GitRepo, monkeypatch: pytest.MonkeyPatch,
                                                            where: str) -> None:
    if where == "ci":
        monkeypatch.setenv("CI", "true")
    else:  # the built-in reviewers' deadlines do not fit the hook's budget: they are left out, not asked
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    repo.write("app.py", CHANGE)
    reason = answer(hook(cli, stop(repo)))["reason"]
    assert reason.startswith("review-gate: FAIL") and "REVIEW PENDING" not in reason
    assert not (repo.root / ".review-gate" / "host").exists()
