"""Rules and added lines in, matches out: the pattern agent's matching engine.

Files are grouped by the rules that apply to them (a rule's globs and the file's kind decide,
``find``'s ``allowed``), so each added line meets only its own rules. A group's added lines are
joined into one text; one pass of an RE2 set over it tells which of its rules occur in it at
all, and only those are run for positions. RE2 calls cost, not bytes (about 3 µs a call): the
work is a few calls per group and rule that occurs, never a Python loop of rules over lines.

The text is built, about a megabyte at a time, from stretches of consecutive added lines of one file (*runs*, from
``Lines.added_runs``), not line by line; a match offset goes back to its run by bisection and
to its line by counting the newlines before it in the run. A match may span lines of one run
(``except:`` then ``pass``), never two runs: one that does is dropped, and the runs it touched
are scanned again on their own, so it hides no real match.

The text inside a binary file (``FileChange.binary_text``, an image's metadata) is read by the
secret rules only (``secret``); its matches have no line. Scans run one at a time in the
process (a lock): they hold the GIL anyway, and one text at a time is what keeps a large
diff's scan small. A scan looks at ``stop`` between batches, every few thousand matches and while it
waits, and raises ``Cancelled`` once it is set.
"""

from __future__ import annotations

import threading
import weakref
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from review_gate.models import FileChange
from review_gate.models.line_ends import line_breaks, split_hidden_at
from review_gate.text.regex import compile_pattern, pattern_set

_CHECK_EVERY = 4096  # matches between two looks at the stop flag
BATCH = 1 << 20  # bytes of added lines scanned at a time
_SCANNING = threading.Lock()  # one scan at a time (see the module's docstring)


class Cancelled(Exception):
    """The scan was told to stop: the agent it works for was cancelled."""


@dataclass(frozen=True, slots=True)
class Match:
    """Rule ``rule`` (an index into the patterns) matches file ``file`` (an index into the files)
    from new line ``line`` to ``end_line`` (None: in the text inside a binary file). ``text`` is
    the line the match starts on, ``start``/``end`` the match's characters in it (``end`` may
    pass the line's end: the match goes on over the next lines)."""

    rule: int
    file: int
    line: int | None
    end_line: int | None
    text: str
    start: int
    end: int


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise Cancelled


