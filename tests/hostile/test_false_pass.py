"""The gate never says PASS on what it did not review (issue 8, items 1-7 and 16).

Each test drives the real CLI in a real git repository and reproduces one way the gate used to
pass a change it had not really reviewed.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import GitRepo, make_diff
from tests.llm.conftest import llm_agent, write_config
from tests.llm.server import LlmServer

INSECURE = "r = requests.get(url, verify=False, timeout=5)\n"


def report_of(result: Any) -> dict[str, Any]:
    assert result.out, result.err
    data: dict[str, Any] = json.loads(result.out)
    return data


def rules_fired(report: dict[str, Any]) -> set[str]:
    return {f["rule_id"] for f in report["findings"]}


# 1. Freshness follows what the agent was shown, not the file alone.

def test_a_pair_reviewed_against_another_base_is_not_reused(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", "import requests\nurl = 'https://example.com'\n")
    repo.commit("app")
    repo.branch("feature")
    repo.write("app.py", "import requests\nurl = 'https://example.com'\n" + INSECURE)
    repo.commit("insecure call, committed without the gate")
    repo.write("app.py", "import requests\nurl = 'https://example.org'\n" + INSECURE)
    repo.git("add", "app.py")
    staged = cli("--staged", "--format", "json")
    assert staged.code == 0, staged.out  # the insecure line is context of this diff: not added here
    repo.commit("another line")

    branch = cli("--base", "main", "--head", "HEAD", "--format", "json")
    report = report_of(branch)
    assert "sec-tls-verify-01" in rules_fired(report), report["agents"]
    assert branch.code == 1
    security = next(a for a in report["agents"] if a["id"] == "security-patterns")
    assert security["status"] == "completed"  # reviewed again: its input changed


# 2. A change cannot waive its own findings.

def _trusted_config(cli: Any, tmp_path: Path) -> Path:
    trusted = tmp_path / "trusted-config"
    assert cli("init", "--full", "--dir", str(trusted)).code == 0
    return trusted


def test_a_baseline_the_change_adds_does_not_waive_its_findings(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    trusted = _trusted_config(cli, tmp_path)
    repo.branch("feature")
    repo.write("app.py", INSECURE)
    repo.commit("insecure")
    assert cli("baseline", "--base", "main", "--config", str(trusted)).code == 0
    assert (repo.root / ".review-gate" / "baseline.json").is_file()
    repo.commit("baseline my own findings")

    result = cli("--base", "main", "--config", str(trusted), "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["waived"]
    assert "sec-tls-verify-01" in rules_fired(report) and report["waived"] == []
    gaps = [g for g in report["gaps"] if g["kind"] == "baseline_changed"]
    assert [g["subject"] for g in gaps] == [".review-gate/baseline.json"]


def test_a_baseline_on_the_base_branch_still_applies(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    trusted = _trusted_config(cli, tmp_path)
    repo.branch("feature")
    repo.write("app.py", INSECURE)
    repo.commit("insecure")
    assert cli("baseline", "--base", "main", "--config", str(trusted)).code == 0
    text = (repo.root / ".review-gate" / "baseline.json").read_text()
    (repo.root / ".review-gate" / "baseline.json").unlink()
    repo.git("checkout", "-q", "main")
    repo.write(".review-gate/baseline.json", text)
    repo.commit("known debt, reviewed on main")
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "--no-edit", "main")

    result = cli("--base", "main", "--config", str(trusted), "--format", "json")
    report = report_of(result)
    assert result.code == 0, report["findings"]
    assert [f["rule_id"] for f in report["waived"]] == ["sec-tls-verify-01"]
    assert not [g for g in report["gaps"] if g["kind"] == "baseline_changed"]


def test_a_committed_state_database_is_not_trusted(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    trusted = _trusted_config(cli, tmp_path)
    repo.branch("feature")
    repo.write("app.py", INSECURE)
    repo.commit("insecure")
    first = report_of(cli("--base", "main", "--config", str(trusted), "--format", "json"))
    [finding] = first["findings"]
    assert cli("accept", finding["fingerprint"], "--reason", "mine", "--config", str(trusted)).code == 0
    repo.git("add", "-f", ".review-gate/state.db")
    repo.commit("ship my acceptances and my cache")

    result = cli("--base", "main", "--config", str(trusted), "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["waived"]
    assert report["waived"] == [] and "sec-tls-verify-01" in rules_fired(report)
    assert all(a["status"] != "cached" for a in report["agents"])
    assert "state_changed" in {g["kind"] for g in report["gaps"]}


# 3. Every section of a patch series is reviewed, or the series is refused.

def test_every_patch_of_a_series_is_reviewed(cli: Any, repo: GitRepo) -> None:
    repo.branch("feature")
    repo.write("app.py", "import requests\n" + INSECURE)
    repo.commit("first patch: the insecure call")
    repo.write("cli.py", "print('done')\n")
    repo.commit("second patch: another file")
    series = repo.git("format-patch", "--stdout", "main..feature")
    assert series.count("diff --git") == 2

    result = cli("--diff", "-", "--format", "json", stdin=series.encode())
    report = report_of(result)
    assert "sec-tls-verify-01" in rules_fired(report)
    assert result.code == 1
    assert [f["path"] for f in report["classification"]["files"]] == ["app.py", "cli.py"]


def test_a_series_that_changes_one_file_twice_is_never_green(cli: Any, repo: GitRepo) -> None:
    """Its sections' lines belong to different versions of the file: refused (issue 29, item 10)."""
    repo.branch("feature")
    repo.write("app.py", "import requests\n" + INSECURE)
    repo.commit("first patch: the insecure call")
    repo.write("app.py", "import requests\n" + INSECURE + "print('done')\n")
    repo.commit("second patch: another line")
    series = repo.git("format-patch", "--stdout", "main..feature")
    assert series.count("diff --git a/app.py b/app.py") == 2
    result = cli("--diff", "-", "--format", "json", stdin=series.encode())
    assert result.code == 2 and "a patch series" in result.err


