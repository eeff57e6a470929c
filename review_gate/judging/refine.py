"""The rules' findings judged where their lines live, before they are counted.

Between dispatch and aggregate, each finding whose rule the configuration holds goes through
the rule's settings (review-rules.json, ``models.rule_context``), in this order:

1. path classes (``path_classes``): in a test, fixture, example, docs, generated, vendored or
   minified file the rule lowers the finding, or skips it: a skipped finding is listed as waived
   (``path class: ...``), never dropped (``review_gate.judging.path_classes``; a file the change
   adds takes a class only with the trusted side's word, ``Classifier.claimed``);
2. placeholders (``placeholders``): a secret rule's match that holds a placeholder is dropped
   (``review_gate.judging.placeholders``), and so is every secret rule's match that is only a key a
   vendor documents as an example (AWS's ``AKIA...EXAMPLE``);
3. contexts (``contexts``): the first that applies skips or lowers it (``review_gate.judging.rule_contexts``);
4. ``once_per_file``: only the rule's first finding in a file stays, saying how many it stands for;
5. pre-existing: a finding on a line the change adds that an old occurrence pays for, one for
   one (a line the change removes, here or in a file alike; for a new file, the file of its name
   it copies; the same hunk's removed line with the same match), or on a line the change does not
   add, is listed as waived with the reason, never counted (``review_gate.judging.preexisting``).

A lowered finding says why in its message. Nothing here is read from the change's own
configuration: the settings are the trusted configuration's, the ``.gitattributes`` is the base
side's. What the files look like comes from ``Surroundings`` (git, read lazily: only files that
have findings); with none (a diff file and no repository), the hunks are all there is.

>>> from review_gate.models import PRFacts
>>> refine([], PRFacts(source="x", files=[]), __import__("review_gate.config", fromlist=["x"]).load_config(None))
([], {})
"""

from __future__ import annotations

import functools
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol

from review_gate.judging import code_regions
from review_gate.judging.created_tables import change_creates
from review_gate.judging.path_classes import HEAD_LINES, MOVES, Classifier, moved_across
from review_gate.judging.placeholders import comment_line, documented_example, placeholder, reserved_host
from review_gate.judging.preexisting import Added, Removed, fired_counts, first_match, lines_touched, normal, paired
from review_gate.judging.rule_contexts import Lines, applies
from review_gate.models import BLOCKING, SEVERITY_RANK, AgentResult, FileChange, Finding, PRFacts, ReviewConfig, Rule
from review_gate.models.findings import PATH_CLASS, PREEXISTING, Waiver
from review_gate.models.lines import hides_lines
from review_gate.models.rule_context import SECRETS, Action, PathClass
from review_gate.text.regex import compile_pattern


class Surroundings(Protocol):
    """What the files around the findings look like; every answer may be None (not known)."""

    def gitattributes(self) -> str | None: ...

    def new_texts(self, changes: list[FileChange]) -> dict[str, str]: ...

    def base_texts(self, changes: list[FileChange]) -> dict[str, tuple[str, str]]:
        """Path -> (the path it had before, that content): itself, renamed from, or copied from."""

    def owner(self) -> str | None: ...

    def base_directories(self, paths: list[str]) -> set[str]:
        """Which of the directories ``paths`` hold files in the base."""


class NoSurroundings:
    """Only the hunks: a diff reviewed without its repository."""

    def gitattributes(self) -> str | None:
        return None

    def new_texts(self, changes: list[FileChange]) -> dict[str, str]:
        return {}

    def base_texts(self, changes: list[FileChange]) -> dict[str, tuple[str, str]]:
        return {}

    def owner(self) -> str | None:
        return None

    def base_directories(self, paths: list[str]) -> set[str]:
        return set()


def search(pattern: str, text: str) -> str | None:
    """RE2 ``pattern`` searched in ``text``: the first group when it has one, else the whole match."""
    regex = compile_pattern(pattern)
    found = regex.search(text.encode("utf-8", "surrogateescape"))
    if found is None:
        return None
    value = found.group(1) if regex.groups >= 1 and found.group(1) is not None else found.group(0)
    return bytes(value).decode("utf-8", "replace")


