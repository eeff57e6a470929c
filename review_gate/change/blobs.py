"""The new content of a changed file, never taken from a path on trust.

It is the blob whose id the diff carries: read from git's object store, or, for a working-tree
change whose blob git never wrote, from the file at that path when it is a regular file inside
the repository (through no symbolic link out of it), no larger than the limit, and its git blob
id is the one the diff names. Anything else is None: the caller shows the diff as it is.

The API is ``new_contents`` alone (used by ``llm.context`` to widen hunks and by ``shebang`` to
read a script's first line); everything else here is private.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from review_gate.change import git
from review_gate.change.own_files import blob_ids
from review_gate.errors import GitError
from review_gate.models import FileChange

MAX_BYTES = 1_000_000  # new content larger than this is not read
ID_LENGTHS = (40, 64)  # a full SHA-1 or SHA-256 blob id: an abbreviation is not a content key

__all__ = ["MAX_BYTES", "new_contents"]


def new_contents(root: Path, changes: Iterable[FileChange],
                 limit: int = MAX_BYTES) -> Iterable[tuple[FileChange, bytes | None]]:
    """Each change with its new content of at most ``limit`` bytes, None where it cannot be had
    and trusted (no full blob id, larger than ``limit``, not the blob the diff names, not a
    regular file inside ``root``). Every change is yielded once, in no promised order; changes
    with the same blob id share one read."""
    by_id: dict[str, list[FileChange]] = {}
    for change in changes:
        by_id.setdefault(change.content_sha or "", []).append(change)
    usable = {i: c for i, c in by_id.items() if len(i) in ID_LENGTHS}
    seen: set[str] = set()
    try:
        for name, data in git.blobs(root, list(usable), limit):
            if _is_blob(data, name):
                seen.add(name)
                for change in usable[name]:
                    yield change, data
    except GitError:
        pass  # no git on PATH: the working tree may still serve
    for name, group in by_id.items():
        if name in seen:
            continue
        for change in group:
            yield change, _worktree_file(root, change.path, name, limit) if name in usable else None


def _is_blob(data: bytes, name: str) -> bool:
    """``data`` has the git blob id ``name``."""
    return name.lower() in blob_ids(data)


def _worktree_file(root: Path, path: str, blob_id: str, limit: int) -> bytes | None:
    """The file at ``path`` when it is a regular file inside ``root`` (through no symlink out),
    at most ``limit`` bytes, whose git blob id is ``blob_id``; else None."""
    try:
        base = root.resolve()
        target = (base / path).resolve()
        target.relative_to(base)
    except (OSError, ValueError, RuntimeError):
        return None
    # O_NONBLOCK: a FIFO swapped in after the check must not hang the run; fstat refuses it
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(target, flags)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                return None
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit and _is_blob(data, blob_id) else None
