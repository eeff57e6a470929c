"""``--format markdown``: one PR comment, escaped, and never longer than GitHub accepts."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

import pytest

from review_gate.models import Finding, ReviewReport
from review_gate.outputs.markdown import COMMENT_LIMIT, render, text
from tests.outputs.conftest import _finding, check_golden, make_report

markdown_it = pytest.importorskip("markdown_it")

# What our own layout may contain; anything else in the parsed comment came from untrusted text.
OUR_HTML = re.compile(r"<br>|</?sub>|<details>\n<summary>[^<]*</summary>\n|</details>\n|<!-- review-gate report -->\n")
CELL_SPLIT = re.compile(r"(?<!\\)\|")


def parse(markdown: str) -> list[object]:
    parser = markdown_it.MarkdownIt("commonmark").enable("table").enable("strikethrough")

    def walk(tokens: list[object]) -> Iterator[object]:
        for token in tokens:
            yield token
            yield from walk(getattr(token, "children", None) or [])

    return list(walk(parser.parse(markdown)))


def test_golden(report: ReviewReport) -> None:
    check_golden("report.md", render(report))


def test_decision_and_summary_line_come_first(report: ReviewReport) -> None:
    lines = [line for line in render(report).splitlines() if line and not line.startswith("<!--")]
    assert lines[0] == "## review-gate: FAIL"
    assert "exit code 1" in lines[1]
    assert lines[2] == "`REVIEW: FAIL | issues=6 (critical=1) | missing_inputs=1`"


def test_counts_table(report: ReviewReport) -> None:
    out = render(report)
    assert ("| critical | major | warning | info | total | missing inputs | unreviewed files | agents failed "
            "| agents skipped | risk |") in out
    assert "| 1 | 2 | 1 | 2 | 6 | 1 | 1 | 2 | 0 | 58 (high) |" in out


def test_findings_grouped_by_severity_with_places(report: ReviewReport) -> None:
    out = render(report)
    assert out.index("### Critical (1)") < out.index("### Major (2)") < out.index("### Warning (1)") \
        < out.index("### Info (2)")
    assert "| keys/deploy.pem:1 | sec\\-private-key-01 |" not in out  # a rule id is not a list marker mid-cell
    assert ("| keys/deploy.pem:1 | `00000000000000000000000000000001` | sec-private-key-01 "
            "| Private key committed") in out
    assert "| app/http.py:12-14 |" in out  # a range
    assert "security-patterns, also llm-security" in out
    assert "| *no file* | `00000000000000000000000000000006` | general | The change has no tests. | review-bot |" in out


def test_agents_unreviewed_files_usage_and_footer(report: ReviewReport) -> None:
    out = render(report)
    assert "| llm-security | timed out | yes | agents_failed | no usable answer within its 30 s deadline |" in out
    assert "| style-bot | failed | no |" in out
    assert "- vendor/big.min.js" in out
    assert "1,200 tokens in, 300 tokens out, cost \\$0.0123." in out
    assert "| review-bot | 1,200 | 300 | \\$0.0123 |" in out
    assert "| secrets-scanner | 0 |" not in out  # agents that used nothing are not listed
    assert out.rstrip().endswith("<sub>review-gate 0.1.0 · run 20261125T120000Z-abcdef12 · working tree against "
                                 "0123456789ab</sub>")


def test_no_html_from_untrusted_text(report: ReviewReport) -> None:
    out = render(report)
    assert "<script>" not in out and "<b>" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    html = [t.content for t in parse(out) if t.type in ("html_inline", "html_block")]  # type: ignore[attr-defined]
    assert html and all(OUR_HTML.fullmatch(h) for h in html), html


def test_table_rows_keep_their_cells(report: ReviewReport) -> None:
    out = render(report)
    for block in out.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        if rows:
            widths = {len(CELL_SPLIT.split(row)) for row in rows}
            assert len(widths) == 1, block  # no | from a message added a cell, no newline cut a row
    assert "\\| breaks \\| tables" in out
    assert "tables @\u200doctocat<br>second line" in out  # the newline became <br> inside the cell
    assert "Exception:<br>    pass" in out  # CR LF too
    cells = [t for t in parse(out) if t.type == "td_open"]  # type: ignore[attr-defined]
    assert len(cells) == 6 * 5 + 2 * 5 + 10 + 4  # 6 findings, 2 broken agents, the counts, 1 agent's usage


def test_nobody_is_mentioned(report: ReviewReport) -> None:
    out = render(report)
    assert not re.search(r"@[A-Za-z0-9]", out)  # GitHub links @user and @org/team only like this
    assert "@\u200doctocat" in out and "@\u200dchannel" in out


def test_untrusted_text_starts_no_construct() -> None:
    nasty = ["# Heading", "## h2", "> quote", "- item", "+ item", "* item", "1. item", "2) item", "---",
             "[link](https://evil.example)", "![img](https://evil.example/i.png)", "`code` and ``more``",
             "*em* _em_ ~~gone~~", "$x^2$", "<https://evil.example>", "&lt;b&gt; stays &amp;", "a\\b",
             "    indented code", "line one\n# line two\n- three", "<!-- comment -->"]
    findings = [_finding(i + 1, severity="warning", message=m, recommendation=m, file=m, rule_id=m)
                for i, m in enumerate(nasty)]
    out = render(make_report(findings, decision="pass_with_warnings"))
    kinds = Counter(t.type for t in parse(out))  # type: ignore[attr-defined]
    assert kinds["link_open"] == 0 and kinds["image"] == 0 and kinds["blockquote_open"] == 0
    assert kinds["ordered_list_open"] == 0 and kinds["code_block"] == 0 and kinds["s_open"] == 0
    assert kinds["heading_open"] == len([line for line in out.splitlines() if line.startswith("#")])
    assert kinds["em_open"] == 0 and kinds["code_inline"] == 2 + len(nasty)  # the summary line, the flag, the ids
    assert kinds["bullet_list_open"] == 2  # the recommendations, one item each, and the unreviewed file
    assert kinds["list_item_open"] == len(nasty) + 1
    for message in nasty:
        assert text(message) in out


@pytest.mark.parametrize(("raw", "escaped"), [
    ("# h", "\\# h"), ("1. one", "1\\. one"), ("1.5 s", "1.5 s"), ("- x", "\\- x"), ("> q", "&gt; q"),
    ("[a](b)", "\\[a\\](b)"), ("a|b", "a\\|b"), ("a\nb", "a<br>b"), ("a\r\nb", "a<br>b"), ("x@y", "x@\u200dy"),
    ("\x1b[31mred", "\\\\x1b\\[31mred"), ("$1", "\\$1"), ("  padded  ", "padded"), ("a\tb", "a b"),
    ("bad \udcff byte", "bad \\\\udcff byte"),
])
def test_text_escaping(raw: str, escaped: str) -> None:
    assert text(raw) == escaped


def test_long_fields_are_cut() -> None:
    assert text("x" * 5000) == "x" * 2000 + "…"


def test_a_clean_pass() -> None:
    out = render(make_report([], decision="pass"))
    assert "## review-gate: PASS" in out
    assert "Nothing blocking was found." in out and "lets the change through (exit code 0)" in out
    assert "###" not in out.split("### Agents")[0]  # no finding group


def test_long_groups_are_collapsed_critical_ones_never() -> None:
    findings = [_finding(i, severity="critical" if i <= 12 else "warning") for i in range(1, 30)]
    out = render(make_report(findings))
    assert "<summary>Show 17 warning findings</summary>" in out
    assert "Show 12 critical" not in out


def many_findings(count: int = 10_000, critical: int = 40) -> list[Finding]:
    severities = ["major", "warning", "info"]
    return [_finding(i, severity="critical" if i <= critical else severities[i % 3],
                     file=f"src/module_{i}.py", message=f"problem number {i} " + "detail " * 8,
                     recommendation=f"fix number {i}")
            for i in range(1, count + 1)]


def test_truncation_stays_under_the_limit_and_keeps_every_critical_finding() -> None:
    findings = many_findings()
    out = render(make_report(findings))
    assert len(out) <= COMMENT_LIMIT
    for f in findings[:40]:
        assert f"| src/module\\_{f.line}.py:{f.line} |" in out
    shown = Counter(f.severity for f in findings if f"| src/module\\_{f.line}.py:{f.line} |" in out)
    total = Counter(f.severity for f in findings)
    left = {s: total[s] - shown[s] for s in total}
    assert left["info"] == total["info"]  # the least severe go first
    assert left["critical"] == 0
    parts = ", ".join(f"{n:,} {s}" for s, n in left.items() if n and s in ("major", "warning", "info"))
    note = re.search(r"\*\*([\d,]+) findings are not shown\*\* [^(]*\(([^)]*)\)", out)
    assert note, out[:2000]
    assert int(note.group(1).replace(",", "")) == sum(left.values())
    assert sorted(note.group(2).split(", ")) == sorted(parts.split(", "))
    assert "### Info (" in out and "0 shown" in out


def test_a_smaller_limit_and_a_byte_measure() -> None:
    report = make_report(many_findings(500))
    small = render(report, limit=20_000)
    assert len(small) <= 20_000 and "findings are not shown" in small
    wide = make_report([_finding(i, message="é" * 300) for i in range(1, 200)])
    fitted = render(wide, limit=30_000, size=lambda s: len(s.encode("utf-8")))
    assert len(fitted.encode("utf-8")) <= 30_000
    assert render(report, limit=None).count("src/module") > 500


def test_a_report_too_big_even_without_findings_is_cut() -> None:
    report = make_report([])
    huge = report.model_copy(update={"agents": [a.model_copy(update={"id": f"agent-{i}", "status": "failed",
                                                                     "error": "x" * 400})
                                                for i in range(400) for a in report.agents[:1]]})
    out = render(huge, limit=10_000)
    assert len(out) <= 10_000 and "cut here" in out