def search_all(pattern: str, text: str) -> list[str]:
    regex = compile_pattern(pattern)
    return [bytes(m.group(1) if regex.groups >= 1 else m.group(0)).decode("utf-8", "replace")
            for m in regex.finditer(text.encode("utf-8", "surrogateescape"))
            if regex.groups < 1 or m.group(1) is not None]


@dataclass
class _File:
    """One changed file as the checks see it, built once."""

    change: FileChange
    lines: Lines
    classes: frozenset[PathClass]
    text: str | None = None  # its new content, when known
    deadline: float = 0.0  # when parsing for this judging stops (``time.thread_time``)
    _code: code_regions.Code | bool | None = False  # the parse, made when first asked (False: not yet)
    by_line: bool = False  # a new file its name alone calls minified: minified on its long lines only

    def words(self, finding: Finding) -> bool:
        """Whether the finding's match lies in a comment or docstring (``code_regions``), the file
        parsed when first asked: only files with findings of a code rule are."""
        if finding.line is None or self.text is None:
            return False
        if self._code is False:
            self._code = code_regions.read(self.change.path, self.text, self.deadline)
        code = self._code
        return isinstance(code, code_regions.Code) and code.words(finding.line, finding.column, finding.end_line)


def refine(results: list[AgentResult], facts: PRFacts, config: ReviewConfig, around: Surroundings | None = None,
           *, preexisting: bool = True) -> tuple[list[AgentResult], dict[str, Waiver]]:
    """``results`` with their findings judged by their rules' settings, and the fingerprints of the
    pre-existing ones and those a path class skips, with why (waivers the gate lists and does not
    count). ``preexisting`` false: a sweep, which reviews files as they are, so that nothing in them
    is old and no file is the change's own (its path classes are the names')."""
    around = around or NoSurroundings()
    rules = {r.id: r for r in config.rules.rules}
    changes = {c.path: c for c in facts.files}
    flagged = [changes[f.file] for r in results for f in r.findings
               if f.file in changes and f.rule_id in rules]
    if not flagged:
        return results, {}
    unique = list({c.path: c for c in flagged}.values())
    texts = around.new_texts(unique)
    classifier = Classifier(config.rules.path_classes, around.gitattributes())
    classifier.know([p for c in facts.files for p in (c.path, c.old_path or c.path)])  # the files alike are asked
    deadline = time.thread_time() + code_regions.WORDS_SECONDS
    # what the change brings where it stands: a file it adds, or moves from other classes (a sweep's
    # files are no one's claim)
    brought = [c for c in unique if preexisting and (c.status == "added" or (c.status in MOVES and c.old_path))]
    roots = {root for c in brought for root in classifier.roots(c.path).values() if root}
    known = around.base_directories(sorted(roots)) if roots else set()
    claimed = {c.path for c in brought if c.status == "added" or moved_across(classifier, c, known)}
    files = {c.path: _file(c, texts.get(c.path), classifier, known if c.path in claimed else None, deadline)
             for c in unique}
    base = _Base(around, unique, facts.files, classifier)
    owner = around.owner() if any(ctx.when == "same_owner" for r in rules.values() for ctx in r.contexts) else None
    created = functools.cache(lambda: change_creates(facts))  # read only when a `created` context asks
    waivers: dict[str, Waiver] = {}
    skipped: dict[str, Waiver] = {}  # fingerprint -> why: findings a path class skips
    out = []
    for result in results:
        kept = []
        for finding in result.findings:
            rule = rules.get(finding.rule_id or "")
            where = files.get(finding.file or "")
            if rule is None or where is None:
                kept.append(finding)
                continue
            chosen = _action(rule, _classes(where, finding, config), config)
            if chosen is not None and chosen[0] == "skip":  # listed as waived, never dropped
                kept.append(finding)
                skipped[finding.fingerprint] = Waiver(kind="path_class",
                                                      reason=f"{PATH_CLASS}: {rule.id} skips {chosen[1]} files")
                continue
            judged = _judge(finding, rule, where, config, owner, created, chosen)
            if judged is not None:
                kept.append(judged)
        kept = _once_per_file(kept, rules, skipped)
        out.append(result.model_copy(update={"findings": kept}) if kept != result.findings else result)
    if preexisting:
        waivers = base.preexisting([f for r in out for f in r.findings if f.fingerprint not in skipped], rules, files)
    return out, {**waivers, **skipped}


