"""``--format meta``: the ``@@@REVIEW_META`` block of DESIGN §7, then the full Markdown review.

The verdict is ``PASS`` exactly when the gate lets the change through (the report's exit code
is 0) and ``FAIL`` otherwise: with the default gate, PASS for ``pass`` and
``pass_with_warnings``, FAIL for ``fail``, ``needs_fixes`` and ``incomplete``; ``--fail-on``
moves it as it moves the exit code, so a workflow that advances on the verdict agrees with one
that advances on the exit code. ``--exit-zero`` (advisory) changes only the process's exit code,
as ruff's does: the verdict still says what the gate decided. The
Markdown review is the ``markdown`` format uncut (this is a file, not a GitHub comment).
``review_gate.judging.review_meta.parse_meta`` reads the block back.
"""

from __future__ import annotations

from review_gate.models import ReviewReport
from review_gate.outputs import markdown


def render(report: ReviewReport) -> str:
    m = report.metrics
    return (f"@@@REVIEW_META\nverdict: {report.verdict}\nissues_total: {m.total}\n"
            f"issues_critical: {m.critical}\nmissing_inputs: {m.missing_inputs}\n@@@\n"
            + markdown.render(report, limit=None))
