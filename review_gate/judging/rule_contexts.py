"""Whether a rule's context applies to one of its findings (``RuleContext``). Pure.

The file is seen as the lines the caller knows (``Lines``: its new content when it could be
read, else what the hunks show) and the lines the change removed from it. The contexts:

- ``branch``: an enclosing ``if``/``elif``/``else`` header above the flagged line (found by
  indentation, so Python, and C-like code written the usual way) whose condition matches; for an
  ``else``, the conditions of its ``if``/``elif`` chain count;
- ``replaces`` / ``adds``: whether a removed line of the file has the flagged line's key;
- ``same_owner``: whether the owner the line names is the repository's own;
- ``line``: whether the flagged line matches;
- ``statement``: whether the statement starting on the flagged line matches (to where its
  brackets close).

>>> lines = Lines({1: "if verify is False:", 2: "    ctx.check_hostname = False"})
>>> branch_conditions(lines, 2)
['if verify is False:']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from review_gate.models.rule_context import RuleContext

SearchFn = Callable[[str, str], "str | None"]
"""(RE2 pattern, text) -> the match's first group, or the whole match; None when it does not match."""
MAX_UP = 400  # lines an enclosing header is looked for above the flagged line
STATEMENT_LINES = 20  # lines a statement is followed over
_HEADER = re.compile(r"^\s*(?:\}\s*)?(?:if|elif|else\s+if|else|unless|when)\b.*(?::|\{|\bthen)\s*(?:#.*|//.*)?$")
_ELSE = re.compile(r"^\s*(?:\}\s*)?else\b\s*(?::|\{)")
_CHAIN = re.compile(r"^\s*(?:\}\s*)?(?:if|elif|else\s+if)\b")
_IF = re.compile(r"^\s*if\b")


@dataclass(frozen=True)
class Lines:
    """The lines of one file that are known, by number (1-based), and its removed lines."""

    text: Mapping[int, str]
    removed: Sequence[str] = field(default_factory=tuple)

    def get(self, number: int) -> str | None:
        return self.text.get(number)


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def branch_conditions(lines: Lines, number: int) -> list[str]:
    """The headers of the blocks that enclose line ``number`` (innermost first), each ``else``
    followed by the headers of its chain. Stops at a line it does not know."""
    line = lines.get(number)
    if line is None:
        return []
    level = _indent(line)
    found: list[str] = []
    at = number - 1
    while at >= max(1, number - MAX_UP) and level > 0:
        above = lines.get(at)
        if above is None:
            break
        if above.strip() and _indent(above) < level:
            level = _indent(above)
            if _HEADER.match(above):
                found.append(above.strip())
                if _ELSE.match(above):
                    found += _chain(lines, at, level)
        at -= 1
    return found


def enclosing(lines: Lines, number: int) -> list[str]:
    """The lines that open the blocks around line ``number``, innermost first: each line above it
    that is indented less than everything between them (``def down`` around a Rails migration's
    rollback). Stops at a line it does not know.

    >>> enclosing(Lines({1: "class M:", 2: "  def down", 3: "    drop(x)"}), 3)
    ['def down', 'class M:']
    """
    line = lines.get(number)
    if line is None:
        return []
    level = _indent(line)
    found: list[str] = []
    for at in range(number - 1, max(0, number - MAX_UP), -1):
        if level == 0:
            break
        above = lines.get(at)
        if above is None:
            break
        if above.strip() and _indent(above) < level:
            level = _indent(above)
            found.append(above.strip())
    return found


def _chain(lines: Lines, number: int, level: int) -> list[str]:
    """The if/elif headers of the chain an ``else`` at line ``number`` ends: the lines above at its
    indentation, up to the ``if`` that starts it."""
    found = []
    for at in range(number - 1, max(0, number - MAX_UP), -1):
        above = lines.get(at)
        if above is None:
            break
        if not above.strip() or _indent(above) > level or above.strip() == "}":
            continue
        if _indent(above) < level or not _CHAIN.match(above):
            break  # a statement at the else's level, or an outer block: the chain ended
        found.append(above.strip())
        if _IF.match(above):
            break
    return found


def statement(lines: Lines, number: int) -> str:
    """The lines from ``number`` on until the brackets opened on them close (at most STATEMENT_LINES).

    >>> statement(Lines({1: "print(", 2: "  'x',", 3: "  file=sys.stderr)", 4: "y = 1"}), 1)
    "print(\\n  'x',\\n  file=sys.stderr)"
    """
    taken: list[str] = []
    depth = 0
    for at in range(number, number + STATEMENT_LINES):
        line = lines.get(at)
        if line is None:
            break
        taken.append(line)
        depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")
        if depth <= 0:
            break
    return "\n".join(taken)


def applies(context: RuleContext, lines: Lines, number: int, owner: str | None, search: SearchFn,
            created: Callable[[], AbstractSet[str]] = frozenset) -> bool:
    """Whether ``context`` holds for a finding at line ``number``; ``search(pattern, text)`` is the
    first group (or the whole match) of an RE2 search, None when it does not match; ``created()``,
    the tables the change creates (``judging.created_tables``), asked only by a ``created`` context."""
    line = lines.get(number)
    if line is None:
        return False
    if context.only is not None and search(context.only, line) is None:
        return False
    if context.when == "line":
        return search(context.pattern, line) is not None
    if context.when == "statement":
        return search(context.pattern, statement(lines, number)) is not None
    if context.when == "branch":
        return any(search(context.pattern, header) is not None for header in branch_conditions(lines, number))
    if context.when == "block":
        return any(search(context.pattern, header) is not None for header in enclosing(lines, number))
    if context.when == "created":
        from review_gate.judging.created_tables import table_name

        named = search(context.pattern, line)
        return named is not None and table_name(named) in created()
    if context.when == "same_owner":
        named = search(context.pattern, line)
        return owner is not None and named is not None and named.lower() == owner.lower()
    key = search(context.pattern, line)
    if key is None:
        return False
    replaced = any(search(context.pattern, removed) == key for removed in lines.removed)
    return replaced if context.when == "replaces" else not replaced


