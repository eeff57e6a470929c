"""What the gate takes as its own files, and what a change can make it take for them.

The gate leaves its own files out of the review (their changes are gaps): the configuration in
use, the baseline, the run state, the loop's files and the reports it wrote. Each test here is
a change that once made the gate leave real code out of the review, or take a directory of code
for its configuration, and so pass with a secret or an ``eval`` in place.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.hostile.test_hook_blocks import host_reaction
from tests.integrations.conftest import tool_env

KEY = "AKIAIOSFODNN7EXAMPLQ"  # shaped like an AWS access key id: sec-aws-key-01, critical
SECRET = f'k = "{KEY}"\n'


def report_of(result: Any) -> dict[str, Any]:
    assert result.code in (0, 1, 3), result.out + result.err
    report: dict[str, Any] = json.loads(result.out)
    return report


def reviewed(report: dict[str, Any]) -> set[str]:
    return {f["path"] for f in report["classification"]["files"]}


def fired(report: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(f["file"], f["rule_id"]) for f in report["findings"]}


def gaps_of(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [g for g in report["gaps"] if g["kind"] == kind]


# ---------------------------------------------------------------- 1. a symlinked .review-gate


def test_a_symlinked_gate_directory_exempts_nothing(cli: Any, repo: GitRepo) -> None:
    repo.write("src/s.py", SECRET)
    (repo.root / ".review-gate").symlink_to("src", target_is_directory=True)
    result = cli("--offline", "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["gaps"]
    assert ("src/s.py", "sec-aws-key-01") in fired(report)
    assert "src/s.py" in reviewed(report) and ".review-gate" in reviewed(report)  # the link is a change too
    [gap] = [g for g in gaps_of(report, "config_changed") if g["subject"] == ".review-gate"]
    assert "symbolic link" in gap["reason"] and "not followed" in gap["reason"]
    assert not (repo.root / "src" / "state.db").exists()  # the state is not written through the link
    assert not (repo.root / "src" / ".gitignore").exists()


def test_a_symlinked_gate_directory_is_not_the_configuration(cli: Any, repo: GitRepo) -> None:
    """The directory the link names would let everything through; it is not read as configuration."""
    repo.write("weak/review-gate.json", json.dumps({"version": 1, "gate": {"fail_on": "never"}}))
    repo.write("weak/app.py", SECRET)
    (repo.root / ".review-gate").symlink_to("weak", target_is_directory=True)
    result = cli("--offline", "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["gaps"]
    assert ("weak/app.py", "sec-aws-key-01") in fired(report)
    assert "weak/review-gate.json" in reviewed(report)  # ordinary JSON, reviewed as code


def test_a_symlinked_gate_directory_committed_earlier_is_still_reported(cli: Any, repo: GitRepo) -> None:
    """The link on the base branch is not in the change, yet it still decides nothing: its target
    is reviewed and the report says why the configuration there is not used."""
    repo.write("src/app.py", "x = 1\n")
    (repo.root / ".review-gate").symlink_to("src", target_is_directory=True)
    repo.commit("link")
    repo.write("src/s.py", SECRET)
    result = cli("--offline", "--format", "json")
    report = report_of(result)
    assert result.code == 1 and ("src/s.py", "sec-aws-key-01") in fired(report)
    assert any(g["subject"] == ".review-gate" and "symbolic link" in g["reason"]
               for g in gaps_of(report, "config_changed"))


def test_the_stop_hook_blocks_a_secret_behind_a_symlinked_gate_directory(repo: GitRepo) -> None:
    repo.write("src/s.py", SECRET)
    (repo.root / ".review-gate").symlink_to("src", target_is_directory=True)
    payload = {"hook_event_name": "Stop", "cwd": str(repo.root), "session_id": "s", "stop_hook_active": False}
    done = subprocess.run([sys.executable, "-m", "review_gate", "hook", "claude-code"],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=120, env=tool_env(),
                          cwd=repo.root, check=False)
    reaction, how = host_reaction(done, "Stop")
    assert (done.returncode, reaction) == (0, "block"), done.stderr.decode()
    assert "src/s.py:1 critical sec-aws-key-01" in how


def test_a_state_path_through_a_link_inside_the_repository_runs_without_state(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", "x = 1\n")
    repo.write("cfg/review-gate.json", json.dumps({"version": 1, "state_path": "var/state.db"}))
    (repo.root / "data").mkdir()
    (repo.root / "var").symlink_to("data", target_is_directory=True)
    result = cli("--offline", "--config", str(repo.root / "cfg"), "--format", "json")
    report = report_of(result)
    assert list((repo.root / "data").iterdir()) == []  # nothing written through the link
    [gap] = gaps_of(report, "state_changed")
    assert gap["subject"] == "var" and "symbolic link" in gap["reason"]
    history = cli("history", "--config", str(repo.root / "cfg"))
    assert history.code == 2 and "symbolic link" in history.err and "fix:" in history.err


def test_a_configuration_file_read_through_a_link_is_reviewed_and_its_change_said(cli: Any, repo: GitRepo) -> None:
    """review-rules.json -> ../src/rules.json: git shows an edit of the rules as an edit of code.
    It is reviewed as code, not left out, and the report says it changes the gate."""
    assert cli("init", "--full").code == 0
    (repo.root / "src").mkdir()
    (repo.root / ".review-gate" / "review-rules.json").rename(repo.root / "src" / "rules.json")
    (repo.root / ".review-gate" / "review-rules.json").symlink_to("../src/rules.json")
    repo.commit("rules kept with the code")
    rules = json.loads((repo.root / "src" / "rules.json").read_text())
    rules["rules"] = [r for r in rules["rules"] if r["id"] != "sec-py-eval-01"]
    repo.write("src/rules.json", json.dumps(rules, indent=2))
    report = report_of(cli("--offline", "--format", "json"))
    assert "src/rules.json" in reviewed(report)
    [gap] = [g for g in gaps_of(report, "config_changed") if g["subject"] == "src/rules.json"]
    assert "review-rules.json" in gap["reason"] and "weaken" in gap["reason"]


# ---------------------------------------------------------------- 2. only the gate's own files are its own


def test_code_in_the_gate_directory_is_reviewed_when_the_configuration_is_elsewhere(
        cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    repo.write(".review-gate/deploy.py", SECRET)
    repo.write(".review-gate/review-rules.json", json.dumps({"version": 1, "rules": []}))
    result = cli("--offline", "--config", str(trusted), "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["gaps"]
    assert (".review-gate/deploy.py", "sec-aws-key-01") in fired(report)
    assert ".review-gate/review-rules.json" not in reviewed(report)  # the repository's own config: a gap
    [gap] = gaps_of(report, "config_changed")
    assert gap["subject"] == ".review-gate" and "review-rules.json" in gap["reason"]
    assert "deploy.py" not in gap["reason"]


def test_code_in_the_configuration_in_use_is_reviewed(cli: Any, repo: GitRepo) -> None:
    repo.write(".review-gate/deploy.py", SECRET)
    repo.write(".review-gate/review-gate.json", json.dumps({"version": 1}))
    result = cli("--offline", "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["gaps"]
    assert (".review-gate/deploy.py", "sec-aws-key-01") in fired(report)
    assert ".review-gate/review-gate.json" not in reviewed(report)


def test_the_files_the_configuration_names_are_its_own_and_no_others(cli: Any, repo: GitRepo) -> None:
    """An agent's instructions and the loop's templates belong to the configuration; a Markdown
    file nothing names is reviewed like any other."""
    assert cli("init", "--full").code == 0
    repo.commit("adopt review-gate")
    agents = json.loads((repo.root / ".review-gate" / "review-agents.json").read_text())
    agents["agents"].append({"id": "extra-reviewer", "name": "Extra", "description": "an extra lens",
                             "kind": "llm", "provider": "openai", "model": "m", "api_key_env": "NO_SUCH_KEY_VAR",
                             "instructions": "instructions/extra.md", "required": False})
    repo.write(".review-gate/review-agents.json", json.dumps(agents))
    repo.write(".review-gate/instructions/extra.md", f"Flag keys like {KEY}.\n")
    repo.write(".review-gate/loop/plan.md", "Plan {{task}}.\n")
    repo.write(".review-gate/notes.md", f"token {KEY}\n")
    result = cli("--offline", "--format", "json")
    report = report_of(result)
    assert reviewed(report) == {".review-gate/notes.md"}
    assert fired(report) == {(".review-gate/notes.md", "sec-aws-key-01")}
    [gap] = gaps_of(report, "config_changed")
    assert ".review-gate/instructions/extra.md" in gap["files"] and ".review-gate/loop/plan.md" in gap["files"]


def test_a_script_a_command_agent_runs_from_the_configuration_is_its_own(cli: Any, repo: GitRepo) -> None:
    """docs/loop.md keeps a coder script beside its agent: the configuration runs it, so it is
    configuration (a change to it is a gap), not code; a script nothing runs is code."""
    assert cli("init", "--full").code == 0
    agents = json.loads((repo.root / ".review-gate" / "review-agents.json").read_text())
    agents["agents"] += [
        {"id": "fixer", "name": "Fixer", "description": "a coder", "kind": "command",
         "command": ["sh", ".review-gate/fix.sh"]},
        {"id": "linter", "name": "Linter", "description": "a linter", "kind": "command", "cwd": "config",
         "command": ["sh", "-c", "true", "tools/lint.sh"]}]
    repo.write(".review-gate/review-agents.json", json.dumps(agents))
    repo.commit("adopt review-gate")
    for name in ("fix.sh", "tools/lint.sh", "other.sh"):
        repo.write(f".review-gate/{name}", f"echo {KEY}\n")
    report = report_of(cli("--offline", "--format", "json"))
    assert reviewed(report) == {".review-gate/other.sh"}
    [gap] = gaps_of(report, "config_changed")
    assert ".review-gate/fix.sh" in gap["files"] and ".review-gate/tools/lint.sh" in gap["files"]


def test_loop_files_are_its_own_only_by_their_shape(cli: Any, repo: GitRepo) -> None:
    repo.write(".review-gate/sessions/t1/1/plan.prompt.md", f"quoted {KEY}\n")
    repo.write(".review-gate/review-logs/t1.jsonl", "{}\n")
    repo.write(".review-gate/sessions/t1/1/tool.py", SECRET)
    repo.git("add", "-f", ".review-gate")
    result = cli("--offline", "--staged", "--format", "json")
    report = report_of(result)
    assert reviewed(report) == {".review-gate/sessions/t1/1/tool.py"}
    assert result.code == 1


def test_a_report_says_how_many_own_files_it_left_out(cli: Any, repo: GitRepo) -> None:
    """The gate's files a working-tree review finds untracked (a change commits none of them, so
    not even the secret rules read them)."""
    assert cli("init", "--full").code == 0
    text = cli("--offline")
    assert text.code == 0, text.out + text.err
    assert "the diff changes no file" not in text.out
    files = len(repo.git("ls-files", "--others", "--exclude-standard", ".review-gate").splitlines())
    assert files > 5
    assert f"{files} of review-gate's own files left out" in text.out, text.out
    report = report_of(cli("--offline", "--format", "json"))
    assert report["coverage"]["files_left_out"] == files
    markdown = cli("--offline", "--format", "markdown")
    assert "the diff changes no file" not in markdown.out and f"{files} of review-gate's own files" in markdown.out
    agent = cli("--offline", "--format", "agent")
    assert "touches no file" not in agent.out and f"{files} of review-gate's own files" in agent.out


def test_a_sweep_says_how_many_own_files_it_left_out(cli: Any, repo: GitRepo) -> None:
    """A sweep leaves the gate's own files git does not track out before planning: live and
    through a batch, the report counts them instead of saying the change touches no file."""
    assert cli("init", "--full").code == 0
    files = len(repo.git("ls-files", "--others", "--exclude-standard", ".review-gate").splitlines())
    text = cli("sweep", ".review-gate", "--offline")
    assert text.code == 0, text.out + text.err
    assert "the diff changes no file" not in text.out
    assert f"Nothing to review: the change touches only review-gate's own files; {files} of" in text.out, text.out
    sent = json.loads(cli("batch", "submit", "--sweep", ".review-gate", "--no-cache", "--format", "json").out)
    assert sent["requests"] == 0 and sent["finished"]
    shown = report_of(cli("show", sent["run_id"], "--format", "json"))
    assert shown["coverage"]["files_left_out"] == files


def test_the_loop_does_not_write_through_a_link_inside_the_repository(review_gate_bin: list[str], repo: GitRepo,
                                                                       tmp_path: Path) -> None:
    from tests.loop.conftest import write_config

    (repo.root / "src").mkdir()
    (repo.root / ".review-gate").mkdir()
    (repo.root / ".review-gate" / "sessions").symlink_to("../src", target_is_directory=True)
    write_config(tmp_path / "cfg", tmp_path / "records", tmp_path / "approvals")
    repo.write("app.py", "x = 1\n")
    result = subprocess.run([*review_gate_bin, "loop", "start", "linked", "--config", str(tmp_path / "cfg")],
                            cwd=repo.root, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2, result.stderr
    assert ".review-gate/sessions is a symbolic link" in result.stderr
    assert list((repo.root / "src").iterdir()) == []


# ---------------------------------------------------------------- 3. scripts without a known extension

SCRIPT = "#!/usr/bin/env python3\nx = eval(input())\nr = requests.get(u, verify=False, timeout=5)\n"


def test_a_python_script_without_an_extension_gets_the_python_review(cli: Any, repo: GitRepo) -> None:
    repo.write("bin/deploy", SCRIPT)
    result = cli("--offline", "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["gaps"]
    assert {("bin/deploy", "sec-py-eval-01"), ("bin/deploy", "sec-tls-verify-01")} <= fired(report)
    assert report["classification"]["files"][0]["domains"] == ["python"]
    assert not gaps_of(report, "unclassified_file")


def test_a_script_is_classified_when_the_change_does_not_show_its_first_line(cli: Any, repo: GitRepo) -> None:
    """Line 1 is not in the diff: it is read from the new content, in the working tree and in a range."""
    repo.write("bin/deploy", "#!/usr/bin/python3.11\n" + "".join(f"step_{n} = {n}\n" for n in range(20)))
    repo.commit("a script")
    repo.branch("feature")
    with (repo.root / "bin" / "deploy").open("a") as handle:
        handle.write("x = eval(input())\n")
    worktree = report_of(cli("--offline", "--base", "main", "--format", "json"))
    assert ("bin/deploy", "sec-py-eval-01") in fired(worktree)
    repo.commit("eval")
    ranged = report_of(cli("--offline", "--base", "main", "--head", "HEAD", "--format", "json"))
    assert ("bin/deploy", "sec-py-eval-01") in fired(ranged)
    assert ranged["classification"]["files"][0]["domains"] == ["python"]


def test_a_shell_script_without_an_extension_gets_the_shell_review(cli: Any, repo: GitRepo) -> None:
    repo.write("bin/setup", "#!/bin/bash\nchmod 777 /srv/app\n")
    report = report_of(cli("--offline", "--format", "json"))
    assert ("bin/setup", "sec-chmod-777-01") in fired(report)  # a rule for *.sh: the script matches it too
    assert "infra-patterns" in {a["id"] for a in report["agents"]}


def test_a_pyw_file_is_python(cli: Any, repo: GitRepo) -> None:
    repo.write("gui/app.pyw", "x = eval(input())\n")
    report = report_of(cli("--offline", "--format", "json"))
    assert ("gui/app.pyw", "sec-py-eval-01") in fired(report)


def test_a_script_reviewed_before_its_domain_claimed_it_is_reviewed_again(cli: Any, repo: GitRepo,
                                                                          tmp_path: Path) -> None:
    """The names a script's rules match it by follow the domains: a cached pair does not hide
    the python rules the script meets once its interpreter is claimed."""
    domains = json.loads((Path(__file__).parents[2] / "config" / "review-domains.json").read_text())
    for domain in domains["domains"]:
        domain.pop("shebangs", None)
    unclaimed = tmp_path / "unclaimed"
    unclaimed.mkdir()
    (unclaimed / "review-domains.json").write_text(json.dumps(domains))
    repo.write("tools/deploy", "#!/usr/bin/env python3\nprint(token)\n")
    before = report_of(cli("--offline", "--config", str(unclaimed), "--format", "json"))
    assert ("tools/deploy", "hyg-debug-print-01") not in fired(before)
    assert "hygiene-patterns" in {a["id"] for a in before["agents"]}  # it saw the script, under no *.py rule
    after = report_of(cli("--offline", "--format", "json"))
    assert ("tools/deploy", "hyg-debug-print-01") in fired(after)


def test_a_domain_s_shebangs_are_checked(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "review-domains.json").write_text(json.dumps({"version": 1, "domains": [
        {"id": "python", "description": "py", "paths": ["*.py"], "shebangs": ["python3", "py thon"],
         "risk_weight": 3}]}))
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 2
    assert "review-domains.json" in result.err and "/domains/0/shebangs/1" in result.err


@pytest.mark.parametrize("name", ["app.py ", "app.py.", "app.py. . "])
def test_a_name_ending_in_spaces_or_dots_is_reviewed_as_the_name_without_them(cli: Any, repo: GitRepo,
                                                                             name: str) -> None:
    """`python 'app.py '` runs it and Windows drops the ending: `*.py` rules reach it."""
    repo.write(name, "x = eval(input())\n")
    report = report_of(cli("--offline", "--format", "json"))
    assert (name, "sec-py-eval-01") in fired(report)
    assert report["classification"]["files"][0]["domains"] == ["python"]


@pytest.mark.parametrize("name", ["UP.PY", "lib/Tool.Py", "bin/app.PY "])
def test_an_extension_in_capitals_is_reviewed_as_the_extension(cli: Any, repo: GitRepo, name: str) -> None:
    """`python3 UP.PY` runs it: `*.py` rules reach it (was: unclassified, no rules, PASS)."""
    repo.write(name, "import requests\nr = requests.get(url, verify=False)\nx = eval(input())\n")
    report = report_of(cli("--offline", "--format", "json"))
    assert (name, "sec-py-eval-01") in fired(report)
    assert report["classification"]["files"][0]["domains"] == ["python"]


# ------------------------------------------- 3. the gate's data files a change commits (trial 3)

DATA_FILES = [".review-gate/state.db", ".review-gate/state.db-wal", ".review-gate/state.db-shm",
              ".review-gate/state.db-journal", ".review-gate/hil/prod.json", ".review-gate/review-logs/t1.jsonl",
              ".review-gate/sessions/t1/1/plan.prompt.md", ".review-gate/baseline.json"]


def _trusted(tmp_path: Path) -> Path:
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    (trusted / "review-gate.json").write_text('{"version": 1}\n')
    return trusted


@pytest.mark.parametrize("path", DATA_FILES)
def test_a_secret_committed_in_a_file_named_like_the_gate_s_data_fails_the_gate(cli: Any, repo: GitRepo,
                                                                                 tmp_path: Path, path: str) -> None:
    """Left out of the code review, yet scanned by the secret rules once the change commits it:
    a key in a committed file named like the run state, a loop file or the baseline fails the
    gate in CI; the rules of other categories still never read it (its quoted findings)."""
    repo.branch("feature")
    repo.write(path, f'{{"k": "{KEY}"}}\n# TODO r = requests.get(url, verify=False)\n')
    repo.commit("ship it")
    result = cli("--offline", "--no-state", "--config", str(_trusted(tmp_path)), "--base", "main", "--head", "HEAD",
                 "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["findings"]
    # no TODO, no verify=False: not reviewed as code; a baseline that is not one is said (merged,
    # it would stop every review: judging/own_file_checks)
    broken = {(path, None)} if path.endswith("baseline.json") else set()
    assert fired(report) == {(path, "sec-aws-key-01"), *broken}
    assert path not in reviewed(report)
    assert report["coverage"]["files_left_out"] == 0 and report["coverage"]["files_changed"] == 1


def test_a_committed_bundle_fails_the_gate(cli: Any, repo: GitRepo) -> None:
    """A bundle stores the diff it reviewed: committed, its copy of a key goes to the remote."""
    repo.branch("feature")
    repo.write("k.env", f"AWS_ACCESS_KEY_ID={KEY}\n")
    assert cli("--offline", "--bundle", "rb", "--format", "json").code == 1
    (repo.root / "k.env").unlink()
    worktree = report_of(cli("--offline", "--format", "json"))  # untracked: what it just wrote, left out
    assert worktree["findings"] == [] and not any(p.startswith("rb/") for p in reviewed(worktree))
    repo.git("add", "rb")
    staged = report_of(cli("--offline", "--format", "json"))  # tracked now: it will be committed
    assert ("rb/facts.json", "sec-aws-key-01") in fired(staged)
    repo.commit("bundle")
    result = cli("--offline", "--base", "main", "--head", "HEAD", "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["findings"]
    assert ("rb/facts.json", "sec-aws-key-01") in fired(report)
    assert not any(p.startswith("rb/") for p in reviewed(report))


def test_an_untracked_report_quoting_a_secret_finding_is_not_reviewed(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", SECRET)
    assert cli("--offline", "--format", "json", "--output", "review.json").code == 1
    repo.git("add", "app.py")
    repo.commit("a secret, reviewed")
    again = report_of(cli("--offline", "--base", "HEAD", "--format", "json"))
    assert again["findings"] == [] and "review.json" not in reviewed(again)


# ------------------------------------ 11. a hand-made .review-gate/ keeps its state out of git

def _hand_made(repo: GitRepo, ignore: str | None) -> None:
    repo.write(".review-gate/review-gate.json", '{"version": 1}\n')
    if ignore is not None:
        repo.write(".review-gate/.gitignore", ignore)
    repo.commit("configuration, made by hand")
    repo.branch("feature")
    repo.write("app.py", "import requests\nr = requests.get(url, verify=False, timeout=5)\n")


@pytest.mark.parametrize("ignore", [None, "notes.txt\n"], ids=["no-gitignore", "own-gitignore"])
def test_a_hand_made_gate_directory_keeps_the_run_state_out_of_git(cli: Any, repo: GitRepo,
                                                                   ignore: str | None) -> None:
    _hand_made(repo, ignore)
    first = report_of(cli("--offline", "--format", "json"))
    assert first["decision"] == "needs_fixes"
    [finding] = first["findings"]
    assert cli("accept", finding["fingerprint"], "--reason", "known").code == 0
    status = repo.git("status", "--porcelain", "--untracked-files=all")
    assert ".review-gate" not in status, status
    second = cli("--offline", "--format", "json")
    report = report_of(second)
    assert second.code == 0, report["gaps"]
    assert not gaps_of(report, "state_changed")
    repo.git("add", "-A")
    assert "state.db" not in repo.git("diff", "--cached", "--name-only")
    if ignore is not None:
        assert (repo.root / ".review-gate" / ".gitignore").read_text() == ignore  # the user's file, untouched


def test_a_sweep_scans_the_gate_s_committed_data_files_for_secrets(cli: Any, repo: GitRepo) -> None:
    repo.write(".review-gate/hil/prod.json", f'{{"k": "{KEY}"}}\n')
    repo.commit("a hand-off file with a key, committed")
    repo.write("out/review.json", "{}\n")
    result = cli("sweep", "--offline", "--format", "json")
    report = report_of(result)
    assert result.code == 1, report["findings"]
    assert fired(report) == {(".review-gate/hil/prod.json", "sec-aws-key-01")}
