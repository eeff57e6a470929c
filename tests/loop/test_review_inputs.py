"""What the loop's review phase is told (the task's acceptance criteria, the NO_GO history), what
its decision records say (the criteria judged by the llm reviewers, a person's override), the
seed's review log (`loop log --format json`) and the exit conditions."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm.server import LlmServer, Recorded, Step
from tests.loop.conftest import BUILTIN, FLAWED, MESSAGE, LoopRig, command_agent

KEY = "sk-loop-intent-SECRET-0123456789"
TASK = ("Fetch the status page with requests.\n\n## Acceptance criteria\n\n- TLS verification stays on\n"
        "- a 5 second timeout\n")
MANUAL_REVIEW = ("--approver", "review.response=manual")


@pytest.fixture
def server() -> Iterator[LlmServer]:
    with LlmServer() as running:
        yield running


def reviewer(server: LlmServer) -> dict[str, Any]:
    return {"id": "task-reviewer", "name": "task reviewer", "description": "an llm reviewer told the task",
            "kind": "llm", "provider": "openai", "model": "test-model",
            "instructions": "instructions/build-reviewer.md", "base_url": f"{server.url}/v1",
            "api_key_env": "TEST_LLM_KEY", "timeout_s": 20, "retries": 0}


def answer_by_iteration(request: Recorded) -> Step:
    """The reviewer judges the criteria not met while the review history is empty (the first
    review), met once the TLS line was fixed."""
    system = request.body["messages"][0]["content"]
    first = "Earlier reviews that said NO_GO" not in system
    return Step(content=json.dumps({"findings": [], "criteria_met": not first,
                                    "criteria_note": "TLS verification is off" if first else "both criteria hold"}))


def with_reviewer(rig: LoopRig, server: LlmServer, monkeypatch: pytest.MonkeyPatch, **loop: Any) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    rig.write_config(agents=[reviewer(server)], loop=loop or None, policies=[{
        "id": "task-review", "description": "every change, told the task", "trigger": {"type": "always"},
        "dispatch": ["task-reviewer"]}])
    server.default = answer_by_iteration


def system_messages(server: LlmServer) -> list[str]:
    return [str(r.body["messages"][0]["content"]) for r in server.requests]


def test_the_second_review_is_told_the_criteria_and_the_first_no_go(
        rig: LoopRig, server: LlmServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_reviewer(rig, server, monkeypatch)
    task = tmp_path / "task.md"
    task.write_text(TASK)
    result = rig.loop("start", "criteria", "--from", "generate", "--prompt", str(task), "--coder", "coder",
                      "--mode", "automated")
    assert result.code == 0, result.err
    first, second = system_messages(server)
    for system in (first, second):
        assert "- TLS verification stays on" in system and "- a 5 second timeout" in system
    assert "Earlier reviews that said NO_GO" not in first
    history = second.split("Earlier reviews that said NO_GO", 1)[1]
    assert "### Iteration 1: NO_GO" in history
    assert "app.py:3" in history and MESSAGE in history  # the first review's finding
    no_go, go = rig.decisions("criteria")
    assert no_go["quality_checks"]["acceptance_criteria_met"] is False
    assert go["quality_checks"]["acceptance_criteria_met"] is True
    assert go["feedback"].startswith("All criteria met.")
    assert (go["decided_by"], go["review_decision"]) == ("review-gate", "GO")


def test_without_an_llm_reviewer_the_criteria_are_not_judged(rig: LoopRig) -> None:
    rig.repo.write("app.py", "import requests\n\nr = requests.get(url, timeout=5)\n")
    assert rig.loop("start", "plain", "--coder", "coder", "--mode", "automated").code == 0
    [record] = rig.decisions("plain")
    assert record["quality_checks"]["acceptance_criteria_met"] == "not judged"
    assert "All criteria met" not in record["feedback"]  # nobody judged them
    assert record["feedback"].startswith("The gate passed the change.")


@pytest.mark.parametrize("how", ["flag", "edit"])
def test_a_go_a_person_decided_says_so(rig: LoopRig, how: str) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "mine", "--coder", "coder", *MANUAL_REVIEW).code == 4
    if how == "flag":
        result = rig.loop("approve", "mine", "--complete", "--feedback", "a test fixture, verification is moot")
    else:  # seed 000: the person edits the verdict in the file, then approves it as it is
        review = rig.session_file("mine", 1, "review.response.md")
        review.write_text(review.read_text().replace("verdict: FAIL", "verdict: PASS", 1))
        result = rig.loop("approve", "mine", "--feedback", "a test fixture, verification is moot")
    assert result.code == 0, result.err
    [record] = rig.decisions("mine")
    assert record["decision"] == "GO"
    # the defect: this record read "All criteria met. REVIEW: FAIL | ..." (the reviewer's words)
    assert "All criteria met" not in record["feedback"]
    assert record["feedback"].startswith("A person decided GO over the review's NO_GO.\n"
                                         "a test fixture, verification is moot")
    assert "The review: REVIEW: FAIL" in record["feedback"]
    assert (record["decided_by"], record["review_decision"]) == ("person", "NO_GO")
    # the summary is the gate's line; an edited file's "REVIEW: PASS" was a line the gate never wrote
    assert record["summary"].startswith("REVIEW: FAIL |"), record["summary"]
    # the verdict is not the gate's either way; an edit of the file by hand is shown as such, what
    # approve itself writes into it (--complete, --feedback) is not an edit
    assert record["overridden"] is True and record["edited"] is (how == "edit")
    log = rig.loop("log", "mine", "--format", "json").json()
    assert log["final_decision"] == "GO" and log["iterations"][0]["decided_by"] == "person"


def test_loop_log_json_is_the_seeds_review_log(rig: LoopRig, task_file: Path) -> None:
    result = rig.loop("start", "tls", "--from", "generate", "--prompt", str(task_file), "--coder", "coder",
                      "--mode", "automated")
    assert result.code == 0, result.err
    log_file = rig.repo.root / ".review-gate" / "review-logs" / "tls.jsonl"
    with log_file.open("a") as handle:
        handle.write('{"task_id": "tls", "iteration": 9, "decis')  # a write torn by a crash
    log = rig.loop("log", "tls", "--format", "json").json()
    assert (log["task_id"], log["overlay"], log["reviewer_agent"], log["coder_agent"]) == \
        ("tls", "agentic_review", "review-gate", "coder")
    assert [(i["iteration"], i["decision"]) for i in log["iterations"]] == [(1, "NO_GO"), (2, "GO")]
    for entry in log["iterations"]:
        assert {"iteration", "decision", "feedback", "timestamp", "quality_checks"} <= set(entry)
    assert MESSAGE in log["iterations"][0]["feedback"]
    assert log["final_decision"] == "GO"
    assert log["completed_at"] == log["iterations"][-1]["timestamp"]
    assert log["review_log"] == ".review-gate/review-logs/tls.jsonl"
    assert {"task", "decisions", "events"} <= set(log)  # what it printed before stays
    log_file.unlink()  # observability, not state: the run state's copy stands in, and it says so
    again = rig.loop("log", "tls", "--format", "json").json()
    assert [i["decision"] for i in again["iterations"]] == ["NO_GO", "GO"]
    assert again["review_log"].startswith("run state")


def test_a_session_under_way_has_no_final_decision(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "open", "--coder", "coder", *MANUAL_REVIEW).code == 4
    log = rig.loop("log", "open", "--format", "json").json()
    assert (log["iterations"], log["final_decision"], log["completed_at"]) == ([], None, None)


DEBUG_PRINTS = "def total(items):\n    print(items)\n    return sum(items)\n"
TIDY = r'''
import pathlib
app = pathlib.Path("app.py")
app.write_text("".join(line for line in app.read_text().splitlines(keepends=True) if "print(" not in line))
print("removed the debug print")
'''


@pytest.mark.parametrize(("conditions", "decisions"), [
    (None, ["GO"]),
    (["review.decision == GO"], ["GO"]),
    (["review.decision == GO", "review.warnings == 0"], ["NO_GO", "GO"]),
])
def test_exit_conditions_decide_whether_a_warning_ends_the_loop(rig: LoopRig, tmp_path: Path,
                                                                conditions: list[str] | None,
                                                                decisions: list[str]) -> None:
    script = tmp_path / "tidy.py"
    script.write_text(TIDY)
    loop = {"exit_conditions": conditions} if conditions else None
    # The built-in llm reviewers have no key here: they count as skipped, which the built-in gate
    # makes a pass_with_warnings (so "review.warnings == 0" would never be met); this team lets
    # skipped reviewers pass, as a configuration may say.
    gate = json.loads((BUILTIN / "review-gate.json").read_text())["gate"]
    gate["conditions"] = [c for c in gate["conditions"] if c["metric"] != "agents_skipped"]
    rig.write_config(agents=[command_agent("tidy", [sys.executable, str(script)])], loop=loop, gate=gate)
    rig.repo.write("app.py", DEBUG_PRINTS)
    result = rig.loop("start", "warn", "--coder", "tidy", "--mode", "automated")
    assert result.code == 0, result.err
    assert [d["decision"] for d in rig.decisions("warn")] == decisions
    if len(decisions) == 2:
        assert "warning" in rig.decisions("warn")[0]["feedback"]
        assert "print(" not in (rig.repo.root / "app.py").read_text()
        prompt = rig.session_file("warn", 1, "review.prompt.md").read_text()
        assert "`pass_with_warnings`" in prompt  # the review prompt says what GO takes


@pytest.mark.parametrize(("loop", "said"), [
    ({"exit_conditions": ["review.warnings == 0"]}, "exit_conditions must hold 'review.decision == GO'"),
    ({"exit_conditions": ["review.decision == NOGO"]}, "review.decision == GO"),
    ({"quality_checks": {"acceptance_criteria_met": ["*"]}}, "acceptance_criteria_met: it is the llm reviewers'"),
])
def test_a_bad_loop_block_is_a_config_error(rig: LoopRig, loop: dict[str, Any], said: str) -> None:
    rig.write_config(loop=loop)
    result = rig.cli("config", "validate", "--config", str(rig.config))
    assert result.code == 2 and said in result.err, result.err
    assert "Traceback" not in result.err


def unmet(_request: Recorded) -> Step:
    return Step(content=json.dumps({"findings": [], "criteria_met": False,
                                    "criteria_note": "the 5 second timeout is missing"}))


def met_or_silent(request: Recorded) -> Step:
    return Step(content=json.dumps({"findings": [], "criteria_met": None, "criteria_note": None}))


@pytest.mark.parametrize("severity", ["major", "info"])
def test_no_go_while_a_reviewer_judges_the_criteria_unmet(
        rig: LoopRig, server: LlmServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, severity: str) -> None:
    with_reviewer(rig, server, monkeypatch, max_iterations=2)
    rules = json.loads((BUILTIN / "review-rules.json").read_text())
    for rule in rules["rules"]:
        if rule["id"] == "intent-unmet":
            rule["severity"] = severity
    (rig.config / "review-rules.json").write_text(json.dumps(rules))
    server.default = unmet
    task = tmp_path / "task.md"
    task.write_text(TASK)
    # the fixer leaves a change the pattern rules pass; only the reviewer's judgement stands against it
    result = rig.loop("start", "unmet", "--from", "generate", "--prompt", str(task), "--coder", "fixer",
                      "--mode", "automated")
    assert result.code == 4, result.err  # never GO: the hand-off after max_iterations NO_GO verdicts
    records = rig.decisions("unmet")
    assert [r["decision"] for r in records] == ["NO_GO", "NO_GO"]
    assert all(r["quality_checks"]["acceptance_criteria_met"] is False for r in records)
    assert "the 5 second timeout is missing" in records[0]["feedback"]


def test_the_exit_condition_can_require_the_criteria_judged_met(
        rig: LoopRig, server: LlmServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_reviewer(rig, server, monkeypatch, max_iterations=1,
                  exit_conditions=["review.decision == GO", "review.acceptance_criteria_met == true"])
    server.default = met_or_silent
    task = tmp_path / "task.md"
    task.write_text(TASK)
    result = rig.loop("start", "silent", "--from", "generate", "--prompt", str(task), "--coder", "fixer",
                      "--mode", "automated")
    assert result.code == 4, result.err  # nobody judged the criteria met: no GO
    [record] = rig.decisions("silent")
    assert record["decision"] == "NO_GO" and record["quality_checks"]["acceptance_criteria_met"] == "not judged"
