"""Findings that are not new: their rule fires on the same line before the change. Pure.

Like Semgrep's ``--baseline-commit``: a reformat (black, prettier) or a move re-adds old lines, and
every old finding would come back as new. A finding on a line the change adds is pre-existing when
an old occurrence pays for it, one for one (``paired``): a line the change removes, from the file
or from a file in the same path classes (a move), whose normalised text is the flagged line's and
on which the rule fires; for a new file that copies a file of its name, that file's lines; or, for
a finding that does not block (a warning, info), a removed line of the same hunk on which the
rule's match is the same words (an edit elsewhere on the line). A blocking finding's match may be
only part of what matters (``shell=True`` with a new argument, a submodule's ``url =`` with a new
address): only its whole line before makes it old. One for one: a change that adds a copy of an old
line beside it adds a new finding (an ``eval`` in a dead function does not excuse two new routes
that call it). Normalised: without a trailing comment, whitespace or parentheses, quotes made one
kind, a trailing comma or semicolon dropped, so ``x = (sha1(s)) , # ok`` and ``x = sha1(s)`` are
one line.
Pre-existing findings are listed (as waived, with the reason), never counted.

>>> normal("  r = (get(url,  verify=False)),  # why")
'r=geturl,verify=False'
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Literal

_SPACE = re.compile(r"\s+")
_PARENS = re.compile(r"[()]")


_COMMENT = re.compile(r"\s(?:#|//)\s")  # where a trailing comment may start


def uncommented(line: str) -> str:
    """``line`` without a trailing ``# ...`` or ``// ...`` comment: one that starts after whitespace,
    outside quotes (an even number of each quote before it).

    >>> uncommented('chmod 777 "$D" # "777" is replaced')
    'chmod 777 "$D"'
    """
    for found in _COMMENT.finditer(line):
        before = line[:found.start()]
        if before.count('"') % 2 == 0 and before.count("'") % 2 == 0 and before.count("`") % 2 == 0:
            return before
    return line


def normal(line: str) -> str:
    """A line's text as reformatting leaves it: no trailing comment, no whitespace, no parentheses
    (a formatter adds and drops redundant ones), one kind of quote, no trailing , or ;."""
    return _PARENS.sub("", _SPACE.sub("", uncommented(line))).replace("'", '"').rstrip(",;")


def fired_counts(regex: Any, texts: Iterable[str]) -> Counter[str]:
    """How many lines of ``texts`` of each normalised text a match of ``regex`` (a compiled RE2 line
    pattern over bytes) is on; one line counts once."""
    found: Counter[str] = Counter()
    for text in texts:
        data = text.encode("utf-8", "surrogateescape")
        seen: set[int] = set()
        for match in regex.finditer(data):
            start = match.start()
            while start < match.end() - 1 and data[start:start + 1] == b"\n":
                start += 1  # a match that begins with the newline before its line
            low = data.rfind(b"\n", 0, start) + 1
            if low in seen:
                continue
            seen.add(low)
            high = data.find(b"\n", start)
            found[normal(data[low:high if high >= 0 else len(data)].decode("utf-8", "replace"))] += 1
    return found


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
    """A flagged line the change adds: its number, its hunk, its normalised text, the rule's match."""

    number: int
    hunk: int
    text: str
    match: str | None
    blocks: bool = False  # its finding is major or critical: only its whole line before makes it old


@dataclass(frozen=True)
class Removed:
    """A line the change removes from the same file, on which the rule fires."""

    hunk: int
    text: str
    match: str


Pairing = Literal["moved", "elsewhere", "edited"]


def paired(added: Sequence[Added], removed: Sequence[Removed], elsewhere: Counter[str]) -> dict[int, Pairing]:
    """Which added lines an old occurrence pays for, one for one, in line order: a removed line
    of the same text (``moved``: a reformat, a move within the file), an occurrence ``elsewhere``
    (removed from a file alike, or in the file a new one copies), or, for a line whose finding does
    not block, a removed line of the same hunk with the same match (``edited``).

    >>> old = [Removed(0, "r=geturl,verify=False", "verify=False")]
    >>> paired([Added(5, 0, "r=geturl,verify=False", "verify=False"),
    ...         Added(9, 1, "r=geturl,verify=False", "verify=False")], old, Counter())
    {5: 'moved'}
    """
    used = [False] * len(removed)
    left = Counter(elsewhere)
    out: dict[int, Pairing] = {}
    for line in sorted(added, key=lambda a: a.number):
        same = next((i for i, r in enumerate(removed) if not used[i] and r.text == line.text), None)
        if same is not None:
            used[same] = True
            out[line.number] = "moved"
        elif left[line.text] > 0:
            left[line.text] -= 1
            out[line.number] = "elsewhere"
        elif line.match is not None and not line.blocks:
            edit = next((i for i, r in enumerate(removed)
                         if not used[i] and r.hunk == line.hunk and r.match == line.match), None)
            if edit is not None:
                used[edit] = True
                out[line.number] = "edited"
    return out
