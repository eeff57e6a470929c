"""``--format json``: the report of DESIGN §7; its schema is schemas/report.schema.json."""

from __future__ import annotations

from review_gate.escape import json_safe
from review_gate.models import ReviewReport


def render(report: ReviewReport) -> str:
    return json_safe(report.model_dump_json(indent=2)) + "\n"
