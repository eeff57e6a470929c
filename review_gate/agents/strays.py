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
from pathlib import Path

MARK_VAR = "REVIEW_GATE_AGENT_MARK"
_PROC = Path("/proc")
_ROUNDS = 5  # scans after a kill, for a process that forked between a scan and its kill


def new_mark() -> str:
    return secrets.token_hex(16)


def kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment carries ``mark``; return how many were killed."""
    if not _PROC.is_dir():
        return 0
    needle = f"{MARK_VAR}={mark}".encode()
    killed = 0
    for _ in range(_ROUNDS):
        found = [pid for pid in _pids() if _carries(pid, needle)]
        killed += sum(_kill(pid, needle) for pid in found)
        if not found:
            break
    return killed


def _pids() -> list[int]:
    me = os.getpid()
    try:
        return [int(entry.name) for entry in os.scandir(_PROC) if entry.name.isdigit() and int(entry.name) != me]
    except OSError:
        return []


def _carries(pid: int, needle: bytes) -> bool:
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()  # empty for a zombie: it is dead already
    except OSError:  # gone, or another user's process
        return False
    return needle in environ.split(b"\0")


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
