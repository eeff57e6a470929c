"""``--format sarif``: one SARIF 2.1.0 run, shaped for GitHub code scanning.

How the report maps:

- ``tool.driver.rules`` lists exactly the rules that fired: the configured rules of
  ``report.rules``, a rule id an agent reported without configuring it, and one synthetic rule
  ``review-gate/<agent>/<category>`` for each agent and category whose findings carry no rule id.
- Each finding with a file is one result: level from severity (critical and major ``error``,
  warning ``warning``, info ``note``), the file as a URI relative to ``%SRCROOT%`` (the repository
  root), lines as a region when known, ``partialFingerprints["reviewGate/v1"]`` = the finding's
  fingerprint, and our own severity in ``properties.severity`` so a reader keeps critical apart
  from major (``review_gate.agents.parse.parse_sarif`` honours it).
- A finding a person accepted, or a committed baseline lists, is a result with an ``external``
  suppression whose justification says who accepted it and why (an inline waiver's is
  ``inSource``): code scanning shows it dismissed, with the reason, not open and not missing.
- A finding with no file (about the change as a whole) is not a result: GitHub rejects the whole
  upload when any result has no location ("expected at least one location"), and inventing one
  would point at code the finding is not about. Such findings go into the run's
  ``properties.findingsWithoutLocation``, so the file still holds every finding; the metrics count
  them as usual.
- ``invocations[0]``: ``executionSuccessful`` is false when an agent failed or timed out, and each
  such agent is a tool execution notification (``error`` when required, ``warning`` when not).
- Each gap in the configuration is a tool *configuration* notification (SARIF §3.20.21: a
  condition of the tool's configuration, not a result about the code) at level ``note``, its
  descriptor ``review-gate/gap/<kind>`` listed once per kind in ``tool.driver.notifications``;
  its properties carry the kind, subject, id, suggestion and patch. A gap about one changed file
  (``uncovered_file``) has that file as its location. Code scanning makes no alert of a
  notification, so a gap never looks like a finding in the code.
- The run's ``properties`` carry the decision, exit code and metrics, the agents that did not
  review all of the change (``didNotReview``: why, and the metric each counts in) and the
  findings dropped as outside every reviewer's scope (``droppedFindings``, with severity).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from review_gate.models import SEVERITY_RANK, Finding, Gap, ReviewReport, RuleInfo
from review_gate.models.report import HOST_REVIEWER
from review_gate.outputs.reviewers import absent_agents, dropped, host_line, hosted
from review_gate.text.escape import json_safe

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/review-gate/review-gate"
FINGERPRINT_KEY = "reviewGate/v1"
SRCROOT = "%SRCROOT%"
LEVELS = {"critical": "error", "major": "error", "warning": "warning", "info": "note"}

# "[text](target)" in a plain text message is a SARIF embedded link (§3.11.6); agents' text is not
# meant as one, so its brackets are escaped.
_EMBEDDED_LINK = re.compile(r"\[([^\[\]]*)\]\(")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&])")


def rule_id_of(finding: Finding) -> str:
    """The finding's rule, or the stable synthetic rule of its agent and category."""
    return finding.rule_id or f"review-gate/{finding.agent}/{finding.category}"


def artifact_uri(path: str) -> str:
    """A repository-relative path (git's, with ``/``) as a relative URI reference: every character
    that is not unreserved or ``/`` is percent-encoded, so a space, ``%``, ``:``, ``#`` or ``\\``
    cannot change its meaning (``a:b.py`` would otherwise read as a URI with scheme ``a``)."""
    return quote(path.removeprefix("./"), safe="/")


def render(report: ReviewReport) -> str:
    return json_safe(json.dumps(sarif_log(report), indent=2, ensure_ascii=False)) + "\n"


