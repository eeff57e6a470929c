"""An inline waiver naming an agent id speaks for that agent's findings of no pattern rule only
(issue 29, item 11): never for a pattern rule's finding, a critical key included. Through the real
CLI on real git repositories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.todo_agent import todo_config
from tests.conftest import GitRepo

AWS_KEY = "AKIA" + "Q7WZ3M9K2R5T8XB4"  # assembled: this file holds no key


def test_an_agent_id_waives_no_pattern_rule_finding(repo: GitRepo, cli: Any) -> None:
    repo.branch("feature")
    repo.write("app.py", f'AWS = "{AWS_KEY}"  # review-gate: ignore[secrets-scanner] a test key\n'
                         "# review-gate: ignore[security-patterns] the expression is ours\n"
                         "total = eval(expression)\n")
    result = cli("--offline", "--no-state", "--format", "json")
    report = json.loads(result.out)
    counted = {f["rule_id"]: f for f in report["findings"]}
    assert {"sec-aws-key-01", "sec-py-eval-01"} <= set(counted)
    assert report["decision"] == "fail" and result.code == 1
    assert report["waived"] == [] and report["metrics"]["waived_inline"] == 0
    # the waiver that did nothing says which id would have
    note = counted["sec-py-eval-01"]["inline_waiver"]
    assert note["line"] == 2 and "ignore[sec-py-eval-01]" in note["ignored"]
    assert "ignore[sec-aws-key-01]" in counted["sec-aws-key-01"]["inline_waiver"]["ignored"]


def test_an_agent_id_still_waives_the_findings_of_that_agent_with_no_rule(repo: GitRepo, cli: Any,
                                                                          tmp_path: Path) -> None:
    config, _ = todo_config(tmp_path)
    repo.branch("feature")
    repo.write("app.py", "# review-gate: ignore[todo] tracked as JIRA-12\nx = 1  # TODO tidy\n")
    report = json.loads(cli("--offline", "--no-state", "--config", str(config), "--format", "json").out)
    waived = [(f["agent"], f["rule_id"]) for f in report["waived"]]
    assert ("todo", "todo") in waived
    assert all(f["agent"] != "todo" or f["line"] != 2 for f in report["findings"])