def _file(change: FileChange, text: str | None, classifier: Classifier, base_directories: set[str] | None,
          deadline: float = 0.0) -> _File:
    """``base_directories`` None: a file the base has; else the change claims it (``Classifier.claimed``)."""
    if text is not None:
        known = dict(enumerate(text.split("\n"), 1))
    else:
        known = {line.number: line.text for hunk in change.hunks for line in hunk.lines}
        if change.status == "added" and known and sorted(known) == list(range(1, len(known) + 1)):
            text = "\n".join(known[n] for n in range(1, len(known) + 1)) + "\n"  # a new file's hunk is all of it
    # What marks a file generated or minified is read from the lines the change did not add: a header
    # or a long line the change adds itself does not switch off the review of the change.
    added: set[int] = set()
    for hunk in change.hunks:
        for numbers in hunk.lines.added_ranges():
            added.update(numbers)
    removed = [text for hunk in change.hunks for text in hunk.removed_lines.texts()]
    early = [r.text for hunk in change.hunks for r in hunk.removed_lines if r.number <= HEAD_LINES]
    head = ("\n".join([known.get(n, "") for n in range(1, HEAD_LINES + 1) if n not in added] + early)
            if 1 in known or early else None)
    if base_directories is not None:
        first = "\n".join(known.get(n, "") for n in range(1, HEAD_LINES + 1)) if 1 in known else None
        classes, by_line = classifier.claimed(change.path, first, base_directories)
        return _File(change, Lines(known, removed), classes, text, deadline, by_line=by_line)
    base = [*(text for number, text in known.items() if number not in added), *removed]
    return _File(change, Lines(known, removed), classifier.classes(change.path, head, base), text, deadline)


def _classes(where: _File, finding: Finding, config: ReviewConfig) -> frozenset[PathClass]:
    """The file's classes for this finding: a new file its name calls minified is minified on its long lines."""
    if not where.by_line or finding.line is None:
        return where.classes
    line = where.lines.get(finding.line) or ""
    return where.classes | {"minified"} if len(line) > config.rules.path_classes.minified_line else where.classes


_LENIENCY = {"skip": -1, **{s: len(SEVERITY_RANK) - r for s, r in SEVERITY_RANK.items()}}


def actions(rule: Rule, config: ReviewConfig) -> dict[PathClass, Action]:
    """What the rule does in each path class that changes anything: its own ``path_classes``
    over the configuration's default (none for a secrets rule: a credential is one anywhere)."""
    default = {} if rule.category == SECRETS else config.rules.path_classes.default
    merged = {**default, **(rule.path_classes or {})}
    return {name: action for name, action in merged.items() if action != "keep"}


def _action(rule: Rule, classes: Iterable[PathClass], config: ReviewConfig) -> tuple[Action, PathClass] | None:
    """The most lenient action the rule takes in any of the file's classes, with that class."""
    taken = actions(rule, config)
    chosen: tuple[Action, PathClass] | None = None
    for name in sorted(classes):
        action = taken.get(name)
        if action is None:
            continue
        if chosen is None or _LENIENCY[action] < _LENIENCY[chosen[0]]:
            chosen = (action, name)
    return chosen


def _lowered(finding: Finding, action: Action, why: str) -> Finding | None:
    """``finding`` skipped (None) or at the lower severity ``action`` names, its message saying why."""
    if action == "skip":
        return None
    if action == "keep" or SEVERITY_RANK[action] <= SEVERITY_RANK[finding.severity]:
        return finding
    return finding.model_copy(update={"severity": action, "message": f"{finding.message} [{action}: {why}]"})


def _judge(finding: Finding, rule: Rule, where: _File, config: ReviewConfig, owner: str | None,
           created: Callable[[], AbstractSet[str]], chosen: tuple[Action, PathClass] | None) -> Finding | None:
    judged: Finding | None = finding
    if chosen is not None:
        judged = _lowered(finding, chosen[0], f"in a {chosen[1]} file")
    if judged is None or finding.line is None:
        return judged
    if rule.category in code_regions.CODE_CATEGORIES and rule.pattern and where.words(finding):
        return None  # the pattern quoted in a comment or a docstring: words about code, not code
    if rule.placeholders is not None and rule.pattern and _placeholder(rule, where.lines, finding):
        return None
    if rule.category == SECRETS and rule.pattern and _documented(rule, where.lines, finding):
        return None
    for context in rule.contexts:
        if applies(context, where.lines, finding.line, owner, search, created):
            return _lowered(judged, context.action, context.reason)
    return judged


