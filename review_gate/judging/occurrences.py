"""Identical findings numbered over the whole new file, and the entries that may pay for them. Pure.

A fingerprint tells apart identical findings of one file by an occurrence number
(``fingerprint.fingerprint``). Numbered over one run's findings, the one new copy of a baselined
line took number 0 (the old line, unchanged, is no finding of a diff's review) and with it the
old line's fingerprint and its baseline entry (issue 29). Numbered here over the file's whole
new content instead: the k-th line of that text (as the fingerprint reads it) is occurrence k, so
a copy added below the old line is occurrence 1, and its fingerprint is new. A file with one such
line keeps the fingerprint it had (occurrence 0 both ways).

An entry (a baseline's, an acceptance's) still pays for one finding only: a copy added *above*
the old line takes number 0. So the entries of a line's text pay first for the occurrences that
stand unchanged in the file, and only what is left pays for findings on lines the change adds
(``payable``).

>>> from review_gate.models import Finding
>>> f = Finding(fingerprint="x", agent="p", rule_id="r", severity="major", category="c", file="a.py", line=3,
...             message="m")
>>> [g.fingerprint == fingerprint("p", "r", "a.py", "eval(x)", 1)
...  for g in renumbered([f], {"a.py": "eval(x)\\ny = 1\\n  eval(x)\\n"})]
[True]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from review_gate.judging.fingerprint import anchor_key, fingerprint
from review_gate.models import Finding, Waiver

ENTRY_KINDS = frozenset({"baseline", "shared_acceptance", "acceptance"})
"""The waivers that name one finding by its fingerprint, each paying for one."""


@dataclass(frozen=True)
class _Key:
    agent: str
    rule: str
    file: str
    text: str  # the line as the fingerprint reads it


def _key(finding: Finding, line: str) -> _Key:
    return _Key(finding.agent, finding.rule_id or finding.category or "general", finding.file or "", anchor_key(line))


class Occurrences:
    """Where each line text stands in the new files of the findings: (file, text) -> line numbers."""

    def __init__(self, texts: Mapping[str, str], findings: Iterable[Finding]) -> None:
        self.lines = {path: text.split("\n") for path, text in texts.items()}
        wanted: dict[str, set[str]] = defaultdict(set)
        for finding in findings:
            line = self.line(finding)
            if line is not None:
                wanted[finding.file or ""].add(anchor_key(line))
        self.at: dict[tuple[str, str], list[int]] = defaultdict(list)
        for path, keys in wanted.items():
            for number, line in enumerate(self.lines[path], 1):
                if (key := anchor_key(line)) in keys:
                    self.at[(path, key)].append(number)

    def line(self, finding: Finding) -> str | None:
        """The flagged line's text in the new file, when the file's text is known."""
        lines = self.lines.get(finding.file or "")
        if lines is None or finding.line is None or finding.line > len(lines):
            return None
        return lines[finding.line - 1]


def renumbered(findings: list[Finding], texts: Mapping[str, str],
               occurrences: Occurrences | None = None) -> list[Finding]:
    """``findings`` with the fingerprint of each on a line of a known file made from that line's
    text and its occurrence number over the whole file; a second finding of one key on one line
    takes a number past the file's occurrences."""
    found = occurrences or Occurrences(texts, findings)
    extra: dict[_Key, int] = defaultdict(int)
    taken: set[tuple[_Key, int]] = set()
    out = []
    for finding in findings:
        line = found.line(finding)
        if line is None:
            out.append(finding)
            continue
        key = _key(finding, line)
        numbers = found.at[(key.file, key.text)]
        number = numbers.index(finding.line) if finding.line in numbers else len(numbers)
        if (key, number) in taken:
            number = len(numbers) + extra[key]
            extra[key] += 1
        taken.add((key, number))
        made = fingerprint(key.agent, key.rule, key.file, line, number)
        out.append(finding if made == finding.fingerprint else finding.model_copy(update={"fingerprint": made}))
    return out


def payable(findings: list[Finding], occurrences: Occurrences, added: Mapping[str, AbstractSet[int]],
            entries: Mapping[str, Waiver]) -> dict[str, Waiver]:
    """The ``entries`` that pay for a finding, one each: of a line text's entries (those whose
    fingerprint is one of its occurrences), as many as stand on lines the change does not add pay
    for those, and the rest for findings on added lines whose fingerprint they hold, in line
    order. An entry for a finding whose line is not known (a diff without its repository, a
    finding with no line, the gate's own about its files, which are not among ``findings``) pays
    as its fingerprint says."""
    out = dict(entries)
    claims: dict[_Key, list[Finding]] = defaultdict(list)
    for finding in findings:
        waiver = entries.get(finding.fingerprint)
        if waiver is None or waiver.kind not in ENTRY_KINDS:
            continue
        line = occurrences.line(finding)
        if line is not None and finding.line in added.get(finding.file or "", ()):
            del out[finding.fingerprint]  # it pays only if its text has an entry left for it
            claims[_key(finding, line)].append(finding)
    for key, wanting in claims.items():
        numbers = occurrences.at[(key.file, key.text)]
        fingerprints = [fingerprint(key.agent, key.rule, key.file, key.text, k) for k in range(len(numbers))]
        held = sum(1 for fp in fingerprints if fp in entries and entries[fp].kind in ENTRY_KINDS)
        standing = sum(1 for n in numbers if n not in added.get(key.file, ()))
        left = held - standing
        for finding in sorted(wanting, key=lambda f: f.line or 0):
            if left <= 0:
                break
            out[finding.fingerprint] = entries[finding.fingerprint]
            left -= 1
    return out
