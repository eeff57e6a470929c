"""Sessions with a person in the loop: manual approval, editing the review before approving, a
malformed @@@REVIEW_META block, the --complete / --revise overrides, reject, retry, cancel, and
what is refused before anything runs."""

from __future__ import annotations

from review_gate.judging.review_meta import parse_meta
from tests.loop.conftest import FLAWED, MESSAGE, LoopRig

MANUAL_REVIEW = ("--approver", "review.response=manual")


def test_manual_review_approval_with_feedback_reaches_the_coder(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    first = rig.loop("start", "hil", "--coder", "fixer", *MANUAL_REVIEW)
    assert first.code == 4, first.err
    status = rig.status("hil")
    assert (status["phase"], status["stage"], status["iteration"]) == ("review", "response", 1)
    pending = status["pending_approval"]
    assert pending["approver"] == "manual" and pending["file"] == ".review-gate/sessions/hil/1/review.response.md"
    assert "loop approve hil [--complete | --revise]" in first.out
    second = rig.loop("approve", "hil", "--feedback", "keep the 5 second timeout")
    assert second.code == 4, second.err  # the next review waits for the person again
    [revise] = rig.prompts()
    assert MESSAGE in revise and "keep the 5 second timeout" in revise
    # case 3 of update_review: the feedback is added to the review, its verdict kept
    review = parse_meta(rig.session_file("hil", 1, "review.response.md").read_text())
    assert review.verdict == "FAIL" and "keep the 5 second timeout" in review.body
    third = rig.loop("approve", "hil")
    assert third.code == 0, third.err
    assert [r["decision"] for r in rig.decisions("hil")] == ["NO_GO", "GO"]
    assert "keep the 5 second timeout" in rig.decisions("hil")[0]["feedback"]
    # approve wrote the feedback into the review itself: nobody edited it by hand
    assert [r["edited"] for r in rig.decisions("hil")] == [False, False]


def test_a_person_edits_the_review_before_approving_and_the_edit_counts(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "edit", "--coder", "coder", *MANUAL_REVIEW).code == 4
    review = rig.session_file("edit", 1, "review.response.md")
    review.write_text(review.read_text().replace("verdict: FAIL", "verdict: PASS", 1) + "\nA test fixture.\n")
    result = rig.loop("approve", "edit")
    assert result.code == 0, result.err
    assert rig.status("edit")["verdict"] == "GO"
    approved = [e for e in rig.loop("log", "edit", "--format", "json").json()["events"] if e["kind"] == "approved"
                and e["phase"] == "review" and e["stage"] == "response"]
    import hashlib

    assert approved[0]["sha256"] == hashlib.sha256(review.read_bytes()).hexdigest()
    assert rig.prompts() == []


def test_a_malformed_meta_block_exits_2_and_nothing_advances(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "bad", "--coder", "coder", *MANUAL_REVIEW).code == 4
    review = rig.session_file("bad", 1, "review.response.md")
    review.write_text(review.read_text().replace("verdict: FAIL", "verdict: maybe", 1))
    before = rig.loop("log", "bad", "--format", "json").json()["events"]
    result = rig.loop("approve", "bad")
    assert result.code == 2
    assert "line 2: verdict is 'maybe'; it must be PASS or FAIL" in result.err
    assert "fix: start the text with the block" in result.err
    assert rig.loop("log", "bad", "--format", "json").json()["events"] == before
    status = rig.status("bad")
    assert (status["phase"], status["stage"], status["pending_approval"]["waiting_for"]) == \
        ("review", "response", "approval")
    review.write_text("no block at all\n")
    missing = rig.loop("approve", "bad", "--complete")
    assert missing.code == 2 and "no @@@REVIEW_META block: line 1" in missing.err
    assert rig.status("bad")["stage"] == "response"


def test_complete_overrides_a_no_go_and_rewrites_the_verdict(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "force", "--coder", "coder", *MANUAL_REVIEW).code == 4
    result = rig.loop("approve", "force", "--complete")
    assert result.code == 0, result.err
    review = parse_meta(rig.session_file("force", 1, "review.response.md").read_text())
    assert (review.verdict, review.issues_total) == ("PASS", 1)  # the counts are kept
    [record] = rig.decisions("force")
    assert (record["decision"], record["overridden"], record["final"]) == ("GO", True, True)


def test_revise_overrides_a_go_and_replace_rewrites_the_review(rig: LoopRig) -> None:
    rig.repo.write("app.py", "x = 1\n")
    assert rig.loop("start", "more", "--coder", "coder", *MANUAL_REVIEW).code == 4
    result = rig.loop("approve", "more", "--revise", "--replace", "--feedback", "Add a test for x.")
    assert result.code == 4, result.err  # revised, reviewed again, waiting for the person
    review = parse_meta(rig.session_file("more", 1, "review.response.md").read_text())
    assert review.verdict == "FAIL" and review.body == "Add a test for x.\n"
    [revise] = rig.prompts()
    assert "Add a test for x." in revise
    assert rig.decisions("more")[0]["decision"] == "NO_GO"
    assert rig.status("more")["iteration"] == 2


def test_override_flags_are_refused_away_from_the_review(rig: LoopRig, task_file) -> None:
    result = rig.loop("start", "early", "--prompt", str(task_file), "--from", "generate", "--coder", "coder",
                      "--approver", "generate.prompt=manual")
    assert result.code == 4, result.err
    refused = rig.loop("approve", "early", "--complete")
    assert refused.code == 2 and "the session is at generate.prompt" in refused.err


def test_reject_then_retry_makes_the_response_again_with_the_feedback(rig: LoopRig, task_file) -> None:
    assert rig.loop("start", "rr", "--from", "generate", "--prompt", str(task_file), "--coder", "lazy-coder",
                    "--approver", "generate.response=manual").code == 4
    rejected = rig.loop("reject", "rr", "--feedback", "use a session object")
    assert rejected.code == 4, rejected.err
    assert rig.status("rr")["pending_approval"]["waiting_for"] == "rejected"
    assert len(rig.prompts()) == 1  # reject halts; nothing is called
    retried = rig.loop("retry", "rr", "--feedback", "use a session object")
    assert retried.code == 4, retried.err
    _first, second = rig.prompts()
    assert "The previous attempt was rejected" in second and "use a session object" in second
    assert "call 1: wrote app.py" in second
    assert rig.status("rr")["pending_approval"]["waiting_for"] == "approval"


def test_retry_of_a_prompt_renders_it_again_with_the_feedback(rig: LoopRig, task_file) -> None:
    assert rig.loop("start", "rp", "--prompt", str(task_file), "--coder", "coder",
                    "--approver", "plan.prompt=manual").code == 4
    assert rig.loop("retry", "rp", "--feedback", "plan the tests first").code == 4
    prompt = rig.session_file("rp", 1, "plan.prompt.md").read_text()
    assert "## Feedback" in prompt and "plan the tests first" in prompt


def test_cancel_ends_the_session_and_nothing_more_is_accepted(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "stop", "--coder", "coder", *MANUAL_REVIEW).code == 4
    result = rig.loop("cancel", "stop")
    assert result.code == 0, result.err
    assert rig.status("stop")["phase"] == "cancelled"
    again = rig.loop("approve", "stop")
    assert again.code == 2 and "cancelled" in again.err
    # a cancelled task is started again only with --restart; the old files are kept aside
    refused = rig.loop("start", "stop", "--coder", "coder", *MANUAL_REVIEW)
    assert refused.code == 2 and "exists already (cancelled" in refused.err and "--restart" in refused.err
    assert rig.status("stop")["phase"] == "cancelled"
    assert rig.loop("start", "stop", "--restart", "--coder", "coder", *MANUAL_REVIEW).code == 4
    assert any(p.name.startswith("stop~") for p in (rig.repo.root / ".review-gate" / "sessions").iterdir())


def test_a_manual_coder_writes_the_response_then_approves(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "byhand").code == 4  # no coder: revise is written by a person
    status = rig.status("byhand")
    assert (status["phase"], status["stage"]) == ("revise", "response")
    assert status["pending_approval"]["waiting_for"] == "response"
    missing = rig.loop("approve", "byhand")
    assert missing.code == 2 and "revise.response.md does not exist yet" in missing.err
    refused = rig.loop("retry", "byhand", "--feedback", "again")
    assert refused.code == 2 and "written by a person" in refused.err
    rig.repo.write("app.py", FLAWED.replace("verify=False", "verify=True"))
    rig.session_file("byhand", 2, "revise.response.md").write_text("Turned TLS verification back on.\n")
    result = rig.loop("approve", "byhand")
    assert result.code == 0, result.err
    assert [r["decision"] for r in rig.decisions("byhand")] == ["NO_GO", "GO"]
    assert rig.decisions("byhand")[1]["coder_agent"] == "manual"


def test_automated_mode_refuses_a_manual_approver_at_start(rig: LoopRig) -> None:
    result = rig.loop("start", "contra", "--coder", "coder", "--mode", "automated", *MANUAL_REVIEW)
    assert result.code == 2
    assert "automated mode cannot wait for a person" in result.err and "review.response" in result.err
    assert "--approver review.response=manual" in result.err
    assert "no loop session 'contra'" in rig.loop("status", "contra").err


def test_automated_mode_refuses_a_phase_written_by_a_person(rig: LoopRig) -> None:
    result = rig.loop("start", "nocoder", "--mode", "automated")
    assert result.code == 2
    assert "the revise phase's ai is manual" in result.err and "--coder AGENT" in result.err


def test_automated_mode_from_the_config_file_is_refused_too(rig: LoopRig) -> None:
    rig.write_config(loop={"mode": "automated", "phases": {"plan": {"approver": "manual"}}})
    result = rig.loop("start", "cfg", "--from", "plan", "--prompt", "-", "--coder", "coder", stdin=b"a task\n")
    assert result.code == 2
    assert "plan.prompt is manual (review-gate.json /loop/phases/plan/approver/prompt)" in result.err


def test_start_refuses_bad_input_before_anything_runs(rig: LoopRig, task_file) -> None:
    cases = [
        (("start", "../escape"), "task id '../escape'"),
        (("start", "t", "--from", "generate"), "--from generate needs the task"),
        (("start", "t", "--coder", "nobody"), "unknown agent 'nobody'"),
        (("start", "t", "--coder", "security-patterns"), "a pattern agent reviews; it cannot be a loop coder"),
        (("start", "t", "--approver", "deploy=skip"), "expected PHASE[.STAGE]=skip|manual|AGENT"),
        (("start", "t", "--approver", "review.response=nobody"), "review.approver.response: unknown agent"),
        (("start", "t", "--max-iterations", "0"), "must be at least 1"),
        (("start", "t", "--prompt", "missing.md"), "--prompt missing.md: no such file"),
        (("start", "t", "--base", "no-such-branch"), "unknown git ref 'no-such-branch'"),
    ]
    for args, message in cases:
        result = rig.loop(*args)
        assert result.code == 2, args
        assert message in result.err, (args, result.err)
        assert "Traceback" not in result.err
    assert rig.loop("status").out.startswith("no loop sessions")


def test_a_template_with_an_unknown_placeholder_is_a_config_error(rig: LoopRig) -> None:
    (rig.config / "loop").mkdir()
    (rig.config / "loop" / "revise.md").write_text("# Fix\n\n{{findings}}\n\n{{findigns}}\n")
    result = rig.loop("start", "tpl", "--coder", "coder")
    assert result.code == 2
    assert "revise.md: line 5: unknown placeholder {{findigns}}" in result.err


def test_a_config_template_is_used_over_the_built_in_one(rig: LoopRig) -> None:
    (rig.config / "loop").mkdir()
    (rig.config / "loop" / "revise.md").write_text("# Our revise prompt for {{task_id}}\n\n{{findings}}\n")
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "own", "--coder", "coder", "--mode", "automated").code == 0
    assert rig.prompts()[0].startswith("# Our revise prompt for own\n")


