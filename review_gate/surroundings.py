"""What the files around the findings look like, read from git when ``refine`` first asks.

The ``.gitattributes`` is the base side's (the trusted side: a change cannot mark its own files
generated or vendored by editing it); the new content is the blob the diff names
(``contents.new_contents``); the base content is the file (or the file it was renamed from) in
the base commit; the owner is the organisation in the URL of the remote ``origin``.
"""

from __future__ import annotations

from pathlib import Path

from review_gate import git
from review_gate.contents import MAX_BYTES, new_contents
from review_gate.errors import GitError
from review_gate.models import FileChange


class GitSurroundings:
    """``refine.Surroundings`` over the repository at ``root``, the change based on commit ``base``."""

    def __init__(self, root: Path, base: str | None) -> None:
        self.root = root
        self.base = base

    def gitattributes(self) -> str | None:
        if self.base is None:
            return None
        found = self._at([".gitattributes"]).get(".gitattributes")
        return found

    def new_texts(self, changes: list[FileChange]) -> dict[str, str]:
        readable = [c for c in changes if c.status != "deleted" and not c.binary and c.unread is None]
        try:
            return {c.path: data.decode("utf-8", "replace") for c, data in new_contents(self.root, readable)
                    if data is not None}
        except (GitError, OSError):
            return {}

    def base_texts(self, changes: list[FileChange]) -> dict[str, str]:
        if self.base is None:
            return {}
        sources = {c.path: c.old_path or c.path for c in changes if c.status != "added"}
        found = self._at(list(sources.values()))
        return {path: found[source] for path, source in sources.items() if source in found}

    def owner(self) -> str | None:
        try:
            return git.origin_owner(self.root)
        except GitError:
            return None

    def _at(self, paths: list[str]) -> dict[str, str]:
        assert self.base is not None
        try:
            found = git.files_at(self.root, self.base, paths, MAX_BYTES)
        except GitError:
            return {}
        return {path: data.decode("utf-8", "replace") for path, data in found.items()}
