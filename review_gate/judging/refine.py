"""The rules' findings judged where their lines live, before they are counted.

Between dispatch and aggregate, each finding whose rule the configuration holds goes through
the rule's settings (review-rules.json, ``models.rule_context``), in this order:

1. path classes (``path_classes``): in a test, fixture, example, docs, generated, vendored or
   minified file the rule lowers the finding, or skips it: a skipped finding is listed as waived
   (``path class: ...``), never dropped (``review_gate.judging.path_classes``; a file the change
   adds takes a class only with the trusted side's word, ``Classifier.claimed``);
2. placeholders (``placeholders``): a secret rule's match that holds a placeholder is skipped
   (``review_gate.judging.placeholders``), and so is every secret rule's match that is only a key a
   vendor documents as an example (AWS's ``AKIA...EXAMPLE``), and a code rule's match in a comment
   or a docstring (``review_gate.judging.code_regions``);
3. contexts (``contexts``): the first that applies skips or lowers it (``review_gate.judging.rule_contexts``);
4. ``once_per_file``: only the rule's first finding in a file counts, saying how many it stands for;
5. pre-existing: a finding on a line the change adds that an old occurrence pays for, one for
   one over the whole change (a line of the same text the change removes from the file, from the
   file it was renamed from or from the file a new file copies; the same hunk's removed line with
   the same match), or on a line the change does not add, is listed as waived with the reason,
   never counted (``review_gate.judging.old_lines``, ``review_gate.judging.preexisting``).

Before all of them, identical findings are numbered over their file's whole new content
(``review_gate.judging.occurrences``); after, the baseline's and acceptances' entries pay for one
finding each. A lowered finding says why in its message. A skipped one is kept in its result and
returned with a waiver of its kind (``path_class``, ``context``, ``once_per_file``): aggregate
lists it as waived, with the reason; no finding is dropped here. Nothing here is read from the change's own
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
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol

from review_gate.judging import code_regions
from review_gate.judging.created_tables import change_creates
from review_gate.judging.occurrences import Occurrences, payable, renumbered
from review_gate.judging.old_lines import OldLines
from review_gate.judging.path_classes import HEAD_LINES, MOVES, Classifier, moved_across
from review_gate.judging.placeholders import comment_line, documented_example, placeholder, reserved_host
from review_gate.judging.rule_contexts import Lines, applies
from review_gate.models import SEVERITY_RANK, AgentResult, FileChange, Finding, PRFacts, ReviewConfig, Rule
from review_gate.models.findings import PATH_CLASS, WaivedKind, Waiver
from review_gate.models.line_ends import hides_lines
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
           *, preexisting: bool = True,
           entries: Mapping[str, Waiver] | None = None) -> tuple[list[AgentResult], dict[str, Waiver]]:
    """``results`` with their findings judged by their rules' settings and their fingerprints
    numbered over their files' whole new content (``occurrences``), and the waivers of the
    findings not counted: those a setting skips, the pre-existing ones, and of ``entries`` (the
    baseline's and the acceptances', when given), those that pay for a finding, one each.
    ``preexisting`` false: a sweep, which reviews files as they are, so that nothing in them is old
    and no file is the change's own (its path classes are the names')."""
    around = around or NoSurroundings()
    rules = {r.id: r for r in config.rules.rules}
    changes = {c.path: c for c in facts.files}
    flagged = list({f.file: changes[f.file] for r in results for f in r.findings
                    if f.file in changes and f.rule_id in rules}.values())
    lined = {f.file: changes[f.file] for r in results for f in r.findings if f.file in changes and f.line is not None}
    wanted = {c.path: c for c in [*flagged, *lined.values()]}
    texts = around.new_texts(list(wanted.values())) if wanted else {}
    # Numbered first: every waiver below names a finding by the fingerprint the report gives it.
    found = Occurrences(texts, (f for r in results for f in r.findings))
    results = [_numbered(r, texts, found) for r in results]
    out, old, skipped = _by_rules(results, facts, config, around, texts, flagged, preexisting) if flagged else (
        results, None, {})
    judged = [f for r in out for f in r.findings if f.fingerprint not in skipped]
    waivers = old(judged) if old is not None and preexisting else {}
    if entries is not None:
        waivers.update(payable(judged, found, _added(lined.values()), entries))
    return out, {**waivers, **skipped}


def _by_rules(results: list[AgentResult], facts: PRFacts, config: ReviewConfig, around: Surroundings,
              texts: Mapping[str, str], flagged: list[FileChange], preexisting: bool,
              ) -> tuple[list[AgentResult], Callable[[list[Finding]], dict[str, Waiver]], dict[str, Waiver]]:
    """The results with their rules' settings applied, what tells the pre-existing findings, and
    the waivers of the findings a setting skips (kept in the results: listed, never dropped)."""
    rules = {r.id: r for r in config.rules.rules}
    classifier = Classifier(config.rules.path_classes, around.gitattributes())
    classifier.know([p for c in facts.files for p in (c.path, c.old_path or c.path)])  # the files alike are asked
    deadline = time.thread_time() + code_regions.WORDS_SECONDS
    # what the change brings where it stands: a file it adds, or moves from other classes (a sweep's
    # files are no one's claim)
    brought = [c for c in flagged if preexisting and (c.status == "added" or (c.status in MOVES and c.old_path))]
    roots = {root for c in brought for root in classifier.roots(c.path).values() if root}
    known = around.base_directories(sorted(roots)) if roots else set()
    claimed = {c.path for c in brought if c.status == "added" or moved_across(classifier, c, known)}
    files = {c.path: _file(c, texts.get(c.path), classifier, known if c.path in claimed else None, deadline)
             for c in flagged}
    base = OldLines(around, flagged, facts.files, classifier)
    owner = around.owner() if any(ctx.when == "same_owner" for r in rules.values() for ctx in r.contexts) else None
    created = functools.cache(lambda: change_creates(facts))  # read only when a `created` context asks
    skipped: dict[str, Waiver] = {}  # fingerprint -> why: findings a setting skips
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
            if isinstance(judged, Waiver):
                skipped[finding.fingerprint] = judged
                judged = finding
            kept.append(judged)
        kept = _once_per_file(kept, rules, skipped)
        out.append(result.model_copy(update={"findings": kept}) if kept != result.findings else result)
    return out, lambda findings: base.preexisting(findings, rules, {
        path: (f.change, f.lines) for path, f in files.items()}), skipped


def _numbered(result: AgentResult, texts: Mapping[str, str], found: Occurrences) -> AgentResult:
    numbered = renumbered(result.findings, texts, found)
    return result if numbered == result.findings else result.model_copy(update={"findings": numbered})


def _added(changes: Iterable[FileChange]) -> dict[str, set[int]]:
    """Each file's lines the change adds."""
    out: dict[str, set[int]] = {}
    for change in changes:
        numbers = out.setdefault(change.path, set())
        for hunk in change.hunks:
            for added in hunk.lines.added_ranges():
                numbers.update(added)
    return out


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


