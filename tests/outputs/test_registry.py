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
