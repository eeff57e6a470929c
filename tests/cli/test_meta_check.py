"""``review-gate meta check FILE`` and command agents with ``output: review_meta``, through the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agents.test_command import agent, agent_result, printing, review, script, write_config
from tests.conftest import make_diff

VALID = "@@@REVIEW_META\nverdict: FAIL\nissues_total: 3\nissues_critical: 1\nmissing_inputs: 0\n@@@\n# Review\n"
BLOCK = "@@@REVIEW_META\nverdict: {verdict}\nissues_total: {total}\nissues_critical: {critical}\n" \
        "missing_inputs: {missing}\n@@@\n"


def write(tmp_path: Path, text: str | bytes, name: str = "review.md") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_block_prints_the_summary_line_and_exits_0(cli, tmp_path: Path) -> None:
    result = cli("meta", "check", str(write(tmp_path, VALID)))
    assert result.code == 0, result.err
    assert result.out == "REVIEW: FAIL | issues=3 (critical=1) | missing_inputs=0\n"
    assert result.err == ""


def test_a_pass_verdict_exits_0_too(cli, tmp_path: Path) -> None:
    text = BLOCK.format(verdict="PASS", total=0, critical=0, missing=0)
    result = cli("meta", "check", str(write(tmp_path, text)))
    assert (result.code, result.out) == (0, "REVIEW: PASS | issues=0 (critical=0) | missing_inputs=0\n")


def test_standard_input(cli) -> None:
    result = cli("meta", "check", "-", stdin=VALID.encode())
    assert result.code == 0 and result.out.startswith("REVIEW: FAIL | issues=3")


def test_our_meta_output_checks_out_and_agrees_with_the_json_report(cli, tmp_path: Path) -> None:
    diff = (make_diff("app/settings.py", ["import requests", "requests.get(url, verify=False, timeout=5)"])
            + make_diff("keys/id.pem", ["-----BEGIN OPENSSH PRIVATE KEY-----"]))
    meta = cli("--diff", "-", "--format", "meta", "--format", "json", "--output", str(tmp_path / "r.json"),
               stdin=diff.encode())
    assert meta.code == 1 and meta.out.startswith("@@@REVIEW_META\nverdict: FAIL\n")
    checked = cli("meta", "check", "-", stdin=meta.out.encode())
    assert checked.code == 0
    assert checked.out.strip() == "REVIEW: FAIL | issues=2 (critical=1) | missing_inputs=0"
    assert "REVIEW: FAIL | issues=2 (critical=1) | missing_inputs=0" in meta.err


MALFORMED = {
    "empty": ("", "no @@@REVIEW_META block: the text is empty"),
    "missing": ("# A review\n\nAll good.\n", "no @@@REVIEW_META block: line 1 is '# A review'"),
    "preamble": ("Here it is:\n" + VALID, "the @@@REVIEW_META block must open the text"),
    "fenced": ("```\n" + VALID + "```\n", "must open the text, but it starts on line 2 after '```' on line 1"),
    "unterminated": ("@@@REVIEW_META\nverdict: PASS\nissues_total: 0\n", "unterminated @@@REVIEW_META block"),
    "no field": ("@@@REVIEW_META\nverdict: PASS\nissues_total: 0\nissues_critical: 0\n@@@\n",
                 "required field missing from the block: missing_inputs"),
    "duplicate": (VALID.replace("verdict: FAIL\n", "verdict: FAIL\nverdict: PASS\n"),
                  "line 3: verdict is given twice (first on line 2)"),
    "unknown verdict": (VALID.replace("FAIL", "MAYBE"), "line 2: verdict is 'MAYBE'; it must be PASS or FAIL"),
    "negative": (VALID.replace("issues_critical: 1", "issues_critical: -1"),
                 "line 4: issues_critical is -1; counts cannot be negative"),
    "not an integer": (VALID.replace("issues_total: 3", "issues_total: three"),
                       "line 3: issues_total is 'three', not a whole number"),
    "critical over total": (VALID.replace("issues_critical: 1", "issues_critical: 4"),
                            "issues_critical (4) is more than issues_total (3)"),
    "not a field": (VALID.replace("missing_inputs: 0", "missing inputs 0"),
                    "line 5: expected 'field: value', found 'missing inputs 0'"),
    "terminal escape": ("\x1b]0;pwned\x07\n", "no @@@REVIEW_META block: line 1 is '\\x1b]0;pwned\\x07'"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_missing_or_malformed_block_exits_2_naming_the_problem(cli, tmp_path: Path, case: str) -> None:
    text, problem = MALFORMED[case]
    path = write(tmp_path, text)
    result = cli("meta", "check", str(path))
    assert result.code == 2
    assert result.out == ""
    lines = result.err.splitlines()
    assert 1 <= len(lines) <= 2, result.err
    assert lines[0].startswith(f"review-gate: error: {path}: ")
    assert problem in lines[0]
    assert lines[1].startswith("  fix: ")
    assert "Traceback" not in result.err and "\x1b" not in result.err


def test_a_file_that_cannot_be_read(cli, tmp_path: Path) -> None:
    for path in (tmp_path / "absent.md", tmp_path):
        result = cli("meta", "check", str(path))
        assert result.code == 2 and "Traceback" not in result.err
        assert result.err.startswith(f"review-gate: error: cannot read {path}: ")
        assert len(result.err.splitlines()) == 2


def test_a_file_that_is_not_utf8(cli, tmp_path: Path) -> None:
    result = cli("meta", "check", str(write(tmp_path, b"@@@REVIEW_META\n\xff\n")))
    assert result.code == 2
    assert "not UTF-8 text (byte 0xff at offset 15)" in result.err and "Traceback" not in result.err


def test_meta_check_needs_a_file(cli) -> None:
    result = cli("meta", "check")
    assert result.code == 2 and "FILE" in result.err
    assert cli("meta").code == 2


# ---------------------------------------------------------------------------- output: review_meta agents


REVIEWER = """\
    import sys
    sys.stdin.read()
    sys.stdout.write({text!r})
