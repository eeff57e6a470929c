"""Agent kind ``pattern``: the RE2 patterns of its rules over added lines. Offline, linear time.

All added lines of the scope are joined into one text; an RE2 set finds in one pass which rules
occur at all, and only those rules are scanned for positions (RE2 calls, not bytes, are what
cost). Match offsets map back to (file, line) through a sorted table of line starts. A match may
span consecutive added lines of one file, never more (see ``_Joined``).

The scan runs in a worker thread that cannot be killed, so it stops by itself: it looks at a
stop flag every few thousand lines or matches and between rules, and ``review`` raises the flag
when the agent is cancelled (its deadline, or the run ending). Without that, a broad rule on a
big diff kept the abandoned thread, and with it the process, alive long after the report.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

import anyio.to_thread

from review_gate.agents import base
from review_gate.agents.base import AgentContext, AgentOutput, AgentSpec, AgentTask
from review_gate.globs import Globs
from review_gate.models import RawFinding, Rule
from review_gate.own_files import SECRETS
from review_gate.patterns import compile_pattern, pattern_set

needs_network = False
unavailable = base.always_available
estimate = base.SPENDS_NOTHING
pack_key = base.never_packed
review_pack = base.NO_PACKS

_QUOTE = 100  # characters of the flagged line a message quotes
_WORD = 40  # a word longer than this may be cut (a minified line, a blob)
_CHECK_EVERY = 4096  # lines or matches between two looks at the stop flag


class Cancelled(Exception):
    """The scan was told to stop: the agent it works for was cancelled."""


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise Cancelled


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


class _Joined:
    """The added lines of a scope as one text, and the way back from a byte offset to a line.

    A *run* is a stretch of consecutive added lines of one file: a match may span lines within
    a run (``except:`` then ``pass``), never across runs (another hunk, another file).
    """

    def __init__(self, task: AgentTask, stop: threading.Event | None = None) -> None:
        chunks: list[bytes] = []
        self.starts: list[int] = []
        self.where: list[tuple[int, int]] = []  # (file index, line number)
        self.run: list[int] = []
        offset = run = 0
        for index, change in enumerate(task.files):
            for hunk in change.hunks:
                for line in hunk.lines:
                    if not line.added:
                        continue
                    if len(chunks) % _CHECK_EVERY == 0:
                        _check(stop)
                    data = line.text.encode("utf-8", "surrogateescape")
                    if self.where and self.where[-1] != (index, line.number - 1):
                        run += 1
                    self.run.append(run)
                    self.starts.append(offset)
                    self.where.append((index, line.number))
                    chunks.append(data)
                    offset += len(data) + 1
        self.text = b"\n".join(chunks)

    def line_at(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def span(self, start: int, end: int) -> tuple[int, int]:
        """First and last line of a match, ignoring the newlines it may begin or end with."""
        text = self.text
        while start < end - 1 and text[start] == 0x0A:
            start += 1
        while end - 1 > start and text[end - 1] == 0x0A:
            end -= 1
        return self.line_at(start), self.line_at(max(start, end - 1))

    def run_bounds(self, run: int, hint: int) -> tuple[int, int]:
        """Byte range of the run that holds line index ``hint``."""
        first = last = hint
        while first > 0 and self.run[first - 1] == run:
            first -= 1
        while last + 1 < len(self.run) and self.run[last + 1] == run:
            last += 1
        end = self.starts[last + 1] - 1 if last + 1 < len(self.starts) else len(self.text)
        return self.starts[first], end


def scan(task: AgentTask, stop: threading.Event | None = None) -> AgentOutput:
    """Every rule's matches on the added lines; raises Cancelled soon after ``stop`` is set."""
    rules = [r for r in task.rules if r.pattern]
    joined = _Joined(task, stop)
    if not rules or not joined.where:
        return AgentOutput(findings=[])
    present = pattern_set([r.pattern for r in rules if r.pattern]).Match(joined.text) or []
    paths = [f.path for f in task.files]
    names = [[p, *task.aliases.get(p, ())] for p in paths]
    sealed = [f.secrets_only for f in task.files]
    findings: list[RawFinding] = []
    for rule_index in sorted(present):
        _check(stop)
        findings.extend(_scan_rule(rules[rule_index], joined, paths, names, sealed, stop))
    return AgentOutput(findings=findings)


