"""Findings that are not new: their rule fires on the same line text before the change. Pure.

Like Semgrep's ``--baseline-commit``: a reformat (black, prettier) or a move re-adds old lines,
and every old finding would come back as new. A finding is pre-existing when its rule's pattern
matches, in the base version of its file (or of the file it was renamed from), or among the
lines the change removes anywhere (a move to another file), a line whose normalised text is
the flagged line's. Normalised: without a trailing comment, whitespace or parentheses, quotes made
one kind, a trailing comma or semicolon dropped, so ``x = (sha1(s)) ,  # ok`` and ``x = sha1(s)``
are one line.
Pre-existing findings are listed (as waived, with the reason), never counted.

>>> normal("  r = (get(url,  verify=False)),  # why")
'r=geturl,verify=False'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

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


def fired_lines(regex: Any, texts: Iterable[str]) -> set[str]:
    """The normalised text of each line of ``texts`` on which a match of ``regex`` (a compiled RE2
    line pattern over bytes) starts."""
    found: set[str] = set()
    for text in texts:
        data = text.encode("utf-8", "surrogateescape")
        for match in regex.finditer(data):
            start = match.start()
            while start < match.end() - 1 and data[start:start + 1] == b"\n":
                start += 1  # a match that begins with the newline before its line
            low = data.rfind(b"\n", 0, start) + 1
            high = data.find(b"\n", start)
            found.add(normal(data[low:high if high >= 0 else len(data)].decode("utf-8", "replace")))
    return found
