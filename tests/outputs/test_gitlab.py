"""``--format gitlab``: a GitLab Code Quality report, one issue per finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from review_gate.models import ReviewReport
from review_gate.outputs import renderer
from review_gate.outputs.gitlab import code_climate_category
from tests.conftest import make_diff
from tests.outputs.conftest import FINDINGS, _finding, check_golden, make_report

GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}
CODE_CLIMATE_CATEGORIES = {"Bug Risk", "Clarity", "Compatibility", "Complexity", "Duplication", "Performance",
                           "Security", "Style"}


def gitlab(report: ReviewReport) -> list[dict[str, Any]]:
    text = renderer("gitlab")(report)
    assert text.endswith("\n")
    data: list[dict[str, Any]] = json.loads(text)
    assert isinstance(data, list)
    return data


def assert_gitlab_issue(issue: dict[str, Any]) -> None:
    """The fields GitLab requires, with the types it expects."""
    assert isinstance(issue["description"], str) and issue["description"]
    assert isinstance(issue["check_name"], str) and issue["check_name"]
    assert isinstance(issue["fingerprint"], str) and issue["fingerprint"]
    assert issue["severity"] in GITLAB_SEVERITIES
    location = issue["location"]
    assert isinstance(location["path"], str) and location["path"]
    assert not location["path"].startswith("/")
    lines = location["lines"]
    assert isinstance(lines["begin"], int) and lines["begin"] >= 1
    assert isinstance(lines["end"], int) and lines["end"] >= lines["begin"]
    assert issue["type"] == "issue"
    assert set(issue["categories"]) <= CODE_CLIMATE_CATEGORIES
    assert isinstance(issue["content"]["body"], str)


def test_every_finding_is_an_issue_with_the_required_fields(findings_report: ReviewReport) -> None:
    issues = gitlab(findings_report)
    assert len(issues) == len(FINDINGS)
    for issue in issues:
        assert_gitlab_issue(issue)
    assert [i["description"] for i in issues] == [f.message for f in FINDINGS]
    assert [i["fingerprint"] for i in issues] == [f.fingerprint for f in FINDINGS]


def test_severity_mapping(findings_report: ReviewReport) -> None:
    expected = {"info": "info", "warning": "minor", "major": "major", "critical": "critical"}
    assert [i["severity"] for i in gitlab(findings_report)] == [expected[f.severity] for f in FINDINGS]


def test_check_name_is_the_rule_or_the_synthetic_rule(findings_report: ReviewReport) -> None:
    assert [i["check_name"] for i in gitlab(findings_report)] == [
        "sec-private-key-01", "sec-tls-verify-01", "review-gate/review-bot/injection", "hyg-except-pass-01",
        "hyg-todo-01", "review-gate/review-bot/general"]


def test_locations_lines_and_findings_without_a_line_or_a_file(report: ReviewReport) -> None:
    locations = [i["location"] for i in gitlab(report)]
    assert locations[1] == {"path": "app/http.py", "lines": {"begin": 12, "end": 14}}
    assert locations[3] == {"path": "dir with space/odd,name:1.py", "lines": {"begin": 7, "end": 8}}
    assert locations[5] == {"path": ".", "lines": {"begin": 1, "end": 1}}  # no file: the repository root
    [no_line] = gitlab(make_report([_finding(7, file="setup.cfg", line=None, end_line=None)]))
    assert no_line["location"] == {"path": "setup.cfg", "lines": {"begin": 1, "end": 1}}


def test_fingerprints_are_unique_even_when_findings_share_one() -> None:
    twins = [_finding(1, line=3), _finding(1, line=9), _finding(1, line=12), _finding(2, line=4)]
    issues = gitlab(make_report(twins))
    fingerprints = [i["fingerprint"] for i in issues]
    assert len(set(fingerprints)) == len(fingerprints)
    assert fingerprints == [f"{1:032x}", f"{1:032x}-2", f"{1:032x}-3", f"{2:032x}"]


def test_content_carries_the_recommendation_and_who_reported_it(report: ReviewReport) -> None:
    body = gitlab(report)[1]["content"]["body"]
    assert "Keep verification on." in body
    assert "security-patterns, llm-security" in body
    assert "confidence 90%" in body


@pytest.mark.parametrize(("category", "expected"), [
    ("secrets", "Security"), ("transport-security", "Security"), ("injection", "Security"),
    ("compatibility", "Compatibility"), ("maintainability", "Clarity"), ("data-loss", "Bug Risk"),
    ("general", "Bug Risk"),
])
def test_code_climate_categories(category: str, expected: str) -> None:
    assert code_climate_category(category) == expected


def test_empty_report_is_an_empty_array() -> None:
    assert renderer("gitlab")(make_report([], decision="pass")) == "[]\n"


def test_gitlab_golden(report: ReviewReport) -> None:
    check_golden("report.gitlab.json", renderer("gitlab")(report))


MIXED = (make_diff("app/settings.py", ["import requests", "requests.get(url, verify=False)", "x = 1  # TODO later"])
         + make_diff("keys/id.pem", ["-----BEGIN OPENSSH PRIVATE KEY-----"]))


def test_cli_writes_a_code_quality_report_for_a_real_diff(cli: Any) -> None:
    result = cli("--diff", "-", "--format", "gitlab", stdin=MIXED.encode())
    assert result.code == 1
    issues = json.loads(result.out)
    assert issues
    for issue in issues:
        assert_gitlab_issue(issue)
    assert {i["location"]["path"] for i in issues} == {"app/settings.py", "keys/id.pem"}
    assert "critical" in {i["severity"] for i in issues}
    assert "OPENSSH PRIVATE KEY" not in result.out  # secrets stay redacted


def test_cli_writes_gitlab_and_json_files_together(cli: Any, isolated: Path) -> None:
    cli("--diff", "-", "--format", "gitlab", "--output", "gl-code-quality.json", "--format", "json", "--output",
        "r.json", stdin=MIXED.encode())
    issues = json.loads((isolated / "gl-code-quality.json").read_text(encoding="utf-8"))
    report = json.loads((isolated / "r.json").read_text(encoding="utf-8"))
    assert [i["fingerprint"] for i in issues] == [f["fingerprint"] for f in report["findings"]]