def _scan_rule(rule: Rule, joined: _Joined, paths: list[str], names: list[list[str]], sealed: list[bool],
               stop: threading.Event | None) -> list[RawFinding]:
    assert rule.pattern is not None
    regex = compile_pattern(rule.pattern)
    allowed = _allowed_files(rule, names, sealed)
    seen: set[int] = set()
    found: list[RawFinding] = []
    crossed: dict[int, int] = {}  # run -> a line index in it, for runs a bad match ran into

    def record(start: int, end: int) -> None:
        first, last = joined.span(start, end)
        if joined.run[first] != joined.run[last]:
            # The match ran out of its run (into another hunk or file): it is not real, and it
            # may have swallowed real matches; those runs are scanned again on their own.
            for index in (first, last):
                crossed.setdefault(joined.run[index], index)
            return
        file_index, number = joined.where[first]
        if first in seen or (allowed is not None and file_index not in allowed):
            return
        seen.add(first)
        found.append(_finding(rule, paths[file_index], number, joined.where[last][1],
                              _quoted(joined, first, start, end, rule.redact), _column(joined, first, start, end)))

    for match in _matches(regex, joined.text, stop):
        record(match.start(), match.end())
    for run, hint in crossed.items():
        _check(stop)
        low, high = joined.run_bounds(run, hint)
        for match in _matches(regex, joined.text[low:high], stop):
            record(low + match.start(), low + match.end())
    return found


def _matches(regex: Any, text: bytes, stop: threading.Event | None) -> Iterator[Any]:
    for count, match in enumerate(regex.finditer(text)):
        if count % _CHECK_EVERY == 0:
            _check(stop)
        yield match


def _allowed_files(rule: Rule, names: list[list[str]], sealed: list[bool]) -> set[int] | None:
    """The files (by index) the rule's globs select under any of their names: the path, and for
    a script its aliases (``bin/deploy`` is ``bin/deploy.py`` too when a domain claims it). The
    gate's own data files a change commits (``secrets_only``) are read by the secret rules only:
    the rest would judge a quoted finding or a rule text as code (``own_files.sealed``)."""
    secret = rule.category == SECRETS
    if not rule.paths and not rule.exclude_paths and (secret or not any(sealed)):
        return None
    include = Globs(rule.paths) if rule.paths else None
    exclude = Globs(rule.exclude_paths) if rule.exclude_paths else None
    return {
        i for i, known in enumerate(names)
        if (secret or not sealed[i])
        and (include is None or any(include.match(n) for n in known))
        and (exclude is None or not any(exclude.match(n) for n in known))
    }


def _quoted(joined: _Joined, index: int, start: int, end: int, redact: bool) -> str:
    """``quote`` of added line ``index`` for a match from byte ``start`` to ``end`` of the joined text."""
    low = joined.starts[index]
    high = joined.starts[index + 1] - 1 if index + 1 < len(joined.starts) else len(joined.text)
    data = joined.text[low:high]
    begin = max(0, start - low)
    while begin < len(data) and start < end and joined.text[start:start + 1] == b"\n":
        start += 1
        begin = max(0, start - low)
    text_before = data[:begin].decode("utf-8", "replace")
    matched = data[begin:max(begin, min(end, high) - low)].decode("utf-8", "replace")
    line = data.decode("utf-8", "replace")
    return quote(line, len(text_before), len(text_before) + len(matched), redact)


def _column(joined: _Joined, index: int, start: int, end: int) -> int:
    """The 1-based character column on added line ``index`` where a match from byte ``start``
    to ``end`` starts, past the spaces it may begin with (``^\\s*print(`` is at the ``p``)."""
    low = joined.starts[index]
    start = max(start, low)
    while start < end - 1 and joined.text[start:start + 1] in (b" ", b"\t"):
        start += 1
    return len(joined.text[low:start].decode("utf-8", "replace")) + 1


def _finding(rule: Rule, path: str, number: int, end: int, quoted: str, column: int) -> RawFinding:
    name = rule.name.rstrip(":")
    # the quote adds nothing when the name already says it ("Bare except:" on `except:`), and a
    # name ending in a colon is never followed by another ("Bare except:: except:")
    message = rule.name if quoted.strip() and quoted.strip() in rule.name else f"{name}: {quoted}"
    return RawFinding(
        severity=rule.severity, rule_id=rule.id, category=rule.category, file=path, line=number,
        end_line=end, column=column, message=message,
        recommendation=rule.recommendation, confidence=rule.confidence,
    )
