"""Which lines a change touches, as the filter modes ask (reviewdog's: added lines, hunks, files,
all), and a finding's claimed range cut to what the diff knows. Pure, over the facts."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from review_gate.models import FileChange, FilterMode, Finding, Hunk, PRFacts


@dataclass(frozen=True)
class _Changed:
    """Where one file changed: its added lines and its hunks as merged intervals [start, end),
    all sorted, so a finding's range is tested by bisection however long it claims to be."""

    added: list[int]
    starts: list[int]
    ends: list[int]

    @property
    def last(self) -> int:
        """The last line the diff knows of this file (0 when it knows none)."""
        return max(self.added[-1] if self.added else 0, self.ends[-1] - 1 if self.ends else 0)


def keep_finding(finding: Finding, facts_index: Mapping[str, _Changed], mode: FilterMode) -> bool:
    """reviewdog's filter modes: keep a finding on added lines, inside hunks, in changed files, or all."""
    if mode == "nofilter" or finding.file is None:
        return True
    where = facts_index.get(finding.file)
    if where is None:
        return False
    if mode == "file" or finding.line is None:
        return True
    first, last = finding.line, max(finding.end_line or finding.line, finding.line)
    if mode == "added":
        at = bisect_left(where.added, first)
        return at < len(where.added) and where.added[at] <= last
    # Intervals are disjoint: only the last one starting by ``last`` can reach back to ``first``.
    at = bisect_right(where.starts, last) - 1
    return at >= 0 and where.ends[at] > first


def _merged(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


class ChangedLines(Mapping[str, _Changed]):
    """Each changed file's ``_Changed``, made when a finding first asks about the file: a change
    of hundreds of files whose findings fall in a few made all of them (a twentieth of an offline
    review)."""

    def __init__(self, facts: PRFacts) -> None:
        self._files = {f.path: f for f in facts.files}
        self._made: dict[str, _Changed] = {}

    def __getitem__(self, path: str) -> _Changed:
        made = self._made.get(path)
        if made is None:
            made = self._made[path] = _changed(self._files[path])
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def _changed(f: FileChange) -> _Changed:
    hunks = _merged([(h.new_start, h.new_start + max(h.new_count, 1)) for h in f.hunks])
    changed: set[int] = set()
    for h in f.hunks:
        for numbers in h.lines.added_ranges():
            changed.update(numbers)
    for h in f.hunks:
        if h.removed_lines or h.removed:
            changed |= _removal_anchors(h)
    return _Changed(added=sorted(changed), starts=[start for start, _ in hunks], ends=[end for _, end in hunks])


def _removal_anchors(hunk: Hunk) -> set[int]:
    """The new lines where findings about removed lines go (the one after each removal, else the
    one before): a change that only deletes a check is changed there, and a finding about it
    counts under the default filter mode."""
    if not hunk.lines:
        return {max(hunk.new_start, 1)}
    return {hunk.lines.number_at(min(r.before, len(hunk.lines) - 1)) for r in hunk.removed_lines}


def clamped(finding: Finding, index: Mapping[str, _Changed]) -> Finding:
    """An end line past what the diff knows of the file (an agent's typo, or 10**15 from a prompt
    injection) is cut to the last known line, or to the finding's own line."""
    if finding.line is None or finding.end_line is None:
        return finding
    where = index.get(finding.file) if finding.file is not None else None
    end = min(finding.end_line, max(finding.line, where.last if where else finding.line))
    return finding if end == finding.end_line else finding.model_copy(update={"end_line": end})


__all__ = ["ChangedLines", "clamped", "keep_finding"]
