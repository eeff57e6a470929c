"""A coding agent's host ignores a hook that exits 1: the gate must block through the host's protocol.

Claude Code and Codex block only on their own contract: a JSON decision on stdout with exit 0,
or exit 2 with the reason on stderr. Any other exit code is a non-blocking error, logged and
ignored. ``review-gate`` exits 1 on ``needs_fixes``, so wired in as a Stop hook it let the agent
stop with the problems in place, and nobody noticed. ``host_reaction`` below is that contract,
applied to a real process's result.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.integrations.conftest import tool_env

INSECURE = "import requests\nr = requests.get(url, verify=False, timeout=5)\n"


def host_reaction(done: subprocess.CompletedProcess[bytes], event: str) -> tuple[str, str]:
    """What the host does with a hook's result: ("block", how) or ("carry on", why)."""
    if done.returncode == 2:
        return "block", "exit 2: " + done.stderr.decode()
    if done.returncode != 0:
        return "carry on", f"exit {done.returncode} is a non-blocking error"
    try:
        answer = json.loads(done.stdout or b"{}")
    except json.JSONDecodeError:
        return "carry on", "stdout is not JSON"
    if event == "Stop" and answer.get("decision") == "block":
        return "block", "decision: " + answer["reason"]
    specific = answer.get("hookSpecificOutput") or {}
    if event == "PreToolUse" and specific.get("permissionDecision") == "deny":
        return "block", "decision: " + specific["permissionDecisionReason"]
    return "carry on", "allowed"


def run_hook(argv: list[str], repo: GitRepo, payload: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "review_gate", *argv], input=json.dumps(payload).encode(),
                          capture_output=True, timeout=120, env=tool_env(), cwd=repo.root, check=False)


def test_the_plain_gate_exits_1_and_the_host_lets_the_agent_stop(repo: GitRepo) -> None:
    """The defect, as the host sees it: the finding is there, the agent stops anyway."""
    repo.write("app.py", INSECURE)
    done = run_hook([], repo, {"hook_event_name": "Stop", "cwd": str(repo.root), "session_id": "s"})
    assert done.returncode == 1
    assert host_reaction(done, "Stop")[0] == "carry on"


def test_the_hook_blocks_the_stop_through_the_protocol(repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    payload = {"hook_event_name": "Stop", "cwd": str(repo.root), "session_id": "s", "stop_hook_active": False}
    done = run_hook(["hook", "claude-code"], repo, payload)
    reaction, how = host_reaction(done, "Stop")
    assert (done.returncode, reaction) == (0, "block"), done.stderr.decode()
    assert how.startswith("decision: review-gate: FAIL") and "app.py:2 major sec-tls-verify-01" in how


def test_the_hook_denies_the_push_through_the_protocol(repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    repo.commit("add the client")
    payload = {"hook_event_name": "PreToolUse", "cwd": str(repo.root), "session_id": "s", "tool_name": "Bash",
               "tool_input": {"command": "git push origin main"}}
    for host in ("claude-code", "codex"):
        done = run_hook(["hook", host], repo, payload)
        reaction, how = host_reaction(done, "PreToolUse")
        assert (done.returncode, reaction) == (0, "block"), (host, done.stderr.decode())
        assert "sec-tls-verify-01" in how


# ------------------------------------------------------------ what the PreToolUse hook sees

KEY = 'AWS_KEY = "AKIAIOSFODNN7EXAMPLQ"\n'  # the built-in secrets-scanner flags it critical


def bash_payload(repo: GitRepo, command: str) -> bytes:
    return json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
                       "cwd": str(repo.root), "session_id": "s"}).encode()


def denied(cli: Any, repo: GitRepo, command: str) -> str:
    """The reason the hook denies the Bash call ``command``, "" when it lets it run."""
    result = cli("hook", "claude-code", stdin=bash_payload(repo, command))
    assert result.code == 0, result.err
    if not result.out.strip():
        return ""
    decision = json.loads(result.out)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    return str(decision["permissionDecisionReason"])


