"""Rule semantics: a pattern is matched on each added line, so its anchors are line anchors.

The pattern agent joins the added lines of a scope into one text for speed; that must never leak
into what a rule means. ``^``/``\\A`` and ``$``/``\\z`` hold at the start and end of every added
line, in the RE2 set that prefilters the rules as well as in the per-rule scan.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from review_gate.agents.base import AgentTask
from review_gate.agents.pattern import scan
from review_gate.change.diff_parser import parse_diff
from review_gate.models import Rule
from review_gate.text.regex import PatternError, compile_pattern
from tests.conftest import make_diff


def rule(pattern: str) -> Rule:
    return Rule(id="r", name="rule", severity="major", agent="a", category="c", description="d",
                detection="d", recommendation="r", pattern=pattern)


def flagged(diff: str, pattern: str) -> list[tuple[str | None, int | None, int | None]]:
    task = AgentTask(files=parse_diff(diff.encode()), rules=[rule(pattern)], repo_root=None, config_dir=None)
    return [(f.file, f.line, f.end_line) for f in scan(task).findings]


LINES = ["import pdb", "x = 1", "import pdb", "import pdbx", "  import pdb", "import pdb"]


def write_rules(directory: Path, pattern: str) -> None:
    directory.mkdir()
    rules = {"version": 1, "rules": [{
        "id": "anchored-01", "name": "Anchored pdb import", "severity": "major", "agent": "hygiene-patterns",
        "category": "debug-leftover", "description": "A pdb import left in the code.",
        "detection": "An added line that is exactly an import of pdb.",
        "recommendation": "Remove the import before merging.", "pattern": pattern}]}
    (directory / "review-rules.json").write_text(json.dumps(rules), encoding="utf-8")


@pytest.mark.parametrize("pattern", [r"^import pdb$", r"\Aimport pdb\z"])
def test_anchors_hold_on_every_added_line_through_the_cli(cli: Any, tmp_path: Path, pattern: str) -> None:
    config = tmp_path / "config"
    write_rules(config, pattern)
    diff = make_diff("app/a.py", LINES) + make_diff("app/b.py", ["y = 2", "import pdb"])
    result = cli("--diff", "-", "--config", str(config), "--format", "json", stdin=diff.encode())
    assert result.code == 1, result.err
    found = sorted((f["file"], f["line"]) for f in result.json()["findings"] if f["rule_id"] == "anchored-01")
    assert found == [("app/a.py", 1), ("app/a.py", 3), ("app/a.py", 6), ("app/b.py", 2)]


def test_dollar_matches_before_a_newline_in_the_middle() -> None:
    # Only the middle line matches, so the RE2 set must see it too, not only the per-rule regex.
    diff = make_diff("a.py", ["a = 1", "import pdb", "b = 2"])
    assert flagged(diff, r"pdb$") == [("a.py", 2, 2)]
    assert flagged(diff, r"^a = 1$") == [("a.py", 1, 1)]
    assert flagged(diff, r"^b = 2\z") == [("a.py", 3, 3)]


def test_caret_matches_after_a_line_that_is_not_added() -> None:
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,3 @@\n old = 1\n+import pdb\n keep = 2\n"
    assert flagged(diff, r"^import pdb$") == [("a.py", 2, 2)]


def test_a_match_may_still_span_consecutive_added_lines() -> None:
    diff = make_diff("a.py", ["try:", "    go()", "except Exception:", "    pass", "x = 1"])
    assert flagged(diff, r"^except Exception:\n\s*pass$") == [("a.py", 3, 4)]
    assert flagged(diff, r"\Aexcept Exception:\n[ \t]*pass\z") == [("a.py", 3, 4)]


def test_a_match_still_never_spans_files() -> None:
    diff = make_diff("a.py", ["password ="]) + make_diff("b.py", ["'hunter2'"])
    assert flagged(diff, r"=$\n^'") == []


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    (r"\\A", b"a\\A", [b"\\A"]),            # an escaped backslash, then a literal A
    (r"\QA\A\E", b"xA\\Ay", [b"A\\A"]),     # \A inside \Q...\E is literal
    (r"[\\]A", b"\\A", [b"\\A"]),           # a class holding a backslash, then A
    (r"[]\\]A", b"]A", [b"]A"]),            # ] first in a class is literal
    (r"[[:alpha:]]\z", b"ab\ncd", [b"b", b"d"]),
])
def test_only_real_anchor_escapes_become_line_anchors(pattern: str, text: bytes, expected: list[bytes]) -> None:
    assert [m.group(0) for m in compile_pattern(pattern).finditer(text)] == expected


def test_anchor_escapes_inside_a_class_stay_errors() -> None:
    with pytest.raises(PatternError):
        compile_pattern(r"[\A]")
