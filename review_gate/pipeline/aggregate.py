"""Stage 6: agent results -> one ReviewReport with metrics and the gate decision. Pure."""

from __future__ import annotations

import difflib
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from review_gate.judging.left_out import judge
from review_gate.judging.secret_quotes import masked
from review_gate.judging.submodule_notes import submodule_warnings
from review_gate.judging.waivers import apply as apply_inline
from review_gate.models import (
    SEVERITIES,
    SEVERITY_RANK,
    AgentResult,
    Coverage,
    Decision,
    FilterMode,
    Finding,
    GateCondition,
    Metrics,
    NotInspected,
    PRClassification,
    PRFacts,
    ReviewConfig,
    RuleInfo,
    SettingsFile,
    Usage,
    Waiver,
)
from review_gate.models.manifest import Gap, ManifestEntry
from review_gate.models.report import ReviewReport, absence_counts, absences
from review_gate.pipeline.boundary import checked, checked_all
from review_gate.pipeline.changed_lines import ChangedLines, clamped, keep_finding

DECISION_RANK = {"pass": 0, "pass_with_warnings": 1, "needs_fixes": 2, "fail": 3}
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
    "==": operator.eq, "!=": operator.ne,
}
_USABLE = ("completed", "cached")


_FUZZY_PER_PLACE = 8  # kept findings of one place a new one is compared with by difflib
_NEAR = 0.9  # difflib ratio from which two messages say the same thing


def _message_key(message: str) -> str:
    return " ".join(message.lower().split())


def _near(a: str, b: str) -> bool:
    matcher = difflib.SequenceMatcher(None, a, b)
    # the quick upper bounds first: most pairs are told apart without the full comparison
    return matcher.real_quick_ratio() >= _NEAR and matcher.quick_ratio() >= _NEAR and matcher.ratio() >= _NEAR


class _Place:
    """The kept findings of one (file, line), indexed so a new one finds its match in constant time:
    by rule id and by normalised message exactly, and by difflib against a few kept ones only."""

    def __init__(self) -> None:
        self.by_rule: dict[str, int] = {}
        self.peer_of_rule: dict[str, int] = {}  # peer code -> a kept finding of a rule naming it
        self.peer_said: dict[str, int] = {}  # agent:rule -> a kept finding of that agent
        self.by_message: dict[str, int] = {}
        self.fuzzy: list[tuple[str, int]] = []

    def match(self, finding: Finding, peers: Iterable[str] = ()) -> int | None:
        key = _message_key(finding.message)
        found = [i for i in (self.by_rule.get(finding.rule_id) if finding.rule_id is not None else None,
                             self.by_message.get(key), self.peer_of_rule.get(_as_peer(finding) or ""),
                             *(self.peer_said.get(code) for code in peers)) if i is not None]
        found += [i for text, i in self.fuzzy if _near(text, finding.message.lower())]
        return min(found, default=None)

    def add(self, finding: Finding, at: int, peers: Iterable[str] = ()) -> None:
        if finding.rule_id is not None:
            self.by_rule.setdefault(finding.rule_id, at)
        for code in peers:  # a peer agent's finding of one of them is this one, said twice
            self.peer_of_rule.setdefault(code, at)
        if (said := _as_peer(finding)) is not None:
            self.peer_said.setdefault(said, at)
        key = _message_key(finding.message)
        if key not in self.by_message:
            self.by_message[key] = at
            if len(self.fuzzy) < _FUZZY_PER_PLACE:
                self.fuzzy.append((finding.message.lower(), at))


def _as_peer(finding: Finding) -> str | None:
    """A finding's rule as a peer code, ``agent:rule`` (a zizmor agent's ``zizmor/template-injection``
    is ``zizmor:template-injection``), the form a rule's ``peers`` name it by."""
    if finding.rule_id is None:
        return None
    return f"{finding.agent}:{finding.rule_id.removeprefix(finding.agent + '/')}"


def peer_codes(config: ReviewConfig) -> dict[str, list[str]]:
    """Each rule's ``peers`` codes whose tool is an agent of the configuration (``zizmor:...`` when a
    ``zizmor`` agent exists): the findings of that agent dedupe merges into the rule's."""
    agents = {a.id for a in config.agents.agents}
    return {r.id: codes for r in config.rules.rules
            if (codes := [c for c in r.peers if c.partition(":")[0] in agents])}


