"""The checks of a caller's arguments that every entry point shares (the CLI, the API, the MCP
server): a bad value is a ReviewGateError naming the argument, the value and the fix, never a
KeyError, a pydantic ValidationError or an OSError from deep inside.

    >>> choice("fail_on", "bogus", FAIL_ON)
    Traceback (most recent call last):
    ...
    review_gate.errors.UsageError: fail_on 'bogus': not one of pass_with_warnings, needs_fixes, fail, never
      fix: give fail_on as one of them
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from datetime import date, datetime
from pathlib import Path
from typing import get_args

from review_gate.errors import InputError, UsageError
from review_gate.models import FailOn, FilterMode, Packing
from review_gate.models.config_values import MAX_CONCURRENCY
from review_gate.pipeline.bounds import MAX_NAME_BYTES as MAX_NAME_BYTES
from review_gate.pipeline.bounds import MAX_PATH_BYTES as MAX_PATH_BYTES
from review_gate.pipeline.bounds import MAX_TIMEOUT_S as MAX_TIMEOUT_S
from review_gate.pipeline.bounds import path_size as path_size
from review_gate.pipeline.bounds import shown as shown

FAIL_ON: tuple[str, ...] = get_args(FailOn)
FILTER_MODES: tuple[str, ...] = get_args(FilterMode)
PACKINGS: tuple[str, ...] = get_args(Packing)


def _kind(value: object) -> str:
    return "None" if value is None else type(value).__name__


def text(name: str, value: object, *, optional: bool = True, empty: bool = True) -> None:
    """``value`` is a string (or None when ``optional``; not blank unless ``empty``)."""
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise UsageError(f"{name} {shown(value)}: not text ({_kind(value)} given)", fix=f"give {name} as a string")
    if not empty and not value.strip():
        raise UsageError(f"{name} is empty", fix=f"give {name} as a non-empty string")


def pathlike(name: str, value: object) -> None:
    """``value`` is None, a string or a path (os.PathLike), and names something (not empty)."""
    if value is None:
        return
    if not isinstance(value, (str, os.PathLike)) or isinstance(value, bytes):
        raise UsageError(f"{name} {shown(value)}: not a path ({_kind(value)} given)",
                         fix=f"give {name} as a string or a pathlib.Path")
    if not os.fspath(value):
        raise UsageError(f"{name} is empty", fix=f"give {name} as a path")
    path_size(name, value)


MAX_REF_CHARS = 1024  # a git ref or revision expression; git itself refuses far shorter names


def ref(name: str, value: object) -> None:
    """``value`` is None or a string short enough to be a git revision (a 3 MB "ref" handed to
    git fails in the OS, E2BIG, not as a message)."""
    text(name, value)
    if isinstance(value, str) and len(value) > MAX_REF_CHARS:
        raise UsageError(f"{name} {shown(value)}: {len(value):,} characters, more than a git ref may have "
                         f"({MAX_REF_CHARS:,})", fix=f"give {name} as a branch, tag or commit id")


def flag(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise UsageError(f"{name} {shown(value)}: not True or False ({_kind(value)} given)",
                         fix=f"give {name} as a bool")


def texts(name: str, values: object, *, empty: bool = True) -> None:
    """``values`` is a list or tuple of strings (a lone string is refused: it would be read as its
    characters)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        raise UsageError(f"{name} {shown(values)}: not a list of strings ({_kind(values)} given)",
                         fix=f"give {name} as a list of strings, e.g. [\"src/app.py\"]")
    item = name[:-1] if name.endswith("s") else f"{name} item"
    for value in values:
        text(item, value, optional=False, empty=empty)


