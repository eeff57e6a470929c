"""A key the secret finding redacts is not shown whole by another finding that quotes its line
(a TODO beside it, found by another agent): not in any format a person or a CI log reads."""

from __future__ import annotations

from typing import Any

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
