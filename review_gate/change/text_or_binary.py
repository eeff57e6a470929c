"""What a file's bytes are to a reviewer: text to read, or binary. Pure.

git calls a file binary when a NUL byte is in its first 8000 bytes, and shows no lines of it.
That test misses text that holds NUL bytes: UTF-16 and UTF-32 (every other byte of ASCII text is
zero), and text with a stray NUL put there to make git look away. A change must not hide code or
a key that way, so :func:`readable` decides again: UTF-16/32 text is decoded (its lines are the
decoded text's lines), mostly-printable text is read as it is, and only what is neither is
binary. It errs towards text: a binary file read as text costs a reviewer some noise, a text
file taken for binary would be passed unread.

    >>> readable("K=AKIA\\n".encode("utf-16"))
    b'K=AKIA\\n'
    >>> readable(b"\\x89PNG\\r\\n\\x1a\\n\\x00\\x00\\x00\\rIHDR\\x00\\x00\\x01\\x00") is None
    True
"""

from __future__ import annotations

import codecs

from review_gate.change.binary_formats import signature

BINARY_PROBE = 8000  # git's buffer_is_binary looks for a NUL byte in this many bytes
_STRANGE_SHARE = 0.1  # more odd characters than this in the probe: binary, not text with a few NULs
_WIDE_ZEROS = 0.5  # share of zero high bytes from which BOM-less bytes may be UTF-16/32 text
_SPACES = frozenset("\t\n\r\f\v")
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# the byte offsets, within one code unit, that are zero for ASCII text in each encoding
_WIDE = (("utf-32-le", 4, (1, 2, 3)), ("utf-32-be", 4, (0, 1, 2)), ("utf-16-le", 2, (1,)), ("utf-16-be", 2, (0,)))


def is_binary(data: bytes) -> bool:
    """git's own test (without attributes): a NUL byte in the first 8000 bytes."""
    return b"\0" in data[:BINARY_PROBE]


def readable(data: bytes) -> bytes | None:
    """The bytes to review as text: ``data`` itself when it is text (by git's test, or text with a
    few NUL or control bytes), its UTF-8 form when it is UTF-16 or UTF-32 text, None when binary.
    Only the first 8000 bytes decide; the rest of a wide file is decoded leniently."""
    probe = data[:BINARY_PROBE]
    if not is_binary(data):
        return data
    # A file that starts with a well-known binary format's signature is that format, however much
    # text its metadata holds (an image's XMP packet can fill its first 8000 bytes); git saw a NUL
    # in it too, and no source file or script starts with one of these (see ``signature``).
    if signature(probe) is not None:
        return None
    # A #! script is what its interpreter runs, byte by byte, whatever its bytes look like; and
    # bytes that read as text one byte at a time are that text, though a BOM stands before them:
    # real UTF-16/32 text is a third to three quarters NUL bytes read that way.
    if probe.startswith(b"#!") or _mostly_text(probe):
        return data
    encoding = wide_encoding(probe)
    return _decoded(data, encoding).encode("utf-8") if encoding is not None else None


def wide_encoding(probe: bytes) -> str | None:
    """The UTF-16 or UTF-32 encoding ``probe`` (a file's first bytes) is text in: named by its
    byte order mark, else one where at least half the high bytes are zero (mostly ASCII text);
    either way its decoding must be mostly printable. None when it is no such text."""
    for bom, encoding in _BOMS:
        if probe.startswith(bom) and _printable(probe[len(bom):], encoding):
            return encoding
    for encoding, unit, offsets in _WIDE:
        if _zero_share(probe, unit, offsets) >= _WIDE_ZEROS and _printable(probe, encoding):
            return encoding
    return None


def _zero_share(probe: bytes, unit: int, offsets: tuple[int, ...]) -> float:
    units = len(probe) // unit
    if not units:
        return 0.0
    zeros = sum(probe[at::unit][:units].count(0) for at in offsets)
    return zeros / (units * len(offsets))


def _printable(probe: bytes, encoding: str) -> bool:
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    try:
        text = decoder.decode(probe, final=False)  # a code unit cut at the probe's end waits
    except UnicodeDecodeError:
        return False
    # a few control characters do not make text binary: one ESC must not hide a UTF-16 file
    strange = sum(1 for c in text if not (c.isprintable() or c in _SPACES))
    return bool(text) and strange <= _STRANGE_SHARE * len(text)


def _decoded(data: bytes, encoding: str) -> str:
    for bom, named in _BOMS:
        if named == encoding and data.startswith(bom):
            data = data[len(bom):]
            break
    return data.decode(encoding, "replace")


# the control characters (Unicode category Cc) that are not white space: deleted by translate
_CONTROLS = dict.fromkeys(c for c in [*range(0x20), *range(0x7F, 0xA0)] if chr(c) not in _SPACES)


def _mostly_text(probe: bytes) -> bool:
    """Text that holds a few NUL or control bytes (a stray NUL makes git call it binary)."""
    text = probe.decode("utf-8", "replace")
    # counted by C loops (count, translate), not a Python loop over 8000 characters
    strange = text.count("\ufffd") + len(text) - len(text.translate(_CONTROLS))
    return strange <= _STRANGE_SHARE * max(len(text), 1)


__all__ = ["BINARY_PROBE", "is_binary", "readable", "wide_encoding"]
