"""Stage 6: filter modes, dedupe, enrichment, metrics and the gate decision."""

from __future__ import annotations

import pytest

from review_gate.change.diff_parser import parse_diff
from review_gate.config import load_config
from review_gate.models import AgentResult, Finding, GateCondition, Metrics, PRFacts, Waiver
from review_gate.pipeline.aggregate import aggregate, decide, dedupe, exit_code
from review_gate.pipeline.classify import classify

DIFF = b"""diff --git a/a.py b/a.py
--- a/a.py
+++ b/a.py
@@ -10,3 +10,4 @@
 ctx10
+added11
 ctx12
 ctx13
"""


def finding(line: int | None, *, agent: str = "x", rule: str | None = "r1", severity: str = "major",
            message: str = "problem", file: str | None = "a.py", confidence: float | None = None) -> Finding:
    return Finding(fingerprint=f"{agent}{line}{rule}", agent=agent, rule_id=rule, severity=severity,
                   category="general", file=file, line=line, end_line=line, message=message,
                   confidence=confidence)


def result(agent: str, findings: list[Finding], status: str = "completed", required: bool = True,
           files: list[str] | None = None) -> AgentResult:
    return AgentResult(id=agent, kind="pattern", status=status, required=required, attempts=1,
                       duration_s=0.1, files=["a.py"] if files is None else files, findings=findings)


def run(results: list[AgentResult], mode: str = "added", diff: bytes = DIFF, fail_on: str | None = None):
    config = load_config(None)
    facts = PRFacts(source="t", files=parse_diff(diff))
    return aggregate(facts, classify(facts, config.domains.domains), [], [], results, config,
                     run_id="r", tool_version="0", filter_mode=mode, fail_on=fail_on)


@pytest.mark.parametrize(("mode", "kept_lines"), [
    ("added", [11, None]),
    ("diff_context", [10, 11, 13, None]),
    ("file", [3, 10, 11, 13, 40, None]),
    ("nofilter", [3, 5, 10, 11, 13, 40, None]),
])
def test_filter_modes(mode: str, kept_lines: list[int | None]) -> None:
    findings = [finding(n, rule=f"r{n}", message=f"problem {n}") for n in (3, 10, 11, 13, 40)]
    findings += [finding(None, rule="file-level", message="whole file"),
                 finding(5, rule="elsewhere", file="other.py", message="other file")]
    report = run([result("x", findings)], mode)
    kept = sorted((f.line for f in report.findings if f.file == "a.py" or mode == "nofilter"),
                  key=lambda n: (n is None, n or 0))
    assert kept == kept_lines
    assert report.coverage.findings_filtered == 7 - len(kept_lines)


def test_dedupe_merges_same_rule_or_same_message_and_raises_confidence() -> None:
    merged = dedupe([
        finding(11, agent="a", rule="r1", confidence=0.5, severity="warning"),
        finding(11, agent="b", rule="r1", confidence=0.5, severity="major"),
        finding(11, agent="c", rule=None, message="Problem "),
        finding(12, agent="a", rule="r1"),
    ])
    assert len(merged) == 2
    first = next(f for f in merged if f.line == 11)
    assert (first.agent, first.severity) == ("b", "major")  # the most severe copy leads
    assert first.also_reported_by == ["c", "a"]
    assert first.confidence == 0.75


def test_gate_conditions_first_match_wins() -> None:
    conditions = load_config(None).settings.gate.conditions
    assert decide(Metrics(critical=1, missing_inputs=1), conditions) == "fail"
    assert decide(Metrics(major=3, missing_inputs=1), conditions) == "incomplete"
    assert decide(Metrics(major=1, warning=1), conditions) == "needs_fixes"
    assert decide(Metrics(warning=1, info=9), conditions) == "pass_with_warnings"
    assert decide(Metrics(info=9), conditions) == "pass"
    custom = [GateCondition(metric="risk_score", op=">=", value=80, decision="needs_fixes")]
    assert decide(Metrics(risk_score=80), custom) == "needs_fixes"
    assert decide(Metrics(risk_score=79, critical=5), custom) == "pass"


