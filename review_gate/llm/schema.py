"""The findings schema every model answers with: OpenAI's response_format and Anthropic's tool.

Every string and array is bounded, so a runaway answer is refused by the schema rather than
carried into reports. Every field is required (nullable where optional), as OpenAI's strict
mode wants; the tolerant parser (``answer.py``) accepts answers that leave optional ones out.
"""

from __future__ import annotations

import json
from typing import Any, get_args

from review_gate.models import SEVERITIES, DimensionVerdict

MAX_FINDINGS = 50  # a reviewer's findings in one answer (a packed answer holds this many a lens)
MAX_MESSAGE = 1000
MAX_TEXT = 2000
MAX_PATH = 500
MAX_ID = 100
TOOL_NAME = "report_findings"
DIMENSIONS_TOOL = "report_dimensions"


def _nullable(kind: str, **bounds: Any) -> dict[str, Any]:
    return {"type": [kind, "null"], **bounds}


FINDING_PROPERTIES: dict[str, Any] = {
    "severity": {"type": "string", "enum": list(SEVERITIES)},
    "message": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE},
    "file": _nullable("string", maxLength=MAX_PATH),
    "line": _nullable("integer", minimum=1),
    "end_line": _nullable("integer", minimum=1),
    "rule_id": _nullable("string", maxLength=MAX_ID),
    "category": _nullable("string", maxLength=MAX_ID),
    "recommendation": _nullable("string", maxLength=MAX_TEXT),
    "confidence": _nullable("number", minimum=0, maximum=1),
}


CRITERIA_PROPERTIES: dict[str, Any] = {
    "criteria_met": {"type": ["boolean", "null"]},
    "criteria_note": _nullable("string", maxLength=MAX_MESSAGE),
}


def findings_schema(*, strict: bool = True, lenses: list[str] | None = None, criteria: bool = False) -> dict[str, Any]:
    """The answer's JSON Schema; ``strict=False`` requires only severity and message. ``lenses``:
    the reviewers of a packed review, whose id each finding names in ``agent``. ``criteria``: the
    answer also judges the change against its intent (``criteria_met``, ``criteria_note``)."""
    properties = dict(FINDING_PROPERTIES)
    if lenses:
        properties = {"agent": {"type": "string", "enum": list(lenses)}, **properties}
    required = list(properties) if strict else ["severity", "message", *(["agent"] if lenses else [])]
    judged = CRITERIA_PROPERTIES if criteria else {}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["findings", *(judged if strict else ())],
        "properties": {
            "findings": {
                "type": "array",
                "maxItems": MAX_FINDINGS * max(1, len(lenses or ())),  # a packed answer: each lens its share
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": required,
                    "properties": properties,
                },
            },
            **judged,  # after the findings: the judgement comes once the change was read
        },
    }


def dimensions_schema(names: list[str]) -> dict[str, Any]:
    """The answer of an agent that judges dimensions (``dimensions`` set): a verdict per dimension,
    with where and why; ``names``: the dimensions it judges (empty: any name)."""
    dimension: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": MAX_ID}
    if names:
        dimension = {"type": "string", "enum": list(names)}
    properties: dict[str, Any] = {
        "dimension": dimension,
        "verdict": {"type": "string", "enum": list(get_args(DimensionVerdict))},
        "message": _nullable("string", maxLength=MAX_MESSAGE),
        "file": _nullable("string", maxLength=MAX_PATH),
        "line": _nullable("integer", minimum=1),
        "end_line": _nullable("integer", minimum=1),
        "rule_id": _nullable("string", maxLength=MAX_ID),
        "recommendation": _nullable("string", maxLength=MAX_TEXT),
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["dimensions"],
        "properties": {
            "dimensions": {
                "type": "array",
                "maxItems": MAX_FINDINGS,
                "items": {"type": "object", "additionalProperties": False, "required": list(properties),
                          "properties": properties},
            },
        },
    }


def format_note(schema: dict[str, Any]) -> str:
    """What the system message says about the answer's shape when the server does not enforce it
    (``structured_output`` json_object or none): the schema itself, compact."""
    return ("## Answer format\n\nAnswer with one JSON object and nothing else (no prose, no Markdown fence). "
            "It must validate against this JSON Schema:\n\n" + json.dumps(schema, separators=(",", ":")))
