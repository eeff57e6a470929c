"""The lines around a diff's hunks: git's quoted names, its ``diff --git`` names, and what the
extended header lines (modes, renames, copies, index, binary) say about a file.

Modes are octal digits in what git writes; a hand-made diff may hold any bytes there, and every
helper takes bytes as they are, so no header can crash the parser.
"""

from __future__ import annotations

import re
from typing import Protocol

from review_gate.models.facts import FileStatus

_GIT_HEADER = re.compile(rb'^diff --git ("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$')
_OCTAL = re.compile(rb"[0-7]{1,3}")
_ESCAPES = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b",
            b"f": b"\f", b"r": b"\r", b"v": b"\v"}


class Header(Protocol):
    """What the extended header lines of one file's section set."""

    status: FileStatus | None
    old_mode: str | None
    new_mode: str | None
    git_paths: tuple[str | None, str | None]
    content_sha: str | None
    index_mode: str | None
    binary: bool


def unquote(raw: bytes) -> bytes:
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


def name(raw: bytes, prefix: bytes | None) -> str | None:
    """A path as a ---/+++, rename or copy line names it; None for /dev/null."""
    # git ends a ---/+++ name holding whitespace with a tab (diff -u puts the date after one); a
    # name's own trailing spaces are part of it ("trail.py " is not "trail.py")
    raw = raw.rstrip(b"\r")
    raw = unquote(raw.split(b"\t", 1)[0] if b"\t" in raw else raw)
    if raw == b"/dev/null":
        return None
    if prefix is not None and raw.startswith(prefix):
        raw = raw[len(prefix):]
    return raw.decode("utf-8", "replace")


def header_names(line: bytes) -> tuple[bytes, bytes] | None:
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


def _unprefixed(raw: bytes) -> bytes:
    """A name without its prefix (git's a/, b/, or --src-prefix=x/): what follows the first slash."""
    return raw.split(b"/", 1)[1] if b"/" in raw else raw


def has_prefixes(minus: bytes, plus: bytes) -> bool:
    """True when ---/+++ carry git's a/ and b/ prefixes (either side may be /dev/null)."""
    old = unquote(minus.split(b"\t", 1)[0].strip())
    new = unquote(plus.split(b"\t", 1)[0].strip())
    return (old == b"/dev/null" or old.startswith(b"a/")) and (new == b"/dev/null" or new.startswith(b"b/"))


def header_line(line: bytes, current: Header) -> None:
    """What one extended header line says, set on ``current``."""
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
        current.git_paths = (name(line[12:], None), current.git_paths[1])
    elif line.startswith(b"rename to "):
        current.git_paths = (current.git_paths[0], name(line[10:], None))
    elif line.startswith(b"copy from "):
        current.status = "copied"
        current.git_paths = (name(line[10:], None), current.git_paths[1])
    elif line.startswith(b"copy to "):
        current.git_paths = (current.git_paths[0], name(line[8:], None))
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
