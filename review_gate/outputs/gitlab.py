"""``--format gitlab``: a GitLab Code Quality report (``artifacts:reports:codequality``).

A JSON array with one issue per finding, in the Code Climate issue shape GitLab reads:

- ``description``: the message; ``check_name``: the rule id, or the synthetic
  ``review-gate/<agent>/<category>`` as in SARIF; ``fingerprint``: the finding's fingerprint, so an
  issue keeps its identity across pipelines (GitLab compares the base and head reports by it).
  Fingerprints are unique after the engine's dedupe; should two findings share one anyway, the
  later ones get ``-2``, ``-3``… appended, since GitLab shows only one issue per fingerprint.
- ``severity``: info -> ``info``, warning -> ``minor``, major -> ``major``, critical ->
  ``critical``; ``blocker`` is not used (the gate's decision, not one finding, blocks a merge).
- ``location.path`` and ``location.lines.begin``/``end``: a finding with no line starts at line 1.
  GitLab needs a path, so a finding with no file (about the change as a whole) gets ``"."``, the
  repository root, rather than a file it is not about.
- ``categories`` (a Code Climate category, from our category) and ``content.body`` (Markdown with
  the recommendation, agent and confidence) are extras the Code Climate spec defines.
- Each gap in the configuration is an ``info`` issue too, ``check_name``
  ``review-gate/gap/<kind>``, category ``Bug Risk`` (code the configuration lets through
  unreviewed), the gap's id as its fingerprint (the same in every pipeline while the gap stays
  open, so GitLab shows it as new only once), at the root ``"."`` (the changed file itself for an
  ``uncovered_file`` gap); its body has the suggestion and the command that applies its patch.
"""

from __future__ import annotations

import json
from typing import Any

from review_gate.models import Finding, Gap, ReviewReport
from review_gate.outputs.reviewers import hosted
from review_gate.outputs.sarif import rule_id_of
from review_gate.text.escape import json_safe

LEVELS = {"info": "info", "warning": "minor", "major": "major", "critical": "critical"}
NO_FILE_PATH = "."

_CODE_CLIMATE = {
    "compatibility": "Compatibility", "performance": "Performance", "complexity": "Complexity",
    "duplication": "Duplication", "style": "Style", "maintainability": "Clarity",
    "debug-leftover": "Clarity", "documentation": "Clarity",
}
_SECURITY = {"secrets", "injection", "supply-chain", "cryptography", "permissions", "data-exposure",
             "authentication", "authorization"}


def code_climate_category(category: str) -> str:
    if category in _CODE_CLIMATE:
        return _CODE_CLIMATE[category]
    if category in _SECURITY or category.endswith("security"):
        return "Security"
    return "Bug Risk"


def render(report: ReviewReport) -> str:
    return json_safe(json.dumps(issues(report), indent=2, ensure_ascii=False)) + "\n"


def issues(report: ReviewReport) -> list[dict[str, Any]]:
    seen: dict[str, int] = {}
    result = []
    by_host = set(hosted(report))
    for finding in report.findings:
        count = seen.get(finding.fingerprint, 0) + 1
        seen[finding.fingerprint] = count
        fingerprint = finding.fingerprint if count == 1 else f"{finding.fingerprint}-{count}"
        issue = _issue(finding, fingerprint)
        if finding.agent in by_host:  # a self-review, said where the finding is read
            issue = {**issue, "description": f"{issue['description']} (reviewed by: host sub-agent)"}
        result.append(issue)
    result += [_waived_issue(f) for f in report.waived_in_change]
    return result + [_gap_issue(g) for g in report.gaps]


def _waived_issue(finding: Finding) -> dict[str, Any]:
    """A finding the change waives with its own inline comment, as an info issue: Code Quality
    has no suppressions, and the merge request's reviewer must see the waiver."""
    waiver = finding.inline_waiver
    why = waiver.said("`") if waiver is not None else (finding.waived or "")
    issue = _issue(finding, f"{finding.fingerprint}-waived")
    return {**issue, "description": f"Waived in this change: {finding.message}", "severity": "info",
            "content": {"body": f"**Waived in this change:** {why}\n\n{issue['content']['body']}"}}


def _gap_issue(gap: Gap) -> dict[str, Any]:
    body = f"**Fix:** {gap.suggestion}"
    if gap.patch is not None:
        body += f"\n\nPatch of {gap.patch.file}: `review-gate gaps --apply {gap.id}`"
    return {
        "type": "issue",
        "description": f"Gap in the review configuration ({gap.kind}): {gap.subject}: {gap.reason}",
        "check_name": f"review-gate/gap/{gap.kind}",
        "fingerprint": f"review-gate-gap-{gap.id}",
        "severity": "info",
        "categories": ["Bug Risk"],
        "location": {"path": gap.subject if gap.kind == "uncovered_file" else NO_FILE_PATH,
                     "lines": {"begin": 1, "end": 1}},
        "content": {"body": body},
    }


def _issue(finding: Finding, fingerprint: str) -> dict[str, Any]:
    begin = finding.line or 1
    end = max(finding.end_line or begin, begin)
    return {
        "type": "issue",
        "description": finding.message,
        "check_name": rule_id_of(finding),
        "fingerprint": fingerprint,
        "severity": LEVELS[finding.severity],
        "categories": [code_climate_category(finding.category)],
        "location": {"path": finding.file or NO_FILE_PATH, "lines": {"begin": begin, "end": end}},
        "content": {"body": _body(finding)},
    }


def _body(finding: Finding) -> str:
    parts = []
    if finding.recommendation:
        parts.append(f"**Recommendation:** {finding.recommendation}")
    who = ", ".join([finding.agent, *finding.also_reported_by])
    about = f"Category {finding.category}, reported by {who}"
    if finding.confidence is not None:
        about += f", confidence {finding.confidence:.0%}"
    parts.append(about + ".")
    return "\n\n".join(parts)
