"""The summary line of a finished report, and how a decision is named in a heading."""

from __future__ import annotations

from review_gate.models import ReviewReport
from review_gate.models.report import summary_line as line

DECISION_LABELS = {"pass": "PASS", "pass_with_warnings": "PASS_WITH_WARNINGS", "needs_fixes": "NEEDS_FIXES",
                   "fail": "FAIL", "incomplete": "INCOMPLETE"}


def summary_line(report: ReviewReport) -> str:
    """The one line every run prints, for people and for agents that grep: seed 000's verdict,
    PASS exactly when the run exits 0, else FAIL, the same in every format (the five-valued
    decision has its own field and line)."""
    m = report.metrics
    return line(report.verdict, m.total, m.critical, m.missing_inputs)
