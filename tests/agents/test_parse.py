"""Reading what a command agent printed: findings JSON and SARIF 2.1.0, edge cases."""

from __future__ import annotations

import json
from typing import Any

import pytest

from review_gate.agents.parse import parse_findings, parse_sarif
from review_gate.errors import AgentFault

# ---------------------------------------------------------------------------- findings JSON


def test_object_and_bare_list_give_the_same_findings() -> None:
    items = [{"severity": "major", "message": "a"}, {"severity": "info", "message": "b", "line": 3}]
    assert parse_findings(json.dumps({"findings": items})) == parse_findings(json.dumps(items))
    assert [(f.severity, f.message, f.line) for f in parse_findings(json.dumps(items))] == [
        ("major", "a", None), ("info", "b", 3)]


def test_every_optional_field_is_kept() -> None:
    [finding] = parse_findings(json.dumps([{
        "severity": "critical", "message": "m", "rule_id": "r1", "category": "security",
        "file": "src/x.py", "line": 4, "end_line": 6, "column": 9, "recommendation": "fix it", "confidence": 0.5,
    }]))
    assert finding.model_dump() == {
        "severity": "critical", "message": "m", "rule_id": "r1", "category": "security",
        "file": "src/x.py", "line": 4, "end_line": 6, "column": 9, "recommendation": "fix it", "confidence": 0.5,
    }


@pytest.mark.parametrize("text", ["[]", '{"findings": []}', '{"findings": [], "tool": "x"}'])
def test_no_findings(text: str) -> None:
    assert parse_findings(text) == []


def test_fields_the_engine_assigns_are_ignored() -> None:
    [finding] = parse_findings(json.dumps([{
        "severity": "warning", "message": "m", "agent": "someone-else", "fingerprint": "abc",
        "also_reported_by": ["x"],
    }]))
    assert (finding.severity, finding.message) == ("warning", "m")


def test_a_byte_order_mark_is_tolerated() -> None:
    assert parse_findings("\ufeff[]") == []


@pytest.mark.parametrize(("text", "expected"), [
    ("", "printed nothing"),
    ("   \n", "printed nothing"),
    ("no issues found", "not JSON"),
    ('{"findings": [', "not JSON"),
    ('{"results": []}', 'output must be {"findings": [...]}'),
    ('{"findings": {"severity": "info"}}', 'output must be {"findings": [...]}'),
    ("42", 'output must be {"findings": [...]}'),
    ('"text"', 'output must be {"findings": [...]}'),
    ("null", 'output must be {"findings": [...]}'),
    ('["just a string"]', "finding 0 is not a JSON object"),
])
def test_unusable_output_is_a_fault(text: str, expected: str) -> None:
    with pytest.raises(AgentFault) as caught:
        parse_findings(text)
    assert expected in str(caught.value)


def test_not_json_says_how_the_output_starts() -> None:
    with pytest.raises(AgentFault) as caught:
        parse_findings("Error: config\nnot found")
    assert "'Error: config not found'" in str(caught.value)


@pytest.mark.parametrize(("item", "expected"), [
    ({"message": "m"}, "finding 1: severity: Field required"),
    ({"severity": "info"}, "finding 1: message: Field required"),
    ({"severity": "High", "message": "m"}, "finding 1: severity:"),
    ({"severity": "info", "message": "m", "line": "four"}, "finding 1: line:"),
    ({"severity": "info", "message": "m", "confidence": 1.5}, "finding 1: confidence:"),
    ({"severity": "info", "message": "m", "sevrity": "major"}, "finding 1 has unknown field(s): sevrity"),
])
def test_a_bad_finding_is_named_by_its_index(item: dict[str, Any], expected: str) -> None:
    text = json.dumps([{"severity": "info", "message": "fine"}, item])
    with pytest.raises(AgentFault) as caught:
        parse_findings(text)
    assert expected in str(caught.value)


def test_an_invalid_value_is_quoted() -> None:
    with pytest.raises(AgentFault) as caught:
        parse_findings('[{"severity": "blocker", "message": "m"}]')
    assert "(got 'blocker')" in str(caught.value)


# ---------------------------------------------------------------------------- SARIF


def sarif(*results: dict[str, Any], rules: list[dict[str, Any]] | None = None,
          extra_runs: list[dict[str, Any]] | None = None) -> str:
    run: dict[str, Any] = {"tool": {"driver": {"name": "t", "rules": rules or []}}, "results": list(results)}
    return json.dumps({"version": "2.1.0", "runs": [run, *(extra_runs or [])]})


def located(uri: str, start: int | None = None, end: int | None = None, **fields: Any) -> dict[str, Any]:
    region = {k: v for k, v in (("startLine", start), ("endLine", end)) if v is not None}
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
    if region:
        physical["region"] = region
    return {"message": {"text": "m"}, "locations": [{"physicalLocation": physical}], **fields}


@pytest.mark.parametrize(("level", "severity"), [
    ("error", "major"), ("warning", "warning"), ("note", "info"), ("none", "info"),
    (None, "warning"), ("surprising", "warning"),
])
def test_sarif_level_maps_to_severity(level: str | None, severity: str) -> None:
    result: dict[str, Any] = {"message": {"text": "m"}}
    if level is not None:
        result["level"] = level
    [finding] = parse_sarif(sarif(result), None)
    assert finding.severity == severity


def test_sarif_level_falls_back_to_the_rules_default() -> None:
    rules = [{"id": "R1", "defaultConfiguration": {"level": "note"}}]
    [finding] = parse_sarif(sarif({"ruleId": "R1", "message": {"text": "m"}}, rules=rules), None)
    assert finding.severity == "info"


