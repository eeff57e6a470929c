from __future__ import annotations

import json

import pytest

from review_gate.models import ReviewReport
from review_gate.outputs import FORMATS, renderer
from tests.outputs.conftest import check_golden


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_renders_the_sample_report(name: str, report: ReviewReport) -> None:
    text = renderer(name)(report)
    assert isinstance(text, str) and text


def test_json_golden(report: ReviewReport) -> None:
    text = renderer("json")(report)
    check_golden("report.json", text)
    assert json.loads(text)["rules"][0]["id"] == "sec-private-key-01"


def test_text_golden(report: ReviewReport) -> None:
    check_golden("report.txt", renderer("text")(report))


def test_the_summary_line_says_pass_or_fail_the_same_in_every_format(report: ReviewReport) -> None:
    """Seed 000's verdict, PASS exactly when the run exits 0, whatever the five-valued decision."""
    from review_gate.outputs.summary import summary_line

    for decision, code, verdict in (("needs_fixes", 1, "FAIL"), ("pass_with_warnings", 0, "PASS"),
                                    ("incomplete", 3, "FAIL"), ("needs_fixes", 0, "PASS")):
        changed = report.model_copy(update={"decision": decision, "exit_code": code})
        line = summary_line(changed)
        assert line.startswith(f"REVIEW: {verdict} |")
        for name in ("text", "markdown", "meta", "github"):
            rendered = renderer(name)(changed)
            assert line in rendered, name
            assert f"REVIEW: {'FAIL' if verdict == 'PASS' else 'PASS'} |" not in rendered, name