# 4. A required agent that cannot run fails the gate closed.

SCANNER = {"id": "scan", "name": "scan", "description": "a pattern agent that covers every file", "kind": "pattern"}


def _llm_config(tmp_path: Path, server: LlmServer, **fields: Any) -> Path:
    """The llm agent under test beside a pattern agent that covers every file, so the run is
    never incomplete merely because nothing else reviewed the change."""
    return write_config(tmp_path, [llm_agent("reviewer", server, required=True, **fields), SCANNER])


def test_a_required_agent_without_its_key_makes_the_run_incomplete(cli: Any, tmp_path: Path,
                                                                    monkeypatch: Any) -> None:
    monkeypatch.delenv("TEST_LLM_KEY", raising=False)
    with LlmServer() as server:
        cfg = _llm_config(tmp_path, server)
        result = cli("--config", str(cfg), "--diff", "-", "--format", "json",
                     stdin=make_diff("a.py", ["x = 1"]).encode())
        assert server.requests == []
    report = report_of(result)
    assert (result.code, report["decision"], report["metrics"]["missing_inputs"]) == (3, "incomplete", 1)
    agent = next(a for a in report["agents"] if a["id"] == "reviewer")
    assert agent["status"] == "skipped" and "TEST_LLM_KEY is not set" in agent["error"]


