"""What each rule fired on before the change, paired one for one with what it flags now.

``refine`` asks, once its rules have judged the findings, which of them an old occurrence pays for
(``preexisting.paired``): a line the change removes from the same file, from the file it was
renamed from, or from the file a new file copies, read here from the change's hunks (and, for a
new file, which base file of its name it copies, from ``Surroundings``). The pairing runs over
all the change's files at once for each rule, so a removed line pays for one added line wherever
it lands, never for one in every file.

Only lines from where the file stood count: the file itself or its rename source when they stand
in the same path classes, a copy source in the same classes. A line from a test moved into the code
is new to the code: the rule may have skipped it in the test.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from review_gate.judging.code_text import bare
from review_gate.judging.path_classes import Classifier
from review_gate.judging.preexisting import Added, Removed, Where, first_match, lines_touched, normal, paired
from review_gate.models import BLOCKING, FileChange, Finding, Rule
from review_gate.models.findings import PREEXISTING, Waiver
from review_gate.text.regex import compile_pattern

if TYPE_CHECKING:
    from review_gate.judging.rule_contexts import Lines

_GONE = ("modified", "renamed", "deleted")  # the statuses whose removed lines leave the head


class CopySources(Protocol):
    def base_texts(self, changes: list[FileChange]) -> dict[str, tuple[str, str]]: ...


class OldLines:
    """The removed lines of the change's files and the copy sources of its new files, read once,
    when first asked."""

    def __init__(self, around: CopySources, changes: list[FileChange], files: list[FileChange],
                 classifier: Classifier) -> None:
        self.around = around
        self.changes = changes
        self.classifier = classifier
        self._by_base = {c.old_path or c.path: c for c in files if c.status in _GONE}
        self._sources: dict[str, tuple[str, str]] | None = None
        self._removed: dict[tuple[str, str], list[Removed]] = {}
        self._lines: dict[str, tuple[dict[int, int], list[tuple[int, str]]]] = {}

    def preexisting(self, findings: list[Finding], rules: Mapping[str, Rule],
                    files: Mapping[str, tuple[FileChange, Lines]]) -> dict[str, Waiver]:
        """Fingerprint -> why, for the findings an old occurrence pays for, and those on lines the
        change does not add (they stood there before it)."""
        groups: dict[str, list[Finding]] = defaultdict(list)
        for finding in findings:
            rule = rules.get(finding.rule_id or "")
            if rule is not None and rule.pattern and finding.file in files and finding.line is not None:
                groups[rule.id].append(finding)
        waivers: dict[str, Waiver] = {}
        for rule_id, flagged in groups.items():
            waivers.update(self._rule(rules[rule_id], flagged, files))
        return waivers

    def _rule(self, rule: Rule, flagged: list[Finding],
              files: Mapping[str, tuple[FileChange, Lines]]) -> dict[str, Waiver]:
        regex = compile_pattern(rule.pattern or "")
        out: dict[str, Waiver] = {}
        added: dict[tuple[str, int], Added] = {}
        where: dict[str, Where] = {}
        removed: dict[str, list[Removed]] = {}
        blocking = {(f.file, f.line) for f in flagged if f.severity in BLOCKING}
        for finding in sorted(flagged, key=lambda f: (f.file or "", f.line or 0)):
            path, number = finding.file or "", finding.line or 0
            change, lines = files[path]
            if path not in where:
                where[path] = self._where(change)
                own, copies = where[path]
                for base in [*([own] if own is not None else []), *copies]:
                    if base not in removed:
                        removed[base] = self._removed_at(rule.id, regex, base)
            hunk_of, _ = self._lines_of(change)
            text = lines.get(number)
            if text is None:
                continue
            if number not in hunk_of:
                out[finding.fingerprint] = Waiver(kind="preexisting",
                                                  reason=f"{PREEXISTING}: the line stood there before this change")
                continue
            added[(path, number)] = Added(path, number, hunk_of[number], normal(bare(path, text)),
                                          first_match(regex, text),
                                          blocks=(path, number) in blocking)
        pairs = paired(list(added.values()), removed, where)
        for finding in flagged:
            found = pairs.get((finding.file or "", finding.line or 0))
            if found is not None:
                out[finding.fingerprint] = _waiver(finding.file or "", *found)
        return out

    def _where(self, change: FileChange) -> Where:
        """The file's own base path (when the change removes lines there, in the same classes) and
        the base files it copies (a new file's file of its name, a copy's source), in its classes."""
        here = self.classifier.classes(change.path)
        own = None
        if change.status in _GONE and self.classifier.classes(change.old_path or change.path) == here:
            own = change.old_path or change.path
        copies: list[str] = []
        if change.status == "copied" and change.old_path is not None:
            copies.append(change.old_path)
        elif change.status == "added":
            if self._sources is None:  # only a new file copies: the others' base contents are never read here
                self._sources = self.around.base_texts([c for c in self.changes if c.status == "added"])
            source = self._sources.get(change.path)
            if source is not None and source[0] != change.path:
                copies.append(source[0])
        return own, [c for c in copies if self.classifier.classes(c) == here]

    def _removed_at(self, rule_id: str, regex: object, base: str) -> list[Removed]:
        """The lines the change removes from the file that stood at ``base`` on which the rule
        fires (none when the change leaves that file whole: its lines still stand and pay there)."""
        key = (rule_id, base)
        if key not in self._removed:
            change = self._by_base.get(base)
            found: list[Removed] = []
            if change is not None:
                _, gone = self._lines_of(change)
                for at in lines_touched(regex, [text for _, text in gone]):  # where a match may be, then each alone
                    hunk, text = gone[at]
                    match = first_match(regex, text)
                    if match is not None:
                        found.append(Removed(hunk, normal(bare(base, text)), match))
            self._removed[key] = found
        return self._removed[key]

    def _lines_of(self, change: FileChange) -> tuple[dict[int, int], list[tuple[int, str]]]:
        """A file's added line numbers -> their hunk, and its removed lines (hunk, text): read once
        for every rule that flags the file."""
        known = self._lines.get(change.path)
        if known is None:
            hunk_of: dict[int, int] = {}
            gone: list[tuple[int, str]] = []
            for index, hunk in enumerate(change.hunks):
                for numbers in hunk.lines.added_ranges():
                    hunk_of.update(dict.fromkeys(numbers, index))
                gone.extend((index, text) for text in hunk.removed_lines.texts())
            known = self._lines[change.path] = (hunk_of, gone)
        return known


def _waiver(path: str, how: str, base: str) -> Waiver:
    if how == "edited":
        return Waiver(kind="preexisting", reason=f"{PREEXISTING}: the rule fires on the same line before this change "
                                                 "(the line it edits, which matched the same way)")
    if how == "own" and base == path:
        return Waiver(kind="preexisting", reason=f"{PREEXISTING}: the rule fires on the same line before this change "
                                                 "(a line the change removes)")
    what = "renamed from" if how == "own" else "copied from"
    return Waiver(kind="moved", reason=f"{PREEXISTING}: the rule fires on the same line before this change "
                                       f"(a line the change removes from {base}, the file this one is {what})")
