"""``--format rdjsonl``: reviewdog's rdjsonl, one ``Diagnostic`` JSON object per line.

For ``review-gate --format rdjsonl | reviewdog -f=rdjsonl -reporter=...``. Each finding maps to:

- ``message``: the message as the agent wrote it (reviewdog renders it as Markdown in review
  comments, as it does for any linter's text);
- ``location.path`` and a line-wise ``location.range``: ``start.line`` and ``end.line`` with no
  columns, which reviewdog reads as whole lines, the end line included. A finding with no line
  has no range; a finding with no file has no ``location`` at all (reviewdog keeps it only with
  ``-filter-mode=nofilter``, since it is on no changed line);
- ``severity``: critical and major ``ERROR``, warning ``WARNING``, info ``INFO``;
- ``source.name``: ``review-gate``; ``code.value``: the rule id, or the synthetic
  ``review-gate/<agent>/<category>`` as in SARIF (no per-rule URL exists to put in ``code.url``).

Each gap in the configuration follows as an ``INFO`` diagnostic, ``code.value``
``review-gate/gap/<kind>``, its message the subject, reason and fix; it has no location (it is
about the configuration, not a line), except an ``uncovered_file`` gap, at that file. reviewdog
keeps the ones without a location only with ``-filter-mode=nofilter``.

Each object stays on one line for any line splitter: JSON escapes line breaks in strings, and
NEL, U+2028 and U+2029, which JSON leaves raw but some splitters treat as line ends, are escaped too.
"""

from __future__ import annotations

import json
from typing import Any

from review_gate.models import Finding, Gap, ReviewReport
from review_gate.outputs.sarif import INFORMATION_URI, rule_id_of
from review_gate.text.escape import json_safe

LEVELS = {"critical": "ERROR", "major": "ERROR", "warning": "WARNING", "info": "INFO"}


def render(report: ReviewReport) -> str:
    items = [*map(diagnostic, report.findings), *map(waived_diagnostic, report.waived_in_change),
             *map(gap_diagnostic, report.gaps)]
    return "".join(_line(item) + "\n" for item in items)


def gap_diagnostic(gap: Gap) -> dict[str, Any]:
    message = f"Gap in the review configuration ({gap.kind}): {gap.subject}: {gap.reason}\nFix: {gap.suggestion}"
    if gap.patch is not None:
        message += f"\nPatch of {gap.patch.file}: review-gate gaps --apply {gap.id}"
    item: dict[str, Any] = {"message": message}
    if gap.kind == "uncovered_file":
        item["location"] = {"path": gap.subject}
    item["severity"] = "INFO"
    item["source"] = {"name": "review-gate", "url": INFORMATION_URI}
    item["code"] = {"value": f"review-gate/gap/{gap.kind}"}
    return item


def waived_diagnostic(finding: Finding) -> dict[str, Any]:
    """A finding the change waives with its own inline comment, shown to the reviewer as INFO."""
    waiver = finding.inline_waiver
    why = waiver.said() if waiver is not None else (finding.waived or "")
    item = diagnostic(finding)
    return {**item, "message": f"Waived in this change: {finding.message}\nReason: {why}", "severity": "INFO"}


def diagnostic(finding: Finding) -> dict[str, Any]:
    item: dict[str, Any] = {"message": finding.message}
    if finding.file:
        location: dict[str, Any] = {"path": finding.file}
        if finding.line is not None:
            end = max(finding.end_line or finding.line, finding.line)
            location["range"] = {"start": {"line": finding.line}, "end": {"line": end}}
        item["location"] = location
    item["severity"] = LEVELS[finding.severity]
    item["source"] = {"name": "review-gate", "url": INFORMATION_URI}
    item["code"] = {"value": rule_id_of(finding)}
    return item


def _line(item: dict[str, Any]) -> str:
    # JSON leaves NEL, LS and PS raw inside strings (the only place they can be), where they are
    # safe to escape; Python's str.splitlines and some other readers end a line at each.
    return json_safe(json.dumps(item, ensure_ascii=False))