def test_an_existing_session_is_not_started_over(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "twice", "--coder", "coder", *MANUAL_REVIEW).code == 4
    again = rig.loop("start", "twice", "--coder", "coder")
    assert again.code == 2 and "exists and is waiting at review.response" in again.err


def test_commands_on_an_unknown_session_exit_2(rig: LoopRig) -> None:
    for args in (("approve", "ghost"), ("reject", "ghost", "--feedback", "x"), ("retry", "ghost", "--feedback", "x"),
                 ("cancel", "ghost"), ("status", "ghost"), ("log", "ghost")):
        result = rig.loop(*args)
        assert result.code == 2 and "no loop session 'ghost'" in result.err, args


def test_the_loop_needs_a_repository(cli, tmp_path) -> None:
    result = cli("loop", "start", "t", cwd=tmp_path)
    assert result.code == 2 and "not inside one" in result.err


def test_loop_log_shows_transitions_with_their_hashes_and_the_decisions(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "audit", "--coder", "fixer", "--mode", "automated").code == 0
    text = rig.loop("log", "audit").out
    assert "review.prompt  approved  by skip" in text
    assert "decision: iteration 1 NO_GO" in text and "decision: iteration 2 GO  (final)" in text
    events = rig.loop("log", "audit", "--format", "json").json()["events"]
    assert all(len(e["sha256"]) == 64 for e in events if e["kind"] == "approved")


