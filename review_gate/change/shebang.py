"""The interpreter a script's ``#!`` line names: what classifies a file its name does not.

``bin/deploy`` holding ``#!/usr/bin/env python3`` is Python code, and a domain says so with
``shebangs`` (review-domains.json). Stage 2 puts such a file in that domain (``Domain.claims``),
and every glob that selects the domain's files by extension selects it too
(``models.config.script_names``: it is matched as ``bin/deploy.py`` as well), so the domain's
policies and its rules' ``paths`` reach it as they reach ``deploy.py``.

The first line comes from the change when a hunk shows new line 1 (a new file, an edit at the
top); otherwise ``annotate`` reads it from the new content by blob id (``review_gate.change.blobs``),
and only for a file that has no extension or that no domain's globs select: a large change reads
next to nothing. Parsing is pure; ``annotate`` runs git and reads files.

>>> interpreter("#!/usr/bin/env -S python3 -u")
'python3'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from review_gate.models import Domain, FileChange, PRFacts
from review_gate.text.globs import Globs

MAX_LINE = 256  # bytes of a #! line the kernel reads (Linux's BINPRM_BUF_SIZE)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,59}")
_ENV_ARGUMENT = {"-u", "--unset", "-C", "--chdir", "-P"}  # env options whose value is the next word


def interpreter(line: str) -> str | None:
    """The program a ``#!`` line runs, lower case: its file name, or what ``env`` runs (options and
    ``NAME=value`` settings skipped, ``-S`` split); None for no ``#!`` line or no usable name."""
    line = line.removeprefix("\ufeff")
    if not line.startswith("#!"):
        return None
    words = line[2:MAX_LINE].split()
    if not words:
        return None
    program, rest = PurePosixPath(words[0]).name, words[1:]
    if program == "env":
        while rest and (rest[0].startswith("-") or "=" in rest[0]):
            option = rest.pop(0)
            if option in _ENV_ARGUMENT and rest:
                rest.pop(0)
            elif option.startswith("-S") and len(option) > 2:  # -Spython3: the program is glued on
                rest.insert(0, option[2:])
            elif option.startswith("--split-string="):
                rest.insert(0, option.partition("=")[2])
        if not rest:
            return None
        program = PurePosixPath(rest[0]).name
    return program.lower() if _NAME.fullmatch(program) else None


def first_line(change: FileChange) -> str | None:
    """New line 1 as the change shows it, None when no hunk shows it."""
    for hunk in change.hunks:
        if hunk.lines and hunk.lines[0].number == 1:
            return hunk.lines[0].text
    return None


def annotate(facts: PRFacts, root: Path | None, domains: Sequence[Domain]) -> PRFacts:
    """``facts`` with each script's ``interpreter``: from its first line in the change, else read
    from its new content (in repository ``root``) when its name alone classifies it poorly."""
    from review_gate.change.blobs import new_contents

    found: dict[str, str | None] = {}
    unread: list[FileChange] = []
    named = _Named(domains)
    for change in facts.files:
        if change.interpreter is not None or change.status == "deleted" or change.binary:
            continue
        line = first_line(change)
        if line is not None:
            found[change.path] = interpreter(line)
        elif root is not None and not named(change.path):
            unread.append(change)
    if unread and root is not None:
        for change, data in new_contents(root, unread):
            if data is not None:
                found[change.path] = interpreter(data[:MAX_LINE].split(b"\n", 1)[0].decode("utf-8", "replace"))
    if not any(found.values()):
        return facts
    files = [c.model_copy(update={"interpreter": found[c.path]}) if found.get(c.path) else c for c in facts.files]
    return facts.model_copy(update={"files": files})


class _Named:
    """Whether a file's name says what it is: it has an extension, and a domain's globs select
    it. An extension a domain lists (``*.py``) answers by a set lookup: on a large change of
    ordinary files no glob runs here, and no file is read."""

    def __init__(self, domains: Sequence[Domain]) -> None:
        self._extensions = {ext for d in domains for ext in d.extensions()}
        self._domains = domains
        self._specs: list[Globs] | None = None

    def __call__(self, path: str) -> bool:
        suffix = PurePosixPath(path).suffix
        if not suffix:
            return False
        if suffix in self._extensions:
            return True
        if self._specs is None:
            self._specs = [Globs(d.paths) for d in self._domains]
        return any(spec.match(path) for spec in self._specs)


def of_file(root: Path, path: str) -> str | None:
    """The interpreter of the working tree's ``path`` (``review-gate explain``): a regular file
    inside ``root``, opened through no symbolic link; None otherwise."""
    import os
    import stat

    base = root.resolve()
    target = base / path
    try:
        target.resolve().relative_to(base)
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError, RuntimeError):
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a directory opens too, but fdopen refuses it
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as handle:
        head = handle.read(MAX_LINE)
    return interpreter(head.split(b"\n", 1)[0].decode("utf-8", "replace"))
