"""Waiver comments as a line holds them: review-gate's ``review-gate: ignore[ID] reason`` and the
peer tools' suppressions (``# noqa: S501``, ``# nosec``, ``eslint-disable-line``, zizmor's and
Semgrep's), read from one line's text. Pure. What they waive is ``judging.waivers``'s to judge.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from review_gate.judging.code_regions import Comments
from review_gate.models.config_values import BLOCKING
from review_gate.models.facts import FileChange
from review_gate.text.waiver_markers import MARKERS

AGENT = "review-gate"
MAX_COMMENT = 200
_OURS = re.compile(r"(?:#|//|/\*|--|<!--|;|%|'|\{#)[ \t]*review-gate:[ \t]*ignore\[([^\]\n]*)\]([^\n]*)")
_CLOSERS = re.compile(r"[ \t]*(?:\*/|-->|#\}|\*\)|%\})[ \t]*$")
# the codes after a marker, past a blank or a colon: `# nosec/` (a sed substitution's end) names none
_CODES = r"(?:(?:[ \t]*:[ \t]*|[ \t]+)([A-Za-z0-9_./@ ,:-]*))?"
_PEERS: tuple[tuple[str, re.Pattern[str], bool, bool], ...] = (
    # (tool, pattern with the codes as group 1, speaks for its own line, for the line below)
    ("noqa", re.compile(r"#[ \t]*noqa[ \t]*:[ \t]*([A-Za-z]+[0-9]+(?:[ \t]*,?[ \t]*[A-Za-z]+[0-9]+)*)", re.I),
     True, False),
    ("nosec", re.compile(r"#[ \t]*nosec\b" + _CODES), True, False),
    ("eslint", re.compile(r"(?://|/\*)[ \t]*eslint-disable-line\b" + _CODES), True, False),
    ("eslint", re.compile(r"(?://|/\*)[ \t]*eslint-disable-next-line\b" + _CODES), False, True),
    ("zizmor", re.compile(r"#[ \t]*zizmor:[ \t]*ignore\[([^\]\n]*)\]"), True, False),
    ("semgrep", re.compile(r"(?:#|//|/\*|--)[ \t]*nosemgrep\b" + _CODES), True, True),
)
BARE_SPARES = BLOCKING  # what a peer's suppression naming no code never waives
_ANY_MARKER = re.compile("|".join(re.escape(m) for m in MARKERS))  # one pass over a line, not six


@dataclass(frozen=True)
class Comment:
    """One waiver comment on a line: whose syntax, the ids or codes it names (empty: a bare
    suppression), the reason it gives, and the comment as written."""

    tool: str  # "review-gate" or a peer tool of Rule.peers
    codes: tuple[str, ...]
    reason: str
    text: str
    own_line: bool  # it speaks for the line it is on
    next_line: bool  # its syntax speaks for the line below (it is on the line above a finding)
    alone: bool = False  # nothing but blanks before it on its line: only then may it speak for the line below
    at: int = 0  # where on its line it starts


def comments(text: str) -> list[Comment]:
    """The waiver comments on one line.

    >>> [(c.tool, c.codes, c.reason) for c in comments("k = 1  # review-gate: ignore[sec-a, sec-b] a test key")]
    [('review-gate', ('sec-a', 'sec-b'), 'a test key')]
    >>> [(c.tool, c.codes) for c in comments("requests.get(u, verify=False)  # noqa: S501  # nosec")]
    [('noqa', ('S501',)), ('nosec', ())]
    """
    if _ANY_MARKER.search(text) is None:
        return []
    found = []
    for match in _OURS.finditer(text):
        reason = _CLOSERS.sub("", match.group(2)).strip(" \t:-—–")
        found.append(Comment(AGENT, _split(match.group(1)), reason, _clip(match.group(0)), True, True,
                             not text[:match.start()].strip(), match.start()))
    for tool, pattern, own_line, next_line in _PEERS:
        for match in pattern.finditer(text):
            comment = _clip(_CLOSERS.sub("", match.group(0)).strip())
            found.append(Comment(tool, _split(match.group(1) or ""), comment, comment, own_line, next_line,
                                 not text[:match.start()].strip(), match.start()))
    return found


def comments_in(text: str, path: str) -> list[Comment]:
    """``comments`` that are comments in ``path``'s language as one line alone shows them: not the
    words of one inside a string literal (``s = "# review-gate: ignore[x] ok"`` waives nothing).
    A review reads them with the whole file (``_LineAt.comments``)."""
    return [c for c in comments(text) if Comments(()).holds(path, 0, text, c.at)]


def _split(codes: str) -> tuple[str, ...]:
    # a code never ends in "/": `# nosec B501/` is the end of a sed substitution
    return tuple(code.rstrip("/") for code in re.split(r"[\s,]+", codes.strip()) if code.rstrip("/"))


def _clip(text: str) -> str:
    return text if len(text) <= MAX_COMMENT else text[:MAX_COMMENT - 1] + "…"


def adds_waiver(new: str, old: str = "", peers: Iterable[str] = ()) -> Comment | None:
    """A waiver in ``new`` that ``old`` does not hold (an edit that adds one), or None: a
    review-gate waiver, or a peer's suppression that would waive a rule naming one of ``peers``
    (``Rule.peers`` codes, ``noqa:S501``). What the hooks deny: a coding agent must not waive the
    findings of its own work.

    >>> adds_waiver("x()  # review-gate: ignore[sec-x] fine").codes
    ('sec-x',)
    >>> adds_waiver("a\\n# review-gate: ignore[x] y\\n", "# review-gate: ignore[x] y") is None
    True
    >>> adds_waiver("get(u, verify=False)  # noqa: S501", peers=["noqa:S501"]).tool
    'noqa'
    >>> once = "a  # review-gate: ignore[x] y"
    >>> adds_waiver(once + "\\nb  # review-gate: ignore[x] y", once).codes
    ('x',)
    """
    mapped = {peer(code) for code in peers}
    # counted, not a set: a second copy of a waiver the file holds (on a new line, by an edit or a
    # sed `&`) is a new waiver; keeping the one copy while its line changes is not
    before = Counter(c.text for line in old.splitlines() for c in comments(line))
    for line in new.splitlines():
        for comment in comments(line):
            if before[comment.text] > 0:
                before[comment.text] -= 1
                continue
            if comment.tool == AGENT or peer_waives(comment, mapped):
                return comment
    return None


def marked(change: FileChange) -> bool:
    """Whether the diff of ``change`` holds the words of any waiver (one search of its text)."""
    return _ANY_MARKER.search(change.patch) is not None if change.patch else bool(change.hunks)


def peer(code: str) -> tuple[str, str]:
    tool, _, name = code.partition(":")
    return tool, name.lower()


def peer_waives(comment: Comment, mapped: set[tuple[str, str]]) -> bool:
    """Whether a peer's suppression waives a rule whose peer codes are ``mapped``."""
    if comment.tool == AGENT:
        return False
    if not comment.codes:  # a bare suppression: every rule that names a code of that tool
        return comment.tool != "noqa" and any(tool == comment.tool for tool, _ in mapped)
    return any((comment.tool, code.lower()) in mapped for code in comment.codes)


__all__ = ["AGENT", "BARE_SPARES", "Comment", "adds_waiver", "comments", "comments_in", "marked", "peer", "peer_waives"]