def sarif_log(report: ReviewReport) -> dict[str, Any]:
    rules, index = _rules(report)
    located = [f for f in report.findings if f.file]
    inline = [f for f in report.waived if f.file and f.inline_waiver is not None]
    external = [f for f in report.waived_by_people if f.file]
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "review-gate",
            "version": report.tool_version,
            "semanticVersion": report.tool_version,
            "informationUri": INFORMATION_URI,
            "rules": rules,
            **({"notifications": _gap_descriptors(report)} if report.gaps else {}),
        }},
        "automationDetails": {"id": f"review-gate/{report.run_id}"},
        "invocations": [_invocation(report)],
        "results": [*(_result(f, index) for f in located), *(_suppressed(f, index) for f in inline),
                    *(_accepted(f, index) for f in external)],
        "properties": _run_properties(report),
    }
    by_host = set(hosted(report))
    for result in run["results"]:  # a self-review, said on each of its findings
        if result["properties"].get("agent") in by_host:
            result["properties"]["reviewedBy"] = HOST_REVIEWER
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _rules(report: ReviewReport) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Configured rules first, in the report's order, then the others by id; each rule once."""
    configured = {r.id: r for r in report.rules}
    fired: dict[str, Finding] = {}  # per rule, its most severe finding: order does not matter
    shown = [*report.findings, *(f for f in report.waived if f.file and f.inline_waiver is not None),
             *(f for f in report.waived_by_people if f.file)]
    for finding in sorted(shown, key=lambda f: SEVERITY_RANK[f.severity]):
        fired.setdefault(rule_id_of(finding), finding)
    order = [r.id for r in report.rules if r.id in fired]
    order += sorted(rid for rid in fired if rid not in configured)
    rules = [_configured_rule(configured[rid]) if rid in configured else _unconfigured_rule(rid, fired[rid])
             for rid in order]
    return rules, {rid: i for i, rid in enumerate(order)}


def _configured_rule(rule: RuleInfo) -> dict[str, Any]:
    return _descriptor(
        rule.id, rule.name, short=rule.name, full=rule.description,
        help_text=f"Detection: {rule.detection}\nRecommendation: {rule.recommendation}",
        help_markdown=f"**Detection:** {_markdown(rule.detection)}\n\n"
                      f"**Recommendation:** {_markdown(rule.recommendation)}",
        severity=rule.severity, category=rule.category, agent=rule.agent)


def _unconfigured_rule(rule_id: str, finding: Finding) -> dict[str, Any]:
    """A rule id an agent reported without a configured rule, or a synthetic one: described by
    its agent and category, since nothing else is known about it; its default level is that of
    its most severe finding."""
    if finding.rule_id:
        short = f"{rule_id}, reported by {finding.agent}"
        full = f"Rule {rule_id} as reported by the {finding.agent} agent; it is not in the review-gate configuration."
    else:
        short = f"{finding.category} ({finding.agent})"
        full = f"Findings of the {finding.agent} agent in category {finding.category} that name no rule."
    return _descriptor(
        rule_id, rule_id, short=short, full=full,
        help_text=full, help_markdown=_markdown(full),
        severity=finding.severity, category=finding.category, agent=finding.agent)


def _descriptor(rule_id: str, name: str, *, short: str, full: str, help_text: str, help_markdown: str,
                severity: str, category: str, agent: str) -> dict[str, Any]:
    return {
        "id": rule_id,
        "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": help_text, "markdown": help_markdown},
        "defaultConfiguration": {"level": LEVELS[severity]},
        "properties": {"severity": severity, "category": category, "agent": agent,
                       "tags": list(dict.fromkeys(["review-gate", category]))},
    }


def _result(finding: Finding, index: dict[str, int]) -> dict[str, Any]:
    rule_id = rule_id_of(finding)
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(finding.file or ""), "uriBaseId": SRCROOT}}
    if finding.line is not None:
        region = {"startLine": finding.line}
        if finding.end_line is not None:
            region["endLine"] = max(finding.end_line, finding.line)
        physical["region"] = region
    properties: dict[str, Any] = {"severity": finding.severity, "category": finding.category,
                                  "agent": finding.agent}
    if finding.confidence is not None:
        properties["confidence"] = finding.confidence
    if finding.also_reported_by:
        properties["also_reported_by"] = list(finding.also_reported_by)
    if finding.recommendation:
        properties["recommendation"] = finding.recommendation
    return {
        "ruleId": rule_id,
        "ruleIndex": index[rule_id],
        "level": LEVELS[finding.severity],
        "message": {"text": _plain(finding.message)},
        "locations": [{"physicalLocation": physical}],
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
        "properties": properties,
    }


def _suppressed(finding: Finding, index: dict[str, int]) -> dict[str, Any]:
    """A finding an inline comment waives: SARIF's in-source suppression, with the comment's reason."""
    result = _result(finding, index)
    waiver = finding.inline_waiver
    assert waiver is not None
    result["suppressions"] = [{"kind": "inSource", "status": "accepted",
                               "justification": _plain(waiver.said())}]
    result["properties"]["waived"] = "in this change" if waiver.added else "by a comment the base already has"
    return result


def _accepted(finding: Finding, index: dict[str, int]) -> dict[str, Any]:
    """A finding waived from outside the change: SARIF's external suppression, with who accepted
    it and why (``accepted by …: …``, ``baselined``), so code scanning shows it dismissed, not open."""
    result = _result(finding, index)
    result["suppressions"] = [{"kind": "external", "status": "accepted",
                               "justification": _plain(finding.waived or "waived")}]
    result["properties"]["waived"] = finding.waived or "waived"
    return result


