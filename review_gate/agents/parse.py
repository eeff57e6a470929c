"""Reading what a command agent printed: findings JSON (DESIGN §2) or SARIF 2.1.0."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote, urlparse

from pydantic import ValidationError

from review_gate.errors import AgentFault
from review_gate.models import RawFinding

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
    severity = props.get("severity") if props.get("severity") in ("critical", "major", "warning", "info") \
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