def test_the_coder_receives_task_findings_feedback_and_history(rig: LoopRig, task_file) -> None:
    assert rig.loop("start", "all", "--from", "generate", "--prompt", str(task_file), "--coder", "lazy-coder",
                    *MANUAL_REVIEW).code == 4
    assert rig.loop("approve", "all", "--feedback", "first note: keep requests").code == 4
    assert rig.loop("approve", "all", "--feedback", "second note: one line only").code == 4
    _generate, revise_2, revise_3 = rig.prompts()
    for prompt in (revise_2, revise_3):
        assert "Fetch the status page" in prompt  # the task
        assert "app.py:3" in prompt and MESSAGE in prompt and "Fix: Keep verification on" in prompt
    assert "first note: keep requests" in revise_2
    assert "second note: one line only" in revise_3
    history = revise_3.split("## Earlier reviews that said NO_GO", 1)[1]
    assert "Iteration 1: NO_GO" in history and "first note: keep requests" in history
    assert "Earlier reviews" not in revise_2  # nothing earlier than the review it revises


def test_an_unknown_coder_is_refused_with_only_agents_that_can_code(rig: LoopRig) -> None:
    import json

    result = rig.loop("start", "t", "--coder", "nobody")
    assert result.code == 2
    fix = result.err.split("fix:", 1)[1]
    suggested = fix.split("use one of:", 1)[1].split(", or")[0].strip().split(", ")
    kinds = {a["id"]: a["kind"] for a in json.loads((rig.config / "review-agents.json").read_text())["agents"]}
    assert {"coder", "fixer"} <= set(suggested)
    assert {kinds[agent] for agent in suggested} == {"command"}  # llm and pattern agents cannot edit the tree


def test_a_directory_where_the_response_file_belongs_is_named_as_such(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "dir", "--approver", "review.response=manual").code == 4
    review = rig.session_file("dir", 1, "review.response.md")
    review.unlink()
    review.mkdir()
    result = rig.loop("approve", "dir")
    assert result.code == 2
    assert "review.response.md is a directory, not a file" in result.err and "does not exist" not in result.err
    assert "rmdir" in result.err


def test_status_and_log_of_an_unknown_task_are_usage_errors(rig: LoopRig) -> None:
    for command in ("status", "log"):
        result = rig.loop(command, "nosuch")
        assert result.code == 2, command  # docs/loop.md's table: an unknown task is refused
        assert "no loop session 'nosuch'" in result.err and "loop status" in result.err
