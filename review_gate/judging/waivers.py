"""Inline waivers: what a change may say about its own findings, in a comment. Pure.

``review-gate: ignore[RULE_ID] reason`` in the file's comment syntax (``#``, ``//``, ``/* */``,
``--``, ``<!-- -->``, ``;``), on the flagged line or alone on the line above, waives that rule's
finding on that line (a comment after code on its line speaks for that line only); an llm
finding is named by its rule id or by its agent's id (``ignore[security-reviewer]``). An agent's
id speaks only for that agent's findings of no pattern rule (an llm lens's, a command's): a
pattern rule's finding, a key the secrets scanner found included, is waived by its rule id
alone (``ignore[security-patterns]`` waives no ``eval``). The reason is mandatory. The peers'
suppressions count the same way where a rule names the peer's code in its ``peers``
(``noqa:S501``): ruff's ``# noqa: S501``, Bandit's ``# nosec`` / ``# nosec B501``, ESLint's
``// eslint-disable-line no-eval`` (and ``eslint-disable-next-line`` on the line above), zizmor's
``# zizmor: ignore[unpinned-uses]`` and Semgrep's ``nosemgrep`` / ``nosemgrep: RULE``. A blanket
``# noqa`` waives nothing: ruff itself flags those; a bare ``# nosec``, ``// eslint-disable-line``
or ``nosemgrep`` (no code named) waives only findings below ``major``: a major or critical one
needs its code (``# nosec B506``).

Waiver text counts only inside a real comment (``judging.code_regions.Comments``): found with
the language's grammar over the file's new content where there is one (a string statement, a
docstring, an f-string are data, and so is everything a parse error is near), else read on its
line without ever taking a string's contents for a comment (``text.literals``; a script by its
``#!`` interpreter); never on a line the language splits where git does not. The coding agents'
hooks still deny writing waiver text anywhere.

A waiver comes from the change itself, so it is never silent: every waived finding is listed as
waived with the comment and its reason, and the findings waived by comments the change *adds*
are counted in the ``waived_inline`` metric (the built-in gate makes that at least
``pass_with_warnings``). A comment already on the base side of the file (a context line of the
diff) was reviewed when it landed there, for the lines that were there: it waives findings on
unchanged lines (listed, not counted), never on a line the change adds below it, which is judged.

A review-gate waiver the change adds without a reason, or for an id that is neither a rule nor an
agent, waives nothing and is itself reported: a warning on its line that says how to fix it.
"""

from __future__ import annotations

import difflib
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from review_gate.judging.code_regions import Comments
from review_gate.judging.fingerprint import fingerprint
from review_gate.judging.waiver_comments import (
    AGENT,
    BARE_SPARES,
    Comment,
    comments,
    peer,
    peer_waives,
)
from review_gate.models.config import Rule
from review_gate.models.config_values import InlineWaivers
from review_gate.models.facts import Line, PRFacts
from review_gate.models.findings import Finding, InlineWaiver, WaivedKind, Waiver
from review_gate.models.lines import Lines

RULE_ID = "inline-waiver"
SYNTAX = "# review-gate: ignore[RULE_ID] why it is acceptable"

# The marker after a comment opener: "#", "//", "/*", "--", "<!--", ";", "%", "'" or "{#".
@dataclass(frozen=True)
class Applied:
    """``kept``: the findings that count (a waiver that waives nothing leaves its note on them);
    ``waived``: those a comment waives; ``problems``: the malformed waivers the change adds."""

    kept: list[Finding]
    waived: list[Finding]
    problems: list[Finding]


