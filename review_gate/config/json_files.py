"""Reading one JSON file the gate is given (a config file, a baseline, a bundle's): every way it
can be unusable is a problem naming it, never a crash or a hang."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from review_gate.errors import ConfigError, ConfigProblem, ProblemsError


class _NotJson(ValueError):
    def __init__(self, literal: str, why: str) -> None:
        super().__init__(why)
        self.literal = literal

    def line(self, text: str) -> int:
        """Where the literal first stands as a value (the JSON parser does not say)."""
        found = re.search(rf"(?<![\w.\"]){re.escape(self.literal)}(?![\w.])", text)
        return text.count("\n", 0, found.start()) + 1 if found else 0


def _reject_constant(name: str) -> Any:
    raise _NotJson(name, f"{name} is not a JSON number")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # 1e400 parses to inf, which no setting can mean
        raise _NotJson(literal, f"the number {literal[:40]} is too large to be a finite number")
    return value


def _integer(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_DIGITS:  # int() refuses 4,300 digits with a bare ValueError
        raise _NotJson(literal, f"the integer {literal[:20]}… has {len(literal)} digits")
    return int(literal)


CONFIG_LIMIT = 5 * 1024 * 1024  # bytes of one config file: far above any real one
FILE_LIMIT = 512 * 1024 * 1024  # bytes of a baseline or a bundle file, which review-gate writes itself
MAX_DIGITS = 100
_CANNOT_READ_FIX = "make it a readable file, or delete it to use the built-in one"


def read_json(path: Path, display: str, *, limit: int = FILE_LIMIT, error: type[ProblemsError] = ConfigError) -> Any:
    """Parse one JSON file; every way it can be unusable is an ``error`` naming it.

    Only a regular file of at most ``limit`` bytes is read: a FIFO would block for ever and
    ``/dev/zero`` would fill the memory. Opening does not block (O_NONBLOCK), so a FIFO swapped
    in after the check cannot hang the run either.
    """
    return parse_json(read_regular(path, display, limit, error), display, error=error)


def parse_json(raw: bytes, display: str, *, error: type[ProblemsError] = ConfigError) -> Any:
    """``read_json`` of bytes already read."""
    try:
        text = raw.decode("utf-8-sig")  # tolerate the byte order mark some editors write
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error([ConfigProblem(
            display, "/", f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line} column {column}",
            "save the file with UTF-8 encoding")]) from exc
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite, parse_int=_integer)
    except json.JSONDecodeError as exc:
        raise error([ConfigProblem(
            display, "/", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            "fix the JSON syntax there (a trailing comma, a missing comma or quote, or a "
            "comment are the usual causes)")]) from exc
    except _NotJson as exc:
        line = exc.line(text)
        raise error([ConfigProblem(
            display, "/", f"invalid JSON{f' at line {line}' if line else ''}: {exc}",
            "write a finite number of ordinary size instead")]) from exc
    except RecursionError as exc:
        raise error([ConfigProblem(
            display, "/", "JSON nested too deeply to read", "flatten the file: no setting nests that deep")]) from exc


def read_regular(path: Path, display: str, limit: int, error: type[ProblemsError]) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise error([ConfigProblem(display, "/", f"cannot read: {exc.strerror}", _CANNOT_READ_FIX)]) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "a device, a FIFO or a socket"
        raise error([ConfigProblem(display, "/", f"cannot read: not a regular file ({kind})", _CANNOT_READ_FIX)])
    with os.fdopen(fd, "rb") as handle:
        try:
            raw = handle.read(limit + 1)
        except OSError as exc:
            raise error([ConfigProblem(display, "/", f"cannot read: {exc.strerror}", _CANNOT_READ_FIX)]) from exc
    if len(raw) > limit:
        raise error([ConfigProblem(display, "/", f"larger than {limit // (1024 * 1024)} MiB",
                                   "a file this size is not one review-gate wrote or reads; "
                                   "check that the path names the right file")])
    return raw


__all__ = ["CONFIG_LIMIT", "FILE_LIMIT", "MAX_DIGITS", "parse_json", "read_json", "read_regular"]
