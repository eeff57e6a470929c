"""The bounds of a caller's arguments that need no model: a path the OS would refuse, an agent's
longest deadline. ``pipeline.arguments`` checks the rest; this module stays light so that the
command line and the agent hooks check their flags without loading pydantic."""

from __future__ import annotations

import os

from review_gate.errors import UsageError

MAX_TIMEOUT_S = 3600  # an agent's deadline, as timeout_s in the config files
MAX_PATH_BYTES = 4096  # PATH_MAX on Linux: a longer path is refused by the OS (ENAMETOOLONG)
MAX_NAME_BYTES = 255  # NAME_MAX: the longest name of one file or directory in a path


def shown(value: object) -> str:
    """``value`` as a message quotes it: its repr, cut (a caller's value may be any size)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def path_size(name: str, value: str | os.PathLike[str]) -> None:
    """A path the OS would refuse before looking at the disk (a NUL byte, longer than a path or
    one of its names may be), refused here naming the argument, never as an OSError from deep
    inside (ENAMETOOLONG was a crash log)."""
    raw = os.fsencode(value)
    if b"\0" in raw:
        raise UsageError(f"{name} {shown(os.fspath(value))}: a path cannot hold a NUL byte",
                         fix=f"give {name} as the path of an existing file or directory")
    if len(raw) > MAX_PATH_BYTES:
        raise UsageError(f"{name} {shown(os.fspath(value))}: the path is {len(raw):,} bytes long, more than the "
                         f"{MAX_PATH_BYTES:,} a path may have", fix=f"give {name} a shorter path")
    longest = max(len(part) for part in raw.split(b"/"))
    if longest > MAX_NAME_BYTES:
        raise UsageError(f"{name} {shown(os.fspath(value))}: a name in the path is {longest:,} bytes long, more "
                         f"than the {MAX_NAME_BYTES} a file name may have", fix=f"give {name} a shorter path")
