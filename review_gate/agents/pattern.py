"""Agent kind ``pattern``: the RE2 patterns of its rules over added lines. Offline, linear time.

The matching itself is ``review_gate.agents.pattern_matching``'s (rules and added lines in, matches out); this
module says which files each rule reads and makes the matches findings.

The scan runs in a worker thread that cannot be killed, so it stops by itself: it looks at a
stop flag every few thousand lines or matches and between rules, and ``review`` raises the flag
when the agent is cancelled (its deadline, or the run ending). Without that, a broad rule on a
big diff kept the abandoned thread, and with it the process, alive long after the report.
"""

from __future__ import annotations

import re
import threading

import anyio.to_thread

from review_gate.agents import base, pattern_matching
from review_gate.agents.base import AgentContext, AgentOutput, AgentSpec, AgentTask
from review_gate.agents.pattern_matching import Cancelled as Cancelled  # what scan raises when told to stop
from review_gate.change.own_files import SECRETS
from review_gate.models import RawFinding, Rule
from review_gate.text.globs import selections

needs_network = False
unavailable = base.always_available
estimate = base.SPENDS_NOTHING
pack_key = base.never_packed
review_pack = base.NO_PACKS

_QUOTE = 100  # characters of the flagged line a message quotes
# characters a reader cannot see or that change what the quote shows: written as escapes
_HIDDEN = re.compile("[\r\x0c\x85\u00ad\u061c\u115f\u1160\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\u3164\ufeff]")
_WORD = 40  # a word longer than this may be cut (a minified line, a blob)


async def review(spec: AgentSpec, task: AgentTask, context: AgentContext) -> AgentOutput:
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(scan, task, stop, abandon_on_cancel=True)
    finally:
        stop.set()  # on cancellation the abandoned thread ends at its next check


def quote(line: str, start: int, end: int, redact: bool) -> str:
    """The added line a match is on, for its message: whole when short, else the part around the
    match cut at spaces (never inside a word) with an ellipsis. For a secret (``redact``) only
    the first four characters of the match are shown: the rest of its line may hold more."""
    if redact:
        secret = line[start:end].strip()
        return (secret[:4] + "…(redacted)") if len(secret) > 4 else "…(redacted)"
    return _visible(_window(line, start, end))


def _visible(text: str) -> str:
    r"""``text`` with the characters that hide code written as escapes (``\u202e``), so a quote
    shows the bidi control or hidden line end it holds.

    >>> _visible("# run the job\r    exec(code)")
    '# run the job\\r    exec(code)'
    """
    return _HIDDEN.sub(lambda m: "\\r" if m.group() == "\r" else f"\\u{ord(m.group()):04x}", text)


def _window(line: str, start: int, end: int) -> str:
    head = len(line) - len(line.lstrip())
    line, start, end = line.strip(), max(0, start - head), max(0, end - head)
    if len(line) <= _QUOTE:
        return line
    low = max(0, min(start, len(line) - _QUOTE) - _QUOTE // 4)
    high = min(len(line), max(end, low + _QUOTE))
    if low > 0:  # back to the start of the word the window would cut
        space = line.rfind(" ", 0, low + 1)
        low = space + 1 if low - space <= _WORD else low
    if high < len(line):  # on to the end of the word it would cut
        space = line.find(" ", high)
        space = len(line) if space < 0 else space
        high = space if space - high <= _WORD else high
    return ("…" if low > 0 else "") + line[low:high].strip() + ("…" if high < len(line) else "")


def scan(task: AgentTask, stop: threading.Event | None = None) -> AgentOutput:
    """Every rule's matches on the added lines (``review_gate.agents.pattern_matching``); raises Cancelled soon
    after ``stop`` is set."""
    rules = [r for r in task.rules if r.pattern]
    if not rules or not task.files:
        return AgentOutput(findings=[])
    paths = [f.path for f in task.files]
    names = [[p, *task.aliases.get(p, ())] for p in paths]
    sealed = [f.secrets_only for f in task.files]
    allowed = _allowed_files(rules, names, sealed)
    found = pattern_matching.find([r.pattern or "" for r in rules], task.files, allowed,
                                  [r.category == SECRETS for r in rules], stop)
    return AgentOutput(findings=[
        _finding(rules[m.rule], paths[m.file], m.line, m.end_line,
                 quote(m.text, m.start, m.end, rules[m.rule].redact),
                 _column(m.text, m.start, m.end) if m.line is not None else None) for m in found])


def _allowed_files(rules: list[Rule], names: list[list[str]], sealed: list[bool]) -> list[set[int] | None]:
    """For each rule, the files (by index) its globs select under any of their names: the path, and
    for a script its aliases (``bin/deploy`` is ``bin/deploy.py`` too when a domain claims it);
    None for every file. The gate's own data files a change commits (``secrets_only``) are read by
    the secret rules only: the rest would judge a quoted finding or a rule text as code
    (``own_files.sealed``). Rules share their globs (``*.py``): each list is asked once."""
    owners = [index for index, known in enumerate(names) for _ in known]
    lists = list(dict.fromkeys(tuple(g) for r in rules for g in (r.paths, r.exclude_paths) if g))
    chosen = {patterns: {owners[k] for k in picked}
              for patterns, picked in zip(lists, selections(lists, [n for known in names for n in known]), strict=True)}
    readable = {i for i, only_secrets in enumerate(sealed) if not only_secrets}
    every = set(range(len(names)))
    out: list[set[int] | None] = []
    for rule in rules:
        secret = rule.category == SECRETS
        if not rule.paths and not rule.exclude_paths and (secret or not any(sealed)):
            out.append(None)
            continue
        files = chosen[tuple(rule.paths)] if rule.paths else every
        if rule.exclude_paths:
            files = files - chosen[tuple(rule.exclude_paths)]
        out.append(files if secret else files & readable)
    return out


def _column(text: str, start: int, end: int) -> int:
    """The 1-based character column where a match from ``start`` to ``end`` of its line starts,
    past the spaces it may begin with (``^\\s*print(`` is at the ``p``)."""
    while start < min(end, len(text)) - 1 and text[start] in " \t\n":
        start += 1
    return start + 1


def _finding(rule: Rule, path: str, number: int | None, end: int | None, quoted: str,
             column: int | None) -> RawFinding:
    name = rule.name.rstrip(":")
    # the quote adds nothing when the name already says it ("Bare except:" on `except:`), and a
    # name ending in a colon is never followed by another ("Bare except:: except:")
    message = rule.name if quoted.strip() and quoted.strip() in rule.name else f"{name}: {quoted}"
    return RawFinding(
        severity=rule.severity, rule_id=rule.id, category=rule.category, file=path, line=number,
        end_line=end, column=column, message=message,
        recommendation=rule.recommendation, confidence=rule.confidence,
    )
