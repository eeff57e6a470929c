"""A key the secret finding redacts is not shown whole by another finding that quotes its line
(a TODO beside it, found by another agent): not in any format a person or a CI log reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.todo_agent import todo_config
from tests.conftest import GitRepo

KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"  # split: this file itself holds no whole key


def test_a_finding_that_quotes_a_keys_line_shows_the_key_redacted(cli: Any, repo: GitRepo) -> None:
    repo.write("app/keys.py", f'STRIPE = "{KEY}"  # TODO rotate\n')
    for fmt in ("json", "text", "markdown", "github", "sarif", "agent", "gitlab", "rdjsonl"):
        result = cli("--offline", "--no-state", "--format", fmt)
        assert result.code == 1, (fmt, result.err)
        assert KEY not in result.out and KEY not in result.err, fmt
    report = cli("--offline", "--no-state", "--format", "json").json()
    todo = next(f for f in report["findings"] if f["rule_id"] == "hyg-todo-01")
    assert "sk_l…(redacted)" in todo["message"] and "TODO rotate" in todo["message"]


PASSWORD = "Hx7m" + "Q2vL8pW4zRt7"  # assembled: this file holds no literal a scanner reads as a secret
FORMATS = ("json", "text", "markdown", "github", "sarif", "agent", "gitlab", "rdjsonl", "meta")


def test_a_secret_on_a_comment_line_is_masked_though_no_secret_rule_fired(cli: Any, repo: GitRepo) -> None:
    """The secret rules read a comment line as documentation and say nothing; the TODO finding on
    that line quoted the password whole in every report (issue 29, item 12)."""
    repo.write("app/settings.py", f'DEBUG = False\n# TODO: temp password = "{PASSWORD}"\n')
    for fmt in FORMATS:
        result = cli("--offline", "--no-state", "--format", fmt)
        assert result.code in (0, 1), (fmt, result.err)
        assert PASSWORD not in result.out and PASSWORD not in result.err, fmt
    report = cli("--offline", "--no-state", "--format", "json").json()
    todo = next(f for f in report["findings"] if f["rule_id"] == "hyg-todo-01")
    assert "TODO: temp" in todo["message"] and "…(redacted)" in todo["message"]
    assert not any(f["category"] == "secrets" for f in report["findings"])  # no secret rule fired


def test_the_agent_format_masks_the_line_it_quotes(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    """A command agent's finding does not quote its line; the agent format quotes it for it."""
    config, _ = todo_config(tmp_path)
    repo.write("app/settings.py", f'DEBUG = False\n# TODO: temp password = "{PASSWORD}"\n')
    result = cli("--offline", "--no-state", "--config", str(config), "--format", "agent")
    assert "unfinished work" in result.out
    assert PASSWORD not in result.out and "…(redacted)" in result.out
