"""Running the gate must not leave the working tree dirty."""

from __future__ import annotations

from tests.conftest import GitRepo


def test_the_run_state_leaves_git_status_clean(cli, repo: GitRepo) -> None:
    assert repo.git("status", "--porcelain") == ""
    assert cli("--format", "json", "--output", "/dev/null").code == 0
    assert (repo.root / ".review-gate" / "state.db").exists()
    assert repo.git("status", "--porcelain") == ""
    assert cli("init", "--full").code == 0  # the store's .gitignore is not in init's way
    assert "state.db" in (repo.root / ".review-gate" / ".gitignore").read_text()
    assert ".review-gate/state.db" not in repo.git("status", "--porcelain", "--untracked-files=all")


def test_a_lost_gitignore_is_written_again_and_the_state_stays_ours(cli, repo: GitRepo) -> None:
    """A trial: `git clean -fd` (or `git stash -u`) removed the .gitignore `init` wrote and nobody
    committed; the state became an untracked file every run took for the change's own: no history,
    local acceptances ignored, and the JSON report the gate wrote reviewed as code on the next run."""
    import json

    repo.write("app.py", "import requests\nr = requests.get(url, verify=False, timeout=5)\n")
    assert cli("--offline").code == 1
    (repo.root / ".review-gate" / ".gitignore").unlink()
    assert cli("--offline", "--format", "json", "--output", "report.json").code == 1
    again = cli("--offline", "--format", "json")
    report = json.loads(again.out)
    assert {f["file"] for f in report["findings"]} == {"app.py"}, report["findings"]
    assert "state_changed" not in {g["kind"] for g in report["gaps"]}
    assert (repo.root / ".review-gate" / ".gitignore").exists()
    listed = cli("history").out
    assert len([line for line in listed.splitlines() if "needs_fixes" in line]) == 3, listed
