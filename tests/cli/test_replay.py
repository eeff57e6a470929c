"""``run --bundle DIR`` and ``review-gate replay DIR``: re-deciding without calling any agent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli.todo_agent import calls, todo_config, write_gate
from tests.conftest import GitRepo

CONFIG_FILES = ["review-agents.json", "review-composition.json", "review-domains.json", "review-gate.json",
                "review-rules.json"]


def bundled(cli: Any, repo: GitRepo, tmp_path: Path, severity: str = "major") -> tuple[Path, Path, Any]:
    cfg, counter = todo_config(tmp_path, severity)
    repo.branch("feature")
    repo.write("app.py", "x = 1  # TODO old\nz = 3\n")
    repo.commit("work")
    bundle = tmp_path / "bundle"
    result = cli("--config", str(cfg), "--base", "main", "--bundle", str(bundle), "--format", "json")
    assert result.out, result.err
    return bundle, counter, result


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_bundle_holds_facts_config_answers_and_report(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    bundle, _, result = bundled(cli, repo, tmp_path)
    assert result.code == 1
    assert sorted(p.name for p in bundle.iterdir()) == [
        "agents", "bundle.json", "classification.json", "config", "facts.json", "gaps.json", "manifest.json",
        "prompts", "report.json"]
    facts = load(bundle / "facts.json")
    [app] = facts["files"]
    assert app["path"] == "app.py"
    assert [ln["text"] for ln in app["hunks"][0]["lines"]] == ["x = 1  # TODO old", "z = 3"]
    assert "+x = 1  # TODO old\n" in app["patch"] and app["patch"].startswith("diff --git a/app.py b/app.py")
    assert sorted(p.name for p in (bundle / "config").iterdir()) == CONFIG_FILES
    assert load(bundle / "config" / "review-agents.json")["agents"][0]["id"] == "todo"
    answer = load(bundle / "agents" / "todo.json")
    assert answer["status"] == "completed"
    assert [(f["rule_id"], f["line"]) for f in answer["findings"]] == [("todo", 1), ("far", 999)]
    assert json.loads(answer["raw"])["findings"][0]["message"] == "unfinished work"
    assert (bundle / "prompts" / "README.md").read_text().strip()
    assert load(bundle / "report.json") == result.json()
    assert [e["agent"] for e in load(bundle / "manifest.json")] == ["todo"]
    assert "raw" not in result.json()["agents"][0]  # the report itself never carries raw answers


def test_replay_with_the_bundle_config_reproduces_the_run(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    bundle, counter, result = bundled(cli, repo, tmp_path)
    before = calls(counter)
    replayed = cli("replay", str(bundle), "--format", "json")
    assert calls(counter) == before
    assert replayed.code == result.code == 1
    original, again = result.json(), replayed.json()
    assert again["decision"] == original["decision"] == "needs_fixes"
    assert again["findings"] == original["findings"]
    assert again["metrics"] == original["metrics"]
    assert "replay: decision needs_fixes (unchanged)" not in replayed.err
    assert "replay: unchanged: needs_fixes" in replayed.err


def test_replay_with_a_stricter_gate_changes_the_decision(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    bundle, counter, result = bundled(cli, repo, tmp_path, severity="warning")
    assert result.code == 0 and result.json()["decision"] == "pass_with_warnings"
    strict = tmp_path / "strict"
    shutil.copytree(bundle / "config", strict)
    write_gate(strict, gate={"conditions": [{"metric": "warning", "op": ">", "value": 0, "decision": "fail"}]})
    before = calls(counter)
    replayed = cli("replay", str(bundle), "--config", str(strict), "--format", "text")
    assert calls(counter) == before
    assert replayed.code == 1
    assert "decision: fail" in replayed.out
    assert "replay: decision pass_with_warnings -> fail" in replayed.err


def test_replay_with_another_filter_mode(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    bundle, counter, result = bundled(cli, repo, tmp_path)
    assert result.json()["metrics"]["major"] == 1
    before = calls(counter)
    out = tmp_path / "replay.json"
    replayed = cli("replay", str(bundle), "--filter-mode", "nofilter", "--format", "json", "--output", str(out))
    assert calls(counter) == before
    assert replayed.code == 1
    assert load(out)["metrics"]["major"] == 2
    assert "major=1" in replayed.err and "major=2" in replayed.err
    never = cli("replay", str(bundle), "--fail-on", "never")
    assert never.code == 0 and calls(counter) == before


def test_a_missing_or_malformed_bundle_is_exit_2(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    missing = cli("replay", str(tmp_path / "nothing"))
    assert missing.code == 2 and "nothing" in missing.err
    bundle, _, _ = bundled(cli, repo, tmp_path)
    (bundle / "facts.json").write_text("{\"source\": 1}")
    broken = cli("replay", str(bundle))
    assert broken.code == 2 and "facts.json" in broken.err
    (bundle / "agents" / "todo.json").unlink()
    gone = cli("replay", str(bundle))
    assert gone.code == 2 and "agents/todo.json is missing" in gone.err


def test_bundle_refuses_a_directory_that_is_not_a_bundle(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg, counter = todo_config(tmp_path)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    repo.write("app.py", "x = 1\n")
    refused = cli("--config", str(cfg), "--bundle", str(busy))
    assert refused.code == 2 and "not empty" in refused.err
    assert calls(counter) == 0
    bundle = tmp_path / "bundle"
    assert cli("--config", str(cfg), "--bundle", str(bundle)).code == 0
    assert cli("--config", str(cfg), "--bundle", str(bundle)).code == 0  # an earlier bundle is replaced


def test_a_long_raw_answer_is_capped_and_says_so() -> None:
    from review_gate.agents.command import RAW_LIMIT, raw_answer

    assert raw_answer(b"short") == "short"
    capped = raw_answer(b"x" * (RAW_LIMIT + 10))
    assert capped.startswith("x" * 100) and capped.count("x") == RAW_LIMIT
    assert f"capped at its first {RAW_LIMIT} of {RAW_LIMIT + 10} bytes" in capped


def test_a_bundle_problem_is_a_bundle_error_not_a_config_error(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    from review_gate.errors import BundleError, ConfigError
    from review_gate.pipeline import bundles

    bundle, _, _ = bundled(cli, repo, tmp_path)
    for text in ("{", "{\"source\": 1}"):
        (bundle / "facts.json").write_text(text)
        with pytest.raises(BundleError) as caught:
            bundles.read(bundle)
        assert not isinstance(caught.value, ConfigError)
        assert "facts.json" in caught.value.message


def test_replay_with_another_config_judges_the_findings_by_its_rules(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    """A rule raised to critical fails the replay as a live run would; a rule deleted or disabled
    takes its findings with it; a renamed rule's name heads the message."""
    repo.write("app.py", "import requests\nr = requests.get(url, verify=False, timeout=5)\n")
    bundle = tmp_path / "run1"
    run = cli("--offline", "--bundle", str(bundle), "--format", "json")
    assert run.code == 1 and run.json()["decision"] == "needs_fixes"
    [recorded] = [f for f in run.json()["findings"] if f["rule_id"] == "sec-tls-verify-01"]

    def variant(name: str, change: Any) -> Path:
        directory = tmp_path / name
        shutil.copytree(bundle / "config", directory)
        rules = load(directory / "review-rules.json")
        rules["rules"] = [r for r in (change(r) for r in rules["rules"]) if r is not None]
        (directory / "review-rules.json").write_text(json.dumps(rules), encoding="utf-8")
        return directory

    def tls(edit: Any) -> Any:
        return lambda rule: edit(rule) if rule["id"] == "sec-tls-verify-01" else rule

    critical = variant("critical", tls(lambda r: {**r, "severity": "critical", "name": "TLS off",
                                                   "category": "tls", "recommendation": "verify"}))
    raised = cli("replay", str(bundle), "--config", str(critical), "--format", "json")
    assert raised.code == 1 and raised.json()["decision"] == "fail", raised.err
    assert "replay: decision needs_fixes -> fail" in raised.err
    [finding] = [f for f in raised.json()["findings"] if f["rule_id"] == "sec-tls-verify-01"]
    assert (finding["severity"], finding["category"], finding["recommendation"]) == ("critical", "tls", "verify")
    assert finding["message"] == "TLS off" + recorded["message"].removeprefix("TLS verification disabled")
    assert finding["fingerprint"] == recorded["fingerprint"]  # acceptances and baselines still match it
    live = cli("--offline", "--config", str(critical), "--no-state")
    assert live.code == 1 and "decision: fail" in live.out  # what a live run with that config decides

    for name, edit in (("deleted", lambda r: None), ("disabled", lambda r: {**r, "enabled": False})):
        replayed = cli("replay", str(bundle), "--config", str(variant(name, tls(edit))), "--format", "json")
        assert replayed.code == 0, (name, replayed.err)
        assert "sec-tls-verify-01" not in {f["rule_id"] for f in replayed.json()["findings"]}
        # the offline run turned the LLM reviewers off: listed as off, not a warning (issue 30)
        assert replayed.json()["decision"] == "pass"
        assert all(a["disabled"] for a in replayed.json()["agents"] if a["kind"] == "llm")
