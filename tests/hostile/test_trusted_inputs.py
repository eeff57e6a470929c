"""The baseline and the team's acceptances come from a commit the branch cannot write, in every
mode (issue 29, item 8): ``--staged``, a push and a loop session are compared with a commit of the
branch itself, and the branch's own earlier commit of ``acceptances.json`` or ``baseline.json``
(a forged ``who``, a fingerprint computed offline) waived its later ``eval``. They are read at the
merge-base with the default branch: what ``main`` holds counts, a merge of ``main`` included."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo

INSECURE = "import requests\nr = requests.get(url, verify=False, timeout=5)\n"
ACCEPTED_BY = "accepted for the team by lead@example.com"


def _fingerprint(cli: Any, repo: GitRepo) -> str:
    """What the attacker computes offline: the fingerprint the finding will have."""
    repo.write("app.py", INSECURE)
    result = cli("--offline", "--no-state", "--format", "json")
    assert result.code == 1, result.err
    [finding] = result.json()["findings"]
    (repo.root / "app.py").unlink()
    return str(finding["fingerprint"])


def _acceptances(fingerprint: str) -> str:
    entry = {"fingerprint": fingerprint, "reason": "reviewed", "who": "lead@example.com", "created": "2026-01-01"}
    return json.dumps({"version": 1, "acceptances": [entry]})


def _baseline(fingerprint: str) -> str:
    entry = {"fingerprint": fingerprint, "rule_id": "sec-tls-verify-01", "agent": "security-patterns",
             "severity": "major", "file": "app.py", "line": 2, "message": "TLS verification disabled"}
    return json.dumps({"version": 1, "tool_version": "0.3.0", "created": "2026-01-01", "findings": [entry]})


WAIVERS = {"acceptances.json": (_acceptances, ACCEPTED_BY), "baseline.json": (_baseline, "baselined")}


@pytest.mark.parametrize("name", sorted(WAIVERS))
def test_staged_never_takes_the_branchs_own_waivers(cli: Any, repo: GitRepo, name: str) -> None:
    make, _ = WAIVERS[name]
    repo.branch("feature")
    fingerprint = _fingerprint(cli, repo)
    repo.write(f".review-gate/{name}", make(fingerprint))
    repo.commit("commit 1: the waiver")
    repo.write("app.py", INSECURE)
    repo.git("add", "app.py")
    staged = cli("--staged", "--offline", "--no-state", "--format", "json")
    assert staged.code == 1, staged.out
    assert [f["rule_id"] for f in staged.json()["findings"]] == ["sec-tls-verify-01"]
    assert staged.json()["waived"] == []


def test_a_push_never_takes_the_waivers_its_branch_pushed_before(cli: Any, repo: GitRepo,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    repo.branch("feature")
    fingerprint = _fingerprint(cli, repo)
    repo.write(".review-gate/acceptances.json", _acceptances(fingerprint))
    pushed = repo.commit("commit 1: the acceptance, pushed already")
    repo.write("app.py", INSECURE)
    head = repo.commit("commit 2: the finding")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", pushed)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", head)
    result = cli("--pre-push", "--offline", "--no-state", "--format", "json")
    assert result.code == 1, result.out
    assert ACCEPTED_BY not in result.out


def test_waivers_on_main_count_in_staged_and_after_main_is_merged(cli: Any, repo: GitRepo) -> None:
    """Issue 32's day two: acceptances merged from main are on the merge-base and count."""
    fingerprint = _fingerprint(cli, repo)
    repo.branch("feature")
    repo.write("notes.md", "# notes\n")
    repo.commit("work on the branch")
    repo.git("checkout", "-q", "main")
    repo.write(".review-gate/acceptances.json", _acceptances(fingerprint))
    repo.commit("the team accepts it on main")
    repo.git("checkout", "-q", "feature")
    repo.write("app.py", INSECURE)
    repo.git("add", "app.py")
    before = cli("--staged", "--offline", "--no-state", "--format", "json")
    assert before.code == 1, before.out  # main's acceptance is not on this branch yet
    repo.git("reset", "-q", "app.py")
    (repo.root / "app.py").unlink()
    repo.git("merge", "-q", "--no-edit", "main")
    repo.write("app.py", INSECURE)
    repo.git("add", "app.py")
    merged = cli("--staged", "--offline", "--no-state", "--format", "json")
    assert merged.code == 0, merged.out
    assert [w["waived"] for w in merged.json()["waived"]] == [f"{ACCEPTED_BY}: reviewed"]


def test_a_diff_file_uses_no_waiver_from_the_working_tree(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    fingerprint = _fingerprint(cli, repo)
    repo.write(".review-gate/acceptances.json", _acceptances(fingerprint))
    repo.write("app.py", INSECURE)
    diff = tmp_path / "change.diff"
    diff.write_text(subprocess.run(["git", "diff", "--no-index", "/dev/null", "app.py"], cwd=repo.root,
                                   capture_output=True, text=True).stdout)
    result = cli("--diff", str(diff), "--offline", "--no-state", "--format", "json")
    assert result.code == 1, result.out


def test_a_loop_sessions_review_never_takes_the_branchs_own_waivers(cli: Any, repo: GitRepo) -> None:
    """A loop session reviews the working tree against the commit it started at (``exact_base``),
    which holds the branch's own commits: the same request the loop makes, through the API."""
    import anyio

    from review_gate import api

    repo.branch("feature")
    fingerprint = _fingerprint(cli, repo)
    repo.write(".review-gate/acceptances.json", _acceptances(fingerprint))
    start = repo.commit("the acceptance, before the session starts")
    repo.write("app.py", INSECURE)
    request = api.change(cwd=repo.root, base=start).model_copy(update={"exact_base": True})
    report = anyio.run(lambda: api.review_async(request=request, offline=True, state=False))
    assert report.decision == "needs_fixes", report.waived
    assert [f.rule_id for f in report.findings] == ["sec-tls-verify-01"]


def test_the_agent_hook_never_lets_a_push_take_the_waivers_its_branch_pushed_before(cli: Any, repo: GitRepo,
                                                                                   tmp_path: Path) -> None:
    """The coding agent's PreToolUse hook reviews a `git push` as what the remote lacks, against
    the remote's tip of the branch: the branch's own acceptance pushed there waived the eval."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main")
    repo.branch("feature")
    fingerprint = _fingerprint(cli, repo)
    repo.write(".review-gate/acceptances.json", _acceptances(fingerprint))
    repo.commit("commit 1: the acceptance, pushed already")
    repo.git("push", "-q", "-u", "origin", "feature")
    repo.write("app.py", INSECURE)
    repo.commit("commit 2: the finding")
    payload = {"session_id": "s", "transcript_path": "/tmp/s.jsonl", "cwd": str(repo.root),
               "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "git push"}, "tool_use_id": "toolu_1"}
    result = cli("hook", "claude-code", stdin=json.dumps(payload).encode())
    assert result.code == 0, result.err
    assert json.loads(result.out)["hookSpecificOutput"]["permissionDecision"] == "deny", result.out
