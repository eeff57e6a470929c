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
_EXEC_WAIT_S = 2.0  # how long a sweep waits for a process of ours that is still half-way through an exec
_RECENT_S = 5.0  # a process this young with no environment is taken as half-way through its first exec
_KTHREAD = 0x00200000  # PF_KTHREAD in /proc/PID/stat's flags: kernel threads never have an environment


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
    listed the processes (``setsid cmd`` forks and exits), which only the next scan sees.

    A young process of ours still half-way through its exec is waited for (up to
    ``_EXEC_WAIT_S``): on a loaded machine the window outlasted a few quick scans, and a stray
    caught in it lived on."""
    killed = 0
    blank: set[int] = set()
    settled: set[int] = set()  # blank, and never half-way through an exec: kernel threads, others', old ones
    give_up = time.monotonic() + _EXEC_WAIT_S
    rounds = 0
    while True:
        rounds += 1
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
        settled.update(pid for pid, _ in found)  # killed: dying reads blank too, and is no exec
        execing = False
        if not found and time.monotonic() < give_up:
            for pid in now - settled:
                if _young_and_execing(pid):
                    execing = True
                    break
                settled.add(pid)
        if not found and now <= blank and not execing:
            break
        if rounds >= _ROUNDS and not execing:
            break
        blank |= now
        if not found:
            time.sleep(0.001 if rounds < _ROUNDS else 0.01)  # an exec half-way, or a fork on its way
    return killed


def _young_and_execing(pid: int) -> bool:
    """Whether ``pid``, read with no environment, is a live young process of ours (so half-way
    through an exec), not a zombie, a kernel thread, another user's process, or an old one."""
    try:
        if os.stat(f"/proc/{pid}").st_uid != os.getuid():
            return False
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        with open("/proc/uptime", "rb") as handle:
            uptime = float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return False
    fields = stat[stat.rfind(b")") + 2:].split()  # the name in parentheses may hold spaces
    try:
        state, flags, started = fields[0], int(fields[6]), int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError):
        return False
    return state not in (b"Z", b"X") and not flags & _KTHREAD and uptime - started < _RECENT_S


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