"""


def reviewer(tmp_path: Path, text: str, **fields: Any) -> Path:
    program = script(tmp_path, "reviewer.py", REVIEWER.format(text=text))
    return write_config(tmp_path, [agent("reviewer", program, output="review_meta", **fields)])


def meta_block(verdict: str, total: int, critical: int, missing: int = 0, body: str = "# Review\n") -> str:
    return BLOCK.format(verdict=verdict, total=total, critical=critical, missing=missing) + body


def test_the_config_validates_with_review_meta_output(cli, tmp_path: Path) -> None:
    result = cli("config", "validate", "--config", str(reviewer(tmp_path, meta_block("PASS", 0, 0))))
    assert result.code == 0, result.err


def test_fail_with_critical_issues_is_one_critical_and_one_major_finding(cli, tmp_path: Path) -> None:
    cfg = reviewer(tmp_path, meta_block("FAIL", 5, 2, body="## Findings\n\n- SQL injection in app.py\n"))
    result, report = review(cli, cfg)
    assert result.code == 1 and report["decision"] == "fail"
    assert agent_result(report, "reviewer")["status"] == "completed"
    found = [(f["severity"], f["message"], f["file"], f["agent"]) for f in report["findings"]]
    assert found == [
        ("critical", "critical issues reported by reviewer: 2 (see its review)", None, "reviewer"),
        ("major", "other issues reported by reviewer: 3 (see its review)", None, "reviewer"),
    ]
    assert report["findings"][0]["recommendation"] == "## Findings\n\n- SQL injection in app.py"
    assert report["findings"][1]["recommendation"] is None
    assert report["metrics"]["critical"] == 1 and report["metrics"]["total"] == 2


def test_fail_without_critical_issues_needs_fixes(cli, tmp_path: Path) -> None:
    result, report = review(cli, reviewer(tmp_path, meta_block("FAIL", 4, 0)))
    assert result.code == 1 and report["decision"] == "needs_fixes"
    assert [(f["severity"], f["message"]) for f in report["findings"]] == [
        ("major", "issues reported by reviewer: 4 (see its review)")]


def test_fail_counting_no_issue_still_blocks(cli, tmp_path: Path) -> None:
    result, report = review(cli, reviewer(tmp_path, meta_block("FAIL", 0, 0)))
    assert result.code == 1 and report["decision"] == "needs_fixes"
    assert report["findings"][0]["message"] == "reviewer gave the verdict FAIL without counting any issue " \
                                               "(see its review)"


def test_pass_with_issues_is_a_warning(cli, tmp_path: Path) -> None:
    result, report = review(cli, reviewer(tmp_path, meta_block("PASS", 2, 0)))
    assert result.code == 0 and report["decision"] == "pass_with_warnings"
    assert [(f["severity"], f["message"]) for f in report["findings"]] == [
        ("warning", "issues reported by reviewer, which still passed the change: 2, 0 of them critical "
                    "(see its review)")]


def test_a_clean_pass_is_no_finding(cli, tmp_path: Path) -> None:
    result, report = review(cli, reviewer(tmp_path, meta_block("PASS", 0, 0, body="")))
    assert result.code == 0 and report["decision"] == "pass" and report["findings"] == []
    assert agent_result(report, "reviewer")["status"] == "completed"


def test_missing_inputs_fail_the_agent_and_the_run_is_incomplete(cli, tmp_path: Path) -> None:
    result, report = review(cli, reviewer(tmp_path, meta_block("PASS", 0, 0, missing=2)))
    assert result.code == 3 and report["decision"] == "incomplete"
    status = agent_result(report, "reviewer")
    assert status["status"] == "failed"
    assert "missing_inputs: 2, so it did not review everything (verdict PASS, 0 issues, 0 critical)" \
        in status["error"]
    assert report["metrics"]["missing_inputs"] == 1


def test_a_malformed_review_fails_the_agent_naming_the_problem(cli, tmp_path: Path) -> None:
    result, report = review(cli, reviewer(tmp_path, "Looks fine to me!\n"))
    assert result.code == 3 and report["decision"] == "incomplete"
    status = agent_result(report, "reviewer")
    assert status["status"] == "failed" and status["attempts"] == 1
    assert status["error"] == "review_meta output: no @@@REVIEW_META block: line 1 is 'Looks fine to me!'"


def test_an_optional_malformed_reviewer_is_no_missing_input_but_counts_as_failed(cli, tmp_path: Path) -> None:
    # Issue 20: an optional reviewer that was run and failed no longer leaves the gate at pass.
    cfg = write_config(tmp_path, [
        agent("reviewer", script(tmp_path, "chatty.py", REVIEWER.format(text="nothing\n")), output="review_meta",
              required=False),
        agent("main", printing(tmp_path, "clean.py", [])),
    ])
    result, report = review(cli, cfg)
    assert (report["metrics"]["missing_inputs"], report["metrics"]["agents_failed"]) == (0, 1)
    assert result.code == 3 and report["decision"] == "incomplete"
    assert agent_result(report, "reviewer")["status"] == "failed"


def test_a_long_review_is_cut_in_the_finding(cli, tmp_path: Path) -> None:
    _, report = review(cli, reviewer(tmp_path, meta_block("FAIL", 1, 1, body="x" * 5000)))
    recommendation = report["findings"][0]["recommendation"]
    assert recommendation.startswith("x" * 2000) and recommendation.endswith(" … (cut)")


def test_a_review_meta_agent_in_the_markdown_and_meta_formats(cli, tmp_path: Path) -> None:
    cfg = reviewer(tmp_path, meta_block("FAIL", 1, 1, body="Secret @octocat <b>leak</b>\n"))
    result = cli("--config", str(cfg), "--diff", "-", "--format", "meta", stdin=make_diff("a.py", ["x"]).encode())
    assert result.code == 1
    assert result.out.startswith("@@@REVIEW_META\nverdict: FAIL\nissues_total: 1\nissues_critical: 1\n")
    assert "Secret @\u200doctocat &lt;b&gt;leak&lt;/b&gt;" in result.out