def _lowered(finding: Finding, action: Action, why: str, kind: WaivedKind) -> Finding | Waiver:
    """``finding`` skipped (a waiver of ``kind`` that says why) or at the lower severity ``action``
    names, its message saying why."""
    if action == "skip":
        return Waiver(kind=kind, reason=f"skipped: {why}")
    if action == "keep" or SEVERITY_RANK[action] <= SEVERITY_RANK[finding.severity]:
        return finding
    return finding.model_copy(update={"severity": action, "message": f"{finding.message} [{action}: {why}]"})


def _judge(finding: Finding, rule: Rule, where: _File, config: ReviewConfig, owner: str | None,
           created: Callable[[], AbstractSet[str]], chosen: tuple[Action, PathClass] | None) -> Finding | Waiver:
    """The finding as its rule's settings leave it, or the waiver of one they skip."""
    judged: Finding | Waiver = finding
    if chosen is not None:
        judged = _lowered(finding, chosen[0], f"in a {chosen[1]} file", "path_class")
    if isinstance(judged, Waiver) or finding.line is None:
        return judged
    if rule.category in code_regions.CODE_CATEGORIES and rule.pattern and where.words(finding):
        # the pattern quoted in a comment or a docstring: words about code, not code
        return Waiver(kind="context", reason="skipped: the match is in a comment or a docstring")
    if rule.placeholders is not None and rule.pattern and _placeholder(rule, where.lines, finding):
        return Waiver(kind="context", reason="skipped: the match holds only a placeholder")
    if rule.category == SECRETS and rule.pattern and _documented(rule, where.lines, finding):
        return Waiver(kind="context", reason="skipped: a key the vendor documents as an example")
    for context in rule.contexts:
        if applies(context, where.lines, finding.line, owner, search, created):
            return _lowered(judged, context.action, context.reason, "context")
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


def _once_per_file(findings: list[Finding], rules: Mapping[str, Rule], waived: dict[str, Waiver]) -> list[Finding]:
    """Only the first finding (by line) of each ``once_per_file`` rule in each file counts, saying
    how many more there are; the rest are kept, listed in ``waived`` (those it lists already stay
    as they are)."""
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
            waived[finding.fingerprint] = Waiver(kind="once_per_file",
                                                 reason="counted once: the rule's first finding in the file stands "
                                                        "for the rest")
            out.append(finding)
            continue
        more = first.get(index, 0)
        out.append(finding.model_copy(update={"message": f"{finding.message} (and {more} more in this file)"})
                   if more else finding)
    return out
