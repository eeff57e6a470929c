"""What the files around the findings look like, read from git when ``refine`` first asks.

The ``.gitattributes`` is the base side's (the trusted side: a change cannot mark its own files
generated or vendored by editing it); the new content is the blob the diff names
(``change.blobs.new_contents``); the base content is the file (or the file it was renamed from) in
the base commit, and for a new file, the file of the same name it copies, if any (a new
version's directory made from the last one: git pairs a copy only with a file the same commit
changes); the owner is the organisation in the URL of the remote ``origin``.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path, PurePosixPath

from review_gate.change import blobs, git
from review_gate.change.blobs import MAX_BYTES, new_contents
from review_gate.errors import GitError
from review_gate.models import FileChange

COPY_SHARE = 0.6  # of a new file's distinct lines another file of its name must hold to be what it copies
MAX_CANDIDATES = 20  # files of the same name compared with a new file, at most
_READ_TOGETHER = 16  # new files whose candidates are read by one git process (each candidate is read whole)


class GitSurroundings:
    """``refine.Surroundings`` over the repository at ``root``, the change based on commit ``base``."""

    def __init__(self, root: Path, base: str | None) -> None:
        self.root = root
        self.base = base
        self._new: dict[str, str] = {}
        self._names: dict[str, list[str]] | None = None

    def gitattributes(self) -> str | None:
        if self.base is None:
            return None
        return _gitattributes(self.root, self.base)

    def new_texts(self, changes: list[FileChange]) -> dict[str, str]:
        wanted = [c for c in changes if c.path not in self._new and c.status != "deleted" and not c.binary
                  and c.unread is None]
        with contextlib.suppress(GitError, OSError):  # unreadable: the hunks are all there is
            self._new.update((c.path, data.decode("utf-8", "replace")) for c, data in new_contents(self.root, wanted)
                             if data is not None)
        return {c.path: self._new[c.path] for c in changes if c.path in self._new}

    def base_texts(self, changes: list[FileChange]) -> dict[str, tuple[str, str]]:
        """Path -> (the file it was before, its base content): itself, the file it was renamed from,
        or for a new file the file of its name it copies."""
        if self.base is None:
            return {}
        sources = {c.path: c.old_path or c.path for c in changes if c.status != "added"}
        sources.update(self._copies([c for c in changes if c.status == "added"]))
        found = self._at(list(set(sources.values())))
        return {path: (source, found[source]) for path, source in sources.items() if source in found}

    def owner(self) -> str | None:
        try:
            return git.origin_owner(self.root)
        except GitError:
            return None

    def base_directories(self, paths: list[str]) -> set[str]:
        """Which of the directories ``paths`` are in the base commit (git keeps no empty directory):
        one ``git cat-file --batch-check`` for them all."""
        names = [p for p in dict.fromkeys(paths) if p and "\n" not in p and "\r" not in p]
        if self.base is None or not git.OBJECT_ID.fullmatch(self.base) or not names:
            return set()
        asked = "".join(f"{self.base}:{p}\n" for p in names).encode("utf-8", "surrogateescape")
        try:
            out = git.run(["cat-file", "--batch-check"], self.root, check=False, stdin=asked).stdout
        except (GitError, OSError):
            return set()
        answers = out.decode("ascii", "replace").splitlines()
        return {path for path, line in zip(names, answers, strict=False) if line.split()[1:2] == ["tree"]}

    def _copies(self, added: list[FileChange]) -> dict[str, str]:
        """New file -> the base file of the same name that holds most of its lines, when one does."""
        if not added:
            return {}
        texts = self.new_texts(added)
        if self._names is None:
            self._names = {}
            try:
                assert self.base is not None
                for _, kind, _, _, raw in git.tree_files(self.root, self.base):
                    if kind == "blob":
                        path = raw.decode("utf-8", "surrogateescape")
                        self._names.setdefault(PurePosixPath(path).name, []).append(path)
            except GitError:
                return {}
        found = {}
        for at in range(0, len(added), _READ_TOGETHER):
            found.update(self._copied(added[at:at + _READ_TOGETHER], texts))
        return found

    def _copied(self, added: list[FileChange], texts: dict[str, str]) -> dict[str, str]:
        """``_copies`` of a few new files, whose candidates are read in one go."""
        assert self._names is not None
        wanted = {change.path: self._names.get(PurePosixPath(change.path).name, [])[:MAX_CANDIDATES]
                  for change in added}
        every = self._at(list(dict.fromkeys(p for candidates in wanted.values() for p in candidates)))
        found = {}
        for change in added:
            candidates = wanted[change.path]
            lines = {line.strip() for line in texts.get(change.path, "").splitlines() if line.strip()}
            if not candidates or not lines:
                continue
            contents = {path: every[path] for path in candidates if path in every}
            shares = {path: len(lines & {line.strip() for line in text.splitlines()}) / len(lines)
                      for path, text in contents.items()}
            best = max(shares, key=lambda path: shares[path], default=None)
            if best is not None and shares[best] >= COPY_SHARE:
                found[change.path] = best
        return found

    def _at(self, paths: list[str]) -> dict[str, str]:
        assert self.base is not None
        return _files_at(self.root, self.base, paths)


def _files_at(root: Path, base: str, paths: list[str]) -> dict[str, str]:
    if not paths:
        return {}
    try:
        found = blobs.files_at(root, base, paths, MAX_BYTES)
    except GitError:
        return {}
    return {path: data.decode("utf-8", "replace") for path, data in found.items()}


@functools.lru_cache(maxsize=8)
def _gitattributes(root: Path, base: str) -> str | None:
    """The base commit's ``.gitattributes``: read once a run, though the plan (``class_moves``) and
    the judging (``refine``) both ask; a commit's files never change."""
    return _files_at(root, base, [".gitattributes"]).get(".gitattributes")
