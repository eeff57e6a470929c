"""Splitting an agent's scope into requests that fit its token budget.

Tokens are estimated as characters / 4. Files are packed whole while they fit; a file larger
than the budget is split between its hunks; a single hunk larger than the budget is not sent
at all and its file is reported unreviewed. Nothing is ever clipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from review_gate.llm.prompt import file_header, render_hunk
from review_gate.models import FileChange

CHARS_PER_TOKEN = 4


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


def split(files: list[FileChange], budget_tokens: int) -> Plan:
    """Chunks whose rendered diff fits ``budget_tokens`` each, and the files that cannot fit."""
    budget = max(0, budget_tokens) * CHARS_PER_TOKEN
    chunks: list[Chunk] = []
    unreviewed: list[str] = []
    current = Chunk()

    def place(path: str, section: str) -> None:
        nonlocal current
        if current.chars + len(section) + 2 > budget and current.sections:
            chunks.append(current)
            current = Chunk()
        current.add(path, section)

    for change in files:
        if not change.hunks:
            continue  # nothing on the new side to read (a deletion, a binary or mode-only change)
        header = file_header(change)
        rendered = [render_hunk(h) for h in change.hunks]
        whole = "\n".join([header, *rendered])
        if len(whole) + 2 <= budget:
            place(change.path, whole)
            continue
        for hunk_text in rendered:
            section = f"{header} (part)\n{hunk_text}"
            if len(section) + 2 > budget:
                if change.path not in unreviewed:
                    unreviewed.append(change.path)
                continue
            place(change.path, section)
    if current.sections:
        chunks.append(current)
    return Plan(chunks=chunks, unreviewed=unreviewed)
