"""Splitting an agent's scope into requests that fit its token budget.

Tokens are estimated as characters / 4. Files are packed whole while they fit; a file larger
than the budget is split between its hunks; a hunk larger than the budget is cut into windows
of whole lines that overlap by a few lines, and a single line larger than a window into
pieces. Size alone never leaves a line unshown; only a budget too small to hold a file header
and one character of code does (the file is then reported unreviewed). Nothing is clipped.

What is shown beside the new-side lines gives way first, in this order: the unchanged lines
around a hunk (its enclosing function or class, ``llm.context``), then its removed lines (back
to a note that counts them); only then is a hunk cut into windows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from review_gate.llm.prompt import file_header, removed_note, render_hunk, render_line
from review_gate.models import FileChange, Hunk

if TYPE_CHECKING:
    from review_gate.llm.context import Around

CHARS_PER_TOKEN = 4
OVERLAP_LINES = 3  # lines a window repeats from the one before, so nothing is read out of context
MIN_PIECE = 16  # characters of code a piece of a long line must hold to be worth a request


def estimate_tokens(text: str | int) -> int:
    size = text if isinstance(text, int) else len(text)
    return -(-size // CHARS_PER_TOKEN)


@dataclass
class Chunk:
    sections: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    chars: int = 0

    def add(self, path: str, section: str) -> None:
        self.sections.append(section)
        if path not in self.files:
            self.files.append(path)
        self.chars += len(section) + 2


@dataclass
class Plan:
    chunks: list[Chunk]
    unreviewed: list[str]


def split(files: list[FileChange], budget_tokens: int, around: Mapping[tuple[str, int], Around] | None = None,
          notes: Mapping[str, str] | None = None) -> Plan:
    """Chunks whose rendered diff fits ``budget_tokens`` each, and the files that cannot fit.
    ``around``: (path, hunk index) -> unchanged lines to show around that hunk when they fit;
    ``notes``: path -> what its file header adds (which lenses of a packed review read it)."""
    unreviewed: list[str] = []
    return Plan(chunks=list(chunks(files, budget_tokens, around, notes, unreviewed)), unreviewed=unreviewed)


def chunks(files: list[FileChange], budget_tokens: int, around: Mapping[tuple[str, int], Around] | None,
           notes: Mapping[str, str] | None, unreviewed: list[str]) -> Iterator[Chunk]:
    """``split``'s chunks one at a time, each as soon as it is full, so that its request can go
    out while the rest are rendered; the files that cannot fit are added to ``unreviewed``."""
    budget = max(0, budget_tokens) * CHARS_PER_TOKEN
    current = Chunk()

    def place(path: str, section: str) -> Chunk | None:
        """Add ``section``; the chunk it closed, if it did not fit beside the others."""
        nonlocal current
        full = None
        if current.chars + len(section) + 2 > budget and current.sections:
            full, current = current, Chunk()
        current.add(path, section)
        return full

    for change in files:
        if not change.hunks:
            continue  # nothing on the new side to read (a deletion, a binary or mode-only change)
        header = file_header(change) + (f" {notes[change.path]}" if notes and change.path in notes else "")
        arounds = [(around or {}).get((change.path, i)) for i in range(len(change.hunks))]
        whole = _whole(header, change, arounds, budget)
        sections: list[str] = []
        if whole is not None:
            sections.append(whole)
        else:
            for hunk, hunk_around in zip(change.hunks, arounds, strict=True):
                fits = (f"{header} (part)\n{text}" for text in _levels(hunk, hunk_around))
                section = next((s for s in fits if len(s) + 2 <= budget), None)
                pieces = [section] if section is not None else windows(f"{header} (part)", hunk, budget - 2)
                if pieces is None:
                    if change.path not in unreviewed:
                        unreviewed.append(change.path)
                    continue
                sections += pieces
        for section in sections:
            full = place(change.path, section)
            if full is not None:
                yield full
    if current.sections:
        yield current


def _whole(header: str, change: FileChange, arounds: list[Around | None], budget: int) -> str | None:
    """The file in one section, with the lines around its hunks if they fit, else without."""
    tries: list[list[Around | None]] = [arounds, [None] * len(arounds)] if any(arounds) else [arounds]
    for level in tries:
        whole = "\n".join([header, *(render_hunk(h, around=a) for h, a in zip(change.hunks, level, strict=True))])
        if len(whole) + 2 <= budget:
            return whole
    return None


def _levels(hunk: Hunk, around: Around | None) -> Iterator[str]:
    """A hunk's renderings from the most shown to the least: with the lines around it and its
    removed lines, without the lines around it, without its removed lines either."""
    if around is not None:
        yield render_hunk(hunk, around=around)
    if hunk.removed_lines:
        yield render_hunk(hunk)
    yield render_hunk(hunk, removed=False)


def windows(header: str, hunk: Hunk, size: int) -> list[str] | None:
    """A hunk too big for one request as sections of at most ``size`` characters: the file
    header, the hunk header marked "window k of n", and a run of whole lines that repeats the
    last OVERLAP_LINES of the run before; a line too long for a section is cut into pieces.
    None when ``size`` cannot hold the headers and a useful piece of code."""
    top = f"{header}\n{hunk.header.rstrip()} (window {{k}} of {{n}})"
    room = size - len(top) - 12  # the window numbers filled in
    if room < _PREFIX + len(_CONT) + MIN_PIECE + 1:
        return None
    parts = [text for line in hunk.lines for text in _pieces(render_line(line), room)]
    note = removed_note(hunk)
    if note:
        parts.append(note)
    bodies: list[str] = []
    start = 0
    while start < len(parts):
        end, used = start, 0
        while end < len(parts) and used + len(parts[end]) + 1 <= room:
            used += len(parts[end]) + 1
            end += 1
        end = max(end, start + 1)  # every part fits a room by construction; never loop on nothing
        bodies.append("\n".join(parts[start:end]))
        if end >= len(parts):
            break
        start = max(start + 1, end - OVERLAP_LINES)
    return [top.format(k=k, n=len(bodies)) + "\n" + body for k, body in enumerate(bodies, start=1)]


_PREFIX = 9  # "{number:>6} + " before a line's text
_CONT = " (cont.)"


def _pieces(rendered: str, room: int) -> list[str]:
    """A rendered line, or when it is longer than ``room``, its consecutive pieces, each keeping
    the line's number and marked as continued when another piece follows."""
    if len(rendered) < room:
        return [rendered]
    prefix, text = rendered[:_PREFIX], rendered[_PREFIX:]
    step = room - 1 - _PREFIX - len(_CONT)  # a piece and its line break fit the room
    return [prefix + text[i:i + step] + (_CONT if i + step < len(text) else "") for i in range(0, len(text), step)]
