"""What a command agent leaves running: found by a mark in its environment, and killed.

Killing the agent's process group ends what it started, except a descendant that called
``setsid()`` (a daemon, a dev server, ``setsid cmd &``): that one is in a group of its own and
would outlive the run, reparented to init. So every agent gets a fresh random mark in its
environment, which its descendants inherit, and when the agent ends every process whose
environment carries that mark is killed. Nothing without the mark is touched: not our git
subprocesses, not another agent's processes, not the user's.

Why not PR_SET_CHILD_SUBREAPER: orphans would then come to us, but so would those of every
program we start (``git gc --detach``), and telling them apart needs the mark anyway; a
subreaper must also reap them, which can steal an exit status that asyncio or subprocess waits
for. A descendant that clears its environment escapes; agents are trusted config, and the
programs they run keep their environment when they daemonize.

Linux only (``/proc``); elsewhere only the process group is ended.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import threading
import time
from pathlib import Path

MARK_VAR = "REVIEW_GATE_AGENT_MARK"
_PROC = Path("/proc")
_ROUNDS = 5  # scans after a kill, for a process that forked between a scan and its kill


def new_mark() -> str:
    return secrets.token_hex(16)


_pending: set[str] = set()  # marks waiting for the next sweep
_pending_lock = threading.Lock()
_sweeping = threading.Lock()  # one sweep of /proc at a time, for every mark pending when it starts


def kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment carries ``mark``; return how many were killed.

    Agents that end together share a sweep: reading every process's environment costs a few
    milliseconds a sweep, and twenty agents that end at once each paying it one after another
    was most of what dispatch added to their run. A sweep takes every mark pending when it
    starts, so a mark added before it started is covered by it."""
    if not _PROC.is_dir():
        return 0
    with _pending_lock:
        _pending.add(mark)
    with _sweeping:
        with _pending_lock:
            if mark not in _pending:
                return 0  # a sweep that started after the mark was added has killed what carried it
            marks = set(_pending)
            _pending.clear()
        return _sweep({f"{MARK_VAR}={m}".encode() for m in marks})


def _sweep(needles: set[bytes]) -> int:
    """Scan until a scan kills nothing and sees nothing new without an environment. A process
    reads with none while it execs (the new image has not set it up yet), once it has exited (a
    zombie) or when it is gone: it may have forked a child carrying the mark after the scan had
    listed the processes (``setsid cmd`` forks and exits), which only the next scan sees."""
    killed = 0
    blank: set[int] = set()
    for _ in range(_ROUNDS):
        found: list[tuple[int, bytes]] = []
        now: set[int] = set()
        for pid in _pids():
            entries = _environ(pid)
            needle = next((entry for entry in entries if entry in needles), None)
            if needle is not None:
                found.append((pid, needle))
            elif entries in ([], [b""]):
                now.add(pid)
        killed += sum(_kill(pid, needle) for pid, needle in found)
        if not found and now <= blank:
            break
        blank |= now
        if not found:
            time.sleep(0.001)  # an exec half-way, or a fork on its way: give it a moment
    return killed


def _pids() -> list[int]:
    me = os.getpid()
    try:
        return [int(entry.name) for entry in os.scandir(_PROC) if entry.name.isdigit() and int(entry.name) != me]
    except OSError:
        return []


def _environ(pid: int) -> list[bytes]:
    try:  # os calls, not pathlib: a sweep reads every process's environment
        fd = os.open(f"/proc/{pid}/environ", os.O_RDONLY)
    except OSError:  # gone, or another user's process
        return []
    try:
        parts = []
        while chunk := os.read(fd, 65536):
            parts.append(chunk)
    except OSError:
        return []
    finally:
        os.close(fd)
    return b"".join(parts).split(b"\0")  # empty for a zombie: it is dead already


def _carries(pid: int, needle: bytes) -> bool:
    return needle in _environ(pid)


def _kill(pid: int, needle: bytes) -> bool:
    """Kill ``pid`` if it still carries the mark. A pidfd pins the process, so a pid reused
    between the check and the signal cannot make us kill a stranger."""
    try:
        pinned = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pinned = None
    try:
        if not _carries(pid, needle):
            return False
        if pinned is not None:
            signal.pidfd_send_signal(pinned, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
        return True
    except (ProcessLookupError, PermissionError):
        return False
    finally:
        if pinned is not None:
            with contextlib.suppress(OSError):
                os.close(pinned)
