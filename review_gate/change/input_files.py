"""Reading an input a user names (a diff, a review file, a report) without trusting its size or kind.

Standard input and a path are read in pieces up to a limit, so ``/dev/zero`` or a runaway pipe
is an error that names the input, never a process that eats the machine's memory. A path may be
a regular file or a pipe (``--diff <(git diff)``); a directory, a device or a socket is refused.

Files the gate finds rather than is given (the loop's session files, a configuration directory)
are read as regular files only: ``open_regular`` opens without blocking (a FIFO planted where a
file was expected would otherwise block the open until a writer comes) and then checks the type
of what it opened, so nothing can be swapped in between a check and the open.
"""

from __future__ import annotations

import errno as errno_module
import hashlib
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


def open_regular(path: str | Path, *, follow: bool = True) -> int | None:
    """A read-only descriptor of the regular file at ``path``; None when there is none there
    (missing, a directory, a FIFO, a socket, a device; with ``follow`` false, a symbolic link).
    Opened with O_NONBLOCK, so a FIFO never blocks the open, and checked with fstat after it,
    so what was checked is what is read. OSError for a file that is there and cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:
        if exc.errno in _NOT_A_FILE:
            return None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a regular file: ordinary reads from here on
    except OSError:
        os.close(fd)
        raise
    return fd


_NOT_A_FILE = {getattr(errno_module, name) for name in ("ELOOP", "ENXIO", "ENODEV", "EISDIR")
               if hasattr(errno_module, name)}


def regular_bytes(path: str | Path, *, limit: int, name: str, fix: str) -> bytes | None:
    """The bytes of the regular file at ``path`` (None when there is none), read in pieces and
    refused (InputError naming ``name``) once they pass ``limit``."""
    try:
        fd = open_regular(path)
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}", fix=fix) from exc
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            return read_stream(handle, limit=limit, name=name, fix=fix)
        except OSError as exc:
            raise InputError(f"cannot read {name}: {exc.strerror or exc}", fix=fix) from exc


def regular_head(path: str | Path, limit: int) -> bytes | None:
    """At most the first ``limit`` bytes of the regular file at ``path``; None when there is no
    regular file there or it cannot be read."""
    try:
        fd = open_regular(path)
    except OSError:
        return None
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return None


def regular_sha256(path: str | Path, *, follow: bool = True) -> str | None:
    """The SHA-256 of the regular file at ``path``, hashed in pieces (any size, bounded memory);
    None when there is no regular file there or it cannot be read."""
    try:
        fd = open_regular(path, follow=follow)
    except OSError:
        return None
    if fd is None:
        return None
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "rb") as handle:
            while part := handle.read(CHUNK):
                digest.update(part)
    except OSError:
        return None
    return digest.hexdigest()


__all__ = ["human", "open_regular", "read_path", "read_stream", "regular_bytes", "regular_head", "regular_sha256"]
