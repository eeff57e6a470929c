"""SIGTERM and the processes command agents start: real CLI processes, real signals.

A CI cancel, ``timeout`` or ``docker stop`` sends SIGTERM. The gate must then do what Ctrl-C
does: kill its agents (and what they started, even behind setsid()), mark the run, exit 143.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.hostile.helpers import WRITE_PID, command_agent, read_pid, script, wait_gone, write_config

# The agent forks a grandchild that starts a session of its own, as a daemon does, and sleeps.
# ``daemon_stdio``: the grandchild lets go of the agent's pipes; otherwise it keeps them open.
AGENT = """\
    import json, os, sys, time
""" + WRITE_PID + """\

    sys.stdin.read()
    out = sys.argv[1]
    child = os.fork()
    if child == 0:
        os.setsid()
        if sys.argv[3] == "daemon_stdio":
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
        write_pid(os.path.join(out, "grandchild.pid"))
        time.sleep(300)
        os._exit(0)
    # The grandchild first tells its pid, then the agent goes on: the gate may kill the
    # grandchild as soon as the agent is done, and the test must know whom to look for.
    for _ in range(1000):
        if os.path.exists(os.path.join(out, "grandchild.pid")):
            break
        time.sleep(0.01)
    write_pid(os.path.join(out, "agent.pid"))
    if sys.argv[2] == "hang":
        time.sleep(300)
    print(json.dumps({"findings": []}))
"""


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids a test saw; whatever still runs at the end is killed, so a failure leaks nothing."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def setup(repo: GitRepo, tmp_path: Path, behaviour: str, stdio: str) -> tuple[Path, Path]:
    out = tmp_path / "pids"
    out.mkdir()
    program = script(tmp_path, "agent.py", AGENT)
    cfg = write_config(tmp_path, [command_agent("spawner", program, str(out), behaviour, stdio, timeout_s=60)])
    repo.write("app.py", "x = 1\n")
    return cfg, out


def run_rows(repo: GitRepo) -> tuple[list[str], list[str], set[str]]:
    with sqlite3.connect(repo.root / ".review-gate" / "state.db") as db:
        runs = [row[0] for row in db.execute("SELECT status FROM review_runs")]
        pairs = [row[0] for row in db.execute("SELECT status FROM review_pairs")]
        reasons = {row[0] for row in db.execute("SELECT reason FROM review_pairs WHERE status = 'missing'")}
    return runs, pairs, reasons


def test_sigterm_kills_the_agents_and_their_setsid_grandchildren_and_marks_the_run(
        review_gate_bin: list[str], repo: GitRepo, tmp_path: Path, leftovers: list[int]) -> None:
    cfg, out = setup(repo, tmp_path, "hang", "daemon_stdio")
    gate = subprocess.Popen([*review_gate_bin, "--config", str(cfg), "--format", "json"], cwd=repo.root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        agent = read_pid(out / "agent.pid")
        grandchild = read_pid(out / "grandchild.pid")
        leftovers += [agent, grandchild]
        gate.send_signal(signal.SIGTERM)
        _, err = gate.communicate(timeout=30)
    finally:
        if gate.poll() is None:
            gate.kill()
            gate.wait()
    assert gate.returncode == 143, err
    assert "terminated" in err and "Traceback" not in err
    assert wait_gone(agent), "the agent outlived the run"
    assert wait_gone(grandchild), "the agent's setsid() grandchild outlived the run"
    runs, pairs, reasons = run_rows(repo)
    assert runs == ["failed"]
    assert pairs and "pending" not in pairs and "missing" in pairs
    assert reasons == {"run failed: interrupted (SIGINT or SIGTERM)"}


@pytest.mark.parametrize("stdio", ["daemon_stdio", "keeps_pipes"])
def test_a_finished_agent_leaves_no_setsid_grandchild_behind(
        review_gate_bin: list[str], repo: GitRepo, tmp_path: Path, leftovers: list[int], stdio: str) -> None:
    # keeps_pipes: the grandchild holds the agent's stdout open; before, the run then waited for
    # EOF until the agent's deadline and called it timed_out.
    cfg, out = setup(repo, tmp_path, "exit", stdio)
    started = time.monotonic()
    try:
        done = subprocess.run([*review_gate_bin, "--config", str(cfg), "--format", "json"], cwd=repo.root,
                              capture_output=True, text=True, timeout=50, check=False)
    finally:
        for name in ("agent.pid", "grandchild.pid"):
            if (out / name).exists():
                leftovers.append(int((out / name).read_text()))
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 50
    assert '"status": "completed"' in done.stdout
    assert wait_gone(read_pid(out / "grandchild.pid")), "the agent's setsid() grandchild outlived the run"
    runs, _, _ = run_rows(repo)
    assert runs == ["completed"]
