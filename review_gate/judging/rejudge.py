"""Recorded findings judged again by another configuration's rules (``replay --config DIR``). Pure.

A finding that names a rule of the configuration it was recorded with was shaped by that rule:
a pattern agent copies the rule's severity, category, recommendation and confidence, and
starts its message with the rule's name; an llm agent is shown each rule with its severity.
Under the new configuration such a finding is:

- dropped, when the new configuration has no such rule or has it disabled (the agent would not
  have reported it);
- otherwise given the new rule's severity, category, recommendation and confidence wherever it
  carried the old rule's (an llm agent that chose another severity keeps its own), and the new
  rule's name at the head of its message.

A finding with no rule, or with a rule id the recorded configuration did not define (a command
or llm agent's own), is kept as recorded: no rule decided it.

    >>> from review_gate.models import Finding
    >>> found = Finding(agent="p", severity="major", category="security", rule_id="tls", file="a.py", line=2,
    ...                 message="TLS off: verify=False", fingerprint="f" * 32)
    >>> old = {"tls": _rule("tls", "TLS off", "major")}
    >>> [(f.severity, f.message) for f in findings([found], old, {"tls": _rule("tls", "TLS off!", "critical")})]
    [('critical', 'TLS off!: verify=False')]
    >>> findings([found], old, {})
    []
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from review_gate.models import AgentResult, Finding, ReviewConfig, Rule

_COPIED = ("severity", "category", "recommendation", "confidence")  # what a rule gives its findings


def results(recorded: Iterable[AgentResult], old: ReviewConfig, new: ReviewConfig) -> list[AgentResult]:
    """Each recorded result with its findings judged by ``new``'s rules instead of ``old``'s."""
    before = {r.id: r for r in old.rules.rules}
    after = {r.id: r for r in new.rules.rules if r.enabled}
    return [r.model_copy(update={"findings": findings(r.findings, before, after)}) for r in recorded]


def findings(recorded: Iterable[Finding], before: Mapping[str, Rule], after: Mapping[str, Rule]) -> list[Finding]:
    out = []
    for finding in recorded:
        old = before.get(finding.rule_id) if finding.rule_id is not None else None
        if old is None:
            out.append(finding)
            continue
        new = after.get(old.id)
        if new is not None:
            out.append(_judged(finding, old, new))
    return out


def _judged(finding: Finding, old: Rule, new: Rule) -> Finding:
    update: dict[str, object] = {}
    for field in _COPIED:
        was, now = getattr(old, field), getattr(new, field)
        if was != now and getattr(finding, field) == was:
            update[field] = now
    head = f"{old.name}: "
    if old.name != new.name and finding.message.startswith(head):
        update["message"] = f"{new.name}: {finding.message[len(head):]}"
    return finding.model_copy(update=update) if update else finding


def _rule(rule_id: str, name: str, severity: str) -> Rule:
    """A rule for the examples above."""
    return Rule.model_validate({"id": rule_id, "name": name, "severity": severity, "agent": "p",
                                "category": "security", "description": "d", "detection": "d",
                                "recommendation": "r"})
