"""git's binary patches (``git diff --binary``, ``format-patch --binary``), read. Pure.

A ``GIT binary patch`` section carries the new content in its first hunk: ``literal N`` (the
whole file) or ``delta N`` (instructions that build it from the old one), zlib-deflated to N
bytes and written in lines of base85 (git's alphabet is the one ``base64.b85decode`` reads),
each line led by a letter that gives its length (A-Z 1-26, a-z 27-52). ``git apply`` writes
that content, so a reviewer must read it as well: nothing here trusts the patch's sizes, and
anything malformed, truncated or too large is None, never an exception.

    >>> import base64, zlib
    >>> body = zlib.compress(b"k = 1\\n")
    >>> line = bytes([ord("A") + len(body) - 1]) + base64.b85encode(body, pad=True)
    >>> forward_hunk(b"GIT binary patch\\nliteral 6\\n" + line + b"\\n\\nliteral 0\\n")
    BinaryHunk(method='literal', data=b'k = 1\\n')
"""

from __future__ import annotations

import base64
import re
import zlib
from dataclasses import dataclass
from typing import Literal

MAX_BYTES = 64 * 1024 * 1024  # a hunk that inflates to more is not read (nor a delta's result)

_START = re.compile(rb"^(literal|delta) (\d{1,12})$")


@dataclass(frozen=True)
class BinaryHunk:
    method: Literal["literal", "delta"]
    data: bytes  # inflated: the file (literal) or the delta instructions


def forward_hunk(section: bytes) -> BinaryHunk | None:
    """The first hunk after ``GIT binary patch`` in a diff section, inflated; None when there is
    none, or it is malformed or larger than MAX_BYTES."""
    lines = section.split(b"\n")
    try:
        at = next(i for i, line in enumerate(lines) if line.rstrip(b"\r") == b"GIT binary patch")
    except StopIteration:
        return None
    start = _START.match(lines[at + 1].rstrip(b"\r")) if at + 1 < len(lines) else None
    if start is None or int(start.group(2)) > MAX_BYTES:
        return None
    size = int(start.group(2))
    packed = bytearray()
    for line in lines[at + 2:]:
        line = line.rstrip(b"\r")
        if not line:
            break
        piece = _line(line)
        if piece is None:
            return None
        packed += piece
    data = _inflate(bytes(packed), size)
    method: Literal["literal", "delta"] = "literal" if start.group(1) == b"literal" else "delta"
    return None if data is None else BinaryHunk(method, data)


def _line(line: bytes) -> bytes | None:
    letter = line[0]
    if ord("A") <= letter <= ord("Z"):
        length = letter - ord("A") + 1
    elif ord("a") <= letter <= ord("z"):
        length = letter - ord("a") + 27
    else:
        return None
    encoded = line[1:]
    if len(encoded) != (length + 3) // 4 * 5:
        return None
    try:
        return base64.b85decode(encoded)[:length]
    except ValueError:
        return None


def _inflate(packed: bytes, size: int) -> bytes | None:
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(packed, size + 1)  # one byte more than promised tells a lie
    except zlib.error:
        return None
    return data if len(data) == size and inflater.eof else None


def apply_delta(base: bytes, delta: bytes) -> bytes | None:
    """The content git's delta ``delta`` builds from ``base``; None when it does not apply."""
    at, base_size = _size(delta, 0)
    at, size = _size(delta, at)
    if base_size != len(base) or size > MAX_BYTES:
        return None
    out = bytearray()
    while 0 <= at < len(delta):
        command = delta[at]
        at += 1
        if command & 0x80:
            at, piece = _copy(command, delta, at, base)
            if piece is None:
                return None
            out += piece
        elif command:
            out += delta[at:at + command]
            at += command
        else:
            return None  # command 0 is reserved
        if len(out) > size:
            return None
    return bytes(out) if at == len(delta) and len(out) == size else None


def _size(delta: bytes, at: int) -> tuple[int, int]:
    """A size header: 7 bits a byte, least significant first; (-1, 0) when cut short."""
    value, shift = 0, 0
    while 0 <= at < len(delta) and shift < 64:
        byte = delta[at]
        value |= (byte & 0x7F) << shift
        at += 1
        shift += 7
        if not byte & 0x80:
            return at, value
    return -1, 0


def _copy(command: int, delta: bytes, at: int, base: bytes) -> tuple[int, bytes | None]:
    """A copy command: which bytes of ``base`` (offset in up to 4 bytes, size in up to 3, each
    present when its bit of ``command`` is set; size 0 means 0x10000)."""
    offset = size = 0
    for bit, shift in ((0x01, 0), (0x02, 8), (0x04, 16), (0x08, 24)):
        if command & bit:
            if at >= len(delta):
                return -1, None
            offset |= delta[at] << shift
            at += 1
    for bit, shift in ((0x10, 0), (0x20, 8), (0x40, 16)):
        if command & bit:
            if at >= len(delta):
                return -1, None
            size |= delta[at] << shift
            at += 1
    size = size or 0x10000
    if offset + size > len(base):
        return -1, None
    return at, base[offset:offset + size]


__all__ = ["MAX_BYTES", "BinaryHunk", "apply_delta", "forward_hunk"]
