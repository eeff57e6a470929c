"""The binary formats a file's first bytes name (its magic number), and the text inside one. Pure.

A file that starts with one of these signatures is that format: git found a NUL in it, and no
source file or script starts this way, so its text (an image's XMP packet, a PDF's dictionary)
is metadata, never code to review. Signatures that are printable text (``MZ``, ``RIFF``,
``true``, ``OTTO``, ``wOFF``) count only with the structure behind them, so a text file cannot
make itself binary by starting with a word.

    >>> signature(b"\\x89PNG\\r\\n\\x1a\\n\\x00\\x00\\x00\\rIHDR")
    'png'
    >>> signature(b"MZ = 1\\n") is None
    True
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Callable
from typing import Any

# (magic at offset 0, format): exact prefixes that no text file starts with
_PREFIXES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpeg"), (b"GIF87a", "gif"), (b"GIF89a", "gif"),
    (b"PK\x03\x04", "zip"), (b"PK\x05\x06", "zip"), (b"PK\x07\x08", "zip"), (b"\x1f\x8b\x08", "gzip"),
    (b"\x7fELF", "elf"), (b"\xfe\xed\xfa\xce", "mach-o"), (b"\xfe\xed\xfa\xcf", "mach-o"),
    (b"\xce\xfa\xed\xfe", "mach-o"), (b"\xcf\xfa\xed\xfe", "mach-o"),
    (b"\xca\xfe\xba\xbe", "java class or mach-o"), (b"SQLite format 3\x00", "sqlite"),
    (b"\x00asm\x01\x00\x00\x00", "wasm"), (b"\x00\x01\x00\x00", "truetype"),
)
_PDF = re.compile(rb"%PDF-\d\.\d")
_FLAVOURS = (b"\x00\x01\x00\x00", b"OTTO", b"true")
_RUN = rb"[\x20-\x7e\t]{8,}"  # printable ASCII runs, as strings(1) finds them
MAX_TEXT = 1 << 20  # characters of text kept from one binary file


@functools.cache
def _runs() -> Any:
    """``_RUN`` compiled with RE2: a change's images are megabytes, which ``re`` reads a byte at a
    time in Python's own engine (7 times slower on pydantic's logos)."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.encoding = re2.Options.Encoding.LATIN1  # bytes, one at a time, as re reads them: no UTF-8
    return re2.compile(_RUN, options)


def _webp(probe: bytes) -> bool:
    return probe[8:12] == b"WEBP"


def _pe(probe: bytes) -> bool:
    """An MS-DOS header whose e_lfanew points at a PE signature (Windows executables, DLLs)."""
    if len(probe) < 0x40:
        return False
    at = struct.unpack_from("<I", probe, 0x3C)[0]
    return probe[at:at + 4] == b"PE\x00\x00"


def _sfnt(probe: bytes) -> bool:
    """A font's table directory: numTables and the searchRange it implies (OpenType, TrueType)."""
    if len(probe) < 12:
        return False
    tables, search = struct.unpack_from(">HH", probe, 4)
    return bool(0 < tables < 256 and search == 16 * (1 << (tables.bit_length() - 1)))


def _woff(probe: bytes) -> bool:
    return probe[4:8] in _FLAVOURS


_CHECKED: tuple[tuple[bytes, str, Callable[[bytes], bool]], ...] = (
    (b"RIFF", "webp", _webp), (b"MZ", "pe", _pe), (b"OTTO", "opentype", _sfnt), (b"true", "truetype", _sfnt),
    (b"wOFF", "woff", _woff), (b"wOF2", "woff2", _woff),
)


def signature(probe: bytes) -> str | None:
    """The binary format ``probe`` (a file's first bytes) starts with, None for none."""
    for magic, name in _PREFIXES:
        if probe.startswith(magic) and (name != "truetype" or _sfnt(probe)):  # 00 01 00 00 alone: too short
            return name
    for magic, name, check in _CHECKED:
        if probe.startswith(magic) and check(probe):
            return name
    return "pdf" if _PDF.match(probe) else None


def text_inside(data: bytes) -> str:
    """The runs of printable text in a binary file (metadata, an image's tEXt chunk), one a line,
    at most MAX_TEXT characters: what the secret rules read of it.

    >>> text_inside(b"\\x89PNG\\x00\\x00tEXtkey\\x00AKIAIOSFODNN7EXAMPLE\\x00")
    'AKIAIOSFODNN7EXAMPLE'
    """
    return "\n".join(m.decode("ascii") for m in _runs().findall(data))[:MAX_TEXT]


__all__ = ["MAX_TEXT", "signature", "text_inside"]
