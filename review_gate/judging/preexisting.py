"""Findings that are not new: an old occurrence of their rule pays for them, one for one. Pure.

Like Semgrep's ``--baseline-commit``: a move re-adds old lines, and every old finding would come
back as new. A finding on a line the change adds is pre-existing when a line the change removes
pays for it (``paired``), on which the rule fires and whose text is the flagged line's as written
(only leading and trailing whitespace aside: a re-indent is the same line, a reformat inside it is
not, since whitespace in a string or ``//`` in an expression is code). What may pay:

- a line removed from the same file (``own``: a move within the file, a re-indent), or from the
  file it was renamed from;
- a line removed from the file a new file copies (its ``source``: a split, a file moved without
  git pairing the rename), when that file stands in the same path classes;
- for a finding that does not block (a warning, info), a removed line of the same hunk on which
  the rule's match is the same words (an edit elsewhere on the line). A blocking finding's match
  may be only part of what matters (``shell=True`` with a new argument): only its whole line
  before makes it old.

Each removed line pays once, over the whole change: the line a copy of a file keeps still stands
in the file it was copied from, and pays there, so it pays for no copy; a line removed from one
file pays for no line added to another it was not moved or copied to; a change that adds a copy of
an old line beside it adds a new finding.

>>> old = {"a.py": [Removed(0, "r = get(url, verify=False)", "verify=False")]}
>>> paired([Added("a.py", 5, 0, "r = get(url, verify=False)", "verify=False"),
...         Added("a.py", 9, 1, "r = get(url, verify=False)", "verify=False"),
...         Added("b.py", 2, 0, "r = get(url, verify=False)", "verify=False")], old,
...        {"a.py": ("a.py", []), "b.py": (None, [])})
{('a.py', 5): ('own', 'a.py')}
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Literal


def normal(line: str) -> str:
    """A line's text as compared with an old one: as written, less leading and trailing whitespace.

    >>> normal("    return eval(size) // 2  ")
    'return eval(size) // 2'
    """
    return line.strip()


def lines_touched(regex: Any, lines: Sequence[str]) -> list[int]:
    """The indices of ``lines`` that a match of ``regex`` over them, joined, starts on or runs
    over, in order: one RE2 call for them all, not one a line. Every line on which the regex
    alone matches is among them: the scan reaches it, or a match that runs over it.

    >>> import re2
    >>> lines_touched(re2.compile(rb"eval\\("), ["x = 1", "eval(a)", "y", "z = eval(b)"])
    [1, 3]
    """
    data = "\n".join(lines).encode("utf-8", "surrogateescape")
    starts = list(accumulate((len(line.encode("utf-8", "surrogateescape")) + 1 for line in lines), initial=0))
    touched: dict[int, None] = {}
    for match in regex.finditer(data):
        first = bisect_right(starts, match.start()) - 1
        last = bisect_right(starts, max(match.start(), match.end() - 1)) - 1
        touched.update(dict.fromkeys(range(first, min(last, len(lines) - 1) + 1)))
    return sorted(touched)


def first_match(regex: Any, line: str) -> str | None:
    """The words of ``regex``'s first match on ``line``, or None."""
    found = regex.search(line.encode("utf-8", "surrogateescape"))
    return None if found is None else bytes(found.group(0)).decode("utf-8", "replace")


@dataclass(frozen=True)
class Added:
    """A flagged line the change adds: its file, number, hunk, compared text, the rule's match."""

    path: str
    number: int
    hunk: int
    text: str
    match: str | None
    blocks: bool = False  # its finding is major or critical: only its whole line before makes it old


@dataclass(frozen=True)
class Removed:
    """A line the change removes from a file (its hunk there), on which the rule fires."""

    hunk: int
    text: str
    match: str


Pairing = Literal["own", "source", "edited"]


Where = tuple[str | None, Sequence[str]]
"""Where a file's lines may come from: the base path it stood at (None for a new file or a copy),
and the base paths of the files it copies."""


def paired(added: Sequence[Added], removed: Mapping[str, Sequence[Removed]],
           where: Mapping[str, Where]) -> dict[tuple[str, int], tuple[Pairing, str]]:
    """(path, line) -> how and from which base path an old occurrence of one rule pays for an
    added line, one for one over the whole change. ``removed``: each base path's removed lines on
    which the rule fires; ``where``: each changed file's own base path and copy sources.

    In three rounds, each in file and line order, so the nearest old line pays first: a removed
    line of the same text where the file stood (``own``), then one of a file it copies
    (``source``), then, for a line whose finding does not block, a removed line of the same hunk
    where it stood with the same match (``edited``)."""
    used = {path: [False] * len(lines) for path, lines in removed.items()}
    by_text: dict[tuple[str, str], deque[int]] = defaultdict(deque)  # each text's removed lines, in order
    by_hunk: dict[tuple[str, int], list[int]] = defaultdict(list)
    for path, lines in removed.items():
        for i, r in enumerate(lines):
            by_text[(path, r.text)].append(i)
            by_hunk[(path, r.hunk)].append(i)
    ordered = sorted(added, key=lambda a: (a.path, a.number))
    out: dict[tuple[str, int], tuple[Pairing, str]] = {}

    def take(base: str, line: Added, exact: bool) -> bool:
        """Mark the first unused removed line at ``base`` that pays for ``line``: of its text, or
        (not ``exact``) of its hunk and match."""
        marks = used.get(base, [])
        if exact:
            queue = by_text.get((base, line.text))
            while queue and marks[queue[0]]:  # taken in an earlier round
                queue.popleft()
            at = queue.popleft() if queue else None
        else:
            at = next((i for i in by_hunk.get((base, line.hunk), ())
                       if not marks[i] and removed[base][i].match == line.match), None)
        if at is None:
            return False
        marks[at] = True
        return True

    for round_ in ("own", "source", "edited"):
        for line in ordered:
            key = (line.path, line.number)
            if key in out:
                continue
            own, copies = where.get(line.path, (None, ()))
            if round_ == "own" and own is not None and take(own, line, exact=True):
                out[key] = ("own", own)
            elif round_ == "source":
                found = next((s for s in copies if take(s, line, exact=True)), None)
                if found is not None:
                    out[key] = ("source", found)
            elif (round_ == "edited" and own is not None and line.match is not None and not line.blocks
                  and take(own, line, exact=False)):
                out[key] = ("edited", own)
    return out
