"""Stage 1 output: what the diff says, and nothing more."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Literal

from pydantic import Field

from review_gate.models.base import Frozen
from review_gate.models.lines import EMPTY_REMOVED, Line, Lines, LinesField, Removed, RemovedField, RemovedLines

FileStatus = Literal["added", "modified", "deleted", "renamed", "copied", "binary"]


class Hunk(Frozen):
    header: str
    old_start: int = Field(ge=0)
    old_count: int = Field(ge=0)
    new_start: int = Field(ge=0)
    new_count: int = Field(ge=0)
    # held compactly (models.lines): a sequence of Line, a list of them in JSON
    lines: LinesField = Field(repr=False, description="New-side lines: added and context.")
    removed: int = Field(default=0, ge=0)
    removed_lines: RemovedField = Field(default_factory=lambda: EMPTY_REMOVED, repr=False,
                                        description="The removed lines, in order (empty in older bundles).")


UnreadKind = Literal["binary", "unreadable", "submodule"]


class Unread(Frozen):
    """Why no agent was shown a changed file's new content."""

    kind: UnreadKind = Field(
        description="binary: binary by content (an image, an archive); unreadable: text, or content that may be "
                    "text, that no agent could be shown (hidden from the diff and not recovered, a binary patch "
                    "that cannot be read, a sweep's file over its size limit); submodule: a submodule pointer, "
                    "whose content is another repository's.")
    reason: str = Field(description="What was not shown, and why.")
    fix: str = Field(default="", description="How to have it reviewed (unreadable content); empty when the "
                                             "report's setting hint says it (binary, submodule).")


class FileChange(Frozen):
    path: str
    old_path: str | None
    status: FileStatus
    old_mode: str | None = None
    new_mode: str | None = None
    added: int = Field(ge=0)
    removed: int = Field(ge=0)
    hunks: list[Hunk] = Field(default_factory=list, repr=False)
    content_sha: str | None = Field(
        default=None, description="Git blob id of the new content, when the diff carries it."
    )
    binary: bool = False
    non_utf8: bool = Field(default=False, description="Some lines were not UTF-8 and were decoded lossily.")
    unread: Unread | None = Field(
        default=None, description="Set when the diff does not show this file's new content to the agents, and why.")
    interpreter: str | None = Field(
        default=None, description="The program the new content's `#!` line runs (python3, bash, node), when "
                                  "it has one; what classifies a script with no known extension.")
    content_kind: Literal["github-workflow", "kubernetes", "compose"] | None = Field(
        default=None, description="What a YAML file is by its top-level keys (a workflow, a Kubernetes manifest, a "
                                  "Compose file) where its place does not say so (change.content_kind).")
    secrets_only: bool = Field(
        default=False,
        description="One of review-gate's own data files (its run state, loop files, baseline, a report or bundle "
                    "it wrote) that the change commits: not reviewed as code, only scanned by the secret rules.")
    binary_text: str = Field(
        default="", exclude=True, repr=False,
        description="The printable text inside a file binary by content (an image's metadata): scanned by the "
                    "secret rules only, never shown to a reviewer.")
    patch: str = Field(
        default="", exclude=True, repr=False,
        description="This file's section of the diff, verbatim (undecodable bytes escaped).",
    )


class Commit(Frozen):
    sha: str
    author: str
    subject: str


__all__ = ["Commit", "FileChange", "FileStatus", "Hunk", "Line", "LineIndex", "Lines", "PRFacts", "Removed",
           "RemovedLines", "Unread", "UnreadKind"]


SWEEP_SOURCE = "sweep of "
"""How the source of a sweep's facts starts: files as they are, each as if added whole."""


class PRFacts(Frozen):
    source: str = Field(description="Where the diff came from: a git range, a file or stdin.")
    base: str | None = None
    head: str | None = None
    files: list[FileChange] = Field(repr=False)
    commits: list[Commit] = Field(default_factory=list)

    @property
    def lines_added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def as_is(self) -> bool:
        """A sweep's facts: the files as they are, changing nothing (not even the gate's own files)."""
        return self.source.startswith(SWEEP_SOURCE)

    @property
    def lines_removed(self) -> int:
        return sum(f.removed for f in self.files)


class LineIndex(Mapping[tuple[str, int], str]):
    """(file, new line number) -> the line's text, read from the facts' hunks when asked: what a
    finding's fingerprint is anchored on. Where two hunks of a patch series show one number, the
    later one's text. Nothing is copied: a large diff's lines are not held twice.

    >>> index = LineIndex(PRFacts(source="x", files=[]))
    >>> index.get(("a.py", 1)) is None
    True
    """

    _KEPT = 64  # hunks whose texts are kept while findings are anchored: findings come file by file

    def __init__(self, facts: PRFacts) -> None:
        self._files = {f.path: f for f in facts.files}
        self._texts: OrderedDict[int, list[str]] = OrderedDict()  # id of a hunk's Lines -> its texts

    def __getitem__(self, key: tuple[str, int]) -> str:
        path, number = key
        change = self._files.get(path)
        for hunk in reversed(change.hunks if change is not None else []):
            at = hunk.lines.index_of(number)
            if at is not None:
                return self._hunk_texts(hunk.lines)[at]
        raise KeyError(key)

    def _hunk_texts(self, lines: Lines) -> list[str]:
        """A hunk's texts, made once for the findings on it (thousands of findings in one new file
        of 55,000 lines read it once, not once each)."""
        key = id(lines)
        texts = self._texts.get(key)
        if texts is None:
            texts = lines.texts()
            self._texts[key] = texts
            if len(self._texts) > self._KEPT:
                self._texts.popitem(last=False)
        else:
            self._texts.move_to_end(key)
        return texts

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(dict.fromkeys((f.path, ln.number) for f in self._files.values() for h in f.hunks
                                  for ln in h.lines))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:  # not len(): that reads every line
        return bool(self._files)