def test_exit_codes_and_fail_on() -> None:
    assert [exit_code(d, "needs_fixes") for d in ("pass", "pass_with_warnings", "needs_fixes", "fail", "incomplete")] \
        == [0, 0, 1, 1, 3]
    assert exit_code("pass_with_warnings", "pass_with_warnings") == 1
    assert exit_code("needs_fixes", "fail") == 0
    assert exit_code("fail", "never") == 0
    assert exit_code("incomplete", "never") == 3


def test_a_failed_required_agent_is_a_missing_input_and_its_files_are_unreviewed() -> None:
    report = run([result("ok", [finding(11, severity="warning")], files=[]),
                  result("broken", [], status="failed")])
    assert report.metrics.missing_inputs == 1
    assert report.metrics.unreviewed_files == 1
    assert report.decision == "incomplete"
    assert report.exit_code == 3


def test_a_failed_optional_agent_is_no_missing_input_but_the_built_in_gate_fails_closed_on_it() -> None:
    # Issue 20: an optional reviewer that was run and broke let the gate say pass.
    report = run([result("ok", []), result("optional", [], status="timed_out", required=False)])
    assert report.metrics.missing_inputs == 0
    assert (report.metrics.agents_failed, report.metrics.agents_skipped) == (1, 0)
    assert (report.decision, report.exit_code) == ("incomplete", 3)
    assert [(a.agent, a.counted) for a in report.did_not_review] == [("optional", "agents_failed")]


def test_an_optional_agent_that_did_not_run_is_a_warning() -> None:
    report = run([result("ok", []), result("optional", [], status="skipped", required=False)])
    assert (report.metrics.missing_inputs, report.metrics.agents_skipped) == (0, 1)
    assert (report.decision, report.exit_code) == ("pass_with_warnings", 0)


def test_an_optional_agent_that_fails_open_is_counted_as_a_skip() -> None:
    failed = result("optional", [], status="failed", required=False).model_copy(update={"on_failure": "fail_open"})
    report = run([result("ok", []), failed])
    assert (report.metrics.agents_failed, report.metrics.agents_skipped) == (0, 1)
    assert report.decision == "pass_with_warnings" and report.did_not_review[0].fails_open


def test_nothing_reviewed_never_passes() -> None:
    report = run([result("skipped", [], status="skipped")])
    assert report.coverage.files_reviewed == 0
    assert report.decision == "incomplete"


def test_empty_diff_passes_and_says_nothing_was_reviewed() -> None:
    report = run([], diff=b"")
    assert report.decision == "pass"
    assert report.coverage.nothing_to_review


def test_findings_are_sorted_by_severity_then_place() -> None:
    diff = DIFF.replace(b"+added11\n", b"+added11\n+added12\n").replace(b"+10,4", b"+10,5")
    report = run([result("x", [finding(12, rule="a", severity="info", message="style"),
                              finding(11, rule="b", severity="critical", message="leak"),
                              finding(12, rule="c", severity="critical", message="injection")])], diff=diff)
    assert [(f.severity, f.line) for f in report.findings] == [("critical", 11), ("critical", 12), ("info", 12)]
    assert report.decision == "fail"


def test_waived_findings_are_reported_but_do_not_count() -> None:
    config = load_config(None)
    facts = PRFacts(source="t", files=parse_diff(DIFF))
    critical = finding(11, severity="critical", message="leak")
    report = aggregate(facts, classify(facts, config.domains.domains), [], [], [result("x", [critical])], config,
                       run_id="r", tool_version="0",
                       waivers={critical.fingerprint: Waiver(kind="acceptance", reason="accepted: test key")})
    assert report.findings == []
    assert [(f.fingerprint, f.waived, f.waived_kind) for f in report.waived] == [
        (critical.fingerprint, "accepted: test key", "acceptance")]
    assert report.metrics.critical == 0
    assert report.decision == "pass"
