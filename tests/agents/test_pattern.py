"""The pattern agent scans all added lines as one text; matches must still behave per line."""

from __future__ import annotations

from review_gate.agents.base import AgentTask
from review_gate.agents.pattern import scan
from review_gate.change.diff_parser import parse_diff
from review_gate.models import Rule
from tests.conftest import make_diff


def rule(pattern: str, **extra: object) -> Rule:
    return Rule(id="r", name="rule", severity="major", agent="a", category="c", description="d",
                detection="d", recommendation="r", pattern=pattern, **extra)


def flagged(diff: str, *rules: Rule) -> list[tuple[str | None, int | None]]:
    task = AgentTask(files=parse_diff(diff.encode()), rules=list(rules), repo_root=None, config_dir=None)
    return [(f.file, f.line) for f in scan(task).findings]


def test_a_match_never_runs_across_lines_or_files() -> None:
    diff = make_diff("a.py", ["password ="]) + make_diff("b.py", ["'hunter2'"])
    assert flagged(diff, rule(r"password\s*=\s*'")) == []


def test_a_match_at_a_line_start_belongs_to_that_line_and_file() -> None:
    diff = make_diff("app.py", ["x = 1"]) + make_diff("src/a.js", ["eval(payload);"])
    js_only = rule(r"(?m)(?:^|[^.\w$])eval[ \t]*\(", paths=["*.js"])
    assert flagged(diff, js_only) == [("src/a.js", 1)]


def test_rule_paths_and_exclusions() -> None:
    diff = make_diff("src/a.py", ["print(1)"]) + make_diff("tests/test_a.py", ["print(2)"])
    assert flagged(diff, rule(r"print\(", paths=["*.py"], exclude_paths=["tests/**"])) == [("src/a.py", 1)]


def test_one_finding_per_rule_and_line_and_redaction() -> None:
    diff = make_diff("a.env", ["TOKEN=abcd1234efgh TOKEN=abcd1234efgh"])
    task = AgentTask(files=parse_diff(diff.encode()), rules=[rule(r"TOKEN=\w+", redact=True)],
                     repo_root=None, config_dir=None)
    [finding] = scan(task).findings
    assert "abcd1234efgh" not in finding.message
    assert finding.line == 1


def test_context_lines_are_not_scanned() -> None:
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1,1 +1,2 @@\n eval(old)\n+x = 1\n"
    assert flagged(diff, rule(r"eval\(")) == []


def test_a_match_may_span_consecutive_added_lines_of_one_file() -> None:
    diff = make_diff("a.py", ["try:", "    go()", "except Exception:", "    pass"])
    task = AgentTask(files=parse_diff(diff.encode()), rules=[rule(r"(?m)^except Exception:\n\s*pass$")],
                     repo_root=None, config_dir=None)
    [finding] = scan(task).findings
    assert (finding.line, finding.end_line) == (3, 4)


def test_a_match_that_runs_into_another_file_does_not_hide_a_real_one() -> None:
    diff = make_diff("a.py", ["a"]) + make_diff("b.py", ["a b"])
    assert flagged(diff, rule(r"a[^z]*b")) == [("b.py", 1)]