def apply(findings: Sequence[Finding], facts: PRFacts, rules: Sequence[Rule], agents: Iterable[str],
          mode: InlineWaivers, *, honour_added: bool = True,
          uncommitted: Mapping[str, AbstractSet[int]] | None = None, texts: Mapping[str, str] | None = None) -> Applied:
    """The findings ``comments`` on their line or the line above waive, with ``mode``
    (review-gate.json's ``inline_waivers``); ``honour_added`` false: a waiver the change adds
    waives nothing (a loop session's review), and says so; ``uncommitted``: the lines (path ->
    new-side numbers) the working tree adds since the last commit, whose waivers waive nothing
    either (a coding agent's hook: a waiver the agent wrote past the PreToolUse hook); ``texts``:
    the new content of changed files, where the caller read it (path -> text), in which a waiver's
    comment is found with the grammar."""
    if mode == "off":
        return Applied(list(findings), [], [])
    lines = _LineAt(facts, texts)
    peers = {r.id: {peer(code) for code in r.peers} for r in rules}
    written = {r.id: list(r.peers) for r in rules}  # as the rules spell them: `nosec:B602`, `eslint:no-eval`
    patterned = frozenset(r.id for r in rules if r.pattern)
    kept, waived = [], []
    for finding in findings:
        found = _waiver(finding, lines, peers, patterned)
        if found is None:
            bare = _bare(finding, lines, peers, written) or _agent_named(finding, lines, patterned)
            kept.append(finding if bare is None else finding.model_copy(update={"inline_waiver": bare}))
            continue
        line, comment = found
        why = None
        if mode == "report":
            why = "inline_waivers is report in review-gate.json: listed, not honoured"
        elif line.added and not honour_added:
            why = "added during this loop session: a loop honours only the waivers its base commit has"
        elif line.added and uncommitted is not None and line.number in uncommitted.get(finding.file or "", ()):
            why = "added since the last commit: a coding agent's hook honours only committed waivers"
        note = InlineWaiver(line=line.number, comment=comment.text, reason=comment.reason or comment.text,
                            added=line.added, ignored=why)
        if why is not None:
            kept.append(finding.model_copy(update={"inline_waiver": note}))
            continue
        kind: WaivedKind = "inline" if comment.tool == AGENT else "peer"
        waived.append(finding.model_copy(update={"inline_waiver": note})
                      .left_out(Waiver(kind=kind, reason=waived_text(note))))
    return Applied(kept, waived, _problems(facts, {r.id for r in rules} | set(agents), lines))


def waived_text(note: InlineWaiver) -> str:
    """What a report says of a finding an inline comment waives.

    >>> waived_text(InlineWaiver(line=3, comment="# noqa: S501", reason="# noqa: S501", added=True))
    'waived in this change by `# noqa: S501`'
    """
    where = "in this change" if note.added else "by a comment the base already has"
    if note.reason == note.comment:
        return f"waived {where} by `{note.comment}`"
    return f"waived {where}: {note.reason} (`{note.comment}`)"


class _LineAt:
    """(file, new line number) -> the hunk line there, read when asked; where two hunks of a patch
    series show one number, the later one's. A large diff's lines are never all made at once (a
    dict of every line held the whole diff again, several times its size), and a hunk's lines are
    made once for the findings on it."""

    _KEPT = 64

    def __init__(self, facts: PRFacts, texts: Mapping[str, str] | None = None) -> None:
        self._files = {f.path: f for f in facts.files}
        self._comments = Comments(facts.files, texts)
        self._made: OrderedDict[int, tuple[list[str], bytes]] = OrderedDict()

    def get(self, key: tuple[str, int | None]) -> Line | None:
        path, number = key
        change = self._files.get(path)
        if change is None or number is None:
            return None
        for hunk in reversed(change.hunks):
            at = hunk.lines.index_of(number)
            if at is not None:
                texts, added = self._of(hunk.lines)
                return Line(number, texts[at], bool(added[at]))
        return None

    def comments(self, path: str, line: Line) -> list[Comment]:
        """The waiver comments on ``line`` of ``path`` that are real comments there."""
        return [c for c in comments(line.text) if self._comments.holds(path, line.number, line.text, c.at)]

    def _of(self, lines: Lines) -> tuple[list[str], bytes]:
        """A hunk's texts and added flags, made once for the findings on it (no Line for each line)."""
        made = self._made.get(id(lines))
        if made is None:
            made = self._made[id(lines)] = lines.texts_and_flags()
            if len(self._made) > self._KEPT:
                self._made.popitem(last=False)
        else:
            self._made.move_to_end(id(lines))
        return made


def _waiver(finding: Finding, lines: _LineAt, peers: dict[str, set[tuple[str, str]]],
            patterned: AbstractSet[str] = frozenset()) -> tuple[Line, Comment] | None:
    """The first comment on the finding's line, or alone on the line above, that speaks for it.
    A comment after code speaks for its own line only; one the base already has (an unchanged
    line) speaks only for a line that was there too, never for a line the change adds below it."""
    if finding.file is None or finding.line is None:
        return None
    flagged = lines.get((finding.file, finding.line))
    for number, above in ((finding.line, False), (finding.line - 1, True)):
        line = lines.get((finding.file, number))
        if line is None or (above and not line.added and (flagged is None or flagged.added)):
            continue
        for comment in lines.comments(finding.file, line):
            speaks = comment.next_line and comment.alone if above else comment.own_line
            if speaks and _speaks_for(comment, finding, peers, patterned):
                return line, comment
    return None


def _agent_named(finding: Finding, lines: _LineAt, patterned: AbstractSet[str]) -> InlineWaiver | None:
    """A review-gate waiver on the finding's line, or alone on the line above, that names its agent
    but not its pattern rule: it waives nothing, said with the rule id that would."""
    if finding.file is None or finding.line is None or finding.rule_id not in patterned:
        return None
    for number, above in ((finding.line, False), (finding.line - 1, True)):
        line = lines.get((finding.file, number))
        if line is None:
            continue
        for comment in lines.comments(finding.file, line):
            if (comment.tool == AGENT and finding.agent in comment.codes and comment.reason
                    and (comment.next_line and comment.alone if above else comment.own_line)):
                return InlineWaiver(line=line.number, comment=comment.text, reason=comment.reason, added=line.added,
                                    ignored=f"an agent id waives only that agent's llm findings, never a pattern "
                                            f"rule's: name the rule (`ignore[{finding.rule_id}]`) to waive it")
    return None


