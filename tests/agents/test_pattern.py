"""The pattern agent scans all added lines as one text; matches must still behave per line."""

from __future__ import annotations

import gc

import pytest

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


def _mixed_diff(files: int) -> str:
    # files with several hunks each: runs of added lines between context and removed lines
    out = []
    for f in range(files):
        body = "".join(f" keep {i}\n-old {i}\n+new {i} print({f})\n+more {i}\n" for i in range(3))
        out.append(f"diff --git a/m{f}.py b/m{f}.py\n--- a/m{f}.py\n+++ b/m{f}.py\n@@ -1,6 +1,9 @@\n{body}")
    return "".join(out)


def test_the_added_text_kept_for_the_next_agent_finds_what_a_fresh_one_does(monkeypatch: pytest.MonkeyPatch) -> None:
    # pattern agents share each file's joined added lines (pattern_matching._added); kept or not,
    # bounded or evicted, every agent finds the same lines
    from review_gate.agents import pattern_matching

    files = parse_diff(_mixed_diff(30).encode())
    task = AgentTask(files=files, rules=[rule(r"print\(\d+\)")], repo_root=None, config_dir=None)
    fresh = [(f.file, f.line) for f in scan(task).findings]
    assert len(fresh) == 90 and fresh[:3] == [("m0.py", 2), ("m0.py", 5), ("m0.py", 8)]
    assert [(f.file, f.line) for f in scan(task).findings] == fresh  # read from what was kept
    small = pattern_matching._Kept(4 * 70)  # a few files' worth: the first are kept, the rest joined again
    monkeypatch.setattr(pattern_matching, "KEPT", small)
    assert [(f.file, f.line) for f in scan(task).findings] == fresh
    assert [(f.file, f.line) for f in scan(task).findings] == fresh
    assert 0 < small.size <= small.limit
    del task, files
    gc.collect()
    assert small.size == 0  # an entry lives no longer than its file


def test_a_new_change_is_never_read_as_a_kept_one_of_the_same_identity() -> None:
    # the kept text is found by the file's id and must be that very file: ids are reused
    for line in ("print(1)", "x = 2", "print(3)"):
        files = parse_diff(make_diff("a.py", [line]).encode())
        task = AgentTask(files=files, rules=[rule(r"print\(")], repo_root=None, config_dir=None)
        assert [(f.file, f.line) for f in scan(task).findings] == ([("a.py", 1)] if "print" in line else [])
        del files, task