@pytest.fixture
def pushed_key(repo: GitRepo, tmp_path: Path) -> GitRepo:
    """A feature branch whose commit holds a key, with a remote that lacks it, and `git ci` for commit."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, capture_output=True)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main")
    repo.branch("feat")
    repo.write("k.py", KEY)
    repo.commit("add the key")
    repo.git("config", "alias.ci", "commit")
    return repo


def test_a_push_or_commit_behind_a_wrapper_is_denied(cli: Any, pushed_key: GitRepo) -> None:
    """Each of these ran the push or commit with no review: the hook read only the first word."""
    for command in ("timeout 30 git push origin feat", "timeout -s KILL 30 git push origin feat",
                    "stdbuf -oL git push origin feat", "{ git push origin feat; }",
                    "if true; then git push origin feat; fi", "for i in 1; do git push origin feat; done",
                    "! git push origin feat", 'eval "git commit -m x"', "git ci -m x",
                    "nice -n 5 nohup git push origin feat", "bash -lc 'git push origin feat'",
                    "echo start\ngit push origin feat", "git status || git -c color.ui=never push origin feat"):
        assert "sec-aws-key-01" in denied(cli, pushed_key, command), command
    for command in ("git status", "git log --oneline", 'echo "git push origin feat"', "ls -la"):
        assert denied(cli, pushed_key, command) == "", command


@pytest.mark.parametrize("command", [
    "{ " * 3000 + "git push origin feat; " + "} " * 3000,  # nested past what is walked
    "$(" * 3000 + "echo hi" + ")" * 3000 + "; git push origin feat",  # substitutions past the depth read
    "cat <<EOF | sh\n" + "`cat <<E\n" * 2000 + "git push origin feat",  # bodies in bodies: each a line to read
    "git status && " * 4000 + "git push origin feat",  # a list of 4,000 commands
    "echo " + "x" * 70_000 + "; git push origin feat",  # longer than a line parsed
    "f() { f; f; }; f; git push origin feat",  # a function that calls itself
])
def test_a_line_built_to_exhaust_the_reading_is_still_reviewed(cli: Any, pushed_key: GitRepo, command: str) -> None:
    """The reading is bounded (depth, nesting, characters parsed): such a line is answered, and
    what it cannot read to the end is read loosely, so the push is still reviewed (or denied
    outright: a person's step, or a place the line cannot tell)."""
    reason = denied(cli, pushed_key, command)
    assert any(why in reason for why in ("sec-aws-key-01", "Only a person may do that", "another repository"))


def test_a_secret_staged_then_undone_in_the_file_is_denied_at_commit(cli: Any, repo: GitRepo) -> None:
    """`git commit` records the index: a key staged and then removed from the file alone was let through."""
    repo.write("a.py", "x = 1\n")
    repo.commit("add a")
    repo.write("a.py", KEY)
    repo.git("add", "a.py")
    repo.write("a.py", "x = 1\n")  # the working tree no longer shows it; the index still holds it
    reason = denied(cli, repo, "git commit -m wip")
    assert "sec-aws-key-01" in reason and "the staged changes (the index against HEAD)" in reason
    assert reason.startswith("review-gate: FAIL")  # the verdict still comes first
    repo.git("restore", "--staged", "a.py")
    assert denied(cli, repo, "git commit -m wip") == ""


def test_a_commit_of_tracked_changes_not_yet_staged_is_denied(cli: Any, repo: GitRepo) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit("add a")
    repo.write("a.py", KEY)  # `git commit -am` takes it from the working tree
    assert "sec-aws-key-01" in denied(cli, repo, "git commit -am wip")


def test_the_stop_hook_reviews_the_index_too(cli: Any, repo: GitRepo) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit("add a")
    repo.write("a.py", KEY)
    repo.git("add", "a.py")
    repo.write("a.py", "x = 1\n")
    payload = {"hook_event_name": "Stop", "cwd": str(repo.root), "session_id": "s", "stop_hook_active": False}
    result = cli("hook", "claude-code", stdin=json.dumps(payload).encode())
    answer = json.loads(result.out)
    assert answer["decision"] == "block" and "sec-aws-key-01" in answer["reason"]


def test_a_commit_and_push_in_one_line_reviews_what_is_pushed_too(cli: Any, pushed_key: GitRepo) -> None:
    """The commit review sees the working tree; the key was committed and then removed from it."""
    pushed_key.write("k.py", "AWS_KEY = read_key()\n")
    assert "sec-aws-key-01" in denied(cli, pushed_key, "git commit -am 'drop the key' && git push origin feat")


# ------------------------------------------------------------ nested repositories in the working tree


def test_an_empty_nested_repository_does_not_make_the_gate_unusable(cli: Any, repo: GitRepo) -> None:
    """`git add --intent-to-add --all` failed on it ("adding files failed"), with no fix line, and
    the Stop hook blocked every stop with that error."""
    (repo.root / "inner").mkdir()
    repo.git("-C", "inner", "init", "-q")
    repo.write("b.py", "x = 1\n")
    result = cli("run", "--format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert [f["file"] for f in report["findings"]] == []
    assert {(g["kind"], g["subject"]) for g in report["gaps"]} >= {("nested_repository", "inner")}
    stop = {"hook_event_name": "Stop", "cwd": str(repo.root), "session_id": "s", "stop_hook_active": False}
    assert cli("hook", "claude-code", stdin=json.dumps(stop).encode()).out == ""
    repo.write("c.py", KEY)  # the untracked files beside it are still reviewed
    blocked = json.loads(cli("hook", "claude-code", stdin=json.dumps(stop).encode()).out)
    assert "c.py:1 critical sec-aws-key-01" in blocked["reason"]
    assert "gap nested_repository: inner" in blocked["reason"]


def test_a_nested_repository_is_a_gap_and_its_files_are_not_reviewed(cli: Any, repo: GitRepo) -> None:
    inner = repo.root / "vendor" / "lib"
    inner.mkdir(parents=True)
    repo.git("-C", "vendor/lib", "init", "-q")
    repo.write("vendor/lib/k.py", KEY)
    repo.git("-C", "vendor/lib", "add", "k.py")
    repo.git("-C", "vendor/lib", "commit", "-qm", "k")
    result = cli("run", "--format", "json")
    report = json.loads(result.out)
    # not this repository's content: a commit records only the gitlink
    assert [f for f in report["findings"] if f["file"] != "vendor/lib"] == []
    assert ("nested_repository", "vendor/lib") in {(g["kind"], g["subject"]) for g in report["gaps"]}
    head = repo.git("-C", "vendor/lib", "rev-parse", "HEAD").strip()
    # what a commit would record is a submodule pointer: unreviewed, listed with a warning (submodules: warn)
    assert result.code == 0 and report["decision"] == "pass_with_warnings"
    [item] = report["coverage"]["not_inspected"]
    assert (item["path"], item["kind"], item["counted"]) == ("vendor/lib", "submodule", False)
    assert head in item["reason"]
    assert [(f["file"], f["severity"]) for f in report["findings"]] == [("vendor/lib", "warning")]


def test_untracked_files_with_unusual_names_are_each_reviewed(cli: Any, repo: GitRepo) -> None:
    """They are named to git one by one, as literal pathspecs."""
    for name in ("-rf.py", "*.py", "new\nline.py", "sp ace.py", ":(glob)x.py"):
        repo.write(name, KEY)
    report = json.loads(cli("run", "--format", "json").out)
    assert sorted(f["file"] for f in report["findings"]) == sorted(
        ["-rf.py", "*.py", "new\nline.py", "sp ace.py", ":(glob)x.py"])


def test_a_working_tree_git_cannot_read_is_an_error_with_a_fix(cli: Any, repo: GitRepo) -> None:
    (repo.root / ".git" / "index").write_bytes(b"DIRC garbage")
    result = cli("run")
    assert result.code == 2 and "Traceback" not in result.err
    assert "fix: run `git status`" in result.err


def test_a_payload_the_hook_cannot_read_exits_2_which_the_host_takes_for_a_block(repo: GitRepo) -> None:
    """docs/agents.md said the hook "always exits 0"; these exit 2, and that is the fail-closed answer."""
    for payload, said in ((b"", "is empty"), (b"not json", "not JSON"), (b"[1]", "not a JSON object"),
                          (b" " * (8 * 1024 * 1024 + 1), "over 8388608 bytes")):
        done = subprocess.run([sys.executable, "-m", "review_gate", "hook", "claude-code"], input=payload,
                              capture_output=True, timeout=120, env=tool_env(), cwd=repo.root, check=False)
        err = done.stderr.decode()
        assert done.returncode == 2 and said in err and "fix:" in err and "Traceback" not in err, err
        for event in ("Stop", "PreToolUse"):
            assert host_reaction(done, event)[0] == "block"


# ------------------------------------------------------------ a push from another repository


@pytest.fixture
def two_repos(repo: GitRepo, tmp_path: Path) -> tuple[GitRepo, Path]:
    """The payload's repository, clean, and beside it another whose commit holds a key, each
    with a remote that lacks its commits."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, capture_output=True)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main")
    (tmp_path / "other").mkdir()
    other = GitRepo(tmp_path / "other")
    other.git("remote", "add", "origin", str(remote))
    other.branch("feat")
    other.write("k.py", KEY)
    other.commit("add the key")
    (repo.root / "src").mkdir()
    return repo, other.root


ELSEWHERE_PUSHES = [
    "git -C {other} push origin feat", "cd {other} && git push origin feat", "cd {other}; git commit -am x",
    "git --git-dir={other}/.git push origin feat", "git --git-dir {other}/.git --work-tree {other} commit -m x",
    "GIT_DIR={other}/.git git push origin feat", "env GIT_DIR={other}/.git git push origin feat",
    "export GIT_DIR={other}/.git; git push origin feat", "pushd {other} && git push origin feat",
    "(cd {other} && git push origin feat)", 'sh -c "cd {other} && git push origin feat"',
    'cd "$OTHER" && git push origin feat', "cd ~ && git push", "GIT_INDEX_FILE=/tmp/index git commit -m x",
    "cd {other} && gh pr create --fill", "git -C ../other -c alias.p=push p",
    # read as bash reads it (`was allowed`: the shell-like splitter's answer where it differed)
    'cd {other} && git -C "$(pwd)" push origin feat',  # was allowed: $(pwd) is where the cd went
    'cd {other} && git -C "$(git rev-parse --show-toplevel)" push origin feat',  # was allowed
    "cd {other}\ngit push origin feat\necho 'unbalanced",  # was allowed: bash runs the lines before the error
    "f() {{ cd {other}; }}; f; git push origin feat", "deploy() {{ cd {other} && git push origin feat; }}; deploy",
    "cd {other} && X='cd ../repo' && git push origin feat",  # was allowed: a value read as a line moves nothing
]


@pytest.mark.parametrize("command", ELSEWHERE_PUSHES)
def test_a_push_or_commit_for_another_repository_is_denied(cli: Any, two_repos: tuple[GitRepo, Path],
                                                           command: str) -> None:
    """The hook reviewed the payload's directory (clean) while the command pushed another repository's key."""
    repo, other = two_repos
    reason = denied(cli, repo, command.format(other=other))
    assert "another repository, work tree or index" in reason, command
    assert "Run it from the repository's own directory" in reason


@pytest.mark.parametrize("command", [
    "git -C . push origin main", "git -C src push origin main", "cd src && git push origin main",
    "cd src && cd .. && git commit -m x", "git -C {other} status", "cd {other} && git log --oneline",
    "git -C {other} fetch origin", 'git -C "$(git rev-parse --show-toplevel)" push origin main',
    'cd "$(git rev-parse --show-toplevel)" && git commit -m x', 'git -C "$(pwd)" commit -m x',
    'cd "$PWD" && git commit -m x', "cd `git rev-parse --show-toplevel` && git push origin main",
    '(cd "$D" && npm test); git commit -m x', '(cd "$D" && npm test)\ngit commit -m x',
    'for d in packages/*; do (cd "$d" && git add .); done; git commit -m x',
    # read as bash reads it (`was denied`: the shell-like splitter's answer where it differed)
    "f() {{ cd {other}; }}; git push origin main",  # was denied: the function is never called
    "x=$(cd {other} && pwd); git push origin main",  # was denied: the cd stays in the substitution
    "echo '$(cd {other})'; git push origin main",  # was denied: single quotes hold no substitution
    "sh -c 'cd {other}'; git push origin main",  # was denied: a child shell's cd is its own
])
def test_a_command_in_the_same_repository_or_that_gates_nothing_is_allowed(
        cli: Any, two_repos: tuple[GitRepo, Path], command: str) -> None:
    repo, other = two_repos
    assert denied(cli, repo, command.format(other=other)) == "", command


# ------------------------------------------------------- flags that hide a tracked file's changes


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_a_flagged_tracked_file_is_still_reviewed(cli: Any, repo: GitRepo, flag: str) -> None:
    """`git update-index --skip-worktree` (or --assume-unchanged) hid a modified tracked file
    from the working-tree review, and so from the Stop and commit hooks."""
    repo.write("a.py", "x = 1\n")
    repo.commit("add a")
    repo.write("a.py", KEY)
    repo.git("update-index", flag, "a.py")
    report = json.loads(cli("run", "--format", "json").out)
    assert [(f["file"], f["rule_id"]) for f in report["findings"]] == [("a.py", "sec-aws-key-01")]
    stop = {"hook_event_name": "Stop", "cwd": str(repo.root), "session_id": "s", "stop_hook_active": False}
    blocked = json.loads(cli("hook", "claude-code", stdin=json.dumps(stop).encode()).out)
    assert "a.py:1 critical sec-aws-key-01" in blocked["reason"]
    assert "sec-aws-key-01" in denied(cli, repo, "git commit -am wip")
    assert repo.git("ls-files", "-v", "a.py")[0] in "Sh"  # the user's index keeps its flag


def test_a_sparse_checkout_is_not_read_as_deleting_the_files_left_out(cli: Any, repo: GitRepo) -> None:
    """Files marked skip-worktree and absent from the disk (a sparse checkout) are not changes."""
    repo.write("docs/a.md", "# a\n")
    repo.write("src/b.py", "x = 1\n")
    repo.commit("two dirs")
    repo.git("sparse-checkout", "set", "--no-cone", "/src/")
    assert not (repo.root / "docs" / "a.md").exists()
    report = json.loads(cli("run", "--format", "json").out)
    assert report["findings"] == [] and "docs/a.md" not in json.dumps(report), report["manifest"]


@pytest.mark.parametrize("command", [
    "echo git > g.txt; $(cat g.txt) commit -am x", '"$(cat g.txt)" commit -am x', "$(<g.txt) commit -am x",
    "$(jq -r .g cfg.json) commit -am x", "`cat g.txt` commit -am x",
])
def test_a_program_a_substitution_names_is_read_as_each_it_could_be(cli: Any, repo: GitRepo, command: str) -> None:
    """The program came from a file's content: the line ran whatever it names (was: allowed)."""
    repo.write("a.py", KEY)
    assert "sec-aws-key-01" in denied(cli, repo, command)


@pytest.mark.parametrize("command", ["$(cat cmd.txt)", 'eval "$(cat cmd.txt)"', "$(cat rg.txt) accept x --reason y"])
def test_a_whole_command_from_a_substitution_is_a_persons_step(cli: Any, repo: GitRepo, command: str) -> None:
    assert "person" in denied(cli, repo, command)
