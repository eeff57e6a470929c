"""An automated coder must not reach GO by moving the goalposts instead of fixing the code:
weakening the configuration (the trusted side) or committing the change away (the base).
Each session pins both at `loop start`; real coders (subprocesses), the real CLI, real git."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.loop.conftest import BUILTIN, FLAWED, command_agent, write_config

# On its first call removes the TLS rule from the configuration (instead of fixing app.py); on its
# second restores the file with git and fixes the code. argv[1]: a folder to count calls in.
WEAKENING_CODER = r'''
import json, pathlib, subprocess, sys
records = pathlib.Path(sys.argv[1])
records.mkdir(exist_ok=True)
n = len(list(records.glob("prompt-*.md"))) + 1
(records / f"prompt-{n}.md").write_text(sys.stdin.read())
rules = pathlib.Path(".review-gate/review-rules.json")
if n == 1:
    data = json.loads(rules.read_text())
    data["rules"] = [r for r in data["rules"] if r["id"] != "sec-tls-verify-01"]
    rules.write_text(json.dumps(data))
    print("removed the TLS rule")
else:
    subprocess.run(["git", "checkout", "--", str(rules)], check=True)
    app = pathlib.Path("app.py")
    app.write_text(app.read_text().replace("verify=False", "verify=True"))
    print("restored the rules and fixed app.py")
'''

# Commits the change as it is, on the branch checked out (argv[1]: "main" or "feature"; "move"
# also moves main to the new commit).
COMMITTING_CODER = r'''
import subprocess, sys
how = sys.argv[1]
git = lambda *a: subprocess.run(["git", *a], check=True, capture_output=True)
git("add", "app.py")
git("commit", "-qm", "wip")
if how == "move":
    git("branch", "-f", "main", "HEAD")
print("committed")
'''


def loop(cli: Any, repo: GitRepo, *args: str) -> Any:
    return cli("loop", *args)


def decisions(repo: GitRepo, task: str) -> list[dict[str, Any]]:
    path = repo.root / ".review-gate" / "review-logs" / f"{task}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def in_repo_config(repo: GitRepo, tmp_path: Path, agents: list[dict[str, Any]]) -> None:
    """The trial's setup: the configuration committed in the repository's .review-gate/."""
    config = repo.root / ".review-gate"
    write_config(config, tmp_path / "unused", tmp_path / "unused-approvals", agents=agents)
    (config / "review-rules.json").write_text((BUILTIN / "review-rules.json").read_text())
    repo.commit("review-gate configuration")


def test_a_coder_that_weakens_the_configuration_never_gets_go(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    program = tmp_path / "weakening.py"
    program.write_text(WEAKENING_CODER)
    in_repo_config(repo, tmp_path, [command_agent("weakener", [sys.executable, str(program),
                                                               str(tmp_path / "records")])])
    repo.write("app.py", FLAWED)
    result = loop(cli, repo, "start", "weak", "--coder", "weakener", "--mode", "automated", "--max-iterations", "2")
    assert result.code == 4, result.err  # the hand-off: never GO while the configuration is not the pinned one
    first, second = decisions(repo, "weak")
    assert (first["decision"], second["decision"]) == ("NO_GO", "NO_GO")
    review = (repo.root / ".review-gate" / "sessions" / "weak" / "2" / "review.response.md").read_text()
    assert review.startswith("@@@REVIEW_META\nverdict: FAIL\n")
    assert "not the one this loop session started with" in review and "review-rules.json" in review
    assert "verify=False" in (repo.root / "app.py").read_text()


def test_restoring_the_configuration_and_fixing_the_code_gets_go(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    program = tmp_path / "weakening.py"
    program.write_text(WEAKENING_CODER)
    in_repo_config(repo, tmp_path, [command_agent("weakener", [sys.executable, str(program),
                                                               str(tmp_path / "records")])])
    repo.write("app.py", FLAWED)
    result = loop(cli, repo, "start", "restored", "--coder", "weakener", "--mode", "automated")
    assert result.code == 0, result.err
    assert [d["decision"] for d in decisions(repo, "restored")] == ["NO_GO", "NO_GO", "GO"]
    second_prompt = (tmp_path / "records" / "prompt-2.md").read_text()
    assert "restore the configuration exactly as it was" in second_prompt
    assert "review-rules.json" in second_prompt


@pytest.mark.parametrize("how", ["main", "feature", "move"])
def test_a_coder_that_commits_the_change_cannot_empty_it(cli: Any, repo: GitRepo, tmp_path: Path, how: str) -> None:
    program = tmp_path / "committing.py"
    program.write_text(COMMITTING_CODER)
    write_config(tmp_path / "cfg", tmp_path / "records", tmp_path / "approvals", agents=[
        command_agent("committer", [sys.executable, str(program), how])])
    if how in ("feature", "move"):
        repo.branch("feature")
    repo.write("app.py", FLAWED)
    result = cli("loop", "start", "wip", "--coder", "committer", "--mode", "automated", "--max-iterations", "2",
                 "--config", str(tmp_path / "cfg"))
    assert result.code == 4, result.err
    assert [d["decision"] for d in decisions(repo, "wip")] == ["NO_GO", "NO_GO"]
    assert repo.git("log", "-1", "--format=%s").strip() == "wip"  # the coder did commit
    findings = json.loads((repo.root / ".review-gate" / "sessions" / "wip" / "2" / "review.findings.json")
                          .read_text())["findings"]
    assert any(f["file"] == "app.py" for f in findings)


def test_a_coder_that_checks_out_an_older_commit_cannot_hide_what_it_brings_back(cli: Any, repo: GitRepo,
                                                                                   tmp_path: Path) -> None:
    """The flaw was fixed on main; the coder checks out the commit before the fix: compared
    with its merge-base (that older commit) nothing changed, compared with the pinned base the
    flaw is back."""
    repo.write("app.py", FLAWED)
    flawed = repo.commit("the flaw")
    repo.write("app.py", FLAWED.replace("verify=False", "verify=True"))
    repo.commit("fixed")
    program = tmp_path / "older.py"
    program.write_text(f"import os, subprocess\nos.remove('client.py')\n"
                       f"subprocess.run(['git', 'checkout', '-q', {flawed!r}], check=True)\nprint('checked out')\n")
    write_config(tmp_path / "cfg", tmp_path / "records", tmp_path / "approvals", agents=[
        command_agent("older", [sys.executable, str(program)])])
    repo.write("client.py", FLAWED)  # the change under review: NO_GO, then the coder "fixes" it
    result = cli("loop", "start", "older", "--coder", "older", "--mode", "automated", "--max-iterations", "2",
                 "--config", str(tmp_path / "cfg"))
    assert "verify=False" in (repo.root / "app.py").read_text()
    assert result.code == 4, result.err
    assert [d["decision"] for d in decisions(repo, "older")][-1] == "NO_GO"


# Accepts every finding of the last run with the gate's own CLI instead of fixing the code
# (what a coding CLI without the hooks could do).
ACCEPTING_CODER = r'''
import json, subprocess, sys
gate = [sys.executable, "-m", "review_gate"]
last = json.loads(subprocess.run([*gate, "show", "last", "--format", "json"], capture_output=True, text=True,
                                 check=True).stdout)
for finding in last["findings"]:
    subprocess.run([*gate, "accept", finding["fingerprint"], "--reason", "fine"], capture_output=True, check=True)
print("accepted")
'''


def test_a_coder_that_accepts_its_own_findings_never_gets_go(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    program = tmp_path / "accepting.py"
    program.write_text(ACCEPTING_CODER)
    write_config(tmp_path / "cfg", tmp_path / "records", tmp_path / "approvals", agents=[
        command_agent("acceptor", [sys.executable, str(program)])])
    repo.write("app.py", FLAWED)
    result = cli("loop", "start", "acc", "--coder", "acceptor", "--mode", "automated", "--max-iterations", "2",
                 "--config", str(tmp_path / "cfg"))
    accepted = cli("accepted")
    assert "fine" in accepted.out, accepted.out  # the coder did accept
    assert result.code == 4, result.err
    assert [d["decision"] for d in decisions(repo, "acc")] == ["NO_GO", "NO_GO"]
    assert "verify=False" in (repo.root / "app.py").read_text()
