"""Agents that end together share one sweep for their strays, and every stray still dies.

Each agent used to read every process's environment on its own, in the event loop: twenty
agents ending at once paid twenty sweeps one after another (most of what dispatch added to
twenty one-second programs). Real processes, real marks, real signals."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from review_gate.agents import strays

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="marks are read from /proc")


def marked(mark: str) -> subprocess.Popen[bytes]:
    """A stray that left its agent's process group (setsid) and sleeps, carrying ``mark``."""
    env = {**os.environ, strays.MARK_VAR: mark}
    return subprocess.Popen(["setsid", "sleep", "60"], env=env, stdin=subprocess.DEVNULL)


def test_marks_ended_at_once_are_all_killed() -> None:
    marks = [strays.new_mark() for _ in range(8)]
    processes = [marked(mark) for mark in marks]
    try:
        threads = [threading.Thread(target=strays.kill_marked, args=(mark,)) for mark in marks]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert all(process.wait(timeout=30) == -9 for process in processes)
    finally:
        for process in processes:
            process.kill()
            process.wait()


def test_a_mark_is_never_killed_by_another_agents_sweep() -> None:
    mine, theirs = strays.new_mark(), strays.new_mark()
    kept = marked(theirs)
    gone = marked(mine)
    try:
        assert strays.kill_marked(mine) >= 1
        assert gone.wait(timeout=10) == -9
        assert kept.poll() is None  # the other agent's stray is its own sweep's to end
        assert strays.kill_marked(theirs) >= 1
        assert kept.wait(timeout=10) == -9
    finally:
        for process in (kept, gone):
            process.kill()
            process.wait()


def test_a_stray_caught_forking_or_exec_ing_by_a_sweep_is_killed() -> None:
    """``setsid cmd`` forks when it must and exits; an exec reads with no environment half-way.
    A sweep that listed the processes just before the fork, or read one half-way through its
    exec, saw no mark and stopped: about one stray in fifty lived on under load."""
    for _ in range(100):
        mark = strays.new_mark()
        process = marked(mark)
        try:
            assert strays.kill_marked(mark) >= 1
            needle = f"{strays.MARK_VAR}={mark}".encode()
            deadline = time.monotonic() + 10  # a killed process may take a moment to die under load
            while (alive := [pid for pid in strays._pids() if needle in strays._environ(pid)]) and \
                    time.monotonic() < deadline:
                time.sleep(0.01)
            assert not alive  # a stray the sweep missed sleeps on for a minute
        finally:
            process.kill()
            process.wait()


def test_a_stray_whose_exec_is_slow_under_load_is_still_killed() -> None:
    """A process half-way through an exec reads with no environment. Under a loaded CI machine
    ``setsid sleep`` stayed half-way longer than the sweep's few quick scans, and the sweep
    gave up with nothing killed. Here the window is stretched on purpose: an ``env -i`` shell
    (a live, recent process of ours with a blank environment) that takes on the mark by exec
    0.3 s later."""
    mark = strays.new_mark()
    process = subprocess.Popen(
        ["env", "-i", "sh", "-c", f"sleep 0.3; exec env {strays.MARK_VAR}={mark} sleep 60"],
        stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(0.05)  # the shell is up, its environment empty
        assert strays.kill_marked(mark) >= 1
        assert process.wait(timeout=10) == -9
    finally:
        process.kill()
        process.wait()