def dedupe(findings: list[Finding], peers: Mapping[str, Iterable[str]] | None = None) -> list[Finding]:
    """Merge findings on the same line that share a rule or say nearly the same thing.

    The most severe copy is kept; the other agents go into ``also_reported_by``, and agreement
    raises confidence (independent evidence: 1 - (1-a)(1-b)). Linear in the number of findings:
    rules and messages are matched exactly through dicts, and the fuzzy comparison of messages
    (difflib) looks at no more than a few kept findings of each line. ``peers``: rule id -> the
    codes a peer agent reports the same problem by (``peer_codes``): that agent's finding of one
    is merged into the rule's on its line, never two rules of ours into each other.
    """
    ordered = sorted(findings, key=lambda f: (SEVERITY_RANK[f.severity], f.agent))
    kept: list[Finding] = []
    places: dict[tuple[str | None, int | None], _Place] = {}
    for finding in ordered:
        place = places.setdefault((finding.file, finding.line), _Place())
        codes = (peers or {}).get(finding.rule_id or "", ())
        match = place.match(finding, codes)
        if match is None:
            place.add(finding, len(kept), codes)
            kept.append(finding)
            continue
        first = kept[match]
        if finding.agent == first.agent or finding.agent in first.also_reported_by:
            continue
        confidence = first.confidence
        if first.confidence is not None and finding.confidence is not None:
            confidence = round(1 - (1 - first.confidence) * (1 - finding.confidence), 4)
        kept[match] = first.model_copy(update={
            "also_reported_by": [*first.also_reported_by, finding.agent], "confidence": confidence})
    return kept


def enrich(finding: Finding, config: ReviewConfig) -> Finding:
    """Fill what an agent left out from its rule's metadata."""
    if finding.rule_id is None:
        return finding
    rule = next((r for r in config.rules.rules if r.id == finding.rule_id), None)
    if rule is None:
        return finding
    update: dict[str, object] = {}
    if finding.recommendation is None:
        update["recommendation"] = rule.recommendation
    if finding.category == "general":
        update["category"] = rule.category
    return finding.model_copy(update=update) if update else finding


def decide(metrics: Metrics, conditions: list[GateCondition]) -> Decision:
    """First matching condition wins (SonarQube style); no match is a pass."""
    for condition in conditions:
        if _OPS[condition.op](getattr(metrics, condition.metric), condition.value):
            return condition.decision
    return "pass"


def exit_code(decision: Decision, fail_on: str) -> int:
    if decision == "incomplete":
        return 3
    if fail_on == "never":
        return 0
    return 1 if DECISION_RANK[decision] >= DECISION_RANK[fail_on] else 0


def aggregate(
    facts: PRFacts,
    classification: PRClassification,
    manifest: list[ManifestEntry],
    gaps: list[Gap],
    results: list[AgentResult],
    config: ReviewConfig,
    *,
    run_id: str,
    tool_version: str,
    filter_mode: FilterMode | None = None,
    fail_on: str | None = None,
    waivers: Mapping[str, Waiver] | None = None,
    files_left_out: int = 0,
    honour_added: bool = True,
    gate_findings: Sequence[Finding] = (),
    uncommitted: Mapping[str, AbstractSet[int]] | None = None,
    texts: Mapping[str, str] | None = None,
) -> ReviewReport:
    """Merge, filter, dedupe, enrich and sort the findings, count them and decide the gate.

    ``waivers`` maps fingerprints to what leaves them out of the count (pre-existing, a baseline
    entry, an acceptance...: a ``Waiver``, its kind and reason); ``judging.left_out.judge``, the one
    judging step, lists those findings under ``waived`` with both, with those an inline comment
    waives. ``files_left_out``: how many changed files were left out before classification as the
    gate's own. Inline waivers (``review_gate.judging.waivers``) are read from the change's lines;
    ``honour_added`` false: those the change adds waive nothing (a loop session's review);
    ``uncommitted``: added lines whose waivers waive nothing either (those since the last commit,
    in a coding agent's hook); ``texts``: the new content of changed files the caller read (path ->
    text), in which an inline waiver's comment is found with the grammar.
    ``gate_findings``: the gate's own, about files the change does not bring to the agents
    (``judging.own_file_checks``): never filtered by the diff's lines, waived only by a person or
    a baseline.
    """
    facts, classification = checked("aggregate", facts), checked("aggregate", classification)
    manifest, gaps, results = (checked_all("aggregate", manifest), checked_all("aggregate", gaps),
                               checked_all("aggregate", results))
    mode = filter_mode or config.settings.filter_mode
    index = ChangedLines(facts)
    raw = masked([f for r in results if r.status in _USABLE for f in r.findings], config.rules.rules)
    raw += submodule_warnings(facts, config.settings)  # a submodule whose commits are not here (warn)
    waivers = waivers or {}
    # What a path class skips is listed apart: merged with a counted finding of its line (dedupe) or
    # waived by a comment, it would take that finding out of the count or count as a waiver
    skipped = [clamped(f, index) for f in raw if f.fingerprint in waivers
               and waivers[f.fingerprint].kind == "path_class" and keep_finding(f, index, mode)]
    apart = {f.fingerprint for f in skipped}
    kept = [clamped(f, index) for f in raw if f.fingerprint not in apart and keep_finding(f, index, mode)]
    inline = apply_inline([enrich(f, config) for f in dedupe(kept, peer_codes(config))], facts, config.rules.rules,
                          [a.id for a in config.agents.agents], config.settings.inline_waivers,
                          honour_added=honour_added, uncommitted=uncommitted, texts=texts)
    merged = sorted([*inline.kept, *inline.problems, *gate_findings], key=_order)
    listed = sorted([*merged, *(enrich(f, config) for f in skipped)], key=_order)
    findings, waived = judge(listed, waivers, sorted(inline.waived, key=_order))
    changed = [f.path for f in facts.files]
    covered = {p for r in results if r.status in _USABLE for p in r.files}
    results = [_reviewed_by_nobody(r, covered) for r in results]
    # A file a required agent did not review (it broke, could not run, or could not read the
    # file) stays unreviewed even when another agent covered it.
    left_out = {p for r in results for p in r.left_unreviewed}
    unread = not_inspected(facts, config.settings)
    # Content no agent was shown (hidden text, a submodule's commit...) is an input the review lacks.
    counted = {u.path for u in unread if u.counted}
    unreviewed = [p for p in changed if p not in covered or p in left_out or p in counted]
    counts = {s: sum(1 for f in findings if f.severity == s) for s in SEVERITIES}
    missing = sum(1 for r in results if r.missing_input) + len(counted)
    metrics = Metrics(**counts, total=len(findings), missing_inputs=missing, unreviewed_files=len(unreviewed),
                      **absence_counts(results), waived_inline=waived_inline(waived),
                      risk_score=classification.risk_score)
    decision = decide(metrics, config.settings.gate.conditions)
    if changed and not covered and decision in ("pass", "pass_with_warnings"):
        # Files changed and no agent completed on any of them: a pass would be a lie.
        decision = "incomplete"
    fired = {f.rule_id for f in findings if f.rule_id}
    rules = [RuleInfo(id=r.id, name=r.name, agent=r.agent, severity=r.severity, category=r.category,
                      description=r.description, detection=r.detection, recommendation=r.recommendation)
             for r in config.rules.rules if r.id in fired]
    return checked("aggregate", ReviewReport(
        tool_version=tool_version, run_id=run_id, decision=decision,
        exit_code=exit_code(decision, fail_on or config.settings.gate.fail_on),
        metrics=metrics, findings=findings, waived=waived, rules=rules, agents=results,
        did_not_review=absences(results), classification=classification,
        manifest=manifest, gaps=gaps,
        coverage=Coverage(files_changed=len(changed),
                          files_reviewed=len(changed) - len({*unreviewed, *(u.path for u in unread)}),
                          unreviewed=unreviewed, not_inspected=unread, findings_filtered=len(raw) - len(kept),
                          filter_mode=mode, nothing_to_review=not changed, files_left_out=files_left_out),
        usage=_usage(results),
        source=facts.source,
    ))


