"""``--format meta``: the @@@REVIEW_META block, then the Markdown review; parse_meta reads it back."""

from __future__ import annotations

import pytest

from review_gate.errors import MetaError
from review_gate.judging.review_meta import ReviewMeta, parse_meta
from review_gate.models import ReviewReport
from review_gate.outputs import markdown
from review_gate.outputs.meta import render
from tests.outputs.conftest import _finding, check_golden, make_report


def test_golden(report: ReviewReport) -> None:
    check_golden("report.meta.md", render(report))


def test_block_is_exactly_the_designed_header(report: ReviewReport) -> None:
    head = render(report).split("\n")[:6]
    assert head == ["@@@REVIEW_META", "verdict: FAIL", "issues_total: 6", "issues_critical: 1",
                    "missing_inputs: 1", "@@@"]


@pytest.mark.parametrize(("decision", "verdict"), [
    ("pass", "PASS"), ("pass_with_warnings", "PASS"), ("needs_fixes", "FAIL"), ("fail", "FAIL"),
    ("incomplete", "FAIL"),
])
def test_round_trip_agrees_with_the_report(decision: str, verdict: str) -> None:
    report = make_report(decision=decision)
    meta = parse_meta(render(report))
    assert meta == ReviewMeta(verdict=verdict, issues_total=report.metrics.total,  # type: ignore[arg-type]
                              issues_critical=report.metrics.critical,
                              missing_inputs=report.metrics.missing_inputs, body=markdown.render(report, limit=None))
    assert meta.summary_line() == (f"REVIEW: {verdict} | issues=6 (critical=1) | missing_inputs=1")


def test_verdict_follows_the_exit_code() -> None:
    advisory = make_report(decision="fail").model_copy(update={"exit_code": 0})  # --exit-zero
    assert parse_meta(render(advisory)).verdict == "PASS"


def test_the_body_is_the_whole_review_even_past_the_comment_limit() -> None:
    findings = [_finding(i, severity="warning", message="m" * 200) for i in range(1, 1000)]
    out = render(make_report(findings, decision="pass_with_warnings"))
    assert len(out) > markdown.COMMENT_LIMIT
    assert "not shown" not in out
    assert parse_meta(out).issues_total == 999


def test_the_body_may_hold_another_block(report: ReviewReport) -> None:
    quoted = _finding(1, message="@@@REVIEW_META\nverdict: PASS\n@@@")
    meta = parse_meta(render(make_report([quoted])))
    assert meta.verdict == "FAIL" and "verdict: PASS" in meta.body


def test_parse_meta_tolerates_what_editors_add() -> None:
    text = "\ufeff\n  @@@REVIEW_META  \r\nverdict:FAIL\r\n\r\nissues_total:  3\r\nissues_critical: 0\r\n" \
           "missing_inputs: 0\r\nreviewer: someone\r\n@@@\r\nbody\r\n"
    meta = parse_meta(text)
    assert (meta.verdict, meta.issues_total, meta.issues_critical, meta.missing_inputs) == ("FAIL", 3, 0, 0)
    assert meta.body == "body\r\n"


@pytest.mark.parametrize(("text", "problem"), [
    ("", "no @@@REVIEW_META block: the text is empty"),
    ("# Review\n", "no @@@REVIEW_META block: line 1 is '# Review'"),
    ("Sure!\n@@@REVIEW_META\n", "must open the text, but it starts on line 2 after 'Sure!' on line 1"),
    ("@@@REVIEW_META\nverdict: PASS\n", "unterminated @@@REVIEW_META block: no @@@ line closes"),
    ("@@@REVIEW_META\nverdict PASS\n@@@\n", "line 2: expected 'field: value', found 'verdict PASS'"),
    ("@@@REVIEW_META\nverdict: PASS\nissues_total: 1\nissues_total: 2\n@@@\n",
     "line 4: issues_total is given twice (first on line 3)"),
    ("@@@REVIEW_META\nverdict: PASS\nissues_total: 1\n@@@\n",
     "required fields missing from the block: issues_critical, missing_inputs"),
    ("@@@REVIEW_META\nverdict: PASS\nissues_total: 1\nissues_crit: 0\nmissing_inputs: 0\n@@@\n",
     "required field missing from the block: issues_critical (found unknown field issues_crit)"),
    ("@@@REVIEW_META\nverdict: PASS | FAIL\nissues_total: 0\nissues_critical: 0\nmissing_inputs: 0\n@@@\n",
     "line 2: verdict is 'PASS | FAIL'; it must be PASS or FAIL"),
    ("@@@REVIEW_META\nverdict: pass\nissues_total: 0\nissues_critical: 0\nmissing_inputs: 0\n@@@\n",
     "verdict is 'pass'; it must be PASS or FAIL"),
    ("@@@REVIEW_META\nverdict: PASS\nissues_total: -1\nissues_critical: 0\nmissing_inputs: 0\n@@@\n",
     "line 3: issues_total is -1; counts cannot be negative"),
    ("@@@REVIEW_META\nverdict: PASS\nissues_total: 2.5\nissues_critical: 0\nmissing_inputs: 0\n@@@\n",
     "line 3: issues_total is '2.5', not a whole number"),
    ("@@@REVIEW_META\nverdict: PASS\nissues_total: 1\nissues_critical: 0\nmissing_inputs:\n@@@\n",
     "line 5: missing_inputs is empty"),
    ("@@@REVIEW_META\nverdict: PASS\nissues_total: " + "9" * 5000 + "\nissues_critical: 0\nmissing_inputs: 0\n@@@\n",
     "issues_total has more than 18 digits"),
    ("@@@REVIEW_META\nverdict: FAIL\nissues_total: 1\nissues_critical: 2\nmissing_inputs: 0\n@@@\n",
     "issues_critical (2) is more than issues_total (1)"),
])
def test_parse_meta_names_the_problem(text: str, problem: str) -> None:
    with pytest.raises(MetaError) as caught:
        parse_meta(text)
    assert problem in caught.value.message
    assert caught.value.fix and "@@@REVIEW_META" in caught.value.fix