def _documented(rule: Rule, lines: Lines, finding: Finding) -> bool:
    """Whether every match of the secret rule on the finding's lines is a vendor's documented example
    key: a real key beside one still counts."""
    assert rule.pattern is not None and finding.line is not None
    last = max(finding.end_line or finding.line, finding.line)
    text = "\n".join(lines.get(n) or "" for n in range(finding.line, last + 1))
    found = compile_pattern(rule.pattern).finditer(text.encode("utf-8", "surrogateescape"))
    matches = [bytes(m.group(0)).decode("utf-8", "replace") for m in found]
    return bool(matches) and all(documented_example(m) for m in matches)


def _placeholder(rule: Rule, lines: Lines, finding: Finding) -> bool:
    """Whether the rule's match on the finding's lines holds only placeholders."""
    checks = rule.placeholders
    assert checks is not None and rule.pattern is not None and finding.line is not None
    first = lines.get(finding.line)
    if first is None:
        return False
    if checks.comments and comment_line(first) and not hides_lines(first, finding.file or ""):
        # a comment only as git shows it: ``# defaults\r`` ends the comment in Python
        return True
    last = max(finding.end_line or finding.line, finding.line) + checks.lines_after
    text = "\n".join(lines.get(n) or "" for n in range(finding.line, last + 1))
    matched = search(rule.pattern, text)
    if matched is None:
        return False
    if checks.host is not None and (host := search(checks.host, matched)) is not None and reserved_host(host):
        return True
    values = search_all(checks.value, text if checks.lines_after else matched) if checks.value else [matched]
    return bool(values) and all(placeholder(v, min_length=checks.min_length, min_entropy=checks.min_entropy)
                                for v in values)


