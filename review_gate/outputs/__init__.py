"""Output formats, one module each, each with ``render(report) -> str``."""

from __future__ import annotations

from collections.abc import Callable

from review_gate.models import ReviewReport
from review_gate.outputs import json_report, text

FORMATS: dict[str, Callable[[ReviewReport], str]] = {
    "text": text.render,
    "json": json_report.render,
}

__all__ = ["FORMATS"]
