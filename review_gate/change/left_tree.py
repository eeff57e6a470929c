"""The tree a change leaves, read to follow its symbolic links: the head commit's (a range), else
the working tree's.

A link may lead through other links (``app/t2 -> t``, ``app/t -> ../tests``; ``app/ev.py ->
fx/evil.py`` where ``app/fx -> ../tests/fixtures``): where it really points is known only once
every link on the way is followed, as the operating system follows them when the code is run.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from pathlib import Path

from review_gate.change import blobs, git

FILE_MODES = ("100644", "100755")
MAX_HOPS = 16  # links followed on one path before it is taken for a loop
_LINK_TEXT = 4096  # a link's blob is its target path: nothing longer is one


class LeftTree:
    """``root``'s tree as the change leaves it: commit ``head``'s, else the working tree's. Read
    from git once, when first asked."""

    def __init__(self, root: Path, head: str | None) -> None:
        self.root = root
        self.head = head
        self._links: dict[str, str] | None = None
        self._files: list[str] | None = None

    def resolve(self, path: str) -> str | None:
        """``path`` (repository-relative) with every link on it followed; None when it leads out of
        the repository, to its top, or round a loop."""
        if self.head is None:
            top = self.root.resolve()
            found = (self.root / path).resolve()
            if found == top or not found.is_relative_to(top):
                return None
            return found.relative_to(top).as_posix()
        links = self._read()[0]
        for _ in range(MAX_HOPS):
            parts = path.split("/")
            for at in range(1, len(parts) + 1):
                target = links.get("/".join(parts[:at]))
                if target is None:
                    continue
                if target.startswith("/"):
                    return None
                path = posixpath.normpath(posixpath.join(posixpath.dirname("/".join(parts[:at])), target, *parts[at:]))
                if path in (".", "..") or path.startswith("../"):
                    return None
                break
            else:
                return path
        return None

    def files_under(self, directory: str) -> list[str]:
        """The regular files under ``directory`` (a path with no link on it), reached through no
        link; empty when it is not a directory."""
        if self.head is not None:
            prefix = directory + "/"
            return [path for path in self._read()[1] if path.startswith(prefix)]
        top = self.root.resolve()
        start = (self.root / directory).resolve()
        if not start.is_relative_to(top) or not start.is_dir():
            return []
        return [path.relative_to(top).as_posix() for path in sorted(start.rglob("*"))
                if path.is_file() and not path.is_symlink()
                and not any(p.is_symlink() for p in path.parents if p.is_relative_to(start))]

    def contents(self, paths: Sequence[str]) -> dict[str, bytes]:
        """The content of each of ``paths`` (with no link on them) that is a regular file of at most
        ``blobs.MAX_BYTES``."""
        if self.head is not None:
            return blobs.files_at(self.root, self.head, sorted(set(paths)), blobs.MAX_BYTES)
        out = {}
        for path in paths:
            file = self.root / path
            if file.is_file() and not file.is_symlink() and file.stat().st_size <= blobs.MAX_BYTES:
                out[path] = file.read_bytes()
        return out

    def _read(self) -> tuple[dict[str, str], list[str]]:
        if self._links is None or self._files is None:
            assert self.head is not None
            entries = git.tree_files(self.root, self.head)
            named = {raw.decode("utf-8", "surrogateescape"): oid for mode, _, oid, _, raw in entries
                     if mode == git.LINK_MODE}
            texts = dict(blobs.read(self.root, list(named.values()), _LINK_TEXT))
            self._links = {path: texts[oid].decode("utf-8", "surrogateescape")
                           for path, oid in named.items() if oid in texts}
            self._files = [raw.decode("utf-8", "surrogateescape") for mode, _, _, _, raw in entries
                           if mode in FILE_MODES]
        return self._links, self._files
