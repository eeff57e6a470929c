"""Reading an input a user names (a diff, a review file, a report) without trusting its size or kind.

Standard input and a path are read in pieces up to a limit, so ``/dev/zero`` or a runaway pipe
is an error that names the input, never a process that eats the machine's memory. A path may be
a regular file or a pipe (``--diff <(git diff)``); a directory, a device or a socket is refused.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from review_gate.errors import InputError

MIB = 1024 * 1024
CHUNK = MIB


def human(limit: int) -> str:
    """``limit`` bytes as people say it.

    >>> human(256 * MIB), human(1500)
    ('256 MiB', '1500 bytes')
    """
    return f"{limit // MIB} MiB" if limit >= MIB else f"{limit} bytes"


def chunks(stream: BinaryIO, *, limit: int, name: str, fix: str) -> Iterator[bytes]:
    """``stream`` in pieces, refused once it passes ``limit`` bytes (``name`` says what it is)."""
    size = 0
    while True:
        part = stream.read(min(CHUNK, limit + 1 - size))
        if not part:
            return
        size += len(part)
        if size > limit:
            raise InputError(f"{name} is larger than {human(limit)}", fix=fix)
        yield part


def read_stream(stream: BinaryIO, *, limit: int, name: str, fix: str) -> bytes:
    """All of ``stream``, refused once it passes ``limit`` bytes (``name`` says what it is)."""
    parts: list[bytes] = []
    size = 0
    while True:
        part = stream.read(min(CHUNK, limit + 1 - size))
        if not part:
            return b"".join(parts)
        parts.append(part)
        size += len(part)
        if size > limit:
            raise InputError(f"{name} is larger than {human(limit)}", fix=fix)


def read_path(path: str | Path, *, limit: int, name: str, fix: str) -> bytes:
    """The bytes of a regular file or a pipe at ``path``, at most ``limit`` of them."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}", fix=fix) from exc
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "a device or a socket"
        raise InputError(f"cannot read {name}: it is {kind}, not a file", fix=fix)
    with os.fdopen(fd, "rb") as handle:
        try:
            return read_stream(handle, limit=limit, name=name, fix=fix)
        except OSError as exc:
            raise InputError(f"cannot read {name}: {exc.strerror or exc}", fix=fix) from exc


__all__ = ["human", "read_path", "read_stream"]