def _once_per_file(findings: list[Finding], rules: Mapping[str, Rule], waived: Mapping[str, Waiver]) -> list[Finding]:
    """Only the first finding (by line) of each ``once_per_file`` rule in each file, counting the rest
    (those ``waived`` lists stay as they are)."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, finding in enumerate(findings):
        rule = rules.get(finding.rule_id or "")
        if rule is not None and rule.once_per_file and finding.file is not None and finding.fingerprint not in waived:
            groups[(rule.id, finding.file)].append(index)
    if not any(len(g) > 1 for g in groups.values()):
        return findings
    dropped: set[int] = set()
    first: dict[int, int] = {}
    for indexes in groups.values():
        ordered = sorted(indexes, key=lambda i: findings[i].line or 0)
        first[ordered[0]] = len(ordered) - 1
        dropped.update(ordered[1:])
    out = []
    for index, finding in enumerate(findings):
        if index in dropped:
            continue
        more = first.get(index, 0)
        out.append(finding.model_copy(update={"message": f"{finding.message} (and {more} more in this file)"})
                   if more else finding)
    return out


class _Base:
    """What each rule fired on before the change: the lines it removes, and the file a new file
    copies, read once, when first asked (``preexisting.paired`` pays for added lines with them).

    Only lines from where the file stood count: the file itself, or a file it was renamed from,
    copies, or took lines from, when that file is in the same path classes. A line from a test
    moved into the code is new to the code: the rule may have skipped it in the test. Each
    text is scanned once a rule: the removed lines once for every group of files alike.
    """

    def __init__(self, around: Surroundings, changes: list[FileChange], files: list[FileChange],
                 classifier: Classifier) -> None:
        self.around = around
        self.changes = changes
        self.classifier = classifier
        self.files = files
        self._removed: dict[frozenset[PathClass], str] | None = None
        self._texts: dict[str, tuple[str, str]] | None = None
        self._fired_removed: dict[tuple[str, frozenset[PathClass]], Counter[str]] = {}
        self._lines: dict[str, tuple[dict[int, int], list[tuple[int, str]]]] = {}

    def removed(self) -> dict[frozenset[PathClass], str]:
        """The removed lines of the files alike (the same path classes), by where they stood (a
        renamed file's: its old path)."""
        if self._removed is None:
            groups: dict[frozenset[PathClass], list[str]] = defaultdict(list)
            for change in self.files:
                lines = [text for h in change.hunks for text in h.removed_lines.texts()]
                if lines:
                    groups[self.classifier.classes(change.old_path or change.path)].extend(lines)
            self._removed = {group: "\n".join(lines) for group, lines in groups.items()}
        return self._removed

    def preexisting(self, findings: list[Finding], rules: Mapping[str, Rule],
                    files: Mapping[str, _File]) -> dict[str, Waiver]:
        """Fingerprint -> why, for the findings an old occurrence pays for (``preexisting.paired``),
        and those on lines the change does not add (they stood there before it)."""
        groups: dict[tuple[str, str], list[Finding]] = defaultdict(list)
        for finding in findings:
            rule = rules.get(finding.rule_id or "")
            if rule is not None and rule.pattern and finding.file in files and finding.line is not None:
                groups[(rule.id, finding.file or "")].append(finding)
        waivers: dict[str, Waiver] = {}
        for (rule_id, path), flagged in groups.items():
            blocking = {f.line for f in flagged if f.line is not None and f.severity in BLOCKING}
            reasons = self._old(rules[rule_id], files[path], {f.line for f in flagged if f.line is not None}, blocking)
            waivers.update((f.fingerprint, reasons[f.line]) for f in flagged if f.line in reasons)
        return waivers

    def _old(self, rule: Rule, where: _File, numbers: set[int], blocking: set[int]) -> dict[int, Waiver]:
        regex = compile_pattern(rule.pattern or "")
        change = where.change
        here = self.classifier.classes(change.path)
        hunk_of, gone = self._lines_of(change)
        removed: list[Removed] = []
        for at in lines_touched(regex, [text for _, text in gone]):  # the lines a match may be on, then each alone
            index, text = gone[at]
            match = first_match(regex, text)
            if match is not None:
                removed.append(Removed(index, normal(text), match))
        elsewhere = Counter(self._removed_counts(rule, here))
        if self.classifier.classes(change.old_path or change.path) == here:
            elsewhere.subtract(Counter(r.text for r in removed))  # its own removed lines are ``removed``
        source = self._copied_from(change, here)
        if source is not None:
            elsewhere.update(fired_counts(regex, [source[1]]))
        out: dict[int, Waiver] = {}
        added = []
        for number in sorted(numbers):
            line = where.lines.get(number)
            if line is None:
                continue
            if number in hunk_of:
                added.append(Added(number, hunk_of[number], normal(line), first_match(regex, line),
                                   blocks=number in blocking))
            else:
                out[number] = Waiver(kind="preexisting",
                                     reason=f"{PREEXISTING}: the line stood there before this change")
        what = {"moved": "a line the change removes",
                "elsewhere": f"{source[0]} before it, or a line it removes" if source else "a line the change removes",
                "edited": "the line it edits, which matched the same way"}
        for number, how in paired(added, removed, +elsewhere).items():
            why = f"{PREEXISTING}: the rule fires on the same line before this change ({what[how]})"
            out[number] = Waiver(kind="moved" if how == "elsewhere" else "preexisting", reason=why)
        return out

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

    def _removed_counts(self, rule: Rule, here: frozenset[PathClass]) -> Counter[str]:
        """The rule's removed lines in the files alike, by normalised text, counted once per rule."""
        key = (rule.id, here)
        if key not in self._fired_removed:
            text = self.removed().get(here)
            self._fired_removed[key] = fired_counts(compile_pattern(rule.pattern or ""), [text] if text else [])
        return self._fired_removed[key]

    def _copied_from(self, change: FileChange, here: frozenset[PathClass]) -> tuple[str, str] | None:
        """For a new file, the file of its name in the same path classes it copies, with its content."""
        if change.status != "added":
            return None
        if self._texts is None:  # only a new file copies: the base contents of the others are never read here
            self._texts = self.around.base_texts([c for c in self.changes if c.status == "added"])
        source = self._texts.get(change.path)
        if source is None or source[0] == change.path or self.classifier.classes(source[0]) != here:
            return None
        return source
