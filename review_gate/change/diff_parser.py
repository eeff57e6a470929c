"""A tolerant, strict-where-it-matters parser of unified diffs (git's and plain ``diff -u``).

Tolerant: preambles (commit messages, diffstats) are skipped, lost trailing spaces on blank
context lines are accepted, and non-UTF-8 bytes are decoded lossily and flagged.
Strict: a hunk whose header counts do not match its body is an error, because a truncated diff
reviewed as if whole would hide changes from the reviewers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from review_gate.change.diff_headers import has_prefixes, header_line, header_names, name
from review_gate.errors import DiffError
from review_gate.models import FileChange, Hunk, Unread
from review_gate.models.facts import FileStatus
from review_gate.models.lines import EMPTY_REMOVED, Lines, RemovedLines

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
# where a run of ' ', '+', '-' and blank lines ends: a hunk's body, when its tags add up (a
# "\ No newline" line among them ends it too, and the hunk is read line by line: it is rare)
_NOT_BODY = re.compile(rb"\n[^ +\-\n\r]")
GITLINK = "160000"  # the mode of a submodule's entry
_SUBPROJECT = "Subproject commit "


@dataclass
class _FileBuilder:
    start: int  # where its section starts in the piece
    git_paths: tuple[str | None, str | None] = (None, None)
    old_path: str | None = None
    new_path: str | None = None
    saw_minus: bool = False
    saw_plus: bool = False
    status: FileStatus | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    content_sha: str | None = None
    index_mode: str | None = None  # the mode an ``index a..b MODE`` line gives both sides
    binary: bool = False
    non_utf8: bool = False
    added: int = 0
    removed: int = 0
    hunks: list[Hunk] = field(default_factory=list)
    # hunks read but not made yet: (header, old_start, old_count, new_start, new_count, removed,
    # where the body starts and ends in the piece); made once the section's text exists
    bodies: list[tuple[str, int, int, int, int, int, int, int]] = field(default_factory=list)

    def build(self, patch: str, line: Callable[[int], int]) -> FileChange:
        status: FileStatus
        old = self.old_path if self.saw_minus else self.git_paths[0]
        new = self.new_path if self.saw_plus else self.git_paths[1]
        if self.binary:
            status = "binary"
        elif self.status is not None:
            status = self.status
        elif old is None:
            status = "added"
        elif new is None:
            status = "deleted"
        else:
            status = "modified"
        if status == "added" or (self.binary and self.status == "added"):
            old = None
        path = new if new is not None else old
        if path is None:
            raise DiffError(f"diff line {line(self.start)}: a file section names no path",
                            fix="pass the diff exactly as git or diff -u wrote it")
        # every field given: model_construct would copy each default it fills in
        return FileChange.model_construct(
            path=path, old_path=old, status=status, old_mode=self.old_mode,
            new_mode=self.new_mode, added=self.added, removed=self.removed, hunks=self.hunks,
            content_sha=self.content_sha, binary=self.binary, non_utf8=self.non_utf8,
            unread=self._submodule(path, status), interpreter=None, secrets_only=False, binary_text="",
            patch=patch,
        )

    def make_hunks(self, patch: str, section: bytes) -> None:
        """The hunks read, as views of their bodies in ``patch`` (the section's text): no copy."""
        if not self.bodies:
            return
        raw = b"\r" in section or (not patch.isascii() and not _utf8(section))
        at = _Offsets(section)
        for header, old_start, old_count, new_start, new_count, removed, begin, stop in self.bodies:
            begin, stop = begin - self.start, stop - self.start
            low, high = at(begin), at(stop)
            if raw:
                self.non_utf8 = self.non_utf8 or not _utf8(section[begin:stop])
            self.hunks.append(Hunk.model_construct(
                header=header, old_start=old_start, old_count=old_count, new_start=new_start, new_count=new_count,
                lines=Lines(patch, low, high, new_start, new_count, raw), removed=removed,
                removed_lines=RemovedLines(patch, low, high, old_start, raw) if removed else EMPTY_REMOVED))

    def _submodule(self, path: str, status: FileStatus) -> Unread | None:
        """A gitlink (mode 160000) on the new side: the content is another repository's commit."""
        if status == "deleted" or (self.new_mode or self.index_mode) != GITLINK:
            return None
        named = [ln.text[len(_SUBPROJECT):].strip() for h in self.hunks for ln in h.lines
                 if ln.added and ln.text.startswith(_SUBPROJECT)]
        if status == "added" and not named and self.content_sha is None:
            return None  # a nested repository without a commit: nothing a commit could record
        commit = named[-1] if named else (self.content_sha or "an unknown commit")
        how = "is added at" if status == "added" else "moves to"
        return Unread(kind="submodule", reason=f"submodule {path} {how} {commit}: its content is not reviewed")


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class _Offsets:
    """Character offsets in ``data`` decoded (surrogate escapes) of its byte offsets, asked in order."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.same = data.isascii()
        self.byte = self.char = 0

    def __call__(self, offset: int) -> int:
        if self.same:
            return offset
        self.char += len(self.data[self.byte:offset].decode("utf-8", "surrogateescape"))
        self.byte = offset
        return self.char


PIECE = 1 << 20  # bytes of the diff parsed at a time: what parsing holds beyond the models


def _pieces(data: bytes) -> Iterator[bytes]:
    """``data`` in pieces of about PIECE bytes, each cut just before a ``diff --git`` line, so no
    file section spans two pieces (a diff without such lines is one piece)."""
    at = 0
    while at < len(data):
        cut = data.find(b"\ndiff --git ", at + PIECE) + 1 if len(data) - at > PIECE else 0
        end = cut if cut > 0 else len(data)
        yield data[at:end]
        at = end


def _streamed(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """``_pieces`` of a diff read in chunks: what was read and not yet cut is all that is held."""
    buffer = bytearray()
    searched = PIECE  # where the next cut is looked for: what was searched is not searched again
    for chunk in chunks:
        buffer += chunk
        while len(buffer) > searched:
            cut = buffer.find(b"\ndiff --git ", searched)
            if cut < 0:
                searched = max(PIECE, len(buffer) - len(b"\ndiff --git "))
                break
            yield bytes(buffer[:cut + 1])
            del buffer[:cut + 1]
            searched = PIECE
    if buffer:
        yield bytes(buffer)


def parse_diff(data: bytes) -> list[FileChange]:
    """Parse a unified diff into files with hunks, new-side line numbers and counts.

    >>> [f.path for f in parse_diff(b"--- a/x.py\\n+++ b/x.py\\n@@ -0,0 +1 @@\\n+print(1)\\n")]
    ['x.py']
    """
    return _parse(_pieces(data))


def parse_stream(chunks: Iterable[bytes]) -> list[FileChange]:
    """``parse_diff`` of a diff read in chunks (a pipe, a file): a piece of it at a time is held,
    never the whole diff."""
    return _parse(_streamed(chunks))


def _parse(pieces: Iterable[bytes]) -> list[FileChange]:
    files: list[FileChange] = []
    base = 0  # lines of the pieces before this one, for the diff line numbers of errors
    text = False
    for piece in pieces:
        if not piece.endswith(b"\n"):
            piece += b"\n"  # the last line ends as every other does: its section gets a newline, as git's have
        text = text or bool(piece.strip())
        _Piece(piece, base, files).parse()
        base += piece.count(b"\n")
    if not files and text:
        raise DiffError("the input has no file headers (diff --git, ---/+++): it is not a unified diff",
                        fix="produce it with `git diff` or `diff -u`")
    return files


class _Piece:
    """One piece of the diff, read by offsets into its bytes: header lines one at a time, a hunk's
    body by counting its tags in C (``_hunk``), never split into lines."""

    def __init__(self, data: bytes, base: int, files: list[FileChange]) -> None:
        self.data = data
        self.base = base
        self.files = files
        self.current: _FileBuilder | None = None

    def line(self, offset: int) -> int:
        """The diff line number of the line at ``offset`` (for an error: counted only then)."""
        return self.base + self.data.count(b"\n", 0, offset) + 1

    def finish(self, end: int) -> None:
        current = self.current
        if current is not None:
            section = self.data[current.start:end]
            patch = section.decode("utf-8", "surrogateescape")
            current.make_hunks(patch, section)
            self.files.append(current.build(patch, self.line))
            self.current = None

    def parse(self) -> None:
        data, at, n = self.data, 0, len(self.data)
        while at < n:
            eol = data.find(b"\n", at)
            line = data[at:eol].rstrip(b"\r")
            if line.startswith(b"diff --git "):
                self._git_header(at, line)
            elif line.startswith(b"--- ") and data.startswith(b"+++ ", eol + 1):
                eol = self._names(at, eol, line)
            elif line.startswith(b"@@"):
                current = self.current
                if current is None or not (current.saw_plus or current.git_paths != (None, None)):
                    raise DiffError(f"diff line {self.line(at)}: hunk header before any file header",
                                    fix="pass a complete unified diff, including its ---/+++ lines")
                at = self._hunk(at, eol, line, current)
                continue
            elif self.current is not None and not self.current.bodies:
                header_line(line, self.current)
            at = eol + 1
        self.finish(n)

    def _git_header(self, at: int, line: bytes) -> None:
        self.finish(at)
        self.current = current = _FileBuilder(start=at)
        names = header_names(line)
        if names is not None:
            current.git_paths = (name(names[0], b"a/"), name(names[1], b"b/"))

    def _names(self, at: int, eol: int, line: bytes) -> int:
        """The ---/+++ pair at ``at`` (a new file's section unless the current one awaits it);
        return where the +++ line ends."""
        current = self.current
        if current is None or current.saw_minus or current.bodies:
            self.finish(at)
            self.current = current = _FileBuilder(start=at)
        after = self.data.find(b"\n", eol + 1)
        minus, plus = line[4:], self.data[eol + 1:after].rstrip(b"\r")[4:]
        strip = current.git_paths != (None, None) or has_prefixes(minus, plus)
        current.old_path = name(minus, b"a/" if strip else None)
        current.new_path = name(plus, b"b/" if strip else None)
        current.saw_minus = current.saw_plus = True
        return after

    def _hunk(self, at: int, eol: int, header: bytes, current: _FileBuilder) -> int:
        """Read the hunk whose header is the line at ``at``; return where the next line starts."""
        match = _HUNK.match(header)
        if match is None:
            raise DiffError(f"diff line {self.line(at)}: malformed hunk header {header[:80]!r}",
                            fix="hunk headers look like '@@ -12,5 +12,7 @@'")
        old_start, new_start = int(match.group(1)), int(match.group(3))
        old_count = int(match.group(2)) if match.group(2) is not None else 1
        new_count = int(match.group(4)) if match.group(4) is not None else 1
        start = eol + 1
        end, added = self._counted(start, old_count, new_count)
        if end < 0:
            end, added = self._walked(at, start, old_count, new_count, header, current)
        data = self.data
        while end < len(data) and data.startswith(b"\\", end):  # "\ No newline at end of file"
            end = data.find(b"\n", end) + 1
        removed = old_count - (new_count - added)
        current.added += added
        current.removed += removed
        current.bodies.append((header.decode("utf-8", "replace"), old_start, old_count, new_start, new_count, removed,
                               start, end))
        return end

    def _counted(self, start: int, old_count: int, new_count: int) -> tuple[int, int]:
        """(end, added) of a body that is every line up to the first no body holds, when its tags
        add up to the header's counts exactly (nearly every hunk git writes); (-1, 0) otherwise,
        for ``_walked`` to read it line by line (a plain ``diff -u``'s next ---/+++, a cut diff, a
        "No newline at end of file" line before the hunk's last line)."""
        data = self.data
        found = _NOT_BODY.search(data, start - 1)
        end = found.start() + 1 if found is not None else len(data)
        lines = data.count(b"\n", start, end)
        plus, minus = data.count(b"\n+", start - 1, end), data.count(b"\n-", start - 1, end)
        context = lines - plus - minus  # ' ' and blank lines
        if context + minus == old_count and context + plus == new_count:
            return end, plus
        return -1, 0

    def _walked(self, at: int, start: int, old_count: int, new_count: int, header: bytes,
                current: _FileBuilder) -> tuple[int, int]:
        """(end, added) of a body read line by line as far as the header's counts go."""
        data, n = self.data, len(self.data)
        old_left, new_left, added, i = old_count, new_count, 0, start
        while (old_left > 0 or new_left > 0) and i < n:
            tag = data[i:i + 1]
            if tag == b"+":
                added += 1
                new_left -= 1
            elif tag == b"-":
                old_left -= 1
            elif tag in (b" ", b"\n", b"\r"):
                old_left -= 1
                new_left -= 1
            elif tag != b"\\":  # "\ No newline at end of file"
                break
            i = data.find(b"\n", i) + 1
        if old_left > 0 or new_left > 0 or old_left < 0 or new_left < 0:
            where = "at the end of the diff" if i >= n else f"at diff line {self.line(i)}"
            raise DiffError(
                f"diff line {self.line(at)}: hunk {header[:60].decode('utf-8', 'replace')!r} of "
                f"{current.new_path or current.git_paths[1]} is truncated or malformed: "
                f"{max(old_left, 0)} old and {max(new_left, 0)} new lines missing {where}",
                fix="pass the whole diff; a cut or hand-edited diff cannot be reviewed safely")
        return i, added
