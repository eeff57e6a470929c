"""The optional built-in zizmor agent (issue 31): off by default; enabled, it audits the change's
own workflow content offline, and its finding of a problem a gate rule also reports is merged
into the rule's finding (``Rule.peers``), not counted twice."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo

pytestmark = pytest.mark.skipif(not (Path(sys.executable).parent / "zizmor").is_file(),
                                reason="zizmor (the test extra) is not installed beside this interpreter")

SAFE = """on: pull_request
permissions: {}
jobs:
  title:
    runs-on: ubuntu-latest
    steps:
      - run: echo hello
"""
INJECTED = """on: pull_request
permissions: {}
jobs:
  title:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: echo "${{ github.event.pull_request.title }}"
"""


@pytest.fixture
def enabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The overlay the docs show, turning the agent on; the program is found on PATH, beside this interpreter."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    config = tmp_path / "config"
    config.mkdir()
    (config / "review-gate.json").write_text(json.dumps({"version": 1, "extends": ["builtin"]}), encoding="utf-8")
    (config / "review-agents.json").write_text(json.dumps(
        {"version": 1, "agents": [{"id": "zizmor", "enabled": True}]}), encoding="utf-8")
    return config


def _change(repo: GitRepo) -> tuple[str, str]:
    repo.write(".github/workflows/title.yml", SAFE)
    base = repo.commit("a safe workflow")
    repo.write(".github/workflows/title.yml", INJECTED)
    return base, repo.commit("put the title into the script")


def test_off_in_the_built_in_configuration(cli: Any, repo: GitRepo) -> None:
    base, head = _change(repo)
    result = cli("--base", base, "--head", head, "--offline", "--no-state", "--format", "json")
    report = result.json()
    agent = next(a for a in report["agents"] if a["id"] == "zizmor")
    assert agent["status"] == "skipped" and "enabled: false" in agent["error"], agent
    assert not [f for f in report["findings"] if f["agent"] == "zizmor"]
    assert any(f["rule_id"] == "infra-gha-injection-01" for f in report["findings"])


def test_enabled_it_reads_the_change_and_its_finding_merges_into_the_rule(cli: Any, repo: GitRepo,
                                                                          enabled: Path) -> None:
    base, head = _change(repo)
    repo.git("checkout", "-q", base)  # the working tree holds the safe file: the head's content is audited
    result = cli("--base", base, "--head", head, "--offline", "--no-state", "--format", "json",
                 "--config", str(enabled))
    report = result.json()
    agent = next(a for a in report["agents"] if a["id"] == "zizmor")
    assert agent["status"] == "completed", agent
    on_line = [f for f in report["findings"] if f["file"] == ".github/workflows/title.yml" and f["line"] == 8]
    assert [f["rule_id"] for f in on_line] == ["infra-gha-injection-01"], on_line
    assert on_line[0]["also_reported_by"] == ["zizmor"] and on_line[0]["severity"] == "major"
    # what the rules do not see, zizmor adds, as a warning: the checkout keeps its credentials
    persisted = [f for f in report["findings"] if f["agent"] == "zizmor" and f["rule_id"] == "zizmor/artipacked"]
    assert [f["severity"] for f in persisted] == ["warning"]
    assert result.code == 1


def test_a_change_with_no_workflow_gives_zizmor_nothing(cli: Any, repo: GitRepo, enabled: Path) -> None:
    repo.write("app.py", "x = 1\n")
    head = repo.commit("code only")
    report = cli("--base", f"{head}~1", "--head", head, "--offline", "--no-state", "--format", "json",
                 "--config", str(enabled)).json()
    assert "zizmor" not in {e["agent"] for e in report["manifest"]}

