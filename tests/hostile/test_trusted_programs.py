"""With a configuration from outside the working tree (``--config DIR``), a command agent runs
only what that configuration holds: a word naming ``.review-gate/`` resolves against DIR, and a
program or script the change could rewrite is refused (exit 2, naming the agent and the fix)
before anything runs. Real CLI, real git repository, real scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.hostile.lint_config import FORBIDDEN, NO_OP, lint_agent, write_lint_config

MARKER = "import pathlib; pathlib.Path({!r}).write_text('ran')\n"


def rewritten(repo: GitRepo, name: str, marker: Path) -> None:
    """The change's own copy of a script: prints no findings, and leaves a mark when it runs."""
    repo.write(name, MARKER.format(str(marker)) + NO_OP)


def test_a_script_named_in_review_gate_runs_from_the_configuration_not_the_change(
        cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    config = write_lint_config(tmp_path / "trusted")
    marker = tmp_path / "the-change-ran"
    rewritten(repo, ".review-gate/lint.py", marker)
    repo.write("app.py", FORBIDDEN)
    result = cli("--config", str(config), "--format", "json")
    assert result.code == 1, result.err
    [finding] = result.json()["findings"]
    assert (finding["file"], finding["severity"], finding["rule_id"]) == ("app.py", "critical", "team-forbidden")
    assert not marker.exists()  # the change's lint.py never ran


@pytest.mark.parametrize(("argv", "word"), [
    (["python3", "tools/lint.py"], "tools/lint.py"),
    (["./tools/lint.sh"], "./tools/lint.sh"),
    (["sh", "tools/lint.sh"], "tools/lint.sh"),
    (["env", "LC_ALL=C", "python3", "tools/lint.py"], "tools/lint.py"),
])
def test_a_program_or_script_of_the_working_tree_is_refused(cli: Any, repo: GitRepo, tmp_path: Path,
                                                           argv: list[str], word: str) -> None:
    config = write_lint_config(tmp_path / "trusted", lint_agent(argv))
    marker = tmp_path / "the-change-ran"
    for name in ("tools/lint.py", "tools/lint.sh"):
        rewritten(repo, name, marker)
    repo.write("app.py", FORBIDDEN)
    result = cli("--config", str(config))
    assert result.code == 2, result.err
    first, fix = result.err.strip().splitlines()[:2]
    assert "review-agents.json: /agents/0/command/" in first and "agent 'team-lint'" in first, first
    assert word in first and "working tree" in first, first
    assert fix.startswith("  fix: keep the") and "configuration directory" in fix, fix
    assert not marker.exists()


def test_python_m_in_the_repository_is_refused_unless_the_tree_is_kept_off_the_module_path(
        cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "the-change-ran"
    repo.write("json.py", MARKER.format(str(marker)))  # shadows the standard library for `python3 -m json.tool`
    repo.write("app.py", "x = 1\n")
    refused = write_lint_config(tmp_path / "refused", lint_agent(["python3", "-m", "json.tool", "--help"]))
    result = cli("--config", str(refused))
    assert result.code == 2 and "python -m MODULE" in result.err and "add -P" in result.err, result.err
    assert not marker.exists()
    safe = write_lint_config(tmp_path / "safe", lint_agent(["python3", "-P", "-c", NO_OP]))
    assert cli("--config", str(safe)).code == 0
    assert not marker.exists()


def test_inline_code_that_names_the_review_gate_folder_is_refused(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    config = write_lint_config(tmp_path / "trusted", lint_agent(["sh", "-c", "python3 .review-gate/lint.py"]))
    result = cli("--config", str(config))
    assert result.code == 2 and "inline code names .review-gate/" in result.err, result.err


def test_a_script_the_configuration_lacks_is_refused_not_taken_from_the_change(
        cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    config = write_lint_config(tmp_path / "trusted", scripts=False)
    marker = tmp_path / "the-change-ran"
    rewritten(repo, ".review-gate/lint.py", marker)
    result = cli("--config", str(config))
    assert result.code == 2, result.err
    assert "names .review-gate/lint.py, which the configuration in use" in result.err
    assert "fix: put lint.py in " in result.err
    assert not marker.exists()


def test_a_configuration_inside_the_working_tree_runs_its_scripts_as_before(cli: Any, repo: GitRepo) -> None:
    write_lint_config(repo.root / ".review-gate")
    repo.commit("the team's lint")
    repo.write("app.py", FORBIDDEN)
    result = cli("--format", "json")
    assert result.code == 1, result.err
    assert [f["rule_id"] for f in result.json()["findings"]] == ["team-forbidden"]


def test_cwd_config_runs_the_configurations_script(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    config = write_lint_config(tmp_path / "trusted", lint_agent(["python3", "lint.py"], cwd="config"))
    repo.write("app.py", FORBIDDEN)
    report = cli("--config", str(config), "--format", "json")
    assert report.code == 1 and json.loads(report.out)["findings"][0]["rule_id"] == "team-forbidden"
