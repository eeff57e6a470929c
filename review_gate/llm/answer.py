"""Reading a model's answer into findings, tolerantly: the JSON may come fenced in Markdown,
after a sentence of prose, with trailing commas or as a bare list.

Findings are read one by one, so one bad field never costs the rest of the answer: an optional
field out of range is clamped (confidence) or dropped (a line below 1), one of the wrong type
is dropped, a text over its bound is cut; each such repair leaves a note. A finding without a
known severity or a message is dropped and counted. Only an answer that is not JSON, has no
findings list, or whose findings were all dropped is unusable: ``UnusableAnswer`` then
carries a message the model can act on when it is asked again.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from review_gate.judging import dimensions
from review_gate.llm.schema import MAX_FINDINGS, MAX_ID, MAX_MESSAGE, MAX_PATH, MAX_TEXT
from review_gate.models import SEVERITIES, DimensionMapping, RawFinding
from review_gate.models.config import INTENT_UNMET
from review_gate.models.config_values import Severity
from review_gate.models.report import bounded_notes


class UnusableAnswer(Exception):
    """The answer is not findings JSON; the message says why."""


@dataclass(frozen=True)
class ParsedAnswer:
    findings: list[RawFinding]
    notes: list[str] = field(default_factory=list)  # what was repaired or dropped, bounded
    dropped: int = 0  # findings too malformed to keep
    owners: list[str] = field(default_factory=list)  # a packed review: the lens of each finding
    failed: list[str] = field(default_factory=list)  # an agent judging dimensions: those that failed
    criteria_met: bool | None = None  # asked to judge the change against its intent: the answer
    criteria_note: str | None = None


_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_TEXTS = {"message": MAX_MESSAGE, "recommendation": MAX_TEXT}  # cut to the bound, with an ellipsis
_NAMES = {"file": MAX_PATH, "rule_id": MAX_ID, "category": MAX_ID}  # a cut name names something else: dropped
_ONE_OF = ", ".join(SEVERITIES)


def extract_json(text: str) -> Any:
    """The first JSON value in ``text``: a fenced block, or from the first ``{`` or ``[`` on."""
    text = text.removeprefix("\ufeff").strip()
    if not text:
        raise UnusableAnswer("the answer is empty; expected a JSON object {\"findings\": [...]}")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    last_error = "no JSON object or list found"
    for candidate in candidates:
        starts = [i for i in (candidate.find("{"), candidate.find("[")) if i >= 0]
        if not starts:
            continue
        body = candidate[min(starts):]
        for attempt in (body, _TRAILING_COMMA.sub(r"\1", body)):
            try:
                value, _end = decoder.raw_decode(attempt)
                return value
            except json.JSONDecodeError as exc:
                last_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    raise UnusableAnswer(f"the answer is not valid JSON ({last_error})")


def parse_answer(answer: str | dict[str, Any] | list[Any], lenses: list[str] | None = None, *,
                 criteria: bool = False) -> ParsedAnswer:
    """Findings from an answer: text to search for JSON, or JSON already decoded (a tool call).
    ``lenses``: a packed review's reviewers; each finding must name one in ``agent``.
    ``criteria``: the answer was asked to judge the change against its intent (``judgement``)."""
    data = extract_json(answer) if isinstance(answer, str) else answer
    if isinstance(data, list):
        data = {"findings": data}
    if not isinstance(data, dict) or "findings" not in data:
        raise UnusableAnswer("the answer: 'findings' is a required property; expected a JSON object "
                             '{"findings": [...]}')
    items = data["findings"]
    if not isinstance(items, list):
        raise UnusableAnswer(f"findings: expected a list, not {_kind(items)}")
    notes: list[str] = []
    reasons: list[str] = []
    limit = MAX_FINDINGS * max(1, len(lenses or ()))
    if len(items) > limit:
        notes.append(f"kept the first {limit} of {len(items)} findings")
    findings = []
    owners: list[str] = []
    for index, item in enumerate(items[:limit]):
        where = f"findings[{index}]"
        owner = item.get("agent") if isinstance(item, dict) else None
        if lenses is not None and owner not in lenses:
            reason = f"{where}.agent must be one of the lenses: {', '.join(lenses)}"
            reasons.append(reason)
            notes.append(f"{reason}; the finding was dropped")
            continue
        finding = _finding(where, item, notes, reasons)
        if finding is not None:
            findings.append(finding)
            if lenses is not None:
                owners.append(str(owner))
    if reasons and not findings:
        more = f" (and {len(reasons) - 1} more findings like it)" if len(reasons) > 1 else ""
        raise UnusableAnswer(f"no finding is usable: {reasons[0]}{more}")
    dropped = len(items) - len(findings)
    met, note = judgement(data, notes) if criteria else (None, None)
    return ParsedAnswer(findings, bounded_notes(notes), dropped, owners, criteria_met=met, criteria_note=note)


UNMET_MESSAGE = "the reviewer judged that the change does not do what its intent asks, and gave no reason"


def unmet_finding(note: str | None, severity: Severity) -> RawFinding:
    """The finding a judgement ``criteria_met: false`` becomes (rule ``intent-unmet``): about the
    whole change, no file or line; its message is the reviewer's reason."""
    return RawFinding(severity=severity, rule_id=INTENT_UNMET, category="intent",
                      message=f"the change does not do what its intent asks: {note}" if note else UNMET_MESSAGE,
                      recommendation="do what the intent asks, or correct the intent if the change is right")


def judgement(data: dict[str, Any], notes: list[str]) -> tuple[bool | None, str | None]:
    """``criteria_met`` and ``criteria_note`` of an answer; a wrong-typed one is dropped (None,
    not judged) with a note, never the answer: the findings stand on their own."""
    met = data.get("criteria_met")
    if met is not None and not isinstance(met, bool):
        notes.append(f"criteria_met dropped: {_kind(met)}, not true, false or null")
        met = None
    note = _field("criteria_note", "message", data.get("criteria_note"), notes)
    return met, note


def parse_dimensions(answer: str | dict[str, Any] | list[Any], mapping: DimensionMapping) -> ParsedAnswer:
    """The findings of an answer of dimension verdicts (an llm agent with ``dimensions`` set),
    mapped but not escalated: the dimensions that failed are counted over all of the agent's
    answers (``failed``) and escalated once, by the review. Read as tolerantly as findings are:
    optional fields repaired, a verdict without a known dimension or verdict dropped and
    counted; a fail or warn without a message keeps a message naming its dimension."""
    data = extract_json(answer) if isinstance(answer, str) else answer
    try:
        items = dimensions.items(data)
    except dimensions.MalformedVerdicts as exc:
        raise UnusableAnswer(f"the answer: {exc}") from None
    notes: list[str] = []
    reasons: list[str] = []
    if len(items) > MAX_FINDINGS:
        notes.append(f"kept the first {MAX_FINDINGS} of {len(items)} verdicts")
    verdicts = []
    for index, item in enumerate(items[:MAX_FINDINGS]):
        verdict = _verdict(f"dimensions[{index}]", item, mapping, notes, reasons)
        if verdict is not None:
            verdicts.append(verdict)
    if reasons and not verdicts:
        more = f" (and {len(reasons) - 1} more verdicts like it)" if len(reasons) > 1 else ""
        raise UnusableAnswer(f"no verdict is usable: {reasons[0]}{more}")
    found = dimensions.mapped(verdicts, mapping)
    return ParsedAnswer(found, bounded_notes(notes), len(items) - len(verdicts), failed=dimensions.failed(verdicts))


def _verdict(where: str, item: Any, mapping: DimensionMapping, notes: list[str],
             reasons: list[str]) -> dimensions.Verdict | None:
    reason = None
    if not isinstance(item, dict):
        reason = f"{where} is {_kind(item)}, not an object"
    elif not isinstance(item.get("dimension"), str) or not item["dimension"].strip():
        reason = f"{where}.dimension is required (a non-empty string)"
    elif not isinstance(item.get("verdict"), str) or item["verdict"].strip().lower() not in ("pass", "warn", "fail"):
        reason = f"{where}.verdict must be one of pass, warn, fail"
    if reason is None:
        assert isinstance(item, dict)
        clean: dict[str, Any] = {"dimension": item["dimension"].strip()[:dimensions.MAX_NAME],
                                 "verdict": item["verdict"]}
        for name, value in item.items():
            if name in _TEXTS or name in _NAMES or name in ("line", "end_line"):
                repaired = _field(f"{where}.{name}", name, value, notes)
                if repaired is not None:
                    clean[name] = repaired
        if clean["verdict"].strip().lower() != "pass" and not str(clean.get("message") or "").strip():
            notes.append(f"{where}.message missing; the dimension names the finding")
            clean["message"] = f"dimension {clean['dimension']}: {clean['verdict'].strip().lower()}"
        clean.pop("category", None)
        try:
            return dimensions.checked(dimensions.Verdict.model_validate(clean), mapping.names, where)
        except ValidationError as exc:
            reason = f"{where}: {exc.errors()[0]['msg']}"
        except dimensions.MalformedVerdicts as exc:
            reason = str(exc)
    assert reason is not None
    reasons.append(reason)
    notes.append(f"{reason}; the verdict was dropped")
    return None


def _finding(where: str, item: Any, notes: list[str], reasons: list[str]) -> RawFinding | None:
    """One finding, repaired where it can be; None (and the reason, in ``reasons`` and ``notes``) when not."""
    reason = _unkeepable(where, item)
    if reason is None:
        assert isinstance(item, dict)
        clean: dict[str, Any] = {"severity": item["severity"].strip().lower(), "message": item["message"]}
        for name, value in item.items():
            if name in _TEXTS or name in _NAMES or name in ("line", "end_line", "confidence"):
                repaired = _field(f"{where}.{name}", name, value, notes)
                if repaired is not None:
                    clean[name] = repaired
        try:
            return RawFinding.model_validate(clean)
        except ValidationError as exc:  # the repairs should have made it valid; keep the answer anyway
            reason = f"{where}: {exc.errors()[0]['msg']}"
    reasons.append(reason)
    notes.append(f"{reason}; the finding was dropped")
    return None


def _unkeepable(where: str, item: Any) -> str | None:
    if not isinstance(item, dict):
        return f"{where} is {_kind(item)}, not an object"
    severity = item.get("severity")
    if not isinstance(severity, str) or severity.strip().lower() not in SEVERITIES:
        return f"{where}.severity must be one of {_ONE_OF}"
    message = item.get("message")
    if not isinstance(message, str) or not message.strip():
        return f"{where}.message is required (a non-empty string)"
    return None


def _field(where: str, name: str, value: Any, notes: list[str]) -> Any:
    """``value`` as the schema bounds it, or None (dropped); a note says what changed."""
    if value is None:
        return None
    if name in _TEXTS or name in _NAMES:
        if not isinstance(value, str):
            notes.append(f"{where} dropped: {_kind(value)}, not a string")
            return None
        limit = _TEXTS.get(name) or _NAMES[name]
        if len(value) <= limit:
            return value or None
        if name in _NAMES:
            notes.append(f"{where} dropped: longer than {limit} characters")
            return None
        notes.append(f"{where} cut to {limit} characters")
        return value[:limit - 1] + "…"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        notes.append(f"{where} dropped: {_kind(value)}, not a {'number' if name == 'confidence' else 'line number'}")
        return None
    if name == "confidence":
        clamped = min(1.0, max(0.0, float(value)))
        if clamped != value:
            notes.append(f"{where} {value:g} clamped to {clamped:g}")
        return clamped
    if value != int(value) or value < 1:
        notes.append(f"{where} dropped: {value:g} is not a line number")
        return None
    return int(value)


def _kind(value: Any) -> str:
    """The JSON type of ``value``, for a note: never the value itself, which is the model's text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number" if math.isfinite(value) else "a non-finite number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"
