"""Unattended sessions: every approver skip or an agent, one `loop start` runs the whole loop
and exits 0 (GO), 4 (hand-off) or 3 (error)."""

from __future__ import annotations

import json

from tests.loop.conftest import FLAGGED, FLAWED, MESSAGE, RECOMMENDATION, LoopRig


def test_go_on_the_first_review_completes_and_locks_the_tree(rig: LoopRig) -> None:
    rig.repo.write("app.py", "import requests\n\nr = requests.get(url, timeout=5)\n")
    result = rig.loop("start", "clean", "--from", "review", "--coder", "coder", "--mode", "automated")
    assert result.code == 0, result.err
    status = rig.status("clean")
    assert (status["phase"], status["verdict"], status["drift"]) == ("complete", "GO", False)
    assert status["tree_hash"]
    assert rig.prompts() == []  # the coder was never needed
    [record] = rig.decisions("clean")
    assert record["decision"] == "GO" and record["final"] is True and record["iteration"] == 1
    assert record["run_id"] == status["run_id"]
    assert set(record["quality_checks"]) == {"acceptance_criteria_met", "code_standards_met",
                                             "test_coverage_adequate", "security_review_passed"}
    assert all(record["quality_checks"].values())
    assert {"task_id", "coder_agent", "reviewer_agent", "iteration", "decision", "feedback", "timestamp",
            "run_id"} <= set(record)


def test_no_go_then_go_gives_the_coder_the_findings(rig: LoopRig, task_file) -> None:
    result = rig.loop("start", "tls", "--from", "generate", "--prompt", str(task_file), "--coder", "coder",
                      "--mode", "automated")
    assert result.code == 0, result.err
    generate, revise = rig.prompts()
    assert "Fetch the status page" in generate
    # the revise prompt carries the task, each finding with file:line, message and fix
    assert "Fetch the status page" in revise
    assert FLAGGED in revise and MESSAGE in revise and RECOMMENDATION in revise
    assert "verify=True" in (rig.repo.root / "app.py").read_text()
    first, second = rig.decisions("tls")
    assert (first["decision"], first["final"], first["iteration"]) == ("NO_GO", False, 1)
    assert first["quality_checks"]["security_review_passed"] is False
    assert first["quality_checks"]["test_coverage_adequate"] is True
    assert (second["decision"], second["final"], second["iteration"]) == ("GO", True, 2)
    assert first["coder_agent"] == second["coder_agent"] == "coder"
    assert (rig.records / "phase-1.txt").read_text() == "generate"
    assert (rig.records / "phase-2.txt").read_text() == "revise"


