"""The action's gap step, run for real after the gate step (both taken from action.yml) in a pull
request clone whose change adds a file no domain claims: one issue per open gap with a fake
``gh`` that records every call, each linked in the run state, never opened twice: not in the
same job, and not in a later job whose run state is new (the issue's body carries the gap id)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.integrations.conftest import action_steps, calls, git, missing_formats, run, tool_env

RENDERED = missing_formats("github", "markdown")
pytestmark = pytest.mark.skipif(bool(RENDERED), reason=f"output formats not written yet: {', '.join(RENDERED)}")
ENV = {"GH_TOKEN": "fake-token", "GH_REPO": "acme/shop"}


@pytest.fixture(scope="module")
def steps() -> dict[str, dict[str, Any]]:
    return action_steps("gate", "gaps")


@pytest.fixture
def pr(repo: GitRepo, tmp_path: Path) -> Path:
    """A pull request that adds a file of a kind no domain claims; its name is shell code."""
    repo.write("app.py", "x = 1\n")
    repo.commit("app")
    clone = tmp_path / "workspace"
    git(tmp_path, "clone", "-q", str(repo.root), str(clone))
    git(clone, "checkout", "-q", "-b", "feature")
    (clone / "totals.xyz").write_text("id,total\n1,10\n", encoding="utf-8")
    (clone / "$(touch pwned).xyz").write_text("x\n", encoding="utf-8")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "totals")
    return clone


def recorded(cwd: Path, config: str) -> list[dict[str, Any]]:
    result = subprocess.run(["review-gate", "gaps", "--config", config, "--all", "--format", "json"], cwd=cwd,
                            env=tool_env(), capture_output=True, text=True, timeout=60, check=True)
    found: list[dict[str, Any]] = json.loads(result.stdout)["gaps"]
    return found


def test_each_open_gap_is_opened_once_and_linked(steps, pr: Path, tmp_path: Path, gh: Path) -> None:
    gate = run(steps["gate"], pr, tmp_path, gh, {})
    assert gate.outputs["decision"] != "error", gate.err
    env = {**ENV, "REVIEW_GATE_CONFIG_DIR": gate.outputs["config-dir"]}
    first = run(steps["gaps"], pr, tmp_path, gh, env)
    assert first.code == 0, first.err
    assert first.outputs["opened"] == "1"
    listed, created = calls(gh)
    assert listed["argv"][:2] == ["issue", "list"] and created["argv"][:2] == ["issue", "create"]
    assert (created["token"], created["repo"]) == ("fake-token", "acme/shop")
    [gap] = [g for g in recorded(pr, gate.outputs["config-dir"]) if g["kind"] == "unclassified_file"]
    assert gap["issue_url"] == "https://github.com/acme/shop/issues/1"
    argv = created["argv"]
    assert argv[argv.index("--title") + 1] == "Review configuration gap (unclassified_file): **/*.xyz"
    assert created["body"].startswith(f"<!-- review-gate-gap:{gap['id']} -->\n")
    assert "review-gate gaps --apply" in created["body"] and "$(touch pwned).xyz" in created["body"]
    assert not (pr / "pwned").exists(), "a path ran as shell code"

    again = run(steps["gaps"], pr, tmp_path, gh, env)
    assert again.code == 0, again.err
    assert again.outputs["opened"] == "0" and len(calls(gh)) == 2  # linked: not looked up, not opened


def test_a_later_job_with_a_new_run_state_links_the_issue_it_finds(steps, pr: Path, tmp_path: Path,
                                                                   gh: Path) -> None:
    gate = run(steps["gate"], pr, tmp_path, gh, {})
    assert run(steps["gaps"], pr, tmp_path, gh, {**ENV, "REVIEW_GATE_CONFIG_DIR": gate.outputs["config-dir"]}).code == 0
    subprocess.run(["rm", "-rf", str(pr / ".review-gate")], check=True)  # a new runner: no run state
    gate = run(steps["gate"], pr, tmp_path, gh, {})
    later = run(steps["gaps"], pr, tmp_path, gh, {**ENV, "REVIEW_GATE_CONFIG_DIR": gate.outputs["config-dir"]})
    assert later.code == 0, later.err
    assert later.outputs["opened"] == "0"
    assert [c["argv"][1] for c in calls(gh)] == ["list", "create", "list"], "the issue was opened twice"


def test_the_step_runs_only_when_asked_and_after_a_gate_that_decided(steps) -> None:
    condition = " ".join(steps["gaps"]["if"].split())
    assert "inputs.open-gap-issues == 'true'" in condition
    assert "steps.gate.outputs.decision != 'error'" in condition and "!cancelled()" in condition
    assert steps["gaps"]["defaults"]["open-gap-issues"] == "false"
    assert steps["gaps"]["env"]["GH_TOKEN"] == "${{ github.token }}"