def _reviewed_by_nobody(result: AgentResult, covered: set[str]) -> AgentResult:
    """A switched-off agent counts nowhere while other agents review its files; a file that only
    it was routed to was shown to no reviewer, so then it counts as a skip (never a silent pass)."""
    if not result.disabled or not (alone := [p for p in result.files if p not in covered]):
        return result
    shown = ", ".join(alone[:3]) + (f" and {len(alone) - 3} more" if len(alone) > 3 else "")
    return result.model_copy(update={"disabled": False,
                                     "error": f"{result.error}; no other agent reviewed {shown}"})


def _order(finding: Finding) -> tuple[int, str, int, str, str]:
    return (SEVERITY_RANK[finding.severity], finding.file or "", finding.line or 0, finding.rule_id or "",
            finding.message)


def waived_inline(waived: list[Finding]) -> int:
    """The waived_inline metric: findings waived by an inline comment the change adds."""
    return sum(1 for f in waived if f.inline_waiver is not None and f.inline_waiver.added)


def not_inspected(facts: PRFacts, settings: SettingsFile) -> list[NotInspected]:
    """The changed files whose new content no agent was shown, each counted against the gate or
    only listed as review-gate.json says (``binary_files``, ``submodules``); unreadable content
    always counts. Each says how to have it reviewed, or which setting decides."""
    counts = {"binary": settings.binary_files == "incomplete", "submodule": settings.submodules == "incomplete",
              "unreadable": True}
    return [NotInspected(path=f.path, kind=f.unread.kind, reason=f.unread.reason, counted=counts[f.unread.kind],
                         fix=f.unread.fix or _SETTING_HINTS[f.unread.kind, counts[f.unread.kind]])
            for f in facts.files if f.unread is not None]


_SETTING_HINTS = {
    ("binary", False): 'binary files are listed, not counted against the gate; set "binary_files": "incomplete" in '
                       "review-gate.json to count them",
    ("binary", True): 'check it by other means; set "binary_files": "list" in review-gate.json to list binary files '
                      "without counting them against the gate",
    ("submodule", True): "make the submodule's commits present (git submodule update --init) so they are "
                         "reviewed; set \"submodules\": \"warn\" in review-gate.json to pass with a warning instead",
    ("submodule", False): "make the submodule's commits present (git submodule update --init) so they are "
                          'reviewed; set "submodules": "incomplete" in review-gate.json to count them against the gate',
    ("unreadable", True): "have the content read: review the git range, or a diff made with --binary",
}


def _usage(results: list[AgentResult]) -> Usage:
    return sum((r.usage for r in results), Usage()).rounded()