class _Text:
    """Runs of added lines joined by newlines: byte offset, file, first line number of each run."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.starts: array[int] = array("q")
        self.files: array[int] = array("q")
        self.firsts: array[int] = array("q")  # 0: the text inside a binary file (no lines)
        self.hidden: array[int] = array("q")  # offsets of the newlines added at hidden line ends, in order
        self.size = 0
        self.text = b""

    def add(self, file: int, first: int, text: str) -> None:
        data = text.encode("utf-8", "surrogateescape")
        self.starts.append(self.size)
        self.files.append(file)
        self.firsts.append(first)
        self.chunks.append(data)
        self.size += len(data) + 1

    def add_file(self, file: int, added: _Added) -> None:
        """A file's added lines, joined once (``_added``): its runs placed after what is here."""
        base = self.size
        self.starts.extend(base + start for start in added.starts)
        self.files.extend([file] * len(added.starts))
        self.firsts.extend(added.firsts)
        self.hidden.extend(base + at for at in added.hidden)
        self.chunks.append(added.text)
        self.size += len(added.text) + 1

    def join(self) -> bytes:
        self.text = b"\n".join(self.chunks)
        self.chunks = []
        return self.text

    def run_at(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def run_end(self, run: int) -> int:
        return self.starts[run + 1] - 1 if run + 1 < len(self.starts) else len(self.text)

    def hidden_in(self, low: int, high: int) -> int:
        """How many of the newlines from byte ``low`` to ``high`` were added at hidden line ends."""
        return bisect_left(self.hidden, high) - bisect_left(self.hidden, low) if self.hidden else 0

    def line_start(self, low: int, at: int) -> int:
        """Where git's line holding byte ``at`` starts (a hidden line end does not start one)."""
        start = self._after_newline(low, at)
        while start > low and self.hidden_in(start - 1, start):
            start = self._after_newline(low, start - 1)
        return start

    def line_end(self, at: int, high: int) -> int:
        """Where git's line holding byte ``at`` ends, at most ``high``."""
        end = self.text.find(b"\n", at, high)
        while end >= 0 and self.hidden_in(end, end + 1):
            end = self.text.find(b"\n", end + 1, high)
        return high if end < 0 else end

    def _after_newline(self, low: int, at: int) -> int:
        return self.text.rfind(b"\n", low, at) + 1 or low


@dataclass(frozen=True, slots=True)
class _Added:
    """One file's runs of added lines joined by newlines, as bytes: where each run starts, the
    number of its first line, and the newlines added where the file's language ends a line
    inside one of git's (``hidden``: their offsets, in order; see ``_added``)."""

    text: bytes
    starts: array[int]
    firsts: array[int]
    hidden: array[int]


class _Kept:
    """Files' joined added lines, kept for the next agent that reads them: each pattern agent
    reads the added lines of every file it scans, and three built-in ones scan every file. Up to
    ``limit`` bytes, the first files read: agents read the files in the same order, so once it is
    full a large diff's first files are still read once (a cache that let the oldest go would let
    every file go before the next agent asks). An entry lives no longer than its file: a long-lived
    process (the MCP server) keeps no run's files, and a diff of any size no second copy of its
    added lines past ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self._files: dict[int, tuple[weakref.ref[FileChange], _Added]] = {}
        self._lock = threading.Lock()

    def get(self, change: FileChange) -> _Added | None:
        with self._lock:
            known = self._files.get(id(change))
        return known[1] if known is not None and known[0]() is change else None

    def put(self, change: FileChange, added: _Added) -> None:
        key = id(change)

        def gone(_: object) -> None:
            with self._lock:
                entry = self._files.get(key)
                if entry is not None and entry[0]() is None:
                    del self._files[key]
                    self.size -= len(entry[1].text)

        with self._lock:
            if self.size + len(added.text) > self.limit or key in self._files:
                return
            self._files[key] = (weakref.ref(change, gone), added)
            self.size += len(added.text)


KEPT = _Kept(4 << 20)


def _added(change: FileChange) -> _Added:
    known = KEPT.get(change)
    if known is not None:
        return known
    runs = [(first, text) for hunk in change.hunks for first, text in hunk.lines.added_runs()]
    joined = "\n".join(text for _, text in runs)
    breaks = line_breaks(change.path)
    hidden: array[int] = array("q")
    if any(char in joined for char in breaks):  # rare: one search of the text in C, then the runs
        runs, hidden = _split(runs, breaks)
        joined = "\n".join(text for _, text in runs)
    ascii_only = joined.isascii()
    data = joined.encode("ascii") if ascii_only else joined.encode("utf-8", "surrogateescape")
    starts, at = array("q"), 0
    for _, text in runs:
        starts.append(at)
        at += (len(text) if ascii_only else len(text.encode("utf-8", "surrogateescape"))) + 1
    added = _Added(data, starts, array("q", (first for first, _ in runs)), hidden)
    KEPT.put(change, added)
    return added


def _split(runs: list[tuple[int, str]], breaks: str) -> tuple[list[tuple[int, str]], array[int]]:
    """The runs with a newline after each line end of the file's language inside one of git's
    lines (``# run the job\\r    exec(code)``: Python runs ``exec``), so a rule reads the hidden
    line as its own; and the byte offsets of those newlines in the runs joined, which are no line
    of git's (a match is reported on git's line, with git's text)."""
    out: list[tuple[int, str]] = []
    hidden: array[int] = array("q")
    at = 0
    for first, text in runs:
        split, added = split_hidden_at(text, breaks)
        last = 0
        for index in added:  # bytes counted piece by piece: linear on any number of them
            at += len(split[last:index].encode("utf-8", "surrogateescape"))
            hidden.append(at)
            last = index
        at += len(split[last:].encode("utf-8", "surrogateescape")) + 1
        out.append((first, split))
    return out, hidden


def _groups(files: Sequence[FileChange], allowed: Sequence[set[int] | None]) -> dict[tuple[int, ...], list[int]]:
    """The rules that apply to each file -> the files they apply to, in order."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for index in range(len(files)):
        rules = tuple(r for r, only in enumerate(allowed) if only is None or index in only)
        if rules:
            groups.setdefault(rules, []).append(index)
    return groups


def find(patterns: Sequence[str], files: Sequence[FileChange], allowed: Sequence[set[int] | None],
         secret: Sequence[bool], stop: threading.Event | None = None) -> list[Match]:
    """Every match of each pattern on the added lines of the files it may read: ``allowed[r]``,
    the indices of the files rule ``r`` applies to (None: all); ``secret[r]``, whether it reads the
    text inside binary files too. One match per rule and first line, in rule order; raises
    ``Cancelled`` soon after ``stop`` is set."""
    if not patterns:
        return []
    while not _SCANNING.acquire(timeout=0.05):
        _check(stop)
    try:
        found: list[Match] = []
        everything = _Sets(patterns)
        for rules, members in _groups(files, allowed).items():
            for text in _batches(files, members, stop):
                found += _scan(everything, patterns, rules, text, stop)
        secrets = tuple(r for r, reads in enumerate(secret) if reads)
        inside = [i for i in range(len(files)) if files[i].binary_text]
        if secrets and inside:
            text = _Text()
            for index in inside:
                text.add(index, 0, files[index].binary_text)
            text.join()
            found += _scan(everything, patterns, secrets, text, stop, allowed)
    finally:
        _SCANNING.release()
    found.sort(key=lambda m: (m.rule, m.file, m.line or 0))
    return found


def _batches(files: Sequence[FileChange], members: list[int], stop: threading.Event | None) -> Iterator[_Text]:
    """The added lines of ``members``, joined, about BATCH bytes at a time (whole files): a large
    diff's text is never held whole, and a batch is still few RE2 calls."""
    text = _Text()
    for index in members:
        added = _added(files[index])
        if not added.starts:
            continue
        text.add_file(index, added)
        if text.size > BATCH:
            _check(stop)
            text.join()
            yield text
            text = _Text()
    if text.size:
        text.join()
        yield text


class _Sets:
    """Which rules occur in a text, told by RE2 sets of SET_SIZE rules each, in rule order, made
    when first asked and kept for every group of files: RE2 builds a set's automaton as it reads,
    so a set asked again reads at full speed. One set of every rule would be the fewest passes,
    but its automaton is built for all the patterns at once, and forty intricate ones over
    megabytes of new code took most of a second's tenth to build (the built-in security rules on
    pydantic's v2.0: 85 ms in one set, 43 in sets of 16)."""

    SET_SIZE = 16

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = patterns
        self.sets: dict[int, Any] = {}  # first rule of a set -> the set

    def present(self, rules: tuple[int, ...], text: bytes) -> set[int]:
        wanted = set(rules)
        found: set[int] = set()
        for first in sorted({r - r % self.SET_SIZE for r in rules}):
            regex_set = self.sets.get(first)
            if regex_set is None:
                regex_set = self.sets[first] = pattern_set(list(self.patterns[first:first + self.SET_SIZE]))
            found.update(first + entry for entry in regex_set.Match(text) or ())
        return found & wanted


def _scan(everything: _Sets, patterns: Sequence[str], rules: tuple[int, ...], text: _Text,
          stop: threading.Event | None, only: Sequence[set[int] | None] | None = None) -> list[Match]:
    """The matches of ``rules`` in ``text``: those the sets say occur, run for positions."""
    present = everything.present(rules, text.text)
    found: list[Match] = []
    for rule in rules:
        if rule in present:
            _check(stop)
            found += _rule(rule, compile_pattern(patterns[rule]), text, stop,
                           only[rule] if only is not None else None)
    return found


def _rule(rule: int, regex: Any, text: _Text, stop: threading.Event | None, only: set[int] | None) -> list[Match]:
    seen: set[tuple[int, int | None]] = set()
    found: list[Match] = []
    crossed: set[int] = set()  # runs a match ran out of: scanned again, each alone

    def record(start: int, end: int) -> None:
        data = text.text
        while start < end - 1 and data[start] == 0x0A:  # a match may begin or end with newlines
            start += 1
        while end - 1 > start and data[end - 1] == 0x0A:
            end -= 1
        run = text.run_at(start)
        last = text.run_at(max(start, end - 1))
        if run != last:
            crossed.update((run, last))
            return
        file = text.files[run]
        if only is not None and file not in only:
            return
        match = _located(rule, text, run, start, end)
        if (file, match.line) not in seen:
            seen.add((file, match.line))
            found.append(match)

    for count, hit in enumerate(regex.finditer(text.text)):
        if count % _CHECK_EVERY == 0:
            _check(stop)
        record(hit.start(), hit.end())
    for run in sorted(crossed):
        _check(stop)
        low, high = text.starts[run], text.run_end(run)
        for hit in regex.finditer(text.text[low:high]):
            record(low + hit.start(), low + hit.end())
    return found


def _located(rule: int, text: _Text, run: int, start: int, end: int) -> Match:
    """The match from byte ``start`` to ``end`` of the text, inside run ``run``, on its lines: git's
    lines, whatever newlines were added at hidden line ends (``_split``)."""
    data = text.text
    low = text.starts[run]
    line_start = text.line_start(low, start)
    line_end = text.line_end(start, text.run_end(run))
    first = text.firsts[run]
    line = first + data.count(b"\n", low, start) - text.hidden_in(low, start) if first else None
    end_line = line + data.count(b"\n", start, end) - text.hidden_in(start, end) if line is not None else None
    if text.hidden_in(line_start, line_end):  # git's line, without the newlines added inside it
        return Match(rule=rule, file=text.files[run], line=line, end_line=end_line,
                     text=_unsplit(data[line_start:line_end]), start=len(_unsplit(data[line_start:start])),
                     end=len(_unsplit(data[line_start:min(end, line_end)])))
    before = data[line_start:start].decode("utf-8", "replace")
    matched = data[start:min(end, line_end)].decode("utf-8", "replace")
    return Match(rule=rule, file=text.files[run], line=line, end_line=end_line,
                 text=data[line_start:line_end].decode("utf-8", "replace"), start=len(before),
                 end=len(before) + len(matched))


def _unsplit(data: bytes) -> str:
    """Part of one of git's lines, without the newlines added inside it (all it holds)."""
    return data.replace(b"\n", b"").decode("utf-8", "replace")


def matches_of(patterns: Sequence[str], files: Sequence[FileChange]) -> Iterator[tuple[int, int, int | None]]:
    """(rule, file, line) of every match, every rule reading every file: for tests and tools."""
    for match in find(patterns, files, [None] * len(patterns), [False] * len(patterns)):
        yield match.rule, match.file, match.line


__all__ = ["Cancelled", "Match", "find", "matches_of"]
