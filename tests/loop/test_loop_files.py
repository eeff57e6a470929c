"""The loop's files are read as regular files only and never whole: a FIFO planted where a session
file belongs (by a coder's stray process) never blocks a loop command, and a response file of
many megabytes is refused with a message instead of read into memory. Real processes with a
deadline: a command that blocks fails its test instead of hanging it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.loop.conftest import FLAWED, LoopRig

MAX_CONTENT_BYTES = 32 * 1024 * 1024  # review_gate.loop.files.MAX_CONTENT_BYTES
MANUAL_REVIEW = ("--approver", "review.response=manual")


def run(review_gate_bin: list[str], rig: LoopRig, *args: str) -> subprocess.CompletedProcess[str]:
    """A loop command as its own process; one that blocks is a failure of the test, not a hang."""
    return subprocess.run([*review_gate_bin, "loop", *args, "--config", str(rig.config)], cwd=rig.repo.root,
                          capture_output=True, text=True, timeout=60, check=False)


def waiting_for_the_review(rig: LoopRig, task: str) -> Path:
    rig.repo.write("app.py", FLAWED)
    assert rig.loop("start", task, "--coder", "coder", *MANUAL_REVIEW).code == 4
    return rig.session_file(task, 1, "review.response.md")


def test_a_fifo_at_the_pending_response_blocks_no_command(rig: LoopRig, review_gate_bin: list[str]) -> None:
    review = waiting_for_the_review(rig, "fifo")
    review.unlink()
    os.mkfifo(review)
    status = run(review_gate_bin, rig, "status", "fifo", "--format", "json")
    assert status.returncode == 0, status.stderr
    assert '"sha256": null' in status.stdout  # no file there to hash
    approved = run(review_gate_bin, rig, "approve", "fifo")
    assert approved.returncode == 2, approved.stderr
    assert "review.response.md is not a regular file" in approved.stderr and "fix:" in approved.stderr
    cancelled = run(review_gate_bin, rig, "cancel", "fifo")
    assert cancelled.returncode == 0, cancelled.stderr


def test_a_fifo_among_the_handoff_items_blocks_no_command(rig: LoopRig, review_gate_bin: list[str]) -> None:
    waiting_for_the_review(rig, "queue")
    hil = rig.repo.root / ".review-gate" / "hil"
    hil.mkdir(exist_ok=True)
    os.mkfifo(hil / "planted.json")
    status = run(review_gate_bin, rig, "status")
    assert status.returncode == 0, status.stderr
    assert "loop queue: review.response" in status.stdout


def test_a_response_file_of_many_megabytes_is_refused_not_read_whole(rig: LoopRig) -> None:
    review = waiting_for_the_review(rig, "huge")
    with review.open("r+b") as handle:  # sparse: no disk, and the old code read every byte into memory
        handle.truncate(MAX_CONTENT_BYTES + 1)
    result = rig.loop("approve", "huge")
    assert result.code == 2, result.err
    assert "review.response.md is larger than 32 MiB" in result.err and "fix:" in result.err
    assert "internal error" not in result.err
    assert rig.status("huge")["stage"] == "response"  # nothing advanced