GAP_DESCRIPTIONS = {
    "unclassified_file": "A changed file no domain claims.",
    "domain_without_policy": "A domain the change touches that no policy routes to an agent.",
    "unknown_agent": "A policy dispatches an agent the registry does not have.",
    "uncovered_file": "A changed file no agent was shown.",
    "config_changed": "The change edits the review configuration.",
    "baseline_changed": "The change edits the baseline.",
    "state_changed": "The change adds or edits the run-state database.",
    "llm_addition": "The LLM gap detector added an agent the policies did not choose.",
    "agent_addition": "The caller added an agent the policies did not choose (run --add-agent).",
    "gap_detector_failed": "The LLM gap detector failed; the manifest is the deterministic one.",
    "nested_repository": "The change adds a git repository inside this one; its own files were not reviewed.",
}


def gap_descriptor_id(kind: str) -> str:
    return f"review-gate/gap/{kind}"


def _gap_kinds(report: ReviewReport) -> list[str]:
    return list(dict.fromkeys(g.kind for g in report.gaps))


def _gap_descriptors(report: ReviewReport) -> list[dict[str, Any]]:
    return [{"id": gap_descriptor_id(kind), "name": kind,
             "shortDescription": {"text": GAP_DESCRIPTIONS.get(kind, f"A gap of kind {kind}.")},
             "defaultConfiguration": {"level": "note"}} for kind in _gap_kinds(report)]


def _gap_notification(gap: Gap, index: dict[str, int]) -> dict[str, Any]:
    properties: dict[str, Any] = {"gapId": gap.id, "kind": gap.kind, "subject": gap.subject,
                                  "suggestion": gap.suggestion}
    if gap.patch is not None:
        properties["patch"] = {"file": gap.patch.file, "operations": gap.patch.as_json()}
    notification: dict[str, Any] = {
        "descriptor": {"id": gap_descriptor_id(gap.kind), "index": index[gap.kind]},
        "level": "note",
        "message": {"text": _plain(f"{gap.subject}: {gap.reason}")},
        "properties": properties,
    }
    if gap.kind == "uncovered_file":
        notification["locations"] = [{"physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(gap.subject), "uriBaseId": SRCROOT}}}]
    return notification


def _invocation(report: ReviewReport) -> dict[str, Any]:
    broken = [a for a in report.agents if a.broken]
    invocation: dict[str, Any] = {"executionSuccessful": not broken}
    if report.gaps:
        index = {kind: i for i, kind in enumerate(_gap_kinds(report))}
        invocation["toolConfigurationNotifications"] = [_gap_notification(g, index) for g in report.gaps]
    if broken:
        invocation["toolExecutionNotifications"] = [
            {
                "descriptor": {"id": f"review-gate/agent-{a.status.replace('_', '-')}"},
                "level": "error" if a.required else "warning",
                "message": {"text": _plain(f"agent {a.id} {a.status.replace('_', ' ')}"
                                           + (f": {a.error}" if a.error else ""))},
                "properties": {"agent": a.id, "status": a.status, "required": a.required,
                               "attempts": a.attempts},
            }
            for a in broken
        ]
    return invocation


def _run_properties(report: ReviewReport) -> dict[str, Any]:
    return {
        "runId": report.run_id,
        "decision": report.decision,
        "exitCode": report.exit_code,
        "metrics": report.metrics.model_dump(mode="json"),
        "didNotReview": [a.model_dump(mode="json") for a in absent_agents(report)],
        **({"reviewedBy": {HOST_REVIEWER: hosted(report), "note": host_line(report)}} if hosted(report) else {}),
        "turnedOff": [{"agent": a.id, "reason": a.error} for a in report.agents if a.disabled],
        "droppedFindings": [{"agent": agent, **d.model_dump(mode="json")} for agent, d in dropped(report)],
        "findingsWithoutLocation": [
            {"fingerprint": f.fingerprint, "ruleId": rule_id_of(f), "severity": f.severity,
             "category": f.category, "agent": f.agent, "message": f.message,
             **({"recommendation": f.recommendation} if f.recommendation else {})}
            for f in report.findings if not f.file
        ],
    }


def _plain(text: str) -> str:
    return _EMBEDDED_LINK.sub(lambda m: "\\[" + m.group(1) + "\\](", text)


def _markdown(text: str) -> str:
    """Configured rule text as inline Markdown: one line, every special character literal."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))
