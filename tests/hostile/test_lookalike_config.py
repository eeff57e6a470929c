"""Freshness is keyed on what judged: the configuration's identity (every file of its directory)
and the bytes of the program a command agent runs. A look-alike configuration (the same JSON
beside a no-op lint.py) records pairs that never pass for the real one's, and a loop session's
pin covers every file of the configuration directory (a module the pinned script imports, a
package run with ``python3 -m``). Real coders (subprocesses), the real CLI, real git."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.hostile.lint_config import FORBIDDEN, GOOD_RGLIB, LINT, NO_OP, lint_agent, look_alike, write_lint_config

# A coder that does not fix app.py. "lookalike DIR": records passing pairs with a look-alike
# configuration in DIR; "rewrite KEY TEXT": rewrites a file of the configuration (named by a key,
# not by its path: an argv word naming it would be pinned for that reason alone) and touches
# app.py, so that the gate has to run the (rewritten) agent again.
CODER = r'''
import json, pathlib, shutil, subprocess, sys
how = sys.argv[1]
if how == "lookalike":
    evil = pathlib.Path(sys.argv[2])
    evil.mkdir(exist_ok=True)
    for path in pathlib.Path(".review-gate").glob("*.json"):
        shutil.copy(path, evil / path.name)
    (evil / "lint.py").write_text(sys.argv[3])
    done = subprocess.run([sys.executable, "-m", "review_gate", "--no-cache", "--config", str(evil)],
                          capture_output=True, text=True)
    print(f"reviewed with a look-alike configuration: exit {done.returncode}")
else:
    target = {"module": ".review-gate/rglib.py", "package": ".review-gate/rgpkg/__main__.py",
              "tools": "tools/lint.py"}[sys.argv[2]]
    pathlib.Path(target).write_text(sys.argv[3])
    app = pathlib.Path("app.py")
    app.write_text(app.read_text() + "# reviewed\n")
    print(f"rewrote {sys.argv[2]}")
'''


def coder(tmp_path: Path, *args: str) -> dict[str, Any]:
    program = tmp_path / "coder.py"
    program.write_text(CODER)
    return {"id": "steerer", "name": "steerer", "description": "a coder that steers its judge", "kind": "command",
            "command": [sys.executable, str(program), *args], "timeout_s": 120}


def decisions(repo: GitRepo, task: str) -> list[str]:
    path = repo.root / ".review-gate" / "review-logs" / f"{task}.jsonl"
    return [json.loads(line)["decision"] for line in path.read_text().splitlines()]


BESIDE = lint_agent(["python3", "lint.py"], cwd="config")  # a look-alike directory runs its own lint.py


def test_pairs_of_a_look_alike_configuration_are_not_reused_by_the_real_one(cli: Any, repo: GitRepo,
                                                                           tmp_path: Path) -> None:
    real = write_lint_config(repo.root / ".review-gate", BESIDE)
    repo.commit("the team's lint")
    repo.write("app.py", FORBIDDEN)
    evil = look_alike(real, tmp_path / "EVIL")
    assert cli("--no-cache", "--config", str(evil)).code == 0  # the no-op lint.py passes it
    again = cli("--format", "json")
    assert again.code == 1, again.err
    [agent] = again.json()["agents"]
    assert agent["status"] == "completed"  # reviewed again, not reused from the look-alike's run
    assert [f["rule_id"] for f in again.json()["findings"]] == ["team-forbidden"]


def test_editing_the_program_a_command_agent_runs_reviews_again(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "lint.py").write_text(NO_OP)
    (tools / "rglib.py").write_text("def bad(line):\n    return 'FORBIDDEN' in line\n")
    config = write_lint_config(tmp_path / "cfg", lint_agent(["python3", str(tools / "lint.py")]), scripts=False)
    repo.write("app.py", FORBIDDEN)
    assert cli("--config", str(config)).code == 0
    (tools / "lint.py").write_text(LINT)  # the same agent entry, another program
    result = cli("--config", str(config), "--format", "json")
    assert result.code == 1, result.err
    assert result.json()["agents"][0]["status"] == "completed"


def test_a_coder_that_records_passing_pairs_with_a_look_alike_never_gets_go(cli: Any, repo: GitRepo,
                                                                           tmp_path: Path) -> None:
    write_lint_config(repo.root / ".review-gate", BESIDE,
                      extra_agents=[coder(tmp_path, "lookalike", str(tmp_path / "EVIL"), NO_OP)])
    repo.commit("the team's lint and a coder")
    repo.write("app.py", FORBIDDEN)
    result = cli("loop", "start", "evil", "--coder", "steerer", "--mode", "automated", "--max-iterations", "2")
    assert result.code == 4, result.err  # the hand-off after two NO_GO, never GO with the line still there
    assert decisions(repo, "evil") == ["NO_GO", "NO_GO"]
    assert (tmp_path / "EVIL" / "lint.py").exists()  # the coder did record its pairs
    assert cli().code == 1  # and a plain run afterwards still fails


@pytest.mark.parametrize(("argv", "cwd", "key", "rewritten", "text"), [
    (["python3", ".review-gate/lint.py"], "repo", "module", "rglib.py", GOOD_RGLIB),
    (["python3", "-m", "rgpkg"], "config", "package", "rgpkg/__main__.py", NO_OP),
    (["python3", "tools/lint.py"], "repo", "tools", "tools/lint.py", NO_OP),
], ids=["a module the script imports", "a package run with -m", "a script of the working tree"])
def test_the_pin_covers_what_a_pinned_program_imports(cli: Any, repo: GitRepo, tmp_path: Path, argv: list[str],
                                                      cwd: str, key: str, rewritten: str, text: str) -> None:
    config = write_lint_config(repo.root / ".review-gate", lint_agent(argv, cwd=cwd),
                               extra_agents=[coder(tmp_path, "rewrite", key, text)])
    (config / "rgpkg").mkdir()
    (config / "rgpkg" / "__main__.py").write_text(LINT)
    repo.write("tools/lint.py", LINT)
    repo.write("tools/rglib.py", (config / "rglib.py").read_text())
    repo.commit("the team's lint and a coder")
    repo.write("app.py", FORBIDDEN)
    result = cli("loop", "start", "pin", "--coder", "steerer", "--mode", "automated", "--max-iterations", "2")
    assert result.code == 4, result.err
    assert decisions(repo, "pin") == ["NO_GO", "NO_GO"]
    review = (repo.root / ".review-gate" / "sessions" / "pin" / "2" / "review.response.md").read_text()
    assert "not the one this loop session started with" in review and rewritten in review


def test_pairs_recorded_in_an_environment_that_steers_the_program_are_not_reused(
        cli: Any, repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PYTHONPATH put first a json module of the coder's: the lint script then prints nothing."""
    write_lint_config(repo.root / ".review-gate")
    repo.commit("the team's lint")
    repo.write("app.py", FORBIDDEN)
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "json.py").write_text("def dumps(value):\n    return '{\"findings\": []}'\n")
    monkeypatch.setenv("PYTHONPATH", str(evil))
    assert cli().code == 0  # steered: the lint script's json is the coder's
    monkeypatch.delenv("PYTHONPATH")
    again = cli("--format", "json")
    assert again.code == 1, again.err
    assert again.json()["agents"][0]["status"] == "completed"


def test_the_run_state_alone_in_review_gate_leaves_the_builtin_configurations_pairs_fresh(
        cli: Any, repo: GitRepo) -> None:
    """The first run creates .review-gate/state.db, and the second finds a .review-gate/ that holds
    no configuration of its own: still the built-in one, whose pairs stay fresh."""
    repo.write("app.py", "x = eval(user_input)\n")
    assert not (repo.root / ".review-gate").exists()
    assert cli("--offline").code == 1
    assert (repo.root / ".review-gate" / "state.db").exists()
    again = cli("--offline", "--format", "json")
    assert again.code == 1
    assert {a["status"] for a in again.json()["agents"] if a["kind"] == "pattern"} == {"cached"}
