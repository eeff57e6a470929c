"""A tolerant, strict-where-it-matters parser of unified diffs (git's and plain ``diff -u``).

Tolerant: preambles (commit messages, diffstats) are skipped, lost trailing spaces on blank
context lines are accepted, and non-UTF-8 bytes are decoded lossily and flagged.
Strict: a hunk whose header counts do not match its body is an error, because a truncated diff
reviewed as if whole would hide changes from the reviewers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate

from review_gate.errors import DiffError
from review_gate.models import FileChange, Hunk, Unread
from review_gate.models.facts import FileStatus
from review_gate.models.lines import EMPTY_REMOVED, Lines, RemovedLines

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_GIT_HEADER = re.compile(rb'^diff --git ("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$')
_OCTAL = re.compile(rb"[0-7]{1,3}")
GITLINK = "160000"  # the mode of a submodule's entry
_SUBPROJECT = "Subproject commit "
_ESCAPES = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b",
            b"f": b"\f", b"r": b"\r", b"v": b"\v"}


def _unquote(raw: bytes) -> bytes:
    """Undo git's C-style quoting of unusual path names.

    Escapes git never writes (``\\9``, an octal value over ``\\377``, an unknown letter) stay
    the literal text they are, so a hand-made diff cannot crash the parser.
    """
    if not (raw.startswith(b'"') and raw.endswith(b'"') and len(raw) >= 2):
        return raw
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        if body[i:i + 1] == b"\\" and i + 1 < len(body):
            octal = _OCTAL.match(body, i + 1)
            if octal and int(octal.group(), 8) <= 0xFF:
                out.append(int(octal.group(), 8))
                i = octal.end()
                continue
            nxt = body[i + 1:i + 2]
            out += _ESCAPES.get(nxt, b"\\" + nxt)
            i += 2
            continue
        out += body[i:i + 1]
        i += 1
    return bytes(out)


def _path(raw: bytes, prefix: bytes | None) -> str | None:
    # git ends a ---/+++ name holding whitespace with a tab (diff -u puts the date after one); a
    # name's own trailing spaces are part of it ("trail.py " is not "trail.py")
    raw = raw.rstrip(b"\r")
    raw = _unquote(raw.split(b"\t", 1)[0] if b"\t" in raw else raw)
    if raw == b"/dev/null":
        return None
    if prefix is not None and raw.startswith(prefix):
        raw = raw[len(prefix):]
    return raw.decode("utf-8", "replace")


@dataclass
class _FileBuilder:
    start_line: int
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
    # first and end line of the body in the piece); made once the section's text exists
    bodies: list[tuple[str, int, int, int, int, int, int, int]] = field(default_factory=list)

    def build(self, patch: str) -> FileChange:
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
            raise DiffError(f"diff line {self.start_line}: a file section names no path",
                            fix="pass the diff exactly as git or diff -u wrote it")
        return FileChange.model_construct(
            path=path, old_path=old, status=status, old_mode=self.old_mode,
            new_mode=self.new_mode, added=self.added, removed=self.removed, hunks=self.hunks,
            content_sha=self.content_sha, binary=self.binary, non_utf8=self.non_utf8,
            unread=self._submodule(path, status), patch=patch,
        )

    def make_hunks(self, patch: str, section: bytes, lines: list[bytes], first: int) -> None:
        """The hunks read, as views of their bodies in ``patch`` (the section's text): no copy."""
        if not self.bodies:
            return
        raw = b"\r" in section or (not patch.isascii() and not _utf8(section))
        # where each line starts: the lengths before it, and a newline after each (C loops, no Python one)
        sums = list(accumulate(map(len, lines[first:self.bodies[-1][7]]), initial=0))
        at = _Offsets(section)
        for header, old_start, old_count, new_start, new_count, removed, start, end in self.bodies:
            begin, stop = sums[start - first] + start - first, sums[end - first] + end - first
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


PIECE = 1 << 20  # bytes of the diff split into lines at a time: what parsing holds beyond the models


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
    """``parse_diff`` of a diff read in chunks (a pipe, a file): a piece of it at a time is held
    as lines, never the whole diff."""
    return _parse(_streamed(chunks))


def _parse(pieces: Iterable[bytes]) -> list[FileChange]:
    files: list[FileChange] = []
    base = 0  # lines of the pieces before this one, for the diff line numbers of errors
    text = False
    for piece in pieces:
        lines = piece.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        text = text or any(ln.strip() for ln in lines)
        _parse_piece(lines, base, files)
        base += len(lines)
    if not files and text:
        raise DiffError("the input has no file headers (diff --git, ---/+++): it is not a unified diff",
                        fix="produce it with `git diff` or `diff -u`")
    return files


def _parse_piece(lines: list[bytes], base: int, files: list[FileChange]) -> None:
    current: _FileBuilder | None = None
    i, n = 0, len(lines)

    def finish() -> None:
        nonlocal current
        if current is not None:
            first = current.start_line - 1 - base
            section = b"\n".join(lines[first:i]) + b"\n"
            patch = section.decode("utf-8", "surrogateescape")
            current.make_hunks(patch, section, lines, first)
            files.append(current.build(patch))
            current = None

    while i < n:
        line = lines[i].rstrip(b"\r")
        if line.startswith(b"diff --git "):
            finish()
            current = _FileBuilder(start_line=base + i + 1)
            names = _header_names(line)
            if names is not None:
                current.git_paths = (_path(names[0], b"a/"), _path(names[1], b"b/"))
            i += 1
            continue
        if line.startswith(b"--- ") and i + 1 < n and lines[i + 1].startswith(b"+++ "):
            if current is None or current.saw_minus or current.bodies:
                finish()
                current = _FileBuilder(start_line=base + i + 1)
            minus, plus = line[4:], lines[i + 1].rstrip(b"\r")[4:]
            strip = current.git_paths != (None, None) or _has_prefixes(minus, plus)
            current.old_path = _path(minus, b"a/" if strip else None)
            current.new_path = _path(plus, b"b/" if strip else None)
            current.saw_minus = current.saw_plus = True
            i += 2
            continue
        if line.startswith(b"@@"):
            if current is None or not (current.saw_plus or current.git_paths != (None, None)):
                raise DiffError(f"diff line {base + i + 1}: hunk header before any file header",
                                fix="pass a complete unified diff, including its ---/+++ lines")
            i = _parse_hunk(lines, i, current, base)
            continue
        if current is not None and not current.bodies:
            _header_line(line, current)
        i += 1
    finish()


def _header_names(line: bytes) -> tuple[bytes, bytes] | None:
    """The two names of a ``diff --git`` line, still quoted and prefixed.

    Names with a space are not quoted, so ``diff --git a/my file b/my file`` splits only the way
    git itself splits it: where both halves name the same path behind their prefixes (a rename,
    whose names differ, has ``rename from``/``rename to`` lines that name them instead). None
    when no split works; the ---/+++ or rename lines then give the names.
    """
    match = _GIT_HEADER.match(line)
    if match:
        return match.group(1), match.group(2)
    rest = line[len(b"diff --git "):]
    for at in range(len(rest)):
        if rest[at:at + 1] != b" ":
            continue
        first, second = rest[:at], rest[at + 1:]
        if first and _unprefixed(first) == _unprefixed(second):
            return first, second
    return None


def _unprefixed(name: bytes) -> bytes:
    """A name without its prefix (git's a/, b/, or --src-prefix=x/): what follows the first slash."""
    return name.split(b"/", 1)[1] if b"/" in name else name


def _has_prefixes(minus: bytes, plus: bytes) -> bool:
    """True when ---/+++ carry git's a/ and b/ prefixes (either side may be /dev/null)."""
    old = _unquote(minus.split(b"\t", 1)[0].strip())
    new = _unquote(plus.split(b"\t", 1)[0].strip())
    return (old == b"/dev/null" or old.startswith(b"a/")) and (new == b"/dev/null" or new.startswith(b"b/"))


def _header_line(line: bytes, current: _FileBuilder) -> None:
    # modes are octal digits in what git writes; a hand-made diff may hold any bytes there
    if line.startswith(b"new file mode "):
        current.status, current.new_mode = "added", _mode(line[14:])
    elif line.startswith(b"deleted file mode "):
        current.status, current.old_mode = "deleted", _mode(line[18:])
    elif line.startswith(b"old mode "):
        current.old_mode = _mode(line[9:])
    elif line.startswith(b"new mode "):
        current.new_mode = _mode(line[9:])
    elif line.startswith(b"rename from "):
        current.status = "renamed"
        current.git_paths = (_path(line[12:], None), current.git_paths[1])
    elif line.startswith(b"rename to "):
        current.git_paths = (current.git_paths[0], _path(line[10:], None))
    elif line.startswith(b"copy from "):
        current.status = "copied"
        current.git_paths = (_path(line[10:], None), current.git_paths[1])
    elif line.startswith(b"copy to "):
        current.git_paths = (current.git_paths[0], _path(line[8:], None))
    elif line.startswith(b"index "):
        fields = line[6:].split(b" ")
        ids = fields[0].split(b"..")
        if len(ids) == 2 and ids[1].strip(b"0"):
            current.content_sha = ids[1].decode("ascii", "replace")
        if len(fields) > 1:
            current.index_mode = _mode(fields[1])
    elif line.startswith((b"Binary files ", b"GIT binary patch")):
        current.binary = True


def _mode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").strip()


def _parse_hunk(lines: list[bytes], i: int, current: _FileBuilder, base: int = 0) -> int:
    header = lines[i].rstrip(b"\r")
    match = _HUNK.match(header)
    if match is None:
        raise DiffError(f"diff line {base + i + 1}: malformed hunk header {header[:80]!r}",
                        fix="hunk headers look like '@@ -12,5 +12,7 @@'")
    old_start, new_start = int(match.group(1)), int(match.group(3))
    old_count = int(match.group(2)) if match.group(2) is not None else 1
    new_count = int(match.group(4)) if match.group(4) is not None else 1
    old_left, new_left = old_count, new_count
    added = 0
    start = i
    i += 1
    n = len(lines)
    while (old_left > 0 or new_left > 0) and i < n:
        tag = lines[i][:1]
        if tag == b"+":
            added += 1
            new_left -= 1
        elif tag == b"-":
            old_left -= 1
        elif tag == b" " or tag == b"" or tag == b"\r":
            old_left -= 1
            new_left -= 1
        elif tag != b"\\":  # "\ No newline at end of file"
            break
        i += 1
    if old_left > 0 or new_left > 0 or old_left < 0 or new_left < 0:
        where = "at the end of the diff" if i >= n else f"at diff line {base + i + 1}"
        raise DiffError(
            f"diff line {base + start + 1}: hunk {header[:60].decode('utf-8', 'replace')!r} of "
            f"{current.new_path or current.git_paths[1]} is truncated or malformed: "
            f"{max(old_left, 0)} old and {max(new_left, 0)} new lines missing {where}",
            fix="pass the whole diff; a cut or hand-edited diff cannot be reviewed safely")
    while i < n and lines[i].startswith(b"\\"):
        i += 1
    removed = old_count - (new_count - added)
    current.added += added
    current.removed += removed
    current.bodies.append((header.decode("utf-8", "replace"), old_start, old_count, new_start, new_count, removed,
                           start + 1, i))
    return i
