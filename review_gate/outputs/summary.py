from __future__ import annotations

from review_gate.models import ReviewReport

VERDICTS = {"pass": "PASS", "pass_with_warnings": "PASS_WITH_WARNINGS", "needs_fixes": "NEEDS_FIXES",
            "fail": "FAIL", "incomplete": "INCOMPLETE"}


def summary_line(report: ReviewReport) -> str:
    """The one line every run prints, for people and for agents that grep."""
    m = report.metrics
    return (f"REVIEW: {VERDICTS[report.decision]} | issues={m.total} (critical={m.critical}) "
            f"| missing_inputs={m.missing_inputs}")
