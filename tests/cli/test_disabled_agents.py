"""An agent the team switches off (``enabled: false``), or the person (``--offline``), is listed as off,
never counted as a reviewer that did not review: only agents that were routed and should have run
(no key, the run budget) make a warning."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import GitRepo


def _configured(cli: Any, repo: GitRepo, keep_llm: set[str]) -> None:
    assert cli("init", "--full").code == 0
    path = repo.root / ".review-gate" / "review-agents.json"
    data = json.loads(path.read_text())
    for agent in data["agents"]:
        if agent["kind"] == "llm" and agent["id"] not in keep_llm:
            agent["enabled"] = False
    path.write_text(json.dumps(data, indent=2))
    repo.commit("review-gate config")
    repo.write("app/util.py", "def add(a, b):\n    return a + b\n")
    repo.commit("a clean change")


def _review(cli: Any) -> dict[str, Any]:
    result = cli("--base", "HEAD~1", "--head", "HEAD", "--offline", "--no-state", "--format", "json")
    assert result.code == 0, result.err
    report: dict[str, Any] = json.loads(result.out)
    return report


def test_disabled_agents_are_listed_but_not_counted(cli: Any, repo: GitRepo) -> None:
    _configured(cli, repo, keep_llm=set())
    report = _review(cli)
    assert report["decision"] == "pass"
    assert report["metrics"]["agents_skipped"] == 0 and report["did_not_review"] == []
    off = [a for a in report["agents"] if a["status"] == "skipped"]
    assert off and all(a["disabled"] and "disabled" in a["error"] for a in off)
    text = cli("--base", "HEAD~1", "--head", "HEAD", "--offline", "--no-state", "--format", "text").out
    assert "did not review" not in text and "disabled" in text and "decision: pass" in text


def test_an_offline_review_of_a_clean_change_passes_with_the_llm_reviewers_listed_as_off(
        cli: Any, repo: GitRepo) -> None:
    """--offline is the person's choice: the review of 3,000 real commits was pass_with_warnings
    on 2,993 of them only because --offline skipped the LLM reviewers."""
    _configured(cli, repo, keep_llm={"security-reviewer"})
    report = _review(cli)
    assert report["decision"] == "pass"
    assert report["metrics"]["agents_skipped"] == 0 and report["did_not_review"] == []
    [off] = [a for a in report["agents"] if a["id"] == "security-reviewer"]
    assert off["disabled"] and off["status"] == "skipped" and "--offline" in off["error"]
    args = ("--base", "HEAD~1", "--head", "HEAD", "--offline", "--no-state", "--format")
    for fmt in ("text", "markdown", "github", "agent", "meta"):
        out = cli(*args, fmt).out
        line = next((ln for ln in out.splitlines() if "security-reviewer" in ln and "--offline" in ln), None)
        assert line is not None and "not counted" in line.lower(), (fmt, out)
        assert "did not run" not in out, (fmt, out)
    sarif = cli(*args, "sarif").json()
    assert {"agent": "security-reviewer", "reason": off["error"]} in sarif["runs"][0]["properties"]["turnedOff"]


def test_a_reviewer_without_its_key_still_counts(cli: Any, repo: GitRepo, monkeypatch: Any) -> None:
    """No key is no choice: the reviewer should have run."""
    _configured(cli, repo, keep_llm={"security-reviewer"})
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = cli("--base", "HEAD~1", "--head", "HEAD", "--no-state", "--format", "json")
    report = result.json()
    assert report["decision"] == "pass_with_warnings"
    assert report["metrics"]["agents_skipped"] == 1
    assert [a["agent"] for a in report["did_not_review"]] == ["security-reviewer"]


def test_disabled_agents_are_named_in_markdown_and_github_output(cli: Any, repo: GitRepo) -> None:
    """A reader of the pull request comment or the job log sees which reviewers the team switched
    off (the text and JSON reports did; Markdown said "Nothing blocking" and never named them)."""
    _configured(cli, repo, keep_llm=set())
    off = [a["id"] for a in _review(cli)["agents"] if a["disabled"]]
    args = ("--base", "HEAD~1", "--head", "HEAD", "--offline", "--no-state", "--format")
    markdown = cli(*args, "markdown").out
    line = next(ln for ln in markdown.splitlines() if ln.startswith("Turned off (not counted)"))
    assert all(agent in line for agent in off) and "disabled in the configuration" in line
    github = cli(*args, "github").out
    assert any(ln.startswith("review-gate: turned off (not counted)") and all(a in ln for a in off)
               for ln in github.splitlines())


def test_a_file_only_disabled_agents_were_routed_to_is_never_a_silent_pass(cli: Any, repo: GitRepo) -> None:
    """app.py goes to no enabled reviewer (every agent that reads Python is off); the Dockerfile's
    agent runs. app.py was shown to nobody: the switched-off agents count, named with the file."""
    assert cli("init", "--full").code == 0
    path = repo.root / ".review-gate" / "review-agents.json"
    data = json.loads(path.read_text())
    for agent in data["agents"]:
        if agent["kind"] == "llm" or agent["id"] in ("hygiene-patterns", "security-patterns", "secrets-scanner"):
            agent["enabled"] = False
    path.write_text(json.dumps(data, indent=2))
    repo.commit("only infra-patterns")
    repo.write("app.py", "import requests\nr = requests.get(u, verify=False)\n")
    repo.write("Dockerfile", "FROM python:3.12\n")
    report = cli("--offline", "--no-state", "--format", "json").json()
    assert report["coverage"]["unreviewed"] == ["app.py"]
    assert report["decision"] == "pass_with_warnings" and report["metrics"]["agents_skipped"] >= 1
    assert any("no other agent reviewed app.py" in a["reason"] for a in report["did_not_review"])
