"""``--format github``: workflow-command annotations, escaped, capped as GitHub shows them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from review_gate.models import ReviewReport
from review_gate.outputs.github import SUMMARY_LIMIT, data, plain, prop, render
from tests.conftest import make_diff
from tests.outputs.conftest import _finding, check_golden, make_report

COMMAND = re.compile(r"::(error|warning|notice)( [^:]*)?::(.*)")


def commands(text: str) -> list[tuple[str, dict[str, str], str]]:
    """Parse the lines as the runner does: ``::kind k=v,k=v::data``, the values percent-decoded."""
    out = []
    for line in text.splitlines():
        match = COMMAND.fullmatch(line)
        if not match:
            continue
        props = {}
        for pair in (match.group(2) or "").strip().split(","):
            if pair:
                key, _, value = pair.partition("=")
                props[key] = unescape(value)
        out.append((match.group(1), props, unescape(match.group(3))))
    return out


def unescape(value: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(code, char)
    return value


def test_golden(report: ReviewReport) -> None:
    check_golden("report.github.txt", render(report))


def test_one_annotation_per_finding_most_severe_first(findings_report: ReviewReport) -> None:
    found = commands(render(findings_report))
    assert [kind for kind, _, _ in found] == ["error", "error", "error", "warning", "notice", "notice"]
    _, props, message = found[1]
    assert props == {"file": "app/http.py", "line": "12", "endLine": "14",
                     "title": "major · sec-tls-verify-01 · security-patterns"}
    assert message.startswith("TLS verification disabled: verify=False\nFix: Keep verification on.")
    _, props, message = found[-1]
    assert props == {"title": "info · general · review-bot"}  # no file: an annotation with no place
    assert message == "The change has no tests."


def test_single_line_finding_has_no_end_line(report: ReviewReport) -> None:
    _, props, _ = commands(render(report))[0]
    assert props["line"] == "1" and "endLine" not in props


def test_escaping_round_trips(report: ReviewReport) -> None:
    out = render(report)
    found = {props.get("file"): (props, message) for _, props, message in commands(out)}
    _, message = found["dir with space/odd,name:1.py"]
    assert message == "Exception swallowed: except Exception:\r\n    pass"
    assert "file=dir with space/odd%2Cname%3A1.py," in out
    _, message = found["web/ui.ts"]
    assert message.startswith("<script>alert(1)</script> | breaks | tables @octocat\nsecond line 100% done, a:b")
    assert "100%25 done" in out


def test_data_and_property_escaping() -> None:
    assert data("50%\r\nnext") == "50%25%0D%0Anext"
    assert prop("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert data("\x1b[2Jcolour") == "\\x1b[2Jcolour"  # no terminal control in the log


def test_no_finding_can_forge_a_command() -> None:
    evil = _finding(1, severity="info", message="ok\n::error::forged\r::set-output name=x::y",
                    file="a.py,line=1::x", rule_id="r::x")
    out = render(make_report([evil]))
    lines = out.splitlines()
    assert sum(line.startswith("::") for line in lines) == 1
    [(kind, props, message)] = commands(out)
    assert kind == "notice" and props["file"] == "a.py,line=1::x"
    assert message == "ok\n::error::forged\r::set-output name=x::y"


def test_plain_lines_cannot_hold_commands() -> None:
    assert not plain("::error::x").startswith("::")
    assert "##[" not in plain("boom ##[add-mask]secret")
    assert "\n" not in plain("one\ntwo")


def test_failed_agents_and_the_summary_line_are_plain_lines_last(report: ReviewReport) -> None:
    lines = render(report).splitlines()
    assert lines[-1] == "REVIEW: FAIL | issues=6 (critical=1) | missing_inputs=1"
    assert lines[-3] == ("review-gate: agent llm-security (required) timed out: no usable answer within its 30 s "
                         "deadline [agents_failed]")
    assert lines[-2].startswith("review-gate: agent style-bot (optional) failed: ")


def test_caps_ten_per_kind_and_says_how_many_were_left_out() -> None:
    findings = ([_finding(i, severity="critical") for i in range(1, 5)]
                + [_finding(i, severity="major") for i in range(5, 20)]
                + [_finding(i, severity="warning") for i in range(20, 27)]
                + [_finding(i, severity="info") for i in range(27, 52)])
    found = commands(render(make_report(findings)))
    kinds = [kind for kind, _, _ in found]
    assert kinds.count("error") == 10 and kinds.count("warning") == 7 and kinds.count("notice") == 10
    errors = [props["line"] for kind, props, _ in found if kind == "error"]
    assert errors == [str(n) for n in range(1, 11)]  # every critical one, then the first majors
    notices = [message for kind, props, message in found if kind == "notice"]
    assert len(notices) == 10  # 9 findings and the note: GitHub shows 10 notices
    note = notices[-1]
    assert found[-1][1] == {"title": "review-gate"}
    assert note.startswith("25 more findings are not annotated (9 major, 16 info)")
    assert "at most 10 error, 10 warning and 10 notice annotations per step" in note


def test_no_note_when_everything_fits() -> None:
    findings = [_finding(i, severity="info") for i in range(1, 11)]
    found = commands(render(make_report(findings)))
    assert len(found) == 10 and all("not annotated" not in message for _, _, message in found)


def test_exactly_ten_notices_and_an_overflow_elsewhere_keeps_a_place_for_the_note() -> None:
    findings = [_finding(i, severity="warning") for i in range(1, 12)] + [
        _finding(i, severity="info") for i in range(12, 22)]
    found = commands(render(make_report(findings)))
    assert [kind for kind, _, _ in found].count("notice") == 10
    assert found[-1][2].startswith("2 more findings are not annotated (1 warning, 1 info)")


# ---------------------------------------------------------------------------- the job summary, through the CLI

MIXED = (make_diff("app/settings.py", ["import requests", "requests.get(url, verify=False, timeout=5)"])
         + make_diff("keys/id.pem", ["-----BEGIN OPENSSH PRIVATE KEY-----"]))


def test_github_format_appends_the_markdown_report_to_the_job_summary(cli, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("# Earlier step output\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = cli("--diff", "-", "--format", "github", stdin=MIXED.encode())
    assert result.code == 1
    assert result.out.splitlines()[0].startswith("::error file=keys/id.pem,line=1,")
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("# Earlier step output\n\n<!-- review-gate report -->\n## review-gate: FAIL\n")
    assert "`REVIEW: FAIL | issues=2 (critical=1) | missing_inputs=0`" in written
    assert "| keys/id.pem:1 |" in written


def test_job_summary_also_when_github_goes_to_a_file_and_not_without_github(cli, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    cli("--diff", "-", "--format", "json", stdin=MIXED.encode())
    assert not summary.exists()
    cli("--diff", "-", "--format", "text", "--format", "github", "--output", str(tmp_path / "gh.txt"),
        stdin=MIXED.encode())
    assert summary.read_text(encoding="utf-8").startswith("<!-- review-gate report -->\n")
    assert (tmp_path / "gh.txt").read_text(encoding="utf-8").startswith("::error ")


def test_no_job_summary_outside_github(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    result = cli("--diff", "-", "--format", "github", stdin=MIXED.encode())
    assert result.code == 1 and "GITHUB_STEP_SUMMARY" not in result.err


def test_job_summary_stays_under_one_mebibyte(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("x" * (SUMMARY_LIMIT - 60_000) + "\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    lines = [f"password = 'hunter{i}'  # TODO {'é' * 40}" for i in range(3000)]
    result = cli("--diff", "-", "--format", "github", "--filter-mode", "nofilter",
                 stdin=make_diff("conf/settings.py", lines).encode())
    assert result.out
    size = summary.stat().st_size
    assert SUMMARY_LIMIT - 60_000 < size <= SUMMARY_LIMIT
    assert "findings are not shown" in summary.read_text(encoding="utf-8")


def test_a_full_or_unwritable_job_summary_is_a_warning_not_a_failure(cli, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    full = tmp_path / "full.md"
    full.write_text("x" * SUMMARY_LIMIT, encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(full))
    result = cli("--diff", "-", "--format", "github", stdin=MIXED.encode())
    assert result.code == 1 and "warning: the report was not added to $GITHUB_STEP_SUMMARY" in result.err
    assert full.stat().st_size == SUMMARY_LIMIT
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "missing-dir" / "summary.md"))
    result = cli("--diff", "-", "--format", "github", stdin=MIXED.encode())
    assert result.code == 1 and "not added to $GITHUB_STEP_SUMMARY" in result.err
