"""The pre-commit hooks, with the real pre-commit: the hooks of .pre-commit-hooks.yaml, installed
as git hooks in a temporary repository, block a commit or a push the gate fails and let a clean
one through.

The repository's hooks are ``language: python``: a user's pre-commit pip-installs review-gate
into an environment of its own. Here they are used as a ``repo: local`` with ``language:
system`` and the test's review-gate on PATH, so nothing is downloaded or built; every other
field is the manifest's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import GitRepo
from tests.integrations.conftest import HOOKS_FILE, PRIVATE_KEY, git, load_yaml, tool_env

pytest.importorskip("pre_commit")


def hooks() -> dict[str, dict[str, Any]]:
    return {hook["id"]: hook for hook in load_yaml(HOOKS_FILE)}


def test_the_manifest_is_valid_for_pre_commit() -> None:
    result = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", str(HOOKS_FILE)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_hooks_review_the_whole_change_once() -> None:
    found = hooks()
    assert set(found) == {"review-gate", "review-gate-push"}
    assert found["review-gate"]["entry"] == "review-gate --staged"
    assert found["review-gate"]["stages"] == ["pre-commit"]
    assert found["review-gate-push"]["entry"] == "review-gate --pre-push"
    assert found["review-gate-push"]["stages"] == ["pre-push"]
    for hook in found.values():
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False and hook["require_serial"] is True and hook["always_run"] is True


class HookedRepo:
    """A git repository with both hooks installed by ``pre-commit install``, and a bare remote."""

    def __init__(self, repo: GitRepo, tmp_path: Path) -> None:
        self.repo = repo
        self.root = repo.root
        self.env = tool_env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")
        for name in ("SKIP", "PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF"):
            self.env.pop(name, None)
        local = [{**hook, "language": "system", "verbose": True} for hook in hooks().values()]
        config = {"default_install_hook_types": ["pre-commit", "pre-push"],
                  "repos": [{"repo": "local", "hooks": local}]}
        repo.write(".pre-commit-config.yaml", yaml.safe_dump(config, sort_keys=False))
        repo.commit("pre-commit config")
        self.remote = tmp_path / "remote.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(self.remote))
        git(self.root, "remote", "add", "origin", str(self.remote))
        # The first push carries the root commit, for which pre-commit names no range (see
        # test_the_first_push_of_a_new_repository_is_not_an_error): it goes before the hooks.
        git(self.root, "push", "-q", "origin", "main")
        result = self.run(sys.executable, "-m", "pre_commit", "install")
        assert result.returncode == 0, result.stdout + result.stderr

    def run(self, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=self.root, env={**self.env, **env}, capture_output=True,
                              text=True, timeout=60, check=False)

    def stage(self, path: str, text: str) -> None:
        self.repo.write(path, text)
        git(self.root, "add", "--", path)

    def commit(self, message: str, **env: str) -> subprocess.CompletedProcess[str]:
        return self.run("git", "commit", "-m", message, **env)

    def head(self) -> str:
        return git(self.root, "rev-parse", "HEAD")


@pytest.fixture
def hooked(repo: GitRepo, tmp_path: Path) -> HookedRepo:
    return HookedRepo(repo, tmp_path)


def output(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout + result.stderr


def test_a_commit_with_a_private_key_is_blocked(hooked: HookedRepo) -> None:
    before = hooked.head()
    hooked.stage("deploy/key.pem", PRIVATE_KEY)
    result = hooked.commit("add the deploy key")
    assert result.returncode != 0, output(result)
    assert "review-gate" in output(result) and "Failed" in output(result)
    assert "REVIEW: FAIL | issues=1 (critical=1)" in output(result)
    assert hooked.head() == before  # nothing was committed
    assert "deploy/key.pem" in git(hooked.root, "diff", "--cached", "--name-only")  # still staged


def test_a_clean_commit_passes(hooked: HookedRepo) -> None:
    hooked.stage("app.py", "def total(a, b):\n    return a + b\n")
    result = hooked.commit("add total")
    assert result.returncode == 0, output(result)
    assert "REVIEW: PASS" in output(result)
    assert git(hooked.root, "log", "-1", "--format=%s") == "add total"


def test_only_the_staged_change_is_reviewed(hooked: HookedRepo) -> None:
    hooked.repo.write("deploy/key.pem", PRIVATE_KEY)  # in the working tree, never staged
    hooked.stage("app.py", "x = 1\n")
    result = hooked.commit("add app")
    assert result.returncode == 0, output(result)
    assert "REVIEW: PASS" in output(result)


def test_skip_lets_a_commit_through(hooked: HookedRepo) -> None:
    hooked.stage("deploy/key.pem", PRIVATE_KEY)
    result = hooked.commit("add the deploy key", SKIP="review-gate")
    assert result.returncode == 0, output(result)
    assert "review-gate" in output(result) and "Skipped" in output(result)


def test_a_push_of_a_secret_is_blocked_and_a_clean_push_passes(hooked: HookedRepo) -> None:
    hooked.stage("app.py", "x = 1\n")
    assert hooked.commit("clean", SKIP="review-gate").returncode == 0
    clean = hooked.run("git", "push", "origin", "main")
    assert clean.returncode == 0, output(clean)
    assert "REVIEW: PASS" in output(clean)

    hooked.stage("deploy/key.pem", PRIVATE_KEY)
    assert hooked.commit("secret", SKIP="review-gate").returncode == 0
    blocked = hooked.run("git", "push", "origin", "main")
    assert blocked.returncode != 0, output(blocked)
    assert "REVIEW: FAIL | issues=1 (critical=1)" in output(blocked)
    remote_main = git(hooked.root, "ls-remote", str(hooked.remote), "refs/heads/main").split()[0]
    assert remote_main != hooked.head()  # the secret did not reach the remote


def test_a_new_branch_push_reviews_only_its_own_commits(hooked: HookedRepo) -> None:
    """main's history already on the remote (a secret included, pushed before the hooks) is not
    reviewed again: the range starts where the branch leaves main."""
    hooked.stage("deploy/old.pem", PRIVATE_KEY)
    assert hooked.commit("old secret", SKIP="review-gate").returncode == 0
    assert hooked.run("git", "push", "--no-verify", "origin", "main").returncode == 0
    base = hooked.head()

    git(hooked.root, "checkout", "-q", "-b", "feature")
    hooked.stage("app.py", "x = 1\n")
    assert hooked.commit("feature work").returncode == 0
    clean = hooked.run("git", "push", "-u", "origin", "feature")
    assert clean.returncode == 0, output(clean)
    assert "REVIEW: PASS | issues=0" in output(clean)
    assert f"{base[:12]}" in output(clean)  # the range reviewed starts at main's tip

    git(hooked.root, "checkout", "-q", "-b", "feature-2", base)
    hooked.stage("deploy/new.pem", PRIVATE_KEY)
    assert hooked.commit("new secret", SKIP="review-gate").returncode == 0
    blocked = hooked.run("git", "push", "origin", "feature-2")
    assert blocked.returncode != 0, output(blocked)
    assert "REVIEW: FAIL | issues=1 (critical=1)" in output(blocked)
    assert "deploy/new.pem" in output(blocked) and "deploy/old.pem" not in output(blocked)


def test_a_push_that_merged_main_reviews_only_the_branch_and_trusts_mains_acceptance(hooked: HookedRepo) -> None:
    """docs/pre-commit.md: pushed commits are not reviewed again. A branch that merged main re-reviewed
    main's already-pushed commits, took main's new acceptances.json for the branch's own edit of it
    (baseline_changed, distrusted) and blocked the push over code main had already accepted."""
    git(hooked.root, "checkout", "-q", "-b", "feature")
    hooked.stage("app.py", "x = 1\n")
    assert hooked.commit("feature work").returncode == 0
    assert hooked.run("git", "push", "-u", "origin", "feature").returncode == 0

    git(hooked.root, "checkout", "-q", "main")  # main moves on: code with a finding the team accepts
    hooked.stage("client.py", "import requests\nr = requests.get(u, verify=False, timeout=5)\n")
    assert hooked.commit("client", SKIP="review-gate").returncode == 0
    report = hooked.run(sys.executable, "-m", "review_gate", "--offline", "--no-state", "--base", "HEAD~1",
                        "--head", "HEAD", "--format", "json")
    fingerprint = json.loads(report.stdout)["findings"][0]["fingerprint"]
    hooked.repo.write(".review-gate/acceptances.json", json.dumps({"version": 1, "acceptances": [
        {"fingerprint": fingerprint, "reason": "a test server", "who": "lead@example.com", "created": "2026-12-01"}]}))
    git(hooked.root, "add", ".review-gate/acceptances.json")
    assert hooked.commit("accept it", SKIP="review-gate").returncode == 0
    assert hooked.run("git", "push", "--no-verify", "origin", "main").returncode == 0

    git(hooked.root, "checkout", "-q", "feature")
    assert hooked.run("git", "merge", "-q", "--no-edit", "main").returncode == 0
    hooked.stage("app.py", "x = 2\n")
    assert hooked.commit("more feature work").returncode == 0
    pushed = hooked.run("git", "push", "origin", "feature")
    assert pushed.returncode == 0, output(pushed)
    assert "REVIEW: PASS" in output(pushed)
    assert "client.py" not in output(pushed) and "baseline_changed" not in output(pushed)


def _first_push(repo: GitRepo, tmp_path: Path, secret: bool) -> subprocess.CompletedProcess[str]:
    env = tool_env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    local = [{**hook, "language": "system", "verbose": True} for hook in hooks().values()]
    repo.write(".pre-commit-config.yaml", yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}))
    if secret:
        repo.write("deploy/first.pem", PRIVATE_KEY)
    repo.commit("pre-commit config")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo.root, "remote", "add", "origin", str(remote))
    subprocess.run([sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-push"], cwd=repo.root,
                   env=env, capture_output=True, check=True)
    return subprocess.run(["git", "push", "origin", "main"], cwd=repo.root, env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def test_the_first_push_of_a_new_repository_reviews_everything_it_pushes(repo: GitRepo, tmp_path: Path) -> None:
    """pre-commit names no range when the push carries the root commit: every file pushed is reviewed."""
    result = _first_push(repo, tmp_path, secret=False)
    assert result.returncode == 0, output(result)
    assert "REVIEW: PASS" in output(result)


def test_a_secret_in_the_first_push_is_blocked(repo: GitRepo, tmp_path: Path) -> None:
    result = _first_push(repo, tmp_path, secret=True)
    assert result.returncode != 0, output(result)
    assert "deploy/first.pem" in output(result) and "REVIEW: FAIL" in output(result)
    assert git(repo.root, "ls-remote", str(tmp_path / "remote.git")) == ""  # nothing reached the remote
