"""``--format json``: the report of DESIGN §7; its schema is schemas/report.schema.json."""

from __future__ import annotations

from review_gate.models import ReviewReport
from review_gate.text.escape import json_safe


def render(report: ReviewReport) -> str:
    return json_safe(report.model_dump_json(indent=2)) + "\n"