def _bare(finding: Finding, lines: _LineAt, peers: dict[str, set[tuple[str, str]]],
          written: dict[str, list[str]]) -> InlineWaiver | None:
    """A bare peer suppression on the finding's line that waives it not, for its severity, said
    with the code that would (a trial: `# nosec` on a major finding did nothing, and nothing said why)."""
    if finding.file is None or finding.line is None or finding.severity not in BARE_SPARES:
        return None
    line = lines.get((finding.file, finding.line))
    if line is None:
        return None
    mapped = peers.get(finding.rule_id or "", set())
    for comment in lines.comments(finding.file, line):
        if comment.tool != AGENT and not comment.codes and comment.own_line and peer_waives(comment, mapped):
            codes = sorted(code.partition(":")[2] for code in written.get(finding.rule_id or "", [])
                           if peer(code)[0] == comment.tool)
            named = f"{comment.text} {codes[0]}" if codes else comment.text
            return InlineWaiver(line=line.number, comment=comment.text, reason=comment.text, added=line.added,
                                ignored=f"a bare `{comment.text}` waives only warnings and info: name the rule "
                                        f"(`{named}`) to waive a {finding.severity} finding")
    return None


def _speaks_for(comment: Comment, finding: Finding, peers: dict[str, set[tuple[str, str]]],
                patterned: AbstractSet[str] = frozenset()) -> bool:
    if comment.tool == AGENT:  # an agent's id speaks for its findings of no pattern rule only
        return bool(comment.reason) and (finding.rule_id in comment.codes or (
            finding.agent in comment.codes and finding.rule_id not in patterned))
    if not comment.codes and finding.severity in BARE_SPARES:
        return False  # a bare `# nosec` or `// eslint-disable-line` does not waive a major or critical finding
    return peer_waives(comment, peers.get(finding.rule_id or "", set()))


def _problems(facts: PRFacts, known: set[str], lines: _LineAt) -> list[Finding]:
    """A warning for each review-gate waiver the change adds that waives nothing: no reason, or
    an id that is no rule's or agent's."""
    out = []
    for f in facts.files:
        if f.patch and AGENT not in f.patch:
            continue  # one search of the file's diff text, not a look at each of its lines
        seen: dict[str, int] = {}
        for hunk in f.hunks:
            for line in hunk.lines:
                if not line.added:
                    continue
                for comment in lines.comments(f.path, line):
                    if comment.tool != AGENT:
                        continue
                    problem = _problem(comment, known)
                    if problem is None:
                        continue
                    message, fix = problem
                    count = seen[line.text] = seen.get(line.text, 0) + 1
                    out.append(Finding(
                        fingerprint=fingerprint(AGENT, RULE_ID, f.path, line.text, count - 1), agent=AGENT,
                        rule_id=RULE_ID, severity="warning", category="waivers", file=f.path, line=line.number,
                        end_line=line.number, message=message, recommendation=fix))
    return out


def _problem(comment: Comment, known: set[str]) -> tuple[str, str] | None:
    unknown = [code for code in comment.codes if code not in known]
    if not comment.codes:
        return (f"inline waiver names no rule: `{comment.text}` waives nothing",
                f"name the rule id (or the agent id of an llm finding) in the brackets: {SYNTAX}")
    if unknown:
        close = sorted({c for code in unknown for c in difflib.get_close_matches(code, sorted(known), n=3)})
        hint = f" (closest: {', '.join(close)})" if close else ""
        applies = [code for code in comment.codes if code in known]
        what = "waives nothing"
        if applies:  # the known ids it names still waive their findings (with a reason)
            verb = "applies" if len(applies) == 1 else "apply"
            what = (f"waives nothing for {'it' if len(unknown) == 1 else 'them'}; {', '.join(applies)} {verb}"
                    if comment.reason else "waives nothing")
        which = "is no rule or agent id" if len(unknown) == 1 else "are no rule or agent ids"
        return (f"inline waiver names {', '.join(unknown)}, which {which}{hint}: `{comment.text}` {what}",
                f"use the rule id a report shows beside the finding (`review-gate rule ID` describes it): {SYNTAX}")
    if not comment.reason:
        return (f"inline waiver without a reason: `{comment.text}` waives nothing",
                f"say after the brackets why the finding is acceptable: {SYNTAX}")
    return None
