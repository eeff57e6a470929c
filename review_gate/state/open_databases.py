"""The files this process has an SQLite connection open to, which nothing else may open.

SQLite's locks are POSIX advisory locks, which belong to the process and the file: closing ANY
descriptor of a database file in this process drops every lock its connections hold on it
(sqlite.org/howtocorrupt.html, 2.2). Another process (a coder running `review-gate hook`
during a loop session) then takes itself for the last connection, checkpoints and deletes the
WAL and -shm under the connection still open here, and the file is corrupt. SQLite defers
the close of its own descriptors while a lock is held; code outside it must never open such
a file at all. So ``state.store`` counts the files it connects to here, by (st_dev, st_ino),
and every reader of the working tree asks ``in_use`` before it opens a file.

Why a registry and not one descriptor kept open for ever: that would pin every database a
long-lived process (the MCP server) ever opened, and readers of the working tree would still
need to know which files to leave alone. An open connection keeps its file's inode allocated,
so a counted (st_dev, st_ino) cannot be reused by another file while it is counted. Pure:
imports nothing of ours.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_OPEN: Counter[tuple[int, int]] = Counter()
_LOCK = threading.RLock()


def identity(path: Path | str) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the file at ``path``, None when there is none (stat opens no descriptor)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def in_use(path: Path | str) -> bool:
    """Whether a connection of this process has the file at ``path`` open: it must not be
    opened (and closed) outside SQLite, which would drop the connection's locks."""
    found = identity(path)
    with _LOCK:
        return found is not None and _OPEN[found] > 0


@contextmanager
def opening() -> Iterator[None]:
    """Held from a file's check to ``add``: no other thread reads a file whose new connection
    may already take locks."""
    with _LOCK:
        yield


def add(found: tuple[int, int] | None) -> None:
    if found is not None:
        with _LOCK:
            _OPEN[found] += 1


def remove(found: tuple[int, int] | None) -> None:
    if found is None:
        return
    with _LOCK:
        _OPEN[found] -= 1
        if _OPEN[found] <= 0:
            del _OPEN[found]
