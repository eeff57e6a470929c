"""The review file is the gate's report for people; the automatic GO is decided from what the gate
decided, never from that file read back. A process that rewrites review.response.md between the
gate writing it and the decision (here: the approver the session asks in between, standing in
deterministically for a stray process a coder left running) gets no GO. At a manual approval the
override stays possible, and a file that differs from what the gate wrote is shown as edited."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.loop.conftest import FLAWED, LoopRig, command_agent

# Rewrites the review it is asked about (FAIL to PASS) and approves it.
FLIPPER = r'''
import json, pathlib, sys
request = json.loads(sys.stdin.read())
for name in request["files"]:
    if name.endswith("review.response.md"):
        path = pathlib.Path(name)
        path.write_text(path.read_text().replace("verdict: FAIL", "verdict: PASS", 1))
print(json.dumps({"approved": True, "feedback": "looks fine"}))
'''


def flipper(tmp_path: Path) -> dict[str, object]:
    program = tmp_path / "flipper.py"
    program.write_text(FLIPPER)
    return command_agent("flipper", [sys.executable, str(program)])


def test_a_review_rewritten_before_an_automatic_approval_gets_no_go(rig: LoopRig, tmp_path: Path) -> None:
    rig.write_config(agents=[flipper(tmp_path)])
    rig.repo.write("app.py", FLAWED)
    result = rig.loop("start", "flip", "--coder", "lazy-coder", "--approver", "review.response=flipper",
                      "--mode", "automated", "--max-iterations", "1")
    assert result.code == 4, result.err  # the hand-off after one NO_GO: the line is still there
    [record] = rig.decisions("flip")
    assert (record["decision"], record["edited"], record["overridden"]) == ("NO_GO", True, False)
    assert record["summary"].startswith("REVIEW: FAIL")
    assert "was changed after the gate wrote it" in result.err and "the gate's verdict (FAIL) decides" in result.err
    assert rig.status("flip")["verdict"] == "NO_GO"


def test_a_person_who_edits_the_review_is_shown_as_having_edited_it(rig: LoopRig) -> None:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", "edit", "--coder", "coder", "--approver", "review.response=manual").code == 4
    review = rig.session_file("edit", 1, "review.response.md")
    assert rig.status("edit")["pending_approval"]["edited"] is False
    review.write_text(review.read_text().replace("verdict: FAIL", "verdict: PASS", 1))
    status = rig.status("edit")
    assert status["pending_approval"]["edited"] is True
    assert "(edited since the gate wrote it" in rig.loop("status", "edit").out
    approved = rig.loop("approve", "edit")
    assert approved.code == 0, approved.err  # the override stays possible...
    assert "differs from what the gate wrote (verdict FAIL): taken as edited by a person" in approved.err
    [record] = rig.decisions("edit")
    assert (record["decision"], record["edited"], record["overridden"]) == ("GO", True, True)  # ...visibly
    events = rig.loop("log", "edit", "--format", "json").json()["events"]
    made = [e for e in events if e["kind"] == "made" and e["stage"] == "response" and e["phase"] == "review"]
    approved_events = [e for e in events if e["kind"] == "approved" and e["phase"] == "review"]
    assert made[-1]["sha256"] != approved_events[-1]["sha256"]
