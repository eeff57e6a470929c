"""What a file holds once an edit tool or a sed/perl substitution has run, read, never written:
so a waiver the edit completes from the text around it (``nosXec`` -> ``nosec``, ``ignore sec``
-> ``ignore[sec``) is compared whole, as the file will hold it, with the file as it is.

Only a regular file inside the repository (the payload's directory's work tree), of bounded
size, is read; ``None`` says it could not be, and the caller falls back to what it can see.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

MAX_FILE = 2 * 1024 * 1024  # bytes read of a file an edit writes; a larger one is not read

Edit = tuple[str, str, bool]  # old_string, new_string, replace_all


def current(path: str, cwd: Path, root: Path | None) -> str | None:
    """The text of ``path`` (relative to ``cwd``) when it is a regular file inside ``root``
    (its links resolved) and at most ``MAX_FILE`` bytes; else None."""
    if root is None:
        return None
    full = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    top = os.path.realpath(root)
    if not full.startswith(top + os.sep):
        return None
    try:
        if not os.path.isfile(full) or os.path.getsize(full) > MAX_FILE:
            return None
        with open(full, encoding="utf-8", errors="replace") as handle:
            return handle.read(MAX_FILE + 1)
    except OSError:
        return None


def applied(text: str, edits: Sequence[Edit]) -> str | None:
    """``text`` after ``edits`` in order, as Claude Code's Edit and MultiEdit make it (each
    ``old_string`` replaced once, or everywhere with ``replace_all``); None when one does not
    apply (its ``old_string`` is empty or not there: the tool refuses the call)."""
    for old, new, everywhere in edits:
        if not old or old not in text:
            return None
        text = text.replace(old, new) if everywhere else text.replace(old, new, 1)
    return text
