"""The summary line of a finished report."""

from __future__ import annotations

from review_gate.models import ReviewReport
from review_gate.models.report import summary_line as line

VERDICTS = {"pass": "PASS", "pass_with_warnings": "PASS_WITH_WARNINGS", "needs_fixes": "NEEDS_FIXES",
            "fail": "FAIL", "incomplete": "INCOMPLETE"}


def summary_line(report: ReviewReport) -> str:
    """The one line every run prints, for people and for agents that grep."""
    m = report.metrics
    return line(VERDICTS[report.decision], m.total, m.critical, m.missing_inputs)