def pairs(name: str, values: object, example: str) -> None:
    """``values`` is a list or tuple of 2-tuples (or 2-lists)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or not all(
            isinstance(v, (list, tuple)) and len(v) == 2 for v in values):
        raise UsageError(f"{name} {shown(values)}: not a list of pairs",
                         fix=f"give {name} as a list of pairs, e.g. {example}")


def utc_stamp(name: str, value: object) -> None:
    """A UTC time stamp exactly as the run state writes them (``YYYY-MM-DDTHH:MM:SSZ``): the state
    compares them as text, so another spelling of the same moment would compare wrongly."""
    if value is None:
        return
    text(name, value)
    assert isinstance(value, str)
    try:
        ok = len(value) == 20 and datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ") is not None
    except ValueError:
        ok = False
    if not ok:
        raise UsageError(f"{name} {shown(value)}: not a UTC time stamp YYYY-MM-DDTHH:MM:SSZ",
                         fix=f"give {name} like 2026-11-26T10:00:00Z")


def last_day(name: str, text: str) -> date:
    """A waiver's last day (inclusive): a YYYY-MM-DD date, today or later."""
    try:
        day = date.fromisoformat(text) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) else None
    except ValueError:
        day = None
    if day is None:
        raise UsageError(f"{name} {text}: not a date", fix="give it as YYYY-MM-DD")
    if day < date.today():
        raise UsageError(f"{name} {text}: that day has passed; the waiver would never apply",
                         fix="give the last day it should apply: today or later")
    return day


def workdir(cwd: str | Path | None, name: str = "cwd") -> Path:
    """The directory ``cwd`` names (default: the current one), which must exist and be one."""
    if cwd is None:
        return Path.cwd()
    pathlike(name, cwd)
    path = Path(cwd)
    fix = f"give {name} as an existing directory inside the git repository (or leave it out for the current one)"
    try:
        if path.is_dir():
            return path
        problem = "not a directory" if path.exists() else "no such directory"
    except OSError as exc:  # a name too long, a loop of links, no permission to look
        problem = exc.strerror or "cannot be read"
    raise InputError(f"{name} {str(path)!r}: {problem}", fix=fix)


def choice(name: str, value: str | None, allowed: Iterable[str]) -> None:
    """``value`` is None or one of ``allowed``."""
    options = tuple(allowed)
    if value is not None and value not in options:
        raise UsageError(f"{name} {shown(value)}: not one of {', '.join(options)}", fix=f"give {name} as one of them")


def concurrency(value: int | None, name: str = "concurrency") -> None:
    """As review-gate.json's concurrency: 1 to MAX_CONCURRENCY agents at once."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or not 1 <= value <= MAX_CONCURRENCY):
        raise UsageError(f"{name} {value!r}: must be from 1 to {MAX_CONCURRENCY}",
                         fix=f"give how many agents may run at once, e.g. {name} 8")


def timeout(seconds: float | None, name: str = "agent_timeout") -> None:
    """A finite number of seconds (float() also reads nan, inf and 1e999)."""
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                or not 0 < seconds <= MAX_TIMEOUT_S):
        shown = f"{seconds:g}" if isinstance(seconds, (int, float)) else repr(seconds)
        raise UsageError(f"{name} {shown}: must be more than 0 and at most {MAX_TIMEOUT_S} seconds",
                         fix=f"give the deadline of each agent in seconds, e.g. {name} 300")


def shard(value: tuple[int, int] | None) -> None:
    """(K, N): the K-th of N shares, 1 <= K <= N <= MAX_SHARDS."""
    from review_gate.pipeline.shards import MAX_SHARDS

    if value is None:
        return
    ok = (isinstance(value, tuple) and len(value) == 2
          and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
          and 1 <= value[0] <= value[1] <= MAX_SHARDS)
    if not ok:
        raise UsageError(f"shard {value!r}: not a share (K, N) with 1 <= K <= N <= {MAX_SHARDS}",
                         fix="give this job's share of N, e.g. shard=(2, 4)")


def formats(outputs: Iterable[tuple[object, object]]) -> None:
    """``outputs`` is a list of (format, path) pairs; each format a format's name (or a render
    function), each path a path."""
    from review_gate.outputs import FORMATS

    pairs("outputs", outputs, '[("sarif", "review.sarif")]')
    for fmt, where in outputs:
        if isinstance(fmt, str):
            choice("format", fmt, FORMATS)
        elif not callable(fmt):
            raise UsageError(f"output format {shown(fmt)}: neither a format's name nor a render function",
                             fix=f"give one of {', '.join(FORMATS)}")
        pathlike("output path", where)
