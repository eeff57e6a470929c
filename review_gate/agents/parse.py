"""Reading what a command agent printed: findings JSON (DESIGN §2), SARIF 2.1.0, a
``@@@REVIEW_META`` review (DESIGN §7), whose counts become findings as ``review_meta_findings`` says,
or dimension verdicts, which the agent's mapping turns into findings (``review_gate.judging.dimensions``)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote, urlparse

from pydantic import ValidationError

from review_gate.errors import AgentFault, MetaError
from review_gate.judging import dimensions
from review_gate.judging.review_meta import parse_meta
from review_gate.models import SEVERITIES, DimensionMapping, RawFinding, Severity

_ENGINE_FIELDS = {"agent", "fingerprint", "also_reported_by"}
_RAW_FIELDS = set(RawFinding.model_fields)
_SARIF_LEVELS = {"error": "major", "warning": "warning", "note": "info", "none": "info"}


def _load(text: str) -> Any:
    text = text.removeprefix("\ufeff")  # a byte order mark, as some Windows tools write
    if not text.strip():
        raise AgentFault("printed nothing on stdout; expected JSON")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        preview = text.strip()[:60].replace("\n", " ")
        raise AgentFault(f"output is not JSON ({exc.msg} at line {exc.lineno}); it starts with {preview!r}") from exc


def parse_findings(text: str) -> list[RawFinding]:
    """``{"findings": [...]}`` or a bare list; each finding needs ``severity`` and ``message``."""
    data = _load(text)
    items = data.get("findings") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise AgentFault('output must be {"findings": [...]} or a JSON list of findings')
    findings = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise AgentFault(f"finding {index} is not a JSON object")
        unknown = set(item) - _RAW_FIELDS - _ENGINE_FIELDS
        if unknown:
            raise AgentFault(f"finding {index} has unknown field(s): {', '.join(sorted(unknown))}")
        try:
            findings.append(RawFinding.model_validate({k: v for k, v in item.items() if k in _RAW_FIELDS}))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            got = "" if err["type"] == "missing" else f" (got {err['input']!r})"
            raise AgentFault(f"finding {index}: {field}: {err['msg']}{got}") from exc
    return findings


def parse_dimensions(text: str, mapping: DimensionMapping) -> list[RawFinding]:
    """``{"dimensions": [...]}`` (or a bare list): a verdict per dimension, mapped to findings.
    Read strictly: one malformed verdict fails the agent, since a dropped failure would lower the
    severity the mapping gives (fewer failed dimensions, no escalation)."""
    data = _load(text)
    try:
        verdicts = dimensions.read(data, mapping.names)
    except dimensions.MalformedVerdicts as exc:
        raise AgentFault(f"dimensions output: {exc}") from exc
    return dimensions.findings(verdicts, mapping)


def _relative(uri: str, repo_root: str | None) -> str:
    parsed = urlparse(uri)
    path = unquote(parsed.path) if parsed.scheme in ("file", "") else uri
    if repo_root and path.startswith(repo_root.rstrip("/") + "/"):
        path = path[len(repo_root.rstrip("/")) + 1:]
    return path.removeprefix("./")


def parse_sarif(text: str, repo_root: str | None) -> list[RawFinding]:
    """Results of every run: level -> severity (error major, warning warning, note info), unless
    ``properties.severity`` names one of ours; the first physical location gives file and lines.
    Results of kind pass or notApplicable, and suppressed ones, are not findings."""
    data = _load(text)
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise AgentFault("output is not SARIF: no \"runs\" list")
    findings = []
    for number, run in enumerate(data["runs"]):
        try:
            driver = (run.get("tool") or {}).get("driver") or {}
            rules = {r.get("id"): r for r in driver.get("rules") or [] if isinstance(r, dict)}
            results = list(run.get("results") or [])
        except (AttributeError, TypeError) as exc:
            raise AgentFault(f"SARIF run {number} is malformed: {exc}") from exc
        for index, result in enumerate(results):
            try:
                if _not_a_problem(result):
                    continue
                findings.append(_sarif_result(result, rules, repo_root))
            except (AttributeError, TypeError, KeyError, ValueError, ValidationError) as exc:
                raise AgentFault(f"SARIF result {index} is malformed: {exc}") from exc
    return findings


def _not_a_problem(result: dict[str, Any]) -> bool:
    """A result that passed or did not apply, or that the source suppresses (status absent or
    accepted; under review or rejected suppressions do not count)."""
    if result.get("kind") in ("pass", "notApplicable"):
        return True
    return any(s.get("status", "accepted") == "accepted" for s in result.get("suppressions") or [])


def _sarif_result(result: dict[str, Any], rules: dict[Any, Any], repo_root: str | None) -> RawFinding:
    rule_id = result.get("ruleId")
    rule = rules.get(rule_id, {})
    level = result.get("level") or rule.get("defaultConfiguration", {}).get("level") or "warning"
    props = result.get("properties") or {}
    severity = props.get("severity") if props.get("severity") in SEVERITIES \
        else _SARIF_LEVELS.get(level, "warning")
    message = result["message"].get("text") or result["message"].get("markdown") or ""
    file = line = end_line = None
    locations = result.get("locations") or []
    if locations:
        physical = locations[0].get("physicalLocation", {})
        uri = physical.get("artifactLocation", {}).get("uri")
        file = _relative(uri, repo_root) if uri else None
        region = physical.get("region", {})
        line = region.get("startLine")
        end_line = region.get("endLine", line)
    category = props.get("category") or (rule.get("properties") or {}).get("category")
    return RawFinding(severity=severity, message=message, rule_id=rule_id, category=category,
                      file=file, line=line, end_line=end_line,
                      recommendation=(rule.get("help") or {}).get("text"),
                      confidence=props.get("confidence"))


REVIEW_EXCERPT = 2000  # characters of a review_meta agent's review carried in its finding


def review_meta_findings(text: str, agent: str) -> list[RawFinding]:
    """A ``@@@REVIEW_META`` review as findings. The block gives counts, not places, so:

    - ``missing_inputs`` > 0: the agent did not review everything; it fails (AgentFault), and a
      required agent failing makes the run incomplete, as any agent without a usable answer does;
    - verdict FAIL: one ``critical`` finding for the critical issues, when there are any, and one
      ``major`` finding for the others, when there are any; a FAIL counting no issue at all is
      one ``major`` finding, so that the verdict still blocks;
    - verdict PASS with issues: one ``warning`` finding (the reviewer let the change through);
    - verdict PASS with no issue: no finding.

    The findings have no file; the first carries the start of the review as its recommendation.
    """
    try:
        meta = parse_meta(text)
    except MetaError as exc:
        raise AgentFault(f"review_meta output: {exc.message}") from exc
    counts = f"verdict {meta.verdict}, {meta.issues_total} issues, {meta.issues_critical} critical"
    if meta.missing_inputs:
        raise AgentFault(f"its review reports missing_inputs: {meta.missing_inputs}, so it did not review "
                         f"everything ({counts})")
    others = meta.issues_total - meta.issues_critical
    found: list[tuple[Severity, str]] = []
    if meta.verdict == "FAIL":
        if meta.issues_critical:
            found.append(("critical", f"critical issues reported by {agent}: {meta.issues_critical} "
                                      "(see its review)"))
        if others:
            label = "other issues" if meta.issues_critical else "issues"
            found.append(("major", f"{label} reported by {agent}: {others} (see its review)"))
        if not meta.issues_total:
            found.append(("major", f"{agent} gave the verdict FAIL without counting any issue (see its review)"))
    elif meta.issues_total:
        found.append(("warning", f"issues reported by {agent}, which still passed the change: "
                                 f"{meta.issues_total}, {meta.issues_critical} of them critical (see its review)"))
    review = meta.body.strip()
    if len(review) > REVIEW_EXCERPT:
        review = review[:REVIEW_EXCERPT].rstrip() + " … (cut)"
    return [RawFinding(severity=severity, message=message, category="review",
                       recommendation=(review or None) if index == 0 else None)
            for index, (severity, message) in enumerate(found)]
