"""A change that breaks the gate's own files (the configuration, the baseline, the shared
acceptances) is told so in its own review: the base side's copies judge it, so without this it
passed, and every review stopped with exit 2 once it was merged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import GitRepo

PLAIN = "def total(xs):\n    return sum(xs)\n"


def _trusted_copy(repo: GitRepo, tmp_path: Path) -> str:
    """The base branch's configuration outside the checkout, as the Action's config-from-base does."""
    target = tmp_path / "trusted"
    target.mkdir()
    for name in repo.git("ls-tree", "--name-only", "main", ".review-gate/").split():
        (target / Path(name).name).write_bytes(repo.git("show", f"main:{name}").encode())
    return str(target)


def _gate_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["agent"] == "review-gate" and f["category"] == "configuration"]


def _with_config(repo: GitRepo, cli: Any) -> None:
    assert cli("init", "--full").code == 0
    repo.write("app.py", PLAIN)
    repo.commit("configuration and code")
    repo.branch("feature")


def test_a_branch_that_breaks_the_configuration_is_told_before_the_merge(repo: GitRepo, cli: Any,
                                                                          tmp_path: Path) -> None:
    _with_config(repo, cli)
    agents_file = repo.root / ".review-gate" / "review-agents.json"
    agents = json.loads(agents_file.read_text(encoding="utf-8"))
    renamed = agents["agents"][0]["id"]
    agents["agents"][0]["id"] = "renamed-agent"  # the rules and policies still name the old id
    agents_file.write_text(json.dumps(agents, indent=2), encoding="utf-8")
    repo.write("app.py", PLAIN + "\n\ndef mean(xs):\n    return total(xs) / len(xs)\n")
    repo.commit("rename an agent")
    trusted = _trusted_copy(repo, tmp_path)

    result = cli("--offline", "--no-state", "--base", "main", "--config", trusted, "--format", "json")
    report = result.json()
    found = _gate_findings(report)
    assert result.code == 1 and report["decision"] == "needs_fixes"
    assert {f["file"] for f in found} >= {".review-gate/review-rules.json", ".review-gate/review-composition.json"}
    assert all(f["severity"] == "major" and f["line"] is None for f in found)
    assert len(found) == len({f["file"] for f in found})  # one finding per file, its problems counted
    assert any(f"unknown agent '{renamed}'" in f["message"] and "more in this file" in f["message"] for f in found)
    assert all("review-gate config validate --config .review-gate" in f["recommendation"] for f in found)

    # what the merge then does: the same files, loaded as the configuration, stop every run
    after = cli("--offline", "--no-state", "--base", "main", "--config", str(repo.root / ".review-gate"))
    assert after.code == 2 and f"unknown agent '{renamed}'" in after.err


def test_a_malformed_shared_acceptance_on_a_branch_is_a_finding_not_a_silent_pass(repo: GitRepo, cli: Any,
                                                                                  tmp_path: Path) -> None:
    _with_config(repo, cli)
    repo.write(".review-gate/acceptances.json", json.dumps({"version": 1, "acceptances": [{"fingerprint": "zz"}]}))
    repo.commit("an acceptance written by hand")
    trusted = _trusted_copy(repo, tmp_path)

    report = cli("--offline", "--no-state", "--base", "main", "--config", trusted, "--format", "json").json()
    [found] = _gate_findings(report)
    assert found["file"] == ".review-gate/acceptances.json" and report["decision"] == "needs_fixes"
    assert "/acceptances/0/" in found["message"] and "exit 2" in found["message"]


def test_a_sound_edit_of_the_configuration_adds_no_finding(repo: GitRepo, cli: Any, tmp_path: Path) -> None:
    _with_config(repo, cli)
    settings_file = repo.root / ".review-gate" / "review-gate.json"
    settings = json.loads(settings_file.read_text(encoding="utf-8"))
    settings["concurrency"] = 4
    settings_file.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    repo.write(".review-gate/acceptances.json", json.dumps({"version": 1, "acceptances": []}))
    repo.commit("a sound edit")
    trusted = _trusted_copy(repo, tmp_path)

    report = cli("--offline", "--no-state", "--base", "main", "--config", trusted, "--format", "json").json()
    assert _gate_findings(report) == []
    assert {g["kind"] for g in report["gaps"]} >= {"config_changed", "baseline_changed"}  # still a person's to review


def test_a_broken_baseline_the_configuration_does_not_read_is_a_warning(repo: GitRepo, cli: Any,
                                                                         tmp_path: Path) -> None:
    """A configuration directory of its own with its own baseline reads that one first: the broken
    .review-gate/baseline.json breaks only the reviews that read it (said, not blocking)."""
    _with_config(repo, cli)
    elsewhere = tmp_path / "own-config"
    elsewhere.mkdir()
    assert cli("baseline", "--offline", "--base", "main", "--output", str(elsewhere / "baseline.json")).code == 0
    repo.write(".review-gate/baseline.json", "not json")
    repo.commit("a broken baseline at the root")

    result = cli("--offline", "--no-state", "--base", "main", "--config", str(elsewhere), "--format", "json")
    [found] = _gate_findings(result.json())
    assert found["severity"] == "warning" and str(elsewhere / "baseline.json") in found["message"]
    assert result.code == 0


def test_a_broken_baseline_judged_by_the_bases_copy_of_it_blocks(repo: GitRepo, cli: Any, tmp_path: Path) -> None:
    """The Action's configuration from the base branch holds the base's baseline.json: it comes
    first, yet once merged it is the change's copy, so the change's broken one blocks."""
    _with_config(repo, cli)
    repo.git("checkout", "-q", "main")
    assert cli("baseline", "--offline", "--base", "main").code == 0
    repo.commit("an empty baseline")
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "--no-edit", "main")
    repo.write(".review-gate/baseline.json", "not json")
    repo.commit("break it")
    trusted = _trusted_copy(repo, tmp_path)

    result = cli("--offline", "--no-state", "--base", "main", "--config", trusted, "--format", "json")
    [found] = _gate_findings(result.json())
    assert found["severity"] == "major" and found["file"] == ".review-gate/baseline.json"
    assert result.code == 1


def test_a_state_path_through_a_file_is_told_before_the_merge(repo: GitRepo, cli: Any, tmp_path: Path) -> None:
    """`config validate` finds nothing wrong with it, yet once merged every run stops: the run state
    cannot be opened under app.py, a file."""
    _with_config(repo, cli)
    settings_file = repo.root / ".review-gate" / "review-gate.json"
    settings = json.loads(settings_file.read_text(encoding="utf-8"))
    settings["state_path"] = "app.py/state.db"
    settings_file.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    repo.commit("keep the state elsewhere")
    trusted = _trusted_copy(repo, tmp_path)

    result = cli("--offline", "--no-state", "--base", "main", "--config", trusted, "--format", "json")
    [found] = _gate_findings(result.json())
    assert found["file"] == ".review-gate/review-gate.json" and found["severity"] == "major"
    assert "/state_path" in found["message"] and "app.py" in found["message"] and result.code == 1
    after = cli("--offline", "--base", "main", "--config", str(repo.root / ".review-gate"))
    assert after.code == 2  # what the merge would bring


def test_a_batch_run_and_its_replay_keep_the_gates_own_findings(repo: GitRepo, cli: Any, tmp_path: Path) -> None:
    """A batch's report is aggregated at collect (here at submit: no llm agent to wait for), and a
    replay aggregates a bundle again: both dropped the gate's own findings, and passed the change."""
    _with_config(repo, cli)
    agents_file = repo.root / ".review-gate" / "review-agents.json"
    agents = json.loads(agents_file.read_text(encoding="utf-8"))
    agents["agents"][0]["id"] = "renamed-agent"
    agents_file.write_text(json.dumps(agents, indent=2), encoding="utf-8")
    repo.commit("rename an agent")
    trusted = _trusted_copy(repo, tmp_path)
    bundle = tmp_path / "bundle"

    result = cli("batch", "submit", "--base", "main", "--config", trusted, "--bundle", str(bundle),
                 "--format", "json")
    assert result.code == 1, result.out + result.err
    report = json.loads((bundle / "report.json").read_text(encoding="utf-8"))
    assert report["decision"] == "needs_fixes" and _gate_findings(report)

    replayed = cli("replay", str(bundle), "--format", "json")
    assert replayed.code == 1 and replayed.json()["decision"] == "needs_fixes"
    assert [f["fingerprint"] for f in _gate_findings(replayed.json())] == [f["fingerprint"] for f in
                                                                           _gate_findings(report)]
