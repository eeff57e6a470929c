"""``--format rdjsonl``: reviewdog Diagnostic objects, one JSON object per line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from review_gate.models import ReviewReport
from review_gate.outputs import renderer
from tests.conftest import make_diff
from tests.outputs.conftest import FINDINGS, _finding, check_golden, make_report

# The fields of reviewdog's Diagnostic message (proto/rdf/reviewdog.proto) we may write.
DIAGNOSTIC_FIELDS = {"message", "location", "severity", "source", "code", "suggestions", "original_output"}
SEVERITIES = {"ERROR", "WARNING", "INFO"}


def diagnostics(report: ReviewReport) -> list[dict[str, Any]]:
    text = renderer("rdjsonl")(report)
    assert text == "" or text.endswith("\n")
    lines = text.split("\n")[:-1]
    items = [json.loads(line) for line in lines]
    assert all(isinstance(item, dict) for item in items)
    return items


def assert_diagnostic(item: dict[str, Any]) -> None:
    assert set(item) <= DIAGNOSTIC_FIELDS
    assert isinstance(item["message"], str)
    assert item["severity"] in SEVERITIES
    assert item["source"]["name"] == "review-gate"
    assert isinstance(item["code"]["value"], str) and item["code"]["value"]
    if "location" in item:
        location = item["location"]
        assert set(location) <= {"path", "range"}
        assert isinstance(location["path"], str) and location["path"]
        if "range" in location:
            start, end = location["range"]["start"], location["range"]["end"]
            assert set(start) == set(end) == {"line"}  # line-wise: no columns
            assert 1 <= start["line"] <= end["line"]


def test_one_parsable_line_per_finding(findings_report: ReviewReport) -> None:
    text = renderer("rdjsonl")(findings_report)
    assert text.count("\n") == len(FINDINGS)
    items = diagnostics(findings_report)
    assert len(items) == len(FINDINGS)
    for item in items:
        assert_diagnostic(item)
    # Line breaks inside messages are escaped, never raw.
    assert [i["message"] for i in items] == [f.message for f in FINDINGS]


def test_severity_mapping(findings_report: ReviewReport) -> None:
    expected = {"critical": "ERROR", "major": "ERROR", "warning": "WARNING", "info": "INFO"}
    assert [i["severity"] for i in diagnostics(findings_report)] == [expected[f.severity] for f in FINDINGS]


def test_locations_and_ranges(report: ReviewReport) -> None:
    items = diagnostics(report)
    assert items[1]["location"] == {"path": "app/http.py", "range": {"start": {"line": 12}, "end": {"line": 14}}}
    assert items[3]["location"]["path"] == "dir with space/odd,name:1.py"  # a path, not a URI
    assert "location" not in items[5]  # no file: no location
    [no_line] = diagnostics(make_report([_finding(7, file="setup.cfg", line=None, end_line=None)]))
    assert no_line["location"] == {"path": "setup.cfg"}


def test_code_is_the_rule_or_the_synthetic_rule(findings_report: ReviewReport) -> None:
    assert [i["code"] for i in diagnostics(findings_report)] == [
        {"value": "sec-private-key-01"}, {"value": "sec-tls-verify-01"},
        {"value": "review-gate/review-bot/injection"}, {"value": "hyg-except-pass-01"}, {"value": "hyg-todo-01"},
        {"value": "review-gate/review-bot/general"}]


def test_unicode_line_separators_cannot_split_a_line() -> None:
    finding = _finding(1, message="one\u2028two\u2029three\x85four é")
    text = renderer("rdjsonl")(make_report([finding]))
    [line] = text.splitlines()  # str.splitlines also splits at NEL, U+2028 and U+2029
    assert json.loads(line)["message"] == finding.message
    assert "é" in line  # other characters stay as they are


def test_empty_report_prints_nothing() -> None:
    assert renderer("rdjsonl")(make_report([], decision="pass")) == ""


def test_rdjsonl_golden(report: ReviewReport) -> None:
    check_golden("report.rdjsonl", renderer("rdjsonl")(report))


MIXED = (make_diff("app/settings.py", ["import requests", "requests.get(url, verify=False)", "x = 1  # TODO later"])
         + make_diff("keys/id.pem", ["-----BEGIN OPENSSH PRIVATE KEY-----"]))


def test_cli_writes_rdjsonl_for_a_real_diff(cli: Any) -> None:
    result = cli("--diff", "-", "--format", "rdjsonl", stdin=MIXED.encode())
    assert result.code == 1
    items = [json.loads(line) for line in result.out.splitlines()]
    assert items
    for item in items:
        assert_diagnostic(item)
    assert {i["location"]["path"] for i in items} == {"app/settings.py", "keys/id.pem"}
    assert "ERROR" in {i["severity"] for i in items}


def test_cli_writes_rdjsonl_and_json_files_together(cli: Any, isolated: Path) -> None:
    cli("--diff", "-", "--format", "rdjsonl", "--output", "out/review.rdjsonl", "--format", "json", "--output",
        "r.json", stdin=MIXED.encode())
    lines = (isolated / "out" / "review.rdjsonl").read_text(encoding="utf-8").splitlines()
    report = json.loads((isolated / "r.json").read_text(encoding="utf-8"))
    assert [json.loads(line)["message"] for line in lines] == [f["message"] for f in report["findings"]]
