"""Blob content: every read of what git's object store holds, and the new content of a changed
file, never taken from a path on trust.

git's blobs are read by full object id only (``read``, ``head``, ``sizes``: an id from a diff is
never a revision expression), or by path in one commit (``file_at``, ``files_at``), through
``git cat-file``. ``new_contents`` gives a changed file's new content: the blob whose id the diff
carries, read from git's object store, or, for a working-tree change whose blob git never wrote,
the file at that path when it is a regular file inside the repository (through no symbolic link
out of it), no larger than the limit, and its git blob id is the one the diff names. Anything
else is None: the caller shows the diff as it is. (``llm.context`` widens hunks with it,
``shebang`` reads a script's first line.) What the bytes are is ``text_or_binary``'s question.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from review_gate.change import git
from review_gate.errors import GitError
from review_gate.models import FileChange

MAX_BYTES = 1_000_000  # new content larger than this is not read
BLOB_GROUP = 8_000_000  # bytes of blobs one `git cat-file --batch` reads at most
ID_LENGTHS = (40, 64)  # a full SHA-1 or SHA-256 blob id: an abbreviation is not a content key

__all__ = ["MAX_BYTES", "blob_ids", "file_at", "files_at", "head", "new_contents", "read", "read_sized", "sizes"]


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
        for name, data in read(root, list(usable), limit):
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


def blob_ids(data: bytes) -> list[str]:
    """The git blob ids ``data`` has in a SHA-1 and in a SHA-256 repository."""
    header = b"blob %d\0" % len(data)
    return [hashlib.sha1(header + data, usedforsecurity=False).hexdigest(), hashlib.sha256(header + data).hexdigest()]


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


def file_at(root: Path, commit: str, path: str) -> bytes | None:
    """The content of ``path`` in ``commit`` (a commit or tree id), None when it has no such file."""
    result = git.run(["cat-file", "blob", f"{commit}:{path}"], root, check=False)
    return result.stdout if result.returncode == 0 else None


def read(root: Path, ids: Sequence[str], limit: int) -> Iterator[tuple[str, bytes]]:
    """(id, content) of each blob named in ``ids`` that the object store holds in at most ``limit``
    bytes; other names (not a full hex object id, missing, not a blob, larger) are left out.

    ``ids`` come from a diff, so only full object ids are passed to git, never a revision
    expression such as ``HEAD:secret`` nor an abbreviation that could name another object.
    One process asks the sizes, then one per BLOB_GROUP bytes reads the contents, so memory
    stays bounded whatever the count.
    """
    yield from read_sized(root, {name: size for name, size in sizes(root, ids).items() if size <= limit})


def read_sized(root: Path, sized: dict[str, int]) -> Iterator[tuple[str, bytes]]:
    """``read`` of blobs whose sizes ``sizes`` told already (full object id -> size): their
    contents, one process per BLOB_GROUP bytes, with no second process to ask the sizes again."""
    group = [(name, size) for name, size in sized.items() if git.OBJECT_ID.fullmatch(name)]
    start = 0
    while start < len(group):
        end, total = start, 0
        while end < len(group) and (end == start or total + group[end][1] <= BLOB_GROUP):
            total += group[end][1]
            end += 1
        yield from _read_batch(root, [name for name, _ in group[start:end]])
        start = end


def _read_batch(root: Path, ids: list[str]) -> Iterator[tuple[str, bytes]]:
    result = git.run(["cat-file", "--batch"], root, check=False, stdin="".join(f"{i}\n" for i in ids).encode())
    out, at = result.stdout, 0
    for full in ids:
        end = out.find(b"\n", at)
        parts = out[at:end].split() if end >= 0 else []
        if len(parts) != 3 or parts[0].decode("ascii", "replace") != full or not parts[2].isdigit():
            return  # a short or unexpected answer: what follows cannot be trusted
        size = int(parts[2])
        yield full, out[end + 1:end + 1 + size]
        at = end + 1 + size + 1


def head(root: Path, object_id: str, size: int) -> bytes:
    """The first ``size`` bytes of a blob (a full object id), without reading the rest of it;
    empty when there is no such blob."""
    if not git.OBJECT_ID.fullmatch(object_id) or shutil.which("git") is None:
        return b""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    with subprocess.Popen(["git", "cat-file", "blob", object_id], cwd=root, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as process:
        assert process.stdout is not None
        head = process.stdout.read(size)
        process.kill()
    return head


def sizes(root: Path, ids: Sequence[str]) -> dict[str, int]:
    """The size of each blob of ``ids`` (full object ids only) the object store holds."""
    names = [name for name in dict.fromkeys(ids) if git.OBJECT_ID.fullmatch(name)]
    if not names:
        return {}
    result = git.run(["cat-file", "--batch-check"], root, check=False, stdin="".join(f"{n}\n" for n in names).encode())
    if result.returncode != 0:
        return {}
    found = {}
    for name, line in zip(names, result.stdout.decode("ascii", "replace").splitlines(), strict=False):
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob" and parts[0] == name and parts[2].isdigit():
            found[name] = int(parts[2])
    return found


def files_at(root: Path, commit: str, paths: Sequence[str], limit: int) -> dict[str, bytes]:
    """The content of each of ``paths`` in ``commit`` (a full commit id) that is a blob of at most
    ``limit`` bytes, read by one ``git cat-file --batch``; paths it lacks are left out. A name
    holding a newline cannot be asked this way and is left out too."""
    if not git.OBJECT_ID.fullmatch(commit):
        return {}
    names = [p for p in dict.fromkeys(paths) if "\n" not in p and "\r" not in p]
    if not names:
        return {}
    asked = "".join(f"{commit}:{p}\n" for p in names).encode("utf-8", "surrogateescape")
    out = git.run(["cat-file", "--batch"], root, check=False, stdin=asked).stdout
    found, at = {}, 0
    for path in names:
        end = out.find(b"\n", at)
        if end < 0:
            break
        parts = out[at:end].split()
        if len(parts) != 3 or not parts[2].isdigit():  # "<name> missing", or an answer not understood
            at = end + 1
            if not parts or parts[-1] != b"missing":
                break
            continue
        size = int(parts[2])
        if parts[1] == b"blob" and size <= limit:
            found[path] = out[end + 1:end + 1 + size]
        at = end + 1 + size + 1
    return found
