"""The files an llm reviewer's tools reach (docs/security.md): those of the reviewed revision
(``Revision``), which git lists there: a commit's tree read from git's objects (a range, a push),
the index's blobs (staged changes), or the working tree's tracked files and the untracked ones git
does not ignore (every other review). Never ``.git``; never a path that is absolute, holds ``..``
or a NUL; never a private path (``private_paths`` in review-gate.json, and the run state); never a
symbolic link (reported as one, never followed: in the working tree each directory on the way is
opened without following links); never a file over MAX_FILE_BYTES (refused, never read whole).

    >>> Revision(root="/repo", commit="0123456789abcdef0123").describe()
    'commit 0123456789ab'
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from review_gate.text.globs import Globs

MAX_FILE_BYTES = 1_000_000  # a file larger than this is refused, never read

MAX_PATH = 1_024


@dataclass(frozen=True)
class Revision:
    """Which files the tools read: ``commit``'s (git objects), the index's (``index``), else the
    working tree's; never those ``private`` (gitignore-style globs) selects."""

    root: str
    commit: str | None = None
    index: bool = False
    private: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.commit:
            return f"commit {self.commit[:12]}"
        return "the index: staged files" if self.index else "the working tree"

    def where(self) -> str:
        if self.commit:
            return f"at commit {self.commit[:12]}"
        return "in the index (the staged files)" if self.index else "in the working tree"


class Refused(Exception):
    """A call that is answered with an error (the reason is what the model and the record get)."""


class Stopped(Exception):
    """The call's agent was cancelled: its worker thread ends here."""


@dataclass(frozen=True)
class Entry:
    """A path git lists at the revision: a regular file, a symbolic link or a submodule. In the
    working tree what the path is on disk is only known when it is opened."""

    kind: Literal["file", "link", "submodule"]
    blob: str | None = None  # its object id (commit and index)
    size: int | None = None  # its size when git told it


def clean_path(path: Any) -> str:
    """``path`` as a repository-relative POSIX path, or Refused saying why it cannot be one.

    >>> clean_path("./src//app.py")
    'src/app.py'
    """
    if not isinstance(path, str) or not path.strip():
        raise Refused("path must be a non-empty string, relative to the repository root")
    if "\0" in path:
        raise Refused("a path may not hold a NUL character")
    if len(path) > MAX_PATH:
        raise Refused(f"the path is longer than {MAX_PATH} characters")
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":" and path[0].isalpha()):
        raise Refused("absolute paths are refused: give a path relative to the repository root")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise Refused("'..' is refused: the tools read only inside the repository")
    if any(part.casefold() == ".git" for part in parts):
        raise Refused(".git is never read")
    if not parts:
        raise Refused("name a file, not the repository root")
    return "/".join(parts)


