"""`accept --shared`: an acceptance in the committed .review-gate/acceptances.json counts, as the
baseline does, once it is on the base branch, and never in the branch that adds it."""

from __future__ import annotations

import json
from typing import Any

from review_gate.change import own_files
from review_gate.judging import shared_acceptances
from tests.conftest import GitRepo
from tests.outputs.test_sarif import assert_valid

INSECURE = "import requests\nr = requests.get(url, verify=False, timeout=5)\n"


def _finding(cli: Any) -> str:
    result = cli("--offline", "--format", "json")
    assert result.code == 1, result.err
    [finding] = result.json()["findings"]
    return str(finding["fingerprint"])


def test_a_shared_acceptance_counts_once_it_is_on_the_base_branch(repo: GitRepo, cli: Any) -> None:
    repo.branch("feature")
    repo.write("app.py", INSECURE)
    fingerprint = _finding(cli)
    accepted = cli("accept", fingerprint[:10], "--reason", "the test server has no certificate", "--shared")
    assert accepted.code == 0, accepted.err
    assert ".review-gate/acceptances.json" in accepted.out and "base branch" in accepted.out
    written = json.loads((repo.root / ".review-gate" / "acceptances.json").read_text(encoding="utf-8"))
    [entry] = written["acceptances"]
    assert entry["fingerprint"] == fingerprint and entry["rule_id"] == "sec-tls-verify-01"
    assert entry["file"] == "app.py" and entry["reason"] == "the test server has no certificate"

    # committed on the branch: not trusted for the branch itself (no run state: as in CI)
    repo.commit("the change and its acceptance")
    branch = cli("--offline", "--no-state", "--base", "main", "--format", "json")
    assert branch.code == 1
    assert "baseline_changed" in {g["kind"] for g in branch.json()["gaps"]}

    # on the base branch: the next change that carries the finding passes
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-q", "feature", "--", ".review-gate/acceptances.json")
    repo.commit("merge the acceptance")
    repo.git("checkout", "-q", "feature")
    repo.git("rebase", "-q", "main")
    merged = cli("--offline", "--no-state", "--base", "main", "--format", "json")
    assert merged.code == 0, merged.out
    [waived] = merged.json()["waived"]
    assert waived["waived"] == f"accepted for the team by {entry['who']}: the test server has no certificate"
    # and in CI's code scanning: dismissed with who and why, not missing from the upload
    sarif = cli("--offline", "--no-state", "--base", "main", "--format", "sarif")
    assert sarif.code == 0, sarif.err
    assert_valid(sarif.json())
    [result] = sarif.json()["runs"][0]["results"]
    assert result["ruleId"] == "sec-tls-verify-01"
    assert result["suppressions"] == [{"kind": "external", "status": "accepted", "justification": waived["waived"]}]
    # and on the pull request's diff: a notice on the line, with who and why
    github = cli("--offline", "--no-state", "--base", "main", "--format", "github")
    [notice] = [line for line in github.out.splitlines() if line.startswith("::notice file=app.py")]
    assert "line=2" in notice and "sec-tls-verify-01" in notice and entry["who"] in notice, notice


def test_accept_without_shared_says_it_counts_on_this_machine_only(repo: GitRepo, cli: Any) -> None:
    repo.write("app.py", INSECURE)
    fingerprint = _finding(cli)
    result = cli("accept", fingerprint[:10], "--reason", "known")
    assert result.code == 0
    assert "on this machine only" in result.out and "--shared" in result.out


def test_a_malformed_shared_file_is_exit_2_naming_the_file_and_entry(repo: GitRepo, cli: Any) -> None:
    entries = [{"fingerprint": "a" * 32, "reason": "ok", "who": "me", "created": "2026-01-01"},
               {"fingerprint": "not-hex", "reason": "x", "who": "me", "created": "2026-01-01"}]
    repo.write(".review-gate/acceptances.json", json.dumps({"version": 1, "acceptances": entries}))
    repo.commit("a broken acceptances file")
    repo.branch("feature")
    repo.write("app.py", INSECURE)
    result = cli("--offline", "--no-state")
    assert result.code == 2
    assert ".review-gate/acceptances.json" in result.err and "/acceptances/1/fingerprint" in result.err
    assert "Traceback" not in result.err
    refused = cli("accept", "b" * 32, "--reason", "x", "--shared", "--force")
    assert refused.code == 2 and "/acceptances/1/fingerprint" in refused.err


def test_the_file_name_is_written_once() -> None:
    assert own_files.ACCEPTANCES_NAME == shared_acceptances.FILE_NAME


def test_accepted_lists_the_team_acceptances(repo: GitRepo, cli: Any) -> None:
    """`accepted` said "no active acceptances" while a team acceptance waived a finding."""
    repo.write("app.py", INSECURE)
    fingerprint = _finding(cli)
    assert cli("accept", fingerprint[:10], "--reason", "the test server has no certificate", "--shared").code == 0
    listed = cli("accepted")
    assert listed.code == 0, listed.err
    assert "no active acceptances" not in listed.err
    assert "for the team, in" in listed.out and "acceptances.json" in listed.out
    assert fingerprint in listed.out and "the test server has no certificate" in listed.out
    assert "app.py sec-tls-verify-01" in listed.out
