"""What the reports say, read as a person reads them (issue 19's trial): each kind of waived finding
named by what it is, an inline waiver's comment shown as written in Markdown, a finding without a
rule named with its agent, no doubled punctuation, and a title cut at 80 columns at a word."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_terminal import on_terminal
from tests.conftest import GitRepo
from tests.hostile.helpers import command_agent, script, write_config


def test_pre_existing_findings_are_not_called_accepted(cli: Any, repo: GitRepo) -> None:
    repo.write("app/client.py", "def fetch(url):\n    return requests.get(url, verify=False)\n")
    repo.commit("client")
    repo.write("app/client.py", "def fetch(url):\n    if url:\n        return requests.get(url, verify=False)\n")
    repo.commit("indent")
    for verbose in ((), ("--verbose",)):
        out = cli("--base", "HEAD~1", "--head", "HEAD", "--offline", "--no-state", *verbose).out
        assert "waived: 2 findings not counted (2 pre-existing)" in out, out  # verify=False, and requests.get
        assert "accepted" not in out
    agent = cli("--base", "HEAD~1", "--head", "HEAD", "--offline", "--no-state", "--format", "agent").out
    assert "Waived (reported, not counted): 2 pre-existing." in agent


def test_an_inline_waivers_comment_reads_as_written_in_markdown(cli: Any, repo: GitRepo) -> None:
    comment = "# review-gate: ignore[sec-py-eval-01] sandboxed (#12, see [docs] | `cfg`)"
    repo.write("app/run.py", f"def run(data):\n    return eval(data)  {comment}\n")
    repo.commit("waived")
    out = cli("--base", "HEAD~1", "--head", "HEAD", "--offline", "--no-state", "--format", "markdown").out
    row = next(line for line in out.splitlines() if line.startswith("| app/run.py:2"))
    # in a code span only the pipe (read by the table first) and the backticks need care
    assert row.endswith("| ``# review-gate: ignore[sec-py-eval-01] sandboxed (#12, see [docs] \\| `cfg`)`` |"), row
    markdown_it = pytest.importorskip("markdown_it")
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(out)
    spans = [c.content for t in tokens if t.type == "inline" for c in t.children or [] if c.type == "code_inline"]
    assert comment in spans  # rendered, it is the comment as written
    assert row.count("|") - row.count("\\|") == 7  # six cells, none added by the comment


def test_a_finding_without_a_rule_names_its_agent_and_no_punctuation_doubles(cli: Any, repo: GitRepo,
                                                                               tmp_path: Path) -> None:
    message = "the total is computed in floats, " * 20 + "so cents drift…"
    finder = script(tmp_path, "finder.py", f"""\
        import json
        print(json.dumps({{"findings": [{{"severity": "major", "file": "app.py", "line": 2, "category": "bug",
                                        "message": {message!r}, "recommendation": "Use Decimal."}}]}}))
    """)
    cfg = write_config(tmp_path, [command_agent("money-bot", finder)])
    repo.write("app.py", "items = load()\ntotal = sum(i.price * 1.2 for i in items)\n")
    text = cli("--config", str(cfg), "--no-state").out
    assert "app.py:2: major money-bot/bug [" in text
    agent = cli("--format", "agent", "--config", str(cfg), "--no-state").out
    entry = next(line for line in agent.splitlines() if line.startswith("1. app.py:2 major money-bot/bug — "))
    assert "… Fix: Use Decimal. [id " in entry and "…." not in entry
    assert json.loads(cli("--format", "json", "--config", str(cfg), "--no-state").out)["findings"][0]["rule_id"] is None


def test_a_title_too_wide_for_80_columns_goes_whole_on_a_line_of_its_own(repo: GitRepo,
                                                                          review_gate_bin: list[str]) -> None:
    """A trial: at 80 columns a long path and rule id left the title cut to a word or two, or to
    nothing; the head (where, severity, rule, id) stays one line, and the title is never cut away."""
    path = "services/payments/bridge.py"  # the line runs past 80 columns in the middle of the title
    repo.write(path, "def f(expr):\n    return eval(expr)\n")
    code, lines = on_terminal([*review_gate_bin, "--offline", "--no-state"], repo.root, 80)
    assert code == 1
    at = next(index for index, line in enumerate(lines) if line.startswith(path + ":2"))
    assert re.fullmatch(r"\S+: major sec-py-eval-01 \[[0-9a-f]+\]", lines[at]), lines[at]
    assert lines[at + 1].strip() == "eval/exec of dynamic input", lines[at:at + 2]


def test_the_agents_line_says_an_agent_that_did_not_run_did_not_run(cli: Any, repo: GitRepo,
                                                                    monkeypatch: Any) -> None:
    """Without their keys, the built-in llm reviewers are skipped: they did not run at all (the line
    said they "did not review everything")."""
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    repo.write("app/total.py", "def total(xs):\n    return sum(xs)\n")
    out = cli("--no-state").out
    agents = next(line for line in out.splitlines() if line.startswith("agents:"))
    assert re.fullmatch(r"agents: \d+ ran; 2 did not run \(below\)", agents), agents
    offline = cli("--offline", "--no-state").out  # the person turned them off: listed as off, not absent
    assert "did not run" not in offline and "turned off (not counted): " in offline
