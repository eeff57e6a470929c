"""A loop session survives its process being SIGKILLed between two steps: every transition is
committed on its own, so the next `loop start TASK` resumes from the last one, doing nothing
twice that was committed and losing nothing. Real processes, real SIGKILL: the coder (or the
approver) kills the `review-gate` process that runs it, at a point the test controls."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.loop.conftest import FLAWED, command_agent, write_config

# Records its prompt; on the call named by argv[2] it writes a half-done app.py and SIGKILLs its
# parent (the review-gate process) before answering; otherwise it writes the finished file.
KILLER_CODER = r'''
import os, pathlib, signal, sys
records, kill_on = pathlib.Path(sys.argv[1]), int(sys.argv[2])
records.mkdir(exist_ok=True)
n = len(list(records.glob("prompt-*.md"))) + 1
(records / f"prompt-{n}.md").write_text(sys.stdin.read())
if n == kill_on:
    pathlib.Path("app.py").write_text(HALF)
    os.kill(os.getppid(), signal.SIGKILL)
    sys.exit(0)
pathlib.Path("app.py").write_text("import requests\n\nr = requests.get(url, timeout=5)\n")
print(f"call {n}: wrote app.py")
'''.replace("HALF", repr(FLAWED))

# Approves, but on its first call SIGKILLs its parent first.
KILLER_APPROVER = r'''
import json, os, pathlib, signal, sys
records = pathlib.Path(sys.argv[1])
records.mkdir(exist_ok=True)
n = len(list(records.glob("request-*.json"))) + 1
(records / f"request-{n}.json").write_text(sys.stdin.read())
if n == 1:
    os.kill(os.getppid(), signal.SIGKILL)
    sys.exit(0)
print(json.dumps({"approved": True, "feedback": ""}))
'''


@pytest.fixture
def crash_config(tmp_path: Path) -> Path:
    scripts = tmp_path / "crash-scripts"
    scripts.mkdir()
    (scripts / "coder.py").write_text(KILLER_CODER)
    (scripts / "approver.py").write_text(KILLER_APPROVER)
    records = tmp_path / "records"
    write_config(tmp_path / "cfg", tmp_path / "unused", tmp_path / "unused-approvals", agents=[
        command_agent("killer", [sys.executable, str(scripts / "coder.py"), str(records), "1"]),
        command_agent("steady", [sys.executable, str(scripts / "coder.py"), str(records), "0"]),
        command_agent("killer-approver", [sys.executable, str(scripts / "approver.py"), str(tmp_path / "approvals")]),
    ])
    (tmp_path / "task.md").write_text("Fetch the status page with a timeout.\n")
    return tmp_path / "cfg"


def run(review_gate_bin: list[str], repo: GitRepo, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*review_gate_bin, "loop", *args, "--config", str(config)], cwd=repo.root,
                          capture_output=True, text=True, timeout=120, check=False)


def status(review_gate_bin: list[str], repo: GitRepo, config: Path, task: str) -> dict[str, Any]:
    result = run(review_gate_bin, repo, config, "status", task, "--format", "json")
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def events(review_gate_bin: list[str], repo: GitRepo, config: Path, task: str) -> list[dict[str, Any]]:
    result = run(review_gate_bin, repo, config, "log", task, "--format", "json")
    assert result.returncode == 0, result.stderr
    found: list[dict[str, Any]] = json.loads(result.stdout)["events"]
    return found


def integrity(repo: GitRepo) -> str:
    with sqlite3.connect(repo.root / ".review-gate" / "state.db") as db:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])


def test_killed_while_the_coder_works_resumes_at_that_step(review_gate_bin: list[str], repo: GitRepo,
                                                           crash_config: Path, tmp_path: Path) -> None:
    task = str(tmp_path / "task.md")
    killed = run(review_gate_bin, repo, crash_config, "start", "crash", "--from", "generate", "--prompt", task,
                 "--coder", "killer", "--mode", "automated")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert integrity(repo) == "ok"
    before = status(review_gate_bin, repo, crash_config, "crash")
    assert (before["phase"], before["stage"], before["step"]) == ("generate", "response", "work")
    assert before["interrupted"] is True
    text = run(review_gate_bin, repo, crash_config, "status", "crash").stdout
    assert "interrupted" in text and "review-gate loop start crash" in text
    refused = run(review_gate_bin, repo, crash_config, "approve", "crash")
    assert refused.returncode == 2 and "interrupted at generate.response" in refused.stderr
    with_flags = run(review_gate_bin, repo, crash_config, "start", "crash", "--coder", "steady")
    assert with_flags.returncode == 2 and "resuming takes no options (--coder)" in with_flags.stderr

    resumed = run(review_gate_bin, repo, crash_config, "start", "crash")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming at generate.response" in resumed.stderr
    prompts = sorted((tmp_path / "records").glob("prompt-*.md"))
    assert len(prompts) == 2 and prompts[0].read_text() == prompts[1].read_text()  # the same step, again
    log = events(review_gate_bin, repo, crash_config, "crash")
    made = [(e["phase"], e["stage"]) for e in log if e["kind"] == "made"]
    assert made.count(("generate", "prompt")) == 1  # committed before the kill: not made again
    assert made.count(("generate", "response")) == 1
    assert status(review_gate_bin, repo, crash_config, "crash")["phase"] == "complete"
    assert integrity(repo) == "ok"


def test_killed_while_the_approver_judges_resumes_without_calling_the_coder_again(
        review_gate_bin: list[str], repo: GitRepo, crash_config: Path, tmp_path: Path) -> None:
    task = str(tmp_path / "task.md")
    killed = run(review_gate_bin, repo, crash_config, "start", "judged", "--from", "generate", "--prompt", task,
                 "--coder", "steady", "--mode", "automated", "--approver", "generate.response=killer-approver")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    before = status(review_gate_bin, repo, crash_config, "judged")
    assert (before["phase"], before["stage"], before["step"], before["interrupted"]) == \
        ("generate", "response", "judge", True)

    resumed = run(review_gate_bin, repo, crash_config, "start", "judged")
    assert resumed.returncode == 0, resumed.stderr
    assert len(list((tmp_path / "records").glob("prompt-*.md"))) == 1  # the response was committed: kept
    assert len(list((tmp_path / "approvals").glob("request-*.json"))) == 2
    log = events(review_gate_bin, repo, crash_config, "judged")
    assert [e["actor"] for e in log if e["kind"] == "approved" and e["phase"] == "generate"
            and e["stage"] == "response"] == ["killer-approver"]
    decisions = [json.loads(line) for line in
                 (repo.root / ".review-gate" / "review-logs" / "judged.jsonl").read_text().splitlines()]
    assert [d["decision"] for d in decisions] == ["GO"]
    assert integrity(repo) == "ok"


# Waits (bounded) until the test creates the file named by argv[2], after saying it started.
WAITING_CODER = r'''
import pathlib, sys, time
started, go = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
sys.stdin.read()
started.write_text("started")
deadline = time.monotonic() + 60
while not go.exists() and time.monotonic() < deadline:
    time.sleep(0.05)
pathlib.Path("app.py").write_text("x = 1\n")
print("done")
'''


def test_a_session_another_live_process_advances_is_not_touched(review_gate_bin: list[str], repo: GitRepo,
                                                                  tmp_path: Path) -> None:
    import time

    program = tmp_path / "waiting.py"
    program.write_text(WAITING_CODER)
    started, go = tmp_path / "started", tmp_path / "go"
    write_config(tmp_path / "cfg", tmp_path / "records", tmp_path / "approvals", agents=[
        command_agent("waiter", [sys.executable, str(program), str(started), str(go)])])
    (tmp_path / "task.md").write_text("a task\n")
    config = tmp_path / "cfg"
    first = subprocess.Popen([*review_gate_bin, "loop", "start", "busy", "--from", "generate", "--prompt",
                              str(tmp_path / "task.md"), "--coder", "waiter", "--mode", "automated", "--config",
                              str(config)], cwd=repo.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        assert started.exists(), first.stderr.read() if first.stderr else ""
        for args in (("cancel", "busy"), ("start", "busy"), ("approve", "busy")):
            refused = run(review_gate_bin, repo, config, *args)
            assert refused.returncode == 2, args
            assert f"is being advanced by process {first.pid}" in refused.stderr, (args, refused.stderr)
        assert status(review_gate_bin, repo, config, "busy")["interrupted"] is False
    finally:
        go.write_text("go")
        _out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert run(review_gate_bin, repo, config, "cancel", "busy").returncode == 2  # complete: nothing to cancel


def test_a_linked_session_folder_is_refused_and_nothing_is_written_through_it(review_gate_bin: list[str],
                                                                               repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo.root / ".review-gate").mkdir()
    (repo.root / ".review-gate" / "sessions").symlink_to(outside)
    write_config(tmp_path / "cfg", tmp_path / "records", tmp_path / "approvals")
    repo.write("app.py", "x = 1\n")
    result = run(review_gate_bin, repo, tmp_path / "cfg", "start", "linked")
    assert result.returncode == 2
    assert "a symbolic link leads it out of the repository" in result.stderr
    assert list(outside.iterdir()) == []
    assert "no loop session 'linked'" in run(review_gate_bin, repo, tmp_path / "cfg", "status", "linked").stderr


# A coder that does what SKILL.md tells agents to: it fixes app.py, then runs review-gate itself
# (argv[2:] is the command) in the same repository, on the same run-state database the loop holds open.
SELF_CHECKING_CODER = r'''
import pathlib, subprocess, sys
app = pathlib.Path("app.py")
app.write_text(app.read_text().replace("verify=False", "verify=True"))
stop = '{"hook_event_name": "Stop", "session_id": "d", "cwd": ".", "stop_hook_active": false}'
subprocess.run([*sys.argv[2:]], input=stop, text=True, capture_output=True, timeout=120, check=False)
pathlib.Path(sys.argv[1]).write_text("ran")
print("fixed the TLS verification")
'''


@pytest.mark.parametrize("command", [["hook", "claude-code"], ["history"]])
def test_a_coder_that_runs_review_gate_itself_leaves_the_run_state_intact(
        review_gate_bin: list[str], repo: GitRepo, tmp_path: Path, command: list[str]) -> None:
    """Opening and closing the database file in the loop's process (to read its header) used to
    drop SQLite's POSIX locks: the coder's review-gate then took itself for the last connection,
    checkpointed and deleted the WAL under the loop, and the file was no database any more."""
    program, ran = tmp_path / "self-checking.py", tmp_path / "ran"
    program.write_text(SELF_CHECKING_CODER)
    write_config(tmp_path / "cfg", tmp_path / "records", tmp_path / "approvals", agents=[
        command_agent("self-checker", [sys.executable, str(program), str(ran), *review_gate_bin, *command])])
    config = tmp_path / "cfg"
    repo.write("app.py", FLAWED)
    result = run(review_gate_bin, repo, config, "start", "selfcheck", "--coder", "self-checker", "--mode",
                 "automated")
    assert ran.exists(), result.stderr
    assert result.returncode == 0, result.stderr
    assert "-> GO" in result.stderr
    assert (repo.root / ".review-gate" / "state.db").read_bytes()[:16] == b"SQLite format 3\x00"
    assert integrity(repo) == "ok"
    later = subprocess.run([*review_gate_bin, "history", "--config", str(config)], cwd=repo.root,
                           capture_output=True, text=True, timeout=120, check=False)
    assert later.returncode == 0, later.stderr
    assert status(review_gate_bin, repo, config, "selfcheck")["phase"] == "complete"


# Fixes app.py, then overwrites the run-state database and its side files with junk.
DAMAGING_CODER = r'''
import pathlib
app = pathlib.Path("app.py")
app.write_text(app.read_text().replace("verify=False", "verify=True"))
for name in ("state.db", "state.db-wal", "state.db-shm"):
    path = pathlib.Path(".review-gate") / name
    if path.exists():
        with open(path, "r+b") as handle:
            size = handle.seek(0, 2)
            handle.seek(0)
            handle.write(b"\xff" * size)
print("fixed")
'''


def test_a_step_that_cannot_write_the_run_state_exits_3_with_a_fix_for_a_damaged_file(
        review_gate_bin: list[str], repo: GitRepo, tmp_path: Path) -> None:
    program = tmp_path / "damaging.py"
    program.write_text(DAMAGING_CODER)
    write_config(tmp_path / "cfg", tmp_path / "records", tmp_path / "approvals", agents=[
        command_agent("damager", [sys.executable, str(program)])])
    repo.write("app.py", FLAWED)
    result = run(review_gate_bin, repo, tmp_path / "cfg", "start", "damaged", "--coder", "damager", "--mode",
                 "automated")
    assert result.returncode == 3, result.stderr  # a failed step (loop.md), not a refusal
    assert "loop session 'damaged' stopped: cannot write the run state" in result.stderr
    assert "the file is damaged: move it" in result.stderr
    assert "disk space" not in result.stderr and "internal error" not in result.stderr


# argv[1]: a folder to count calls in. The first call writes its pid, starts a helper in a session
# of its own (setsid: out of reach of its process group and of PR_SET_PDEATHSIG) that writes its
# pid too, and both wait (bounded) for a file that never comes, then would edit app.py. A later
# call fixes app.py at once.
LINGERING_CODER = r'''
import os, pathlib, subprocess, sys, time
records = pathlib.Path(sys.argv[1])
records.mkdir(exist_ok=True)
n = len(list(records.glob("call-*"))) + 1
(records / f"call-{n}").write_text(sys.stdin.read())
if n == 1:
    helper = ("import pathlib, sys, time\n"
              "d = time.monotonic() + 60\n"
              "while time.monotonic() < d and not pathlib.Path(sys.argv[1], 'never').exists(): time.sleep(0.05)\n"
              "pathlib.Path('app.py').write_text('edited by a stray helper')\n")
    child = subprocess.Popen([sys.executable, "-c", helper, str(records)], start_new_session=True)
    (records / "helper.pid").write_text(str(child.pid))
    (records / "coder.pid").write_text(str(os.getpid()))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
    pathlib.Path("app.py").write_text("edited by a stray coder")
    sys.exit(0)
app = pathlib.Path("app.py")
app.write_text(app.read_text().replace("verify=False", "verify=True"))
print("fixed")
'''


def test_a_killed_loop_takes_its_coder_with_it_and_resuming_ends_what_the_coder_left(
        review_gate_bin: list[str], repo: GitRepo, tmp_path: Path) -> None:
    from tests.agents.test_command import read_pid, wait_gone

    program, records = tmp_path / "lingering.py", tmp_path / "records"
    program.write_text(LINGERING_CODER)
    write_config(tmp_path / "cfg", tmp_path / "unused", tmp_path / "unused-approvals", agents=[
        command_agent("lingerer", [sys.executable, str(program), str(records)])])
    config = tmp_path / "cfg"
    repo.write("app.py", FLAWED)
    loop = subprocess.Popen([*review_gate_bin, "loop", "start", "orphan", "--coder", "lingerer", "--mode",
                             "automated", "--config", str(config)], cwd=repo.root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    coder = helper = 0
    try:
        coder = read_pid(records / "coder.pid", within=60)
        helper = read_pid(records / "helper.pid", within=10)
        loop.kill()
        loop.wait(timeout=30)
        assert wait_gone(coder, within=10), "the coder outlived the loop that started it"
        assert not wait_gone(helper, within=0.2)  # in a session of its own: only its mark finds it
        resumed = run(review_gate_bin, repo, config, "start", "orphan")
        assert resumed.returncode == 0, resumed.stderr
        assert wait_gone(helper, within=10), "resuming left the earlier coder's helper running"
        assert (repo.root / "app.py").read_text() == FLAWED.replace("verify=False", "verify=True")
        assert len(list(records.glob("call-*"))) == 2
    finally:
        for pid in (coder, helper):
            if pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if loop.poll() is None:
            loop.kill()
            loop.wait(timeout=30)