def test_three_no_go_hand_off_to_a_person_with_exit_4(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    result = rig.loop("start", "stuck", "--from", "review", "--coder", "lazy-coder", "--mode", "automated")
    assert result.code == 4, result.err
    status = rig.status("stuck")
    assert status["pending_approval"]["waiting_for"] == "handoff"
    assert status["handoff"] == ".review-gate/hil/stuck.json"
    item = json.loads((rig.repo.root / ".review-gate" / "hil" / "stuck.json").read_text())
    assert item["status"] == "waiting"
    assert [d["iteration"] for d in item["history"]] == [1, 2, 3]
    assert all(d["decision"] == "NO_GO" for d in item["history"])
    records = rig.decisions("stuck")
    assert [r["final"] for r in records] == [False, False, True]
    assert records[-1]["handoff"] is True
    # the third coder call got the history of the earlier NO_GO feedback
    prompts = rig.prompts()
    assert len(prompts) == 2  # revise in iterations 2 and 3
    assert "Earlier reviews that said NO_GO" in prompts[1] and "Iteration 1: NO_GO" in prompts[1]
    listing = rig.loop("status")
    assert "hand-offs waiting for a person: stuck" in listing.out
    # a person takes the change as it is
    done = rig.loop("approve", "stuck", "--complete", "--feedback", "known false positive")
    assert done.code == 0, done.err
    assert json.loads((rig.repo.root / ".review-gate" / "hil" / "stuck.json").read_text())["status"] == "resolved"
    assert rig.decisions("stuck")[-1]["decision"] == "GO"
    assert rig.decisions("stuck")[-1]["overridden"] is True


def test_an_agent_approver_that_rejects_once_then_approves(rig: LoopRig, task_file) -> None:
    result = rig.loop("start", "picky", "--from", "generate", "--prompt", str(task_file), "--coder", "coder",
                      "--mode", "automated", "--approver", "generate.response=approver")
    assert result.code == 0, result.err
    first, retried = rig.prompts()  # the coder's second call fixes the line: GO on the first review
    # seed 002's retry prompt: the original prompt, the rejected output, the feedback, regenerate
    assert retried.startswith(first.rstrip("\n"))
    assert "The previous attempt was rejected" in retried
    assert "call 1: wrote app.py" in retried
    assert "rejection 1: say which line you changed" in retried
    assert "Please regenerate" in retried
    requests = rig.requests()
    assert len(requests) == 2  # called once per attempt
    request = requests[0]
    assert (request["phase"], request["stage"]) == ("generate", "response")
    response = ".review-gate/sessions/picky/1/generate.response.md"
    assert request["files"][response].startswith("call 1")
    assert request["files"]["app.py"] is None  # a changed file the approver reads itself
    assert request["context"]["iteration"] == 1 and request["context"]["session"] == "picky"
    assert "Fetch the status page" in request["context"]["task"]
    assert rig.status("picky")["phase"] == "complete"
    approved = [e for e in rig.loop("log", "picky", "--format", "json").json()["events"] if e["kind"] == "approved"
                and e["stage"] == "response" and e["phase"] == "generate"]
    assert [e["actor"] for e in approved] == ["approver"]


def test_an_approver_that_always_rejects_stops_after_max_retries(rig: LoopRig, task_file) -> None:
    rig.write_config(loop={"phases": {"generate": {"max_retries": 1}}})
    result = rig.loop("start", "never", "--from", "generate", "--prompt", str(task_file), "--coder", "coder",
                      "--mode", "automated", "--approver", "generate.response=naysayer")
    assert result.code == 3, result.err
    status = rig.status("never")
    assert status["phase"] == "error"
    assert "rejected generate.response 2 time(s) (max_retries 1)" in status["error"]
    assert "rejection 2" in status["error"]
    assert len(rig.prompts()) == 2


def test_a_rejected_prompt_stops_with_the_feedback_until_a_person_acts(rig: LoopRig, task_file) -> None:
    rig.write_config(loop={"phases": {"generate": {"approver": {"prompt": "approver", "response": "skip"}}}})
    result = rig.loop("start", "prompt", "--from", "generate", "--prompt", str(task_file), "--coder", "coder")
    assert result.code == 3, result.err
    status = rig.status("prompt")
    assert status["phase"] == "error"
    assert "rejected the generate prompt: rejection 1" in status["error"]
    assert status["approvable"] is True
    assert "loop approve prompt (content already made)" in rig.loop("status", "prompt").out
    assert rig.prompts() == []  # nothing was sent to the coder
    # a person edits the prompt and approves it: the session goes on from there
    prompt = rig.session_file("prompt", 1, "generate.prompt.md")
    prompt.write_text(prompt.read_text() + "\nChange line 3 only.\n")
    result = rig.loop("approve", "prompt")
    assert result.code == 0, result.err
    assert "Change line 3 only." in rig.prompts()[0]


def test_an_incomplete_review_is_retried_once_then_stops_with_the_reason(rig: LoopRig) -> None:
    import sys

    broken = {"id": "broken-checker", "name": "broken", "description": "a required checker that always fails",
              "kind": "command", "command": [sys.executable, "-P", "-c", "import sys; sys.exit(5)"], "timeout_s": 30}
    rig.write_config(agents=[broken], policies=[{"id": "always-broken", "description": "the broken checker",
                                                 "trigger": {"type": "always"}, "dispatch": ["broken-checker"]}])
    rig.repo.write("app.py", "x = 1\n")
    result = rig.loop("start", "flaky", "--coder", "coder", "--mode", "automated")
    assert result.code == 3, result.err
    status = rig.status("flaky")
    assert status["phase"] == "error"
    assert "incomplete twice" in status["error"] and "broken-checker" in status["error"]
    # what status suggests works: no `approve` (there is no review to approve), `retry` is offered
    text = rig.loop("status", "flaky").out
    assert "loop approve" not in text and "review-gate loop retry flaky" in text
    assert status["approvable"] is False
    assert rig.loop("approve", "flaky").code == 2
    log = rig.loop("log", "flaky", "--format", "json").json()
    assert [e["kind"] for e in log["events"]].count("incomplete") == 1
    assert log["decisions"] == []  # incomplete is not a verdict


def test_a_decision_log_that_cannot_be_written_warns_and_the_loop_goes_on(rig: LoopRig) -> None:
    (rig.repo.root / ".review-gate" / "review-logs" / "nolog.jsonl").mkdir(parents=True)
    rig.repo.write("app.py", "x = 1\n")
    result = rig.loop("start", "nolog", "--mode", "automated", "--coder", "coder")
    assert result.code == 0, result.err
    assert "warning: nolog: cannot append to the decision log" in result.err
    log = rig.loop("log", "nolog", "--format", "json").json()
    assert log["decisions"][0]["decision"] == "GO"  # the run state keeps it


def test_the_constitution_standards_reach_coder_and_reviewer_prompts(rig: LoopRig, task_file) -> None:
    (rig.config / "constitution.md").write_text("# Project\n\n## Standards\n\nEvery HTTP call has a timeout.\n\n"
                                                "## Other\n\nnot this\n")
    rig.write_config(constitution="constitution.md")
    result = rig.loop("start", "std", "--from", "generate", "--prompt", str(task_file), "--coder", "coder",
                      "--mode", "automated")
    assert result.code == 0, result.err
    for prompt in rig.prompts():
        assert "Every HTTP call has a timeout." in prompt and "not this" not in prompt
    assert "Every HTTP call has a timeout." in rig.session_file("std", 1, "review.prompt.md").read_text()


def test_status_warns_when_the_tree_drifts_after_go(rig: LoopRig) -> None:
    rig.repo.write("app.py", "x = 1\n")
    assert rig.loop("start", "lock", "--mode", "automated", "--coder", "coder").code == 0
    assert "warning" not in rig.loop("status", "lock").out
    rig.repo.write("app.py", "x = 2\n")
    status = rig.status("lock")
    assert status["drift"] is True and status["current_tree"] != status["tree_hash"]
    assert "the working tree has changed since the GO" in rig.loop("status", "lock").out


def test_session_files_are_ignored_by_git_and_not_reviewed(rig: LoopRig) -> None:
    rig.repo.write("app.py", "x = 1\n")
    assert rig.loop("start", "quiet", "--mode", "automated", "--coder", "coder").code == 0
    status = rig.repo.git("status", "--porcelain", "--untracked-files=all")
    assert status.strip() == "?? app.py"


def test_a_finished_session_is_not_started_again_without_restart(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "twice", "--coder", "fixer", "--mode", "automated").code == 0
    log = rig.repo.root / ".review-gate" / "review-logs" / "twice.jsonl"
    before = log.read_text()
    again = rig.loop("start", "twice", "--coder", "fixer", "--mode", "automated")
    assert again.code == 2, again.err  # loop.md: a session that already exists is refused, nothing changed
    assert "loop session 'twice' exists already (complete" in again.err
    assert "use a new task id" in again.err and "--restart" in again.err
    assert log.read_text() == before and rig.status("twice")["phase"] == "complete"
    rig.repo.write("app.py", FLAWED)
    restarted = rig.loop("start", "twice", "--restart", "--coder", "fixer", "--mode", "automated")
    assert restarted.code == 0, restarted.err
    records = rig.decisions("twice")
    assert [r["decision"] for r in records] == ["NO_GO", "GO", "NO_GO", "GO"]
    first, second = {records[0]["session_id"], records[1]["session_id"]}, {records[2]["session_id"],
                                                                             records[3]["session_id"]}
    assert len(first) == len(second) == 1 and first != second and None not in first | second


def test_restart_of_a_session_that_is_not_finished_is_refused(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "open", "--approver", "review.response=manual").code == 4
    refused = rig.loop("start", "open", "--restart")
    assert refused.code == 2 and "is not finished" in refused.err and "loop cancel open" in refused.err
