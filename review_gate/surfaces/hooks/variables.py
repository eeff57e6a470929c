"""Variables a shell line assigns and later expands, filled in: ``X=nos; echo "# ${X}ec"`` writes
``# nosec``, and ``D=.cla; rm -rf ${D}ude`` removes ``.claude``. Read, never run.

Each simple command's words are given with the values assigned earlier on the line (``X=v``,
``export X=v``, ``local``, ``declare``, ``readonly``, ``typeset``) put in place of ``$X`` and
``${X}``; a variable the line does not assign stays as written. Which assignment ran last is not
always known (``true || X=a``): the last one on the line is used, and the callers read the words
as written as well, so a value filled in only adds a reading.

    >>> [list(w) for w in expanded([("X=nos",), ("echo", "# ${X}ec B501")])]
    [['X=nos'], ['echo', '# nosec B501']]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from review_gate.surfaces.hooks.programs import ASSIGNMENT

DECLARES = frozenset({"export", "local", "declare", "readonly", "typeset"})
_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def expanded(commands: Iterable[tuple[str, ...]]) -> Iterator[tuple[str, ...]]:
    """Each command's words (in line order) with the variables assigned before it filled in."""
    values: dict[str, str] = {}
    for words in commands:
        out = tuple(fill(word, values) for word in words)
        yield out
        for word in _assignments(out):
            name, _, value = word.partition("=")
            values[name.rstrip("+")] = values.get(name.rstrip("+"), "") + value if name.endswith("+") else value


def fill(word: str, values: dict[str, str]) -> str:
    """``word`` with each ``$X``/``${X}`` of ``values`` replaced by its value."""
    if "$" not in word or not values:
        return word
    return _REFERENCE.sub(lambda m: values.get(m.group(1) or m.group(2), m.group(0)), word)


def _assignments(words: tuple[str, ...]) -> list[str]:
    index = 1 if words[:1] and words[0] in DECLARES else 0
    return [w for w in words[index:] if ASSIGNMENT.match(w) and "[" not in w.partition("=")[0]]
