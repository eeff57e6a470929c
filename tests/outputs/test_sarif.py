"""``--format sarif``: valid against the official schema, shaped for GitHub, readable by our own reader."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from jsonschema import Draft7Validator

from review_gate.agents.parse import parse_sarif
from review_gate.models import AgentResult, ReviewReport
from review_gate.outputs import renderer
from review_gate.outputs.sarif import artifact_uri
from tests.conftest import make_diff
from tests.outputs.conftest import FINDINGS, _finding, check_golden, make_report

SCHEMA = Path(__file__).parent.parent / "data" / "sarif-schema-2.1.0.json"


@functools.lru_cache(maxsize=1)
def validator() -> Draft7Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)


def assert_valid(log: dict[str, Any]) -> None:
    errors = sorted(validator().iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


def sarif(report: ReviewReport) -> dict[str, Any]:
    text = renderer("sarif")(report)
    assert text.endswith("}\n")
    data: dict[str, Any] = json.loads(text)
    return data


def only_run(log: dict[str, Any]) -> dict[str, Any]:
    [run] = log["runs"]
    assert isinstance(run, dict)
    return run


def test_the_official_schema_is_the_draft_07_oasis_file() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    # The schema really rejects what it should, so a pass below means something.
    assert list(validator().iter_errors({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}))
    assert list(validator().iter_errors({"version": "2.0.0", "runs": []}))


def test_sample_report_is_valid_sarif(report: ReviewReport) -> None:
    log = sarif(report)
    assert_valid(log)
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-schema-2.1.0.json")
    driver = only_run(log)["tool"]["driver"]
    assert driver["name"] == "review-gate"
    assert driver["version"] == driver["semanticVersion"] == "0.1.0"
    assert driver["informationUri"].startswith("https://")


def test_empty_report_is_valid_sarif_with_no_rules_or_results() -> None:
    calm = [AgentResult(id="hygiene-patterns", kind="pattern", status="completed", attempts=1, duration_s=0.0,
                        files=["a.py"])]
    report = make_report([], decision="pass").model_copy(update={"agents": calm})
    log = sarif(report)
    assert_valid(log)
    run = only_run(log)
    assert run["results"] == []
    assert run["tool"]["driver"]["rules"] == []  # configured rules that did not fire are not listed
    assert run["invocations"] == [{"executionSuccessful": True}]
    assert run["properties"]["decision"] == "pass"
    assert run["properties"]["findingsWithoutLocation"] == []


def test_levels_follow_severity(report: ReviewReport) -> None:
    results = only_run(sarif(report))["results"]
    levels = {r["partialFingerprints"]["reviewGate/v1"]: r["level"] for r in results}
    expected = {"critical": "error", "major": "error", "warning": "warning", "info": "note"}
    assert levels == {f.fingerprint: expected[f.severity] for f in FINDINGS if f.file}
    assert {r["properties"]["severity"] for r in results} == {"critical", "major", "warning", "info"}
    rules = {r["id"]: r for r in only_run(sarif(report))["tool"]["driver"]["rules"]}
    assert rules["sec-private-key-01"]["defaultConfiguration"]["level"] == "error"
    assert rules["hyg-except-pass-01"]["defaultConfiguration"]["level"] == "warning"
    assert rules["hyg-todo-01"]["defaultConfiguration"]["level"] == "note"


def test_rules_are_exactly_those_that_fired_and_rule_index_points_at_them(report: ReviewReport) -> None:
    run = only_run(sarif(report))
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    assert set(ids) == {f.rule_id or f"review-gate/{f.agent}/{f.category}" for f in FINDINGS}
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    tls = rules[ids.index("sec-tls-verify-01")]
    assert tls["name"] == "TLS verification disabled"
    assert tls["shortDescription"]["text"] == "TLS verification disabled"
    assert tls["fullDescription"]["text"] == "Turning off verification exposes traffic."
    assert "verify=False and friends." in tls["help"]["text"]
    assert "Keep verification on." in tls["help"]["text"]
    assert "Keep verification on." in tls["help"]["markdown"]
    assert tls["properties"]["severity"] == "major"
    assert tls["properties"]["category"] == "transport-security"
    assert tls["properties"]["agent"] == "security-patterns"
    assert "transport-security" in tls["properties"]["tags"]


def test_findings_without_a_rule_get_a_stable_synthetic_rule_per_agent_and_category() -> None:
    a = _finding(11, agent="review-bot", category="injection", rule_id=None, file="x.py", line=1)
    b = _finding(12, agent="review-bot", category="injection", rule_id=None, file="y.py", line=2,
                 severity="warning")
    c = _finding(13, agent="review-bot", category="naming", rule_id=None, file="y.py", line=3)
    first = only_run(sarif(make_report([a, b, c])))
    second = only_run(sarif(make_report([c, b, a])))
    ids = [r["id"] for r in first["tool"]["driver"]["rules"]]
    assert ids == ["review-gate/review-bot/injection", "review-gate/review-bot/naming"]
    assert [r["ruleId"] for r in first["results"]] == [ids[0], ids[0], ids[1]]
    by_id = {r["id"]: r for r in second["tool"]["driver"]["rules"]}
    assert by_id == {r["id"]: r for r in first["tool"]["driver"]["rules"]}
    assert by_id[ids[0]]["defaultConfiguration"] == {"level": "error"}  # its most severe finding's
    assert by_id[ids[0]]["properties"] == {"severity": "major", "category": "injection", "agent": "review-bot",
                                           "tags": ["review-gate", "injection"]}


def test_a_rule_an_agent_names_without_configuring_it_is_described() -> None:
    finding = _finding(21, agent="bandit", rule_id="B602", category="injection", file="run.py", line=5)
    log = sarif(make_report([finding]))
    assert_valid(log)
    [rule] = only_run(log)["tool"]["driver"]["rules"]
    assert rule["id"] == "B602"
    assert "bandit" in rule["shortDescription"]["text"]


def test_uris_are_relative_to_the_source_root_and_escaped(report: ReviewReport) -> None:
    results = only_run(sarif(report))["results"]
    locations = {r["partialFingerprints"]["reviewGate/v1"]: r["locations"][0]["physicalLocation"]
                 for r in results}
    odd = locations[FINDINGS[3].fingerprint]["artifactLocation"]
    assert odd == {"uri": "dir%20with%20space/odd%2Cname%3A1.py", "uriBaseId": "%SRCROOT%"}
    for location in locations.values():
        uri = location["artifactLocation"]["uri"]
        parsed = urlparse(uri)
        assert parsed.scheme == "" and parsed.netloc == "" and not uri.startswith("/")
        assert " " not in uri
    assert {unquote(v["artifactLocation"]["uri"]) for v in locations.values()} == {f.file for f in FINDINGS if f.file}


@pytest.mark.parametrize(("path", "uri"), [
    ("a:b.py", "a%3Ab.py"),
    ("100%/x#y?.py", "100%25/x%23y%3F.py"),
    ("./src/é.py", "src/%C3%A9.py"),
    ("a\\b.py", "a%5Cb.py"),  # a backslash is part of a file name on POSIX, not a separator
])
def test_artifact_uri_escapes_what_would_change_its_meaning(path: str, uri: str) -> None:
    assert artifact_uri(path) == uri


def test_regions_when_lines_are_known(report: ReviewReport) -> None:
    results = {r["partialFingerprints"]["reviewGate/v1"]: r for r in only_run(sarif(report))["results"]}
    region = results[FINDINGS[1].fingerprint]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 12, "endLine": 14}
    no_line = _finding(31, file="setup.cfg", line=None, end_line=None)
    [result] = only_run(sarif(make_report([no_line])))["results"]
    assert "region" not in result["locations"][0]["physicalLocation"]


def test_every_result_has_a_location_and_findings_without_a_file_stay_in_the_run_properties(
        report: ReviewReport) -> None:
    run = only_run(sarif(report))
    # GitHub code scanning rejects a whole upload if any result has no location.
    assert all(len(r["locations"]) == 1 for r in run["results"])
    assert len(run["results"]) == len([f for f in FINDINGS if f.file])
    [homeless] = run["properties"]["findingsWithoutLocation"]
    assert homeless == {"fingerprint": FINDINGS[5].fingerprint, "ruleId": "review-gate/review-bot/general",
                        "severity": "info", "category": "general", "agent": "review-bot",
                        "message": "The change has no tests."}
    assert homeless["ruleId"] in {r["id"] for r in run["tool"]["driver"]["rules"]}


def test_partial_fingerprints_are_the_finding_fingerprints(report: ReviewReport) -> None:
    results = only_run(sarif(report))["results"]
    assert [r["partialFingerprints"] for r in results] == [{"reviewGate/v1": f.fingerprint} for f in FINDINGS
                                                           if f.file]


def test_result_properties_carry_severity_agent_confidence_and_who_else_reported_it(
        report: ReviewReport) -> None:
    results = only_run(sarif(report))["results"]
    tls = results[1]
    assert tls["properties"] == {"severity": "major", "category": "transport-security", "agent": "security-patterns",
                                 "confidence": 0.9, "also_reported_by": ["llm-security"],
                                 "recommendation": "Keep verification on."}
    assert "confidence" not in results[2]["properties"]


def test_messages_keep_their_text_but_not_embedded_links() -> None:
    finding = _finding(41, message="see [the docs](https://evil.example) and [x] here", file="a.py", line=1)
    [result] = only_run(sarif(make_report([finding])))["results"]
    assert result["message"]["text"] == "see \\[the docs\\](https://evil.example) and [x] here"


def test_failed_and_timed_out_agents_make_the_invocation_unsuccessful(report: ReviewReport) -> None:
    [invocation] = only_run(sarif(report))["invocations"]
    assert invocation["executionSuccessful"] is False
    notes = {n["properties"]["agent"]: n for n in invocation["toolExecutionNotifications"]}
    assert set(notes) == {"llm-security", "style-bot"}
    assert notes["llm-security"]["level"] == "error"  # required
    assert notes["style-bot"]["level"] == "warning"  # optional
    assert notes["llm-security"]["descriptor"] == {"id": "review-gate/agent-timed-out"}
    assert "no usable answer within its 30 s deadline" in notes["llm-security"]["message"]["text"]


def test_run_properties_carry_the_decision_and_metrics(report: ReviewReport) -> None:
    run = only_run(sarif(report))
    assert run["properties"]["decision"] == "fail"
    assert run["properties"]["exitCode"] == 1
    assert run["properties"]["metrics"] == report.metrics.model_dump()
    assert run["automationDetails"] == {"id": "review-gate/20261125T120000Z-abcdef12"}


def test_our_own_sarif_reader_reads_the_findings_back(report: ReviewReport) -> None:
    read = parse_sarif(renderer("sarif")(report), None)
    located = [f for f in FINDINGS if f.file]
    assert [(r.severity, r.file, r.line, r.end_line, r.message, r.category, r.confidence) for r in read] == [
        (f.severity, f.file, f.line, f.end_line, f.message, f.category, f.confidence) for f in located]
    assert [r.rule_id for r in read] == [f.rule_id or f"review-gate/{f.agent}/{f.category}" for f in located]


def test_output_is_deterministic(report: ReviewReport) -> None:
    assert renderer("sarif")(report) == renderer("sarif")(make_report())


def test_sarif_golden(report: ReviewReport) -> None:
    check_golden("report.sarif", renderer("sarif")(report))


MIXED = (make_diff("app/settings.py", ["import requests", "requests.get(url, verify=False)", "x = 1  # TODO later"])
         + make_diff("keys/id.pem", ["-----BEGIN OPENSSH PRIVATE KEY-----"]))


def test_cli_writes_valid_sarif_for_a_real_diff(cli: Any) -> None:
    result = cli("--diff", "-", "--format", "sarif", stdin=MIXED.encode())
    assert result.code == 1
    log = json.loads(result.out)
    assert_valid(log)
    run = only_run(log)
    assert {(r["ruleId"], r["level"]) for r in run["results"]} >= {("sec-private-key-01", "error")}
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"app/settings.py", "keys/id.pem"}
    assert run["properties"]["decision"] == "fail"
    assert "REVIEW: FAIL" in result.err


def test_cli_writes_sarif_and_json_files_together(cli: Any, isolated: Path) -> None:
    result = cli("--diff", "-", "--format", "sarif", "--output", "x.sarif", "--format", "json", "--output",
                 "r.json", stdin=MIXED.encode())
    assert result.out == ""
    log = json.loads((isolated / "x.sarif").read_text(encoding="utf-8"))
    report = json.loads((isolated / "r.json").read_text(encoding="utf-8"))
    assert_valid(log)
    run = only_run(log)
    assert [r["partialFingerprints"]["reviewGate/v1"] for r in run["results"]] == [
        f["fingerprint"] for f in report["findings"] if f["file"]]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {r["id"] for r in report["rules"]}
    assert run["properties"]["runId"] == report["run_id"]