def test_an_optional_agent_without_its_key_may_be_skipped(cli: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("TEST_LLM_KEY", raising=False)
    with LlmServer() as server:
        cfg = write_config(tmp_path, [llm_agent("reviewer", server, required=False), SCANNER])
        result = cli("--config", str(cfg), "--diff", "-", "--format", "json",
                     stdin=make_diff("a.py", ["x = 1"]).encode())
    report = report_of(result)
    # skipped: no missing input, and no plain pass either (issue 20)
    assert (result.code, report["decision"]) == (0, "pass_with_warnings"), report["agents"]
    assert (report["metrics"]["missing_inputs"], report["metrics"]["agents_skipped"]) == (0, 1)


def test_a_required_agent_over_the_run_budget_makes_the_run_incomplete(cli: Any, tmp_path: Path,
                                                                        monkeypatch: Any) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-budget-0123456789")
    with LlmServer() as server:
        cfg = write_config(tmp_path, [llm_agent("reviewer", server, required=True), SCANNER], max_tokens=10)
        result = cli("--config", str(cfg), "--diff", "-", "--format", "json",
                     stdin=make_diff("a.py", ["x = 1"]).encode())
        assert server.requests == []
    report = report_of(result)
    assert (result.code, report["decision"]) == (3, "incomplete")
    agent = next(a for a in report["agents"] if a["id"] == "reviewer")
    assert agent["status"] == "skipped" and "run budget" in agent["error"]


# 5. Size alone never leaves code unreviewed.

def test_a_hunk_over_the_token_budget_is_reviewed_in_windows(cli: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-window-0123456789")
    lines = [f"value_{n:04d} = compute({n})  # " + "x" * 60 for n in range(400)]
    with LlmServer() as server:
        cfg = _llm_config(tmp_path, server, max_input_tokens=1000)
        result = cli("--config", str(cfg), "--diff", "-", "--format", "json",
                     stdin=make_diff("big.py", lines).encode())
        prompts = [r.prompt for r in server.requests]
    report = report_of(result)
    agent = next(a for a in report["agents"] if a["id"] == "reviewer")
    assert agent["status"] == "completed" and agent["unreviewed"] == []
    assert len(prompts) > 1
    for n, line in enumerate(lines):
        assert any(line in p for p in prompts), f"line {n + 1} was never shown"
    assert report["coverage"]["unreviewed"] == [] and result.code == 0


def test_a_line_longer_than_the_budget_is_still_shown(cli: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-window-0123456789")
    line = "blob = '" + "".join(f"{n:05d}" for n in range(3000)) + "'"  # 15 KB on one line
    with LlmServer() as server:
        cfg = _llm_config(tmp_path, server, max_input_tokens=1000)
        result = cli("--config", str(cfg), "--diff", "-", "--format", "json",
                     stdin=make_diff("one.py", [line]).encode())
        prompts = [r.prompt for r in server.requests]
    report = report_of(result)
    agent = next(a for a in report["agents"] if a["id"] == "reviewer")
    assert agent["status"] == "completed" and agent["unreviewed"] == []
    assert covered(line, prompts)


def covered(line: str, prompts: list[str]) -> bool:
    """Whether the pieces of new-file line 1 shown across the prompts cover all of ``line``."""
    seen = [0] * len(line)
    for prompt in prompts:
        for shown in re.findall(r"^ +1 \+ (.*?)(?: \(cont\.\))?$", prompt, flags=re.MULTILINE):
            start = line.find(shown)
            assert start >= 0, shown[:40]
            seen[start:start + len(shown)] = [1] * len(shown)
    return all(seen)


# 6. The first push reviews what it pushes.

def test_a_push_with_no_remote_history_reviews_every_pushed_file(cli: Any, repo: GitRepo, tmp_path: Path,
                                                                  monkeypatch: Any) -> None:
    repo.write("deploy.py", INSECURE)
    repo.commit("insecure, first push")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    for name in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF"):
        monkeypatch.delenv(name, raising=False)
    # what pre-commit sets when the push carries the root commit (no range)
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main")
    monkeypatch.setenv("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/main")
    monkeypatch.setenv("PRE_COMMIT_REMOTE_NAME", "origin")
    monkeypatch.setenv("PRE_COMMIT_REMOTE_URL", str(remote))

    result = cli("--pre-push", "--format", "json")
    report = report_of(result)
    assert "sec-tls-verify-01" in rules_fired(report)
    assert {f["path"] for f in report["classification"]["files"]} >= {"README.md", "deploy.py"}
    assert result.code == 1


# 7. The gate never reviews its own files.

def test_the_committed_configuration_is_not_scanned_by_the_code_rules(cli: Any, repo: GitRepo) -> None:
    """Only the secret rules read it (its rule texts hold samples the others would flag)."""
    repo.branch("adopt")
    assert cli("init", "--full").code == 0
    repo.commit("adopt review-gate")
    result = cli("--base", "main", "--format", "json")
    report = report_of(result)
    assert result.code == 0, report["findings"]
    assert report["findings"] == []
    [gap] = [g for g in report["gaps"] if g["kind"] == "config_changed"]  # one line for the whole edit
    assert gap["subject"] == ".review-gate" and ".review-gate/review-agents.json" in gap["files"]


def test_reports_and_bundles_it_wrote_are_not_reviewed(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", "x = 1  # fine\n")
    first = cli("--format", "sarif", "--output", "review.sarif", "--bundle", "run1")
    assert first.code == 0, first.err
    assert (repo.root / "review.sarif").is_file() and (repo.root / "run1" / "bundle.json").is_file()
    again = cli("--format", "json")
    report = report_of(again)
    paths = {f["path"] for f in report["classification"]["files"]}
    assert paths == {"app.py"}, paths
    assert again.code == 0


def test_an_edited_report_is_reviewed_again(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", "x = 1  # fine\n")
    assert cli("--format", "sarif", "--output", "review.sarif").code == 0
    (repo.root / "review.sarif").write_text(INSECURE)  # no longer what the gate wrote
    report = report_of(cli("--format", "json"))
    assert "review.sarif" in {f["path"] for f in report["classification"]["files"]}


def test_baselining_twice_does_not_baseline_the_baseline(cli: Any, repo: GitRepo) -> None:
    repo.branch("feature")
    repo.write("app.py", INSECURE)
    repo.commit("insecure")
    assert cli("baseline", "--base", "main").code == 0
    first = json.loads((repo.root / ".review-gate" / "baseline.json").read_text())
    assert cli("baseline", "--base", "main").code == 0
    second = json.loads((repo.root / ".review-gate" / "baseline.json").read_text())
    assert [e["fingerprint"] for e in second["findings"]] == [e["fingerprint"] for e in first["findings"]]
    assert [e["file"] for e in second["findings"]] == ["app.py"]


# 16. Only a finding a recorded run reported can be accepted: its whole fingerprint or the short
# id a report shows (a unique prefix), never a word that happens to occur in the stored JSON.

def test_accept_takes_only_a_reported_finding(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    report = report_of(cli("--format", "json"))
    [finding] = report["findings"]
    fingerprint = finding["fingerprint"]
    for wrong in ("major", "app.py", "security-patterns", "sec-tls-verify-01", fingerprint[:5],
                  "0" * 32, fingerprint[:-1] + ("0" if fingerprint[-1] != "0" else "1")):
        refused = cli("accept", wrong, "--reason", "try")
        assert refused.code == 2, wrong
    accepted = cli("accept", fingerprint[:6], "--reason", "fixture")  # the short id a report shows
    assert accepted.code == 0, accepted.err
    assert fingerprint in accepted.out  # stored and echoed as the whole fingerprint
    assert report_of(cli("--format", "json"))["waived"][0]["fingerprint"] == fingerprint


def test_the_store_s_own_gitignore_in_a_change_does_not_distrust_the_state(cli: Any, repo: GitRepo) -> None:
    """It ignores the state and itself and nothing else: it cannot carry a cache or an
    acceptance. (A run that listed it in the instant another run was writing it took the state
    for the change's and recorded nothing: a flaky concurrent-runs test.)"""
    repo.write("app.py", INSECURE)
    first = report_of(cli("--format", "json"))
    [finding] = first["findings"]
    assert cli("accept", finding["fingerprint"], "--reason", "known").code == 0
    repo.git("add", "-f", ".review-gate/.gitignore")
    result = cli("--format", "json")
    report = report_of(result)
    assert result.code == 0, report["gaps"]
    assert [w["fingerprint"] for w in report["waived"]] == [finding["fingerprint"]]
    assert "state_changed" not in {g["kind"] for g in report["gaps"]}


def test_a_key_written_into_the_configuration_fails_the_gate(cli: Any, repo: GitRepo) -> None:
    """A rule's description or a loop template leaves the machine with the change (was: PASS,
    with only the config_changed gap)."""
    repo.branch("adopt")
    assert cli("init", "--full").code == 0
    template = repo.root / ".review-gate" / "loop" / "plan.md"
    template.write_text(template.read_text() + "\nkey AKIAIOSFODNN7EXAMPLF\n")
    repo.commit("adopt review-gate")
    result = cli("--base", "main", "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["findings"]
    assert [(f["file"], f["rule_id"]) for f in report["findings"]] == [(".review-gate/loop/plan.md", "sec-aws-key-01")]
    assert "config_changed" in {g["kind"] for g in report["gaps"]}