class Files:
    """The files git lists at the revision, private ones left out, and their contents."""

    def __init__(self, revision: Revision) -> None:
        from review_gate.text.globs import Globs

        self.revision = revision
        self.root = Path(revision.root)
        self.private: Globs | None = Globs(revision.private) if revision.private else None
        self.entries = {path: entry for path, entry in self._list() if not self.hidden(path)}

    def hidden(self, path: str) -> bool:
        parts = path.split("/")
        return any(p.casefold() == ".git" for p in parts) or (self.private is not None and self.private.match(path))

    def _list(self) -> Iterator[tuple[str, Entry]]:
        from review_gate.change import blobs, git

        if self.revision.commit:
            for mode, kind, oid, size, raw in git.tree_files(self.root, self.revision.commit):
                path = _decoded(raw)
                if path is not None:
                    yield path, _entry(mode, kind, oid, size)
        elif self.revision.index:
            listed = [(mode, oid, _decoded(raw)) for mode, oid, raw in git.index_files(self.root)]
            sizes = blobs.sizes(self.root, [oid for mode, oid, _ in listed if mode not in (git.LINK_MODE, "160000")])
            for mode, oid, path in listed:
                if path is not None:
                    yield path, _entry(mode, "blob" if mode != "160000" else "commit", oid, sizes.get(oid))
        else:
            for raw in git.ls_files(self.root):
                path = _decoded(raw)
                if path is not None:
                    yield path, Entry("file")

    def entry(self, path: str) -> Entry:
        """The entry at ``path``, or Refused: private, a directory, not there."""
        if self.private is not None and self.private.match(path):
            raise Refused(f"{path} is private: its content is never shown")
        found = self.entries.get(path)
        if found is not None:
            return found
        prefix = path + "/"
        if any(p.startswith(prefix) for p in self.entries):
            raise Refused(f"{path} is a directory: list its files with list_files")
        raise Refused(f"{path} is not a file {self.revision.where()}")

    def kind(self, path: str) -> str:
        """What ``path`` is; in the working tree looked at on disk (a link is never followed)."""
        entry = self.entries[path]
        if entry.blob is not None:
            return entry.kind
        try:
            return "link" if stat.S_ISLNK(os.lstat(self.root / path).st_mode) else "file"
        except OSError:
            return "file"

    def content(self, path: str, entry: Entry) -> bytes:
        """The bytes of the file at ``path``, or Refused: a link, a submodule, too large."""
        if entry.kind == "link":
            raise Refused(f"{path} is a symbolic link: links are never followed")
        if entry.kind == "submodule":
            raise Refused(f"{path} is a submodule: its files are not part of this repository")
        if entry.size is not None and entry.size > MAX_FILE_BYTES:
            raise Refused(f"{path} is {entry.size} bytes, over the {MAX_FILE_BYTES}-byte limit: use grep")
        if entry.blob is None:
            return _read_confined(self.root, path)
        from review_gate.change import blobs

        for _, data in blobs.read(self.root, [entry.blob], MAX_FILE_BYTES):
            return data
        raise Refused(f"{path} could not be read from git's objects")

    def contents(self, paths: list[str], stop: threading.Event) -> Iterator[tuple[str, bytes | None]]:
        """(path, bytes) of each file, None for one that cannot be read (a link, too large...),
        fetched from git's objects in groups."""
        from review_gate.change import blobs

        if self.revision.commit is None and not self.revision.index:
            for path in paths:
                _check(stop)
                try:
                    yield path, _read_confined(self.root, path)
                except Refused:
                    yield path, None
            return
        wanted: dict[str, list[str]] = {}
        for path in paths:
            entry = self.entries[path]
            if entry.kind == "file" and entry.blob and (entry.size is None or entry.size <= MAX_FILE_BYTES):
                wanted.setdefault(entry.blob, []).append(path)
            else:
                yield path, None
        for blob, data in blobs.read(self.root, list(wanted), MAX_FILE_BYTES):  # read a group at a time
            _check(stop)
            for path in wanted.get(blob, ()):
                yield path, data


def _decoded(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None  # a path that is not UTF-8 cannot be named back to us


def _entry(mode: str, kind: str, oid: str, size: int | None) -> Entry:
    from review_gate.change.git import LINK_MODE

    if mode == LINK_MODE:
        return Entry("link", oid, size)
    if mode == "160000" or kind == "commit":
        return Entry("submodule", oid, None)
    return Entry("file", oid, size)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _read_confined(root: Path, path: str) -> bytes:
    """The working-tree file at ``path``, opened one directory at a time without following a
    link (a link on the way or at the end is refused); a regular file of at most MAX_FILE_BYTES."""
    try:
        return _open_confined(root, path)
    except OSError as exc:
        raise Refused(f"{path} cannot be read: {exc.strerror}") from None


def _open_confined(root: Path, path: str) -> bytes:
    parts = path.split("/")
    fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            try:
                info = os.lstat(part, dir_fd=fd)
            except (FileNotFoundError, NotADirectoryError):
                raise Refused(f"{path} is not in the working tree") from None
            if stat.S_ISLNK(info.st_mode):
                where = path if last else "/".join(parts[:index + 1])
                raise Refused(f"{where} is a symbolic link: links are never followed")
            flags = os.O_RDONLY | _NOFOLLOW | (_NONBLOCK if last else _DIRECTORY)
            try:
                opened = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise Refused(f"{path}: a symbolic link is on its way: links are never followed") from None
                raise Refused(f"{path} cannot be read: {exc.strerror}") from None
            os.close(fd)
            fd = opened
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{path} is not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise Refused(f"{path} is {info.st_size} bytes, over the {MAX_FILE_BYTES}-byte limit: use grep")
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise Refused(f"{path} is over the {MAX_FILE_BYTES}-byte limit: use grep")
        return data
    finally:
        if fd >= 0:
            os.close(fd)


def _check(stop: threading.Event) -> None:
    if stop.is_set():
        raise Stopped
