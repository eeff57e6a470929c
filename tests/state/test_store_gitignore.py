"""Running the gate must not leave the working tree dirty."""

from __future__ import annotations

from tests.conftest import GitRepo


def test_the_run_state_leaves_git_status_clean(cli, repo: GitRepo) -> None:
    assert repo.git("status", "--porcelain") == ""
    assert cli("--format", "json", "--output", "/dev/null").code == 0
    assert (repo.root / ".review-gate" / "state.db").exists()
    assert repo.git("status", "--porcelain") == ""
    assert cli("init").code == 0  # the store's .gitignore is not in init's way
    assert "state.db" in (repo.root / ".review-gate" / ".gitignore").read_text()
    assert ".review-gate/state.db" not in repo.git("status", "--porcelain", "--untracked-files=all")