def test_sarif_properties_severity_wins_when_it_is_ours() -> None:
    ours = {"ruleId": "R", "level": "warning", "message": {"text": "m"}, "properties": {"severity": "critical"}}
    theirs = {"ruleId": "R", "level": "note", "message": {"text": "m"}, "properties": {"severity": "9.8"}}
    assert [f.severity for f in parse_sarif(sarif(ours, theirs), None)] == ["critical", "info"]


@pytest.mark.parametrize(("uri", "root", "expected"), [
    ("src/a.py", "/repo", "src/a.py"),
    ("./src/a.py", "/repo", "src/a.py"),
    ("file:///repo/src/a.py", "/repo", "src/a.py"),
    ("file:///repo/src/a.py", "/repo/", "src/a.py"),
    ("/repo/src/a.py", "/repo", "src/a.py"),
    ("src/my%20file.py", "/repo", "src/my file.py"),
    ("file:///elsewhere/a.py", "/repo", "/elsewhere/a.py"),
    ("file:///repository/a.py", "/repo", "/repository/a.py"),
    ("file:///repo/src/a.py", None, "/repo/src/a.py"),
])
def test_sarif_uri_becomes_a_repository_relative_path(uri: str, root: str | None, expected: str) -> None:
    [finding] = parse_sarif(sarif(located(uri, 3)), root)
    assert finding.file == expected


def test_sarif_region_gives_the_lines() -> None:
    findings = parse_sarif(sarif(located("a.py", 3, 7), located("a.py", 5), located("a.py")), None)
    assert [(f.line, f.end_line) for f in findings] == [(3, 7), (5, 5), (None, None)]


def test_sarif_result_without_location_has_no_file() -> None:
    [finding] = parse_sarif(sarif({"message": {"text": "project-wide"}}), "/repo")
    assert (finding.file, finding.line, finding.message) == (None, None, "project-wide")


def test_sarif_rule_metadata_fills_recommendation_and_category() -> None:
    rules = [{"id": "R1", "help": {"text": "use parameters"}, "properties": {"category": "security"}}]
    result = located("a.py", 1, ruleId="R1", properties={"confidence": 0.8})
    [finding] = parse_sarif(sarif(result, rules=rules), None)
    assert (finding.rule_id, finding.recommendation, finding.category, finding.confidence) == (
        "R1", "use parameters", "security", 0.8)


def test_sarif_markdown_message_is_used_when_there_is_no_text() -> None:
    [finding] = parse_sarif(sarif({"message": {"markdown": "**bold**"}}), None)
    assert finding.message == "**bold**"


def test_sarif_results_of_every_run_are_read() -> None:
    second = {"tool": {"driver": {"name": "u"}}, "results": [{"ruleId": "B", "message": {"text": "b"}}]}
    empty = {"tool": {"driver": {"name": "v"}}}
    text = sarif({"ruleId": "A", "message": {"text": "a"}}, extra_runs=[second, empty])
    assert [f.rule_id for f in parse_sarif(text, None)] == ["A", "B"]


def test_sarif_passes_and_suppressed_results_are_not_findings() -> None:
    text = sarif(
        {"ruleId": "passed", "kind": "pass", "message": {"text": "ok"}},
        {"ruleId": "n/a", "kind": "notApplicable", "message": {"text": "n/a"}},
        {"ruleId": "noqa", "message": {"text": "m"}, "suppressions": [{"kind": "inSource"}]},
        {"ruleId": "accepted", "message": {"text": "m"},
         "suppressions": [{"kind": "external", "status": "accepted"}]},
        {"ruleId": "rejected", "message": {"text": "m"},
         "suppressions": [{"kind": "external", "status": "rejected"}]},
        {"ruleId": "failed", "kind": "fail", "message": {"text": "m"}},
        {"ruleId": "plain", "message": {"text": "m"}},
    )
    assert [f.rule_id for f in parse_sarif(text, None)] == ["rejected", "failed", "plain"]


@pytest.mark.parametrize(("text", "expected"), [
    ("", "printed nothing"),
    ("<xml/>", "not JSON"),
    ("[]", "not SARIF"),
    ('{"version": "2.1.0"}', "not SARIF"),
    ('{"runs": {}}', "not SARIF"),
    ('{"runs": [1]}', "SARIF run 0 is malformed"),
    ('{"runs": [{"tool": {"driver": {"rules": 5}}}]}', "SARIF run 0 is malformed"),
    ('{"runs": [{"results": 5}]}', "SARIF run 0 is malformed"),
    ('{"runs": [{"results": ["oops"]}]}', "SARIF result 0 is malformed"),
    ('{"runs": [{"results": [{"level": "error"}]}]}', "SARIF result 0 is malformed"),
    ('{"runs": [{"results": [{"message": "flat"}]}]}', "SARIF result 0 is malformed"),
    ('{"runs": [{"results": [{"message": {"text": "m"}, "properties": {"confidence": 7}}]}]}',
     "SARIF result 0 is malformed"),
    ('{"runs": [{"results": [{"message": {"text": "m"}, "locations": [{"physicalLocation": '
     '{"region": {"startLine": "top"}}}]}]}]}', "SARIF result 0 is malformed"),
])
def test_malformed_sarif_is_a_fault_not_a_crash(text: str, expected: str) -> None:
    with pytest.raises(AgentFault) as caught:
        parse_sarif(text, "/repo")
    assert expected in str(caught.value)


def test_empty_sarif_run_lists_give_no_findings() -> None:
    assert parse_sarif('{"version": "2.1.0", "runs": []}', None) == []
    assert parse_sarif('{"runs": [{"tool": null, "results": null}]}', None) == []
