"""``review-gate hook claude-code|codex`` fed the payloads the hosts send, and ``init --hooks``.

The payloads are shaped as the hosts document them (every field they send, not only those the
hook reads); the answers are checked against the hosts' contracts: exit 0 with a JSON decision
on stdout, and for Codex only the fields its output schemas allow.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from review_gate.surfaces.hooks.base import Payload, gates_for
from tests.conftest import GitRepo
from tests.hostile.helpers import command_agent, script, write_config
from tests.integrations.conftest import tool_env
from tests.llm.server import LlmServer, Step

INSECURE = "import requests\nr = requests.get(url, verify=False, timeout=5)\n"
CLEAN = "def add(a, b):\n    return a + b\n"


def stop(repo: GitRepo, *, active: bool = False, session: str = "5f1c8a52-6d1e-4c1b-9a39-1c4f1f0c2b7e",
         event: str = "Stop") -> dict[str, Any]:
    """A Stop payload as Claude Code sends it."""
    return {"session_id": session, "transcript_path": f"/home/dev/.claude/projects/demo/{session}.jsonl",
            "cwd": str(repo.root), "permission_mode": "default", "hook_event_name": event,
            "stop_hook_active": active}


def bash(repo: GitRepo, command: str) -> dict[str, Any]:
    """A PreToolUse payload for a Bash call, as Claude Code sends it."""
    return {"session_id": "5f1c8a52-6d1e-4c1b-9a39-1c4f1f0c2b7e",
            "transcript_path": "/home/dev/.claude/projects/demo/5f1c8a52.jsonl", "cwd": str(repo.root),
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command, "description": "Push the branch"},
            "tool_use_id": "toolu_01ABC123"}


def codex_stop(repo: GitRepo, *, active: bool = False) -> dict[str, Any]:
    """A Stop payload as Codex sends it (its stop.command.input schema)."""
    return {"session_id": "0199a2b4-codex", "turn_id": "turn-3", "transcript_path": None, "cwd": str(repo.root),
            "hook_event_name": "Stop", "model": "gpt-5-codex", "permission_mode": "default",
            "stop_hook_active": active, "last_assistant_message": "Done: the feature is implemented."}


def hook(cli: Any, payload: dict[str, Any], *args: str, host: str = "claude-code") -> Any:
    return cli("hook", host, *args, stdin=json.dumps(payload).encode())


def answer(result: Any) -> dict[str, Any]:
    assert result.code == 0, result.err
    return json.loads(result.out) if result.out.strip() else {}


# --------------------------------------------------------------------------------------- Stop


def test_a_failing_gate_blocks_the_stop_with_the_agent_report(cli, repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    blocked = answer(hook(cli, stop(repo)))
    assert blocked["decision"] == "block"
    reason = blocked["reason"]
    assert reason.startswith("review-gate: FAIL")
    assert "1. app.py:2 major sec-tls-verify-01 — TLS verification disabled" in reason
    assert "Not checked:" in reason and "(1 of 3)" in reason


def test_a_passing_gate_lets_the_agent_stop(cli, repo: GitRepo) -> None:
    repo.write("calc.py", CLEAN)
    result = hook(cli, stop(repo))
    assert result.code == 0 and result.out == ""


def test_the_stop_goes_through_with_a_hand_off_once_the_blocks_are_spent(cli, repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    first = answer(hook(cli, stop(repo), "--max-blocks", "2"))
    second = answer(hook(cli, stop(repo, active=True), "--max-blocks", "2"))
    assert first["decision"] == second["decision"] == "block"
    assert "(2 of 2)" in second["reason"]
    spent = answer(hook(cli, stop(repo, active=True), "--max-blocks", "2"))
    assert "decision" not in spent  # allowed: the agent stops
    assert "after 2 blocked stops in a row" in spent["systemMessage"]
    assert "REVIEW: FAIL | issues=1" in spent["systemMessage"] and "Over to you" in spent["systemMessage"]


def test_the_count_is_per_session_and_starts_again_on_a_new_stop(cli, repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    assert "(1 of 3)" in answer(hook(cli, stop(repo)))["reason"]
    assert "(2 of 3)" in answer(hook(cli, stop(repo, active=True)))["reason"]
    assert "(1 of 3)" in answer(hook(cli, stop(repo, active=True, session="other")))["reason"]
    assert "(1 of 3)" in answer(hook(cli, stop(repo, active=False)))["reason"]  # a new turn: not a continuation


def test_a_subagent_stop_is_gated_like_a_stop(cli, repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    assert answer(hook(cli, stop(repo, event="SubagentStop")))["decision"] == "block"


def test_a_review_that_cannot_run_blocks_and_says_why(cli, repo: GitRepo) -> None:
    repo.write("calc.py", CLEAN)
    blocked = answer(hook(cli, stop(repo), "--base", "no-such-branch"))
    assert blocked["decision"] == "block"
    assert "could not review the change" in blocked["reason"] and "no-such-branch" in blocked["reason"]
    # ... and it is counted like any block: the agent is not trapped
    for _ in range(2):
        hook(cli, stop(repo, active=True), "--base", "no-such-branch")
    assert "systemMessage" in answer(hook(cli, stop(repo, active=True), "--base", "no-such-branch"))


def test_outside_a_repository_nothing_is_reviewed_and_the_agent_may_stop(cli, tmp_path: Path) -> None:
    payload = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "Stop", "stop_hook_active": False}
    allowed = answer(cli("hook", "claude-code", stdin=json.dumps(payload).encode()))
    assert "decision" not in allowed and "not inside a git repository" in allowed["systemMessage"]


def _reviewer(server: LlmServer, **fields: Any) -> dict[str, Any]:
    """An llm reviewer configured like the built-in ones (a 180 s deadline), on the fake provider."""
    return {"id": "deep-review", "name": "deep", "description": "an llm reviewer", "kind": "llm",
            "provider": "anthropic", "model": "m", "base_url": server.url, "api_key_env": "TEST_LLM_KEY",
            "instructions": "security.md", "timeout_s": 180, "retries": 2, "required": False, **fields}


def _with_reviewer(tmp_path: Path, server: LlmServer, **fields: Any) -> Path:
    finder = script(tmp_path, "quiet.py", "print('{\"findings\": []}')\n")
    cfg = write_config(tmp_path, [command_agent("quiet", finder), _reviewer(server, **fields)])
    (cfg / "security.md").write_text("Review for security problems.\n", encoding="utf-8")
    return cfg


LLM_FINDING = {"severity": "major", "message": "the sum ignores overflow", "file": "calc.py", "line": 2,
               "category": "correctness"}


def test_llm_reviewers_run_within_the_hook_budget_with_their_deadline_clipped(
        cli, repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """init --hooks writes --budget 50 and the built-in reviewers have timeout_s 180: they were never
    run, each listed as "needs the network; --offline"."""
    monkeypatch.setenv("TEST_LLM_KEY", "not-a-real-key")
    with LlmServer() as server:
        server.default = Step(findings=[LLM_FINDING])
        cfg = _with_reviewer(tmp_path, server)
        repo.write("calc.py", CLEAN)
        blocked = answer(hook(cli, stop(repo), "--config", str(cfg), "--budget", "50"))
        assert len(server.requests) == 1
    assert blocked["decision"] == "block"
    assert "calc.py:2 major" in blocked["reason"] and "the sum ignores overflow" in blocked["reason"]
    assert "--offline" not in blocked["reason"] and "ran no LLM reviewer" not in blocked["reason"]


def test_llm_reviewers_left_out_of_a_budget_too_short_count_and_say_why_on_a_line_of_their_own(
        cli, repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "not-a-real-key")
    with LlmServer() as server:
        server.default = Step(findings=[LLM_FINDING])
        optional = _with_reviewer(tmp_path / "optional", server)
        required = _with_reviewer(tmp_path / "required", server, required=True)
        repo.write("calc.py", CLEAN)
        # an optional reviewer left out: a skip (the gate passes with warnings), and the person is told why
        passed = answer(hook(cli, stop(repo), "--config", str(optional), "--budget", "12", "--max-chars", "1000"))
        # a required one: the review is incomplete, the stop blocked, the reason on its own line
        blocked = answer(hook(cli, stop(repo), "--config", str(required), "--budget", "12", "--max-chars", "1000"))
        assert server.requests == []
    line = ("[review-gate ran no LLM reviewer: the hook's --budget of 12 s leaves 7 s, less than the 10 s an LLM "
            "reviewer needs at least; a person can raise the hook's timeout and --budget, or run `review-gate` in a "
            "terminal.]")
    assert "decision" not in passed and passed["systemMessage"] == line
    assert blocked["decision"] == "block"
    lines = blocked["reason"].splitlines()
    assert lines[2] == line  # under the verdict and the summary, before what the size limit may cut
    assert "decision incomplete" in blocked["reason"] and "--offline" not in blocked["reason"]
    assert "agent deep-review (required, llm) did not run: the hook's --budget of 12 s" in blocked["reason"]


def test_an_agent_slower_than_the_budget_is_cut_off_and_the_stop_blocked(repo: GitRepo, tmp_path: Path) -> None:
    """A host kills a hook at its timeout, and a killed hook blocks nothing: the hook answers in time."""
    sleeper = script(tmp_path, "sleeper.py", "import time\ntime.sleep(600)\n")
    cfg = write_config(tmp_path, [command_agent("sleepy", sleeper, timeout_s=300)])
    repo.write("calc.py", CLEAN)
    done = subprocess.run([sys.executable, "-m", "review_gate", "hook", "claude-code", "--budget", "10",
                           "--config", str(cfg)], input=json.dumps(stop(repo)).encode(), capture_output=True,
                          timeout=120, env=tool_env(), cwd=repo.root, check=False)
    assert done.returncode == 0, done.stderr
    reason = json.loads(done.stdout)["reason"]
    assert "agent sleepy (required, command) timed out" in reason


# --------------------------------------------------------------------------------- PreToolUse


def test_a_push_of_a_failing_change_is_denied_with_the_reason(cli, repo: GitRepo) -> None:
    repo.branch("feature")
    repo.write("app.py", INSECURE)
    repo.commit("add the client")
    denied = answer(hook(cli, bash(repo, "git push -u origin feature")))
    decision = denied["hookSpecificOutput"]
    assert decision["hookEventName"] == "PreToolUse" and decision["permissionDecision"] == "deny"
    assert "app.py:2 major sec-tls-verify-01" in decision["permissionDecisionReason"]


def test_a_commit_of_a_failing_working_tree_is_denied(cli, repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    denied = answer(hook(cli, bash(repo, "git add -A && git commit -m 'add the client'")))
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_push_of_a_clean_change_is_allowed(cli, repo: GitRepo) -> None:
    repo.write("calc.py", CLEAN)
    repo.commit("add calc")
    result = hook(cli, bash(repo, "git push"))
    assert result.code == 0 and result.out == ""


def test_other_commands_are_not_even_reviewed(cli, repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    for command in ("ls -la", "git status", "git log --grep=push"):
        result = hook(cli, bash(repo, command))
        assert result.code == 0 and result.out == ""
    other_tool = {**bash(repo, "git push"), "tool_name": "Read", "tool_input": {"file_path": "app.py"}}
    assert hook(cli, other_tool).out == ""
    assert not (repo.root / ".review-gate").exists()  # no run was recorded: nothing was reviewed


# Every simple command of every list, compound command, subshell, substitution, eval and sh -c
# string is looked at, through wrappers and aliases; where the reading is unsure it fails closed.
GATED_COMMANDS = [
    ("git push", "push"), ("git -C sub push origin main", "push"), ("make test && git push", "push"),
    ("sudo -u ci git push", "push"), ("bash -c 'git push --force'", "push"), ("/usr/bin/git push", "push"),
    ("gh pr create --fill", "pr"), ("git add -A && git commit -m 'x && git push'", "commit"),
    ("git commit -am wip; git push", "commit push"), ("git push -u origin feat && gh pr create --fill", "push pr"),
    # wrappers, with their options and operands
    ("timeout 30 git push origin feat", "push"), ("timeout -s KILL 30 git push origin feat", "push"),
    ("stdbuf -oL git push origin feat", "push"), ("nice -n 5 git push", "push"), ("nohup git push &", "push"),
    ("env VAR=1 git push", "push"), ("env -i PATH=/usr/bin git push", "push"), ("command git push", "push"),
    ("exec git push", "push"), ("time git commit -m x", "commit"), ("sudo -u git git push", "push"),
    ("printf 'main\\n' | xargs git push origin", "push"), ("watch -n 60 'git push'", "push"),
    ("find . -maxdepth 0 -exec git push \\;", "push"), ("FOO=1 BAR=2 git push", "push"),
    # compound commands, lists, subshells, newlines
    ("{ git push origin feat; }", "push"), ("if true; then git push origin feat; fi", "push"),
    ("for i in 1; do git push origin feat; done", "push"), ("! git push origin feat", "push"),
    ("while ! git push; do sleep 1; done", "push"), ("case x in x) git push;; esac", "push"),
    ("(cd sub; git push)", "push"), ("git status\ngit push", "push"), ("false || git push", "push"),
    ("make | tee log; git push", "push"), ("git push >/dev/null 2>&1", "push"), ("git \\\n  push", "push"),
    ("f() { git push; }; f", "push"), ("coproc git push", "push"),
    # command lines inside the line
    ('eval "git commit -m x"', "commit"), ("bash -lc 'git push origin feat'", "push"),
    ('sh -c "cd sub && git commit -m x"', "commit"), ("echo $(git push)", "push"), ("echo `git push`", "push"),
    ('echo "$(git commit -m x)"', "commit"), ("CMD='git push'; sh -c \"$CMD\"", "commit push pr"),
    ("git rebase -x 'git push' main", "push"), ("git submodule foreach git push", "push"),
    ("python3 -c \"import subprocess; subprocess.run(['git', 'push'])\"", "push"),
    # git's global options, hub, gh, aliases set on the line
    ("git -c user.name=x push", "push"), ("git --git-dir=.git --work-tree=. push", "push"),
    ("git --git-dir .git push", "push"), ("git --no-pager -C . commit -m x", "commit"),
    ("hub push origin feat", "push"), ("hub pull-request -m x", "pr"), ("gh pr new", "pr"),
    ("gh api repos/o/r/pulls -f title=x", "pr"), ("git -c alias.p=push p", "push"),
    ("git config alias.p push && git p", "push"),
    # unsure: fail closed
    ('echo "unbalanced git push', "push"), ("$(which git) push", "push"), ("echo 'git push' | bash", "push"),
    ("GIT=git; $GIT push", "push"), ("git flow feature publish x && git push", "push"),
    ("ls # then; git push", "push"), ("# push the branch\ngit push", "push"),
    ("cat <<'EOF' | bash\ngit push\nEOF", "push"), ("bash <<< 'git push'", "push"),
    # nothing that commits, pushes or opens a pull request
    ("ls", None), ("ls -la", None), ("git status", None), ("git log", None), ("git log --grep=push", None),
    ('git log --grep "git push"', None), ('echo "git push"', None), ("echo git push", None),
    ("printf '%s\\n' 'git commit'", None), ('grep -rn "git push" docs', None), ("gh pr list", None),
    ("gh pr view 3", None), ("git stash push -m wip", None), ("git diff HEAD~1", None), ("echo git-push", None),
    ("npm test && git add -A", None), ("git -C sub status", None), ("git config alias.p push", None),
    ("cd /tmp && ls # git push later", None), ("npm test  # before git commit", None),
    ("git show HEAD:push.txt", None),
    ("git commit -m \"$(cat <<'EOF'\nDon't push\n\n# Notes\nEOF\n)\"", "commit"),
    ("gh pr create --title x --body \"$(cat <<'EOF'\n## Summary\n- don't git push\nEOF\n)\"", "pr"),
    ("cat > notes.md <<'EOF'\nRun git push when it's done\nEOF", None),
]


def gated(command: str, cwd: Path) -> str | None:
    """The reviews a Bash call gets, space-separated (commit, push, pr), None for none."""
    return " ".join(gates_for(Payload(event="PreToolUse", tool_name="Bash", command=command, cwd=str(cwd)))) or None


@pytest.mark.parametrize(("command", "gate"), GATED_COMMANDS)
def test_which_shell_commands_are_gated(command: str, gate: str | None, tmp_path: Path) -> None:
    assert gated(command, tmp_path) == gate


# The trial's bypasses: each ran a push, a commit or opened/merged a pull request unreviewed. Where
# the subcommand or the program is not on the line as a literal (an expansion, `$'...'`, a glob,
# what xargs/find -exec/parallel append), or config given to that one command could define an
# alias, the line is reviewed as a commit and a push (fail closed).
FAIL_CLOSED = [
    ("git $(printf %s pu sh) origin feat", "commit push"), ("p=pu; git ${p}sh origin feat", "commit push"),
    ("git $'\\x70ush' origin feat", "push"), ("git \"$SUB\" origin feat", "commit push"),
    ("git `echo push` origin feat", "commit push"), ("git p*h origin feat", "commit push"),
    ("git pu[s]h origin feat", "commit push"), ("git -C . $'\\x63ommit' -m x", "commit"),
    ("$'\\x67it' push", "push"), ("nice $'\\147it' push", "push"), ("nice $G push origin feat", "push"),
    ("$CMD", "commit push pr"), ("sudo $G commit -m x", "commit"), ('sh -c "$CMD"', "commit push pr"),
    ("printf push | xargs git", "commit push"), ("echo push | xargs -r git --no-pager", "commit push"),
    ("echo push | parallel git", "commit push"), ("find . -maxdepth 0 -exec git {} \\;", "commit push"),
    ("/usr/bin/gi[t] push origin feat", "push"), ("/usr/bin/g?t commit -m x", "commit"),
    ("/usr/lib/git-core/git-send-pack ../r.git feat", "push"), ("/usr/lib/git-core/git-push", "push"),
    ("git send-pack ../remote.git feat", "push"), ("git http-push https://h/r.git feat", "push"),
    ("git remote-https origin https://h/r.git", "push"),
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.ship GIT_CONFIG_VALUE_0=push git ship", "commit push"),
    ("export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.ship GIT_CONFIG_VALUE_0=push; git ship", "commit push"),
    ("env GIT_CONFIG_PARAMETERS=\"'alias.ship=push'\" git ship", "commit push"),
    ("V=push git --config-env=alias.ship=V ship", "commit push"), ("HOME=/tmp/h git ship", "commit push"),
    ("export XDG_CONFIG_HOME=/tmp/c; git ship", "commit push"), ("GIT_CONFIG_GLOBAL=/tmp/g git ship", "commit push"),
    ("git --config-env alias.ship=V ship", "commit push"), ("git -c include.path=/tmp/x.cfg ship", "commit push"),
    ("git -c core.pager='git push' log", "push"), ("$G $S origin feat", "commit push pr"),
    ("\"$TOOL\" push origin feat", "push"),
    # gh and glab: merging a pull request, writing refs or merges through the API, GitLab's merge requests
    ("gh pr merge 3 --squash", "pr"), ("gh pr merge --auto --merge", "pr"),
    ("gh api repos/o/r/merges -f base=main -f head=feat", "pr"),
    ("gh api -XPOST repos/o/r/git/refs -f ref=refs/heads/x -f sha=abc", "pr"),
    ("gh api --method PUT repos/o/r/pulls/1/merge", "pr"), ("gh api -X PATCH repos/o/r/git/refs/heads/main", "pr"),
    ("gh api repos/o/r/contents/a.py --input body.json", "pr"), ("gh api graphql -f query='mutation{x}'", "pr"),
    ("gh $CMD create --fill", "pr"), ("glab mr create --fill", "pr"), ("glab mr merge 3", "pr"),
    ("glab mr new", "pr"), ("glab api -X POST projects/1/merge_requests", "pr"),
    ("timeout 30 glab mr create --fill", "pr"),
    # look-alikes that still commit, push or open nothing
    ("echo $HOME", None), ("echo $(git rev-parse HEAD)", None), ('git log --format="%H $SUB"', None),
    ("git checkout $BRANCH", None), ("git -C $DIR status", None), ("ls *.py | xargs git add", None),
    ("find . -name '*.py' -exec git add {} +", None), ("git --version", None), ("gh api repos/o/r/issues", None),
    ("gh api -X GET repos/o/r/commits", None), ("gh pr list", None), ("glab mr list", None),
    ("glab mr view 3", None), ("git -c color.ui=never status", None), ('"$PYTHON" -m pytest -q', None),
    ("$EDITOR notes.md", None), ("ls /usr/bin/g*", None), ("git -c core.pager=less log", None),
]


@pytest.mark.parametrize(("command", "gate"), FAIL_CLOSED)
def test_a_subcommand_or_program_not_on_the_line_is_reviewed(command: str, gate: str | None, tmp_path: Path) -> None:
    assert gated(command, tmp_path) == gate


# The line as bash reads it (tree-sitter's grammar): here-documents (a body that expands runs its
# substitutions and backticks; a quoted one is data), quotes nested in substitutions, `case` arms,
# functions, if/while bodies, substitutions in double quotes and never in single quotes, backticks
# (escaped, nested), here-strings, process substitution, lines continued with a backslash. `was`:
# the answer of the shell-like splitter this replaced, where it differed.
READ_AS_BASH_READS = [
    ("cat <<EOF\n$(git push)\nEOF", "push"),  # was None
    ("cat << EOF\n$(git commit -m x)\nEOF", "commit"),  # was None
    ("cat > notes.md <<EOF\nRun `git push` when it is done\nEOF", "push"),  # was None
    ("cat <<'EOF'\n$(git push)\nEOF", None), ('cat <<"EOF"\n$(git commit -m x)\nEOF', None),
    ("cat <<-EOF | sh\n\tgit push\n\tEOF", "push"),
    ("python3 - <<'EOF'\nimport subprocess\nsubprocess.run(['git', 'push'])\nEOF", "push"),
    ("git commit -F - <<'EOF'\nfix: do not git push yet\nEOF", "commit"),
    ("echo \"$(printf ')'; git push)\"", "push"),  # was None
    ('echo "$(echo "(") git push"', None),  # was push
    ('git commit -m "$(echo "it\'s done")"', "commit"),
    ("git commit -m \"fix: handle ')' in $(echo names)\"", "commit"),
    ('echo "$(case x in x) git push;; esac)"', "push"),  # was None
    ('case $1 in\n  git) echo "run: push" ;;\nesac', None),  # was push
    ('case "$f" in *.py) python3 -m pytest;; *) echo "skip git push";; esac', None),  # was commit push pr
    ('case "$1" in (deploy) git push;; esac', "push"), ("case $x in push) git status;; esac", None),
    ("deploy() {\n  git push origin feat\n}\ndeploy", "push"),
    ("function ship { git commit -am wip; }; ship", "commit"),
    ("if git diff --quiet; then echo clean; else git commit -am wip; fi", "commit"),
    ('while read -r f; do git add "$f"; done < <(git ls-files -m)', None),
    ('if [[ "$(git branch --show-current)" == main ]]; then echo on main; fi', None),
    ('echo "result: $(git push 2>&1)"', "push"), ('echo "${x:-$(git push)}"', "push"),
    ("echo '$(git push)'", None),  # was push
    ("echo 'use `git push` later'", None),  # was push
    ('echo "\\`git push\\`"', None),  # was push
    ("echo `echo \\`git push\\``", "push"),  # was None
    ('cat <<< "$(git push)"', "push"), ('grep -c push <<< "$(git log -1)"', None), ("read -r msg <<< 'git push'", None),
    ("diff <(git show HEAD:a) <(git show HEAD~1:a)", None), ("tee >(git push) < /dev/null", "push"),
    ("cat <(git commit -m x)", "commit"), ("x=$(git rev-parse HEAD) && echo \"$x\"", None),
    ("git pu\\\nsh origin feat", "push"), ('git "pu\\\nsh" origin feat', "push"),
    # a pull request's body as coding agents write it: was commit push pr (and denied as a person's step)
    ("gh pr create --title 'Add the parser' --body \"$(cat <<'EOF'\n## Summary\n- don't git push --force to main\n"
     "- handles `$(...)` in strings\nEOF\n)\"", "pr"),
]


@pytest.mark.parametrize(("command", "gate"), READ_AS_BASH_READS)
def test_a_line_is_read_as_bash_reads_it(command: str, gate: str | None, tmp_path: Path) -> None:
    assert gated(command, tmp_path) == gate


@pytest.mark.parametrize(("command", "gate"), [
    ("git ci -m x", "commit"), ("git pu origin feat", "push"), ("git -C . ci -m x", "commit"),
    ("timeout 30 git ci -m x", "commit"), ("git st", None), ("git nope origin", None),
])
def test_git_aliases_are_resolved_in_the_payloads_repository(repo: GitRepo, command: str, gate: str | None) -> None:
    repo.git("config", "alias.ci", "commit")
    repo.git("config", "alias.pu", "!git push")  # a shell alias: its line is read, never run
    repo.git("config", "alias.st", "status --short")
    assert gated(command, repo.root) == gate


@pytest.mark.parametrize(("command", "gate"), [("gh pc --fill", "pr"), ("gh sp", "push"), ("gh co 3", None)])
def test_gh_aliases_are_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str,
                                 gate: str | None) -> None:
    (tmp_path / "config.yml").write_text("version: 1\naliases:\n    co: pr checkout\n    pc: pr create\n"
                                         "    sp: '!git push'\n", encoding="utf-8")
    monkeypatch.setenv("GH_CONFIG_DIR", str(tmp_path))
    assert gated(command, tmp_path) == gate


# ------------------------------------------------------------- steps only a person may take

def edit(repo: GitRepo, tool: str, path: str) -> dict[str, Any]:
    """A PreToolUse payload for an edit tool, as Claude Code sends it."""
    tool_input: dict[str, Any] = {"file_path": str(repo.root / path)}
    tool_input.update({"content": "{}"} if tool == "Write" else {"old_string": "a", "new_string": "b"})
    return {**bash(repo, ""), "tool_name": tool, "tool_input": tool_input}


PERSONS_STEPS = [
    # review-gate's waivers and configuration writers, however the line wraps them
    "review-gate accept 4f2a9c --reason 'false positive'", "timeout 30 review-gate accept 4f2a9c --reason x",
    "bash -c 'review-gate accept 4f2a9c --reason x'", "python3 -m review_gate accept 4f2a9c --reason x",
    ".venv/bin/review-gate baseline", "review-gate baseline --output /tmp/b.json",
    "uvx review-gate accept 4f2a9c --reason x",
    "review-gate gaps --apply 1a2b3c --yes", "review-gate gaps --app=1a2b3c -y", 'eval "review-gate init --force"',
    "echo $(review-gate accept 4f2a9c --reason x)", "review-gate init --hooks claude-code",
    "review-gate loop approve fix-tls --complete", "review-gate loop reject fix-tls --feedback x",
    "D=.review-gate; echo x > $D/baseline.json", 'D=.review-gate; cp /tmp/x "$D/review-rules.json"',
    "python3 -c \"open('.review-gate/baseline.json','w')\"", "node -e \"fs.writeFileSync('.review-gate/x',1)\"",
    "make test && review-gate accept 4f2a9c --reason x", "env A=1 nice review-gate accept 4f2a9c --reason x",
    "cat <<'EOF' | sh\nreview-gate accept 4f2a9c --reason x\nEOF", "echo 'review-gate accept 4f2a9c --reason x' | bash",
    # writes into the configuration, the run state or the hooks' settings
    "sed -i '/sec-tls-verify-01/d' .review-gate/review-rules.json", "echo '{}' > .review-gate/review-rules.json",
    "rm -rf .review-gate", "git checkout main -- .review-gate/", "cp /tmp/rules.json .review-gate/review-rules.json",
    "sqlite3 .review-gate/state.db 'DELETE FROM review_runs'", "printf x | tee .claude/settings.json",
    "cat > .review-gate/review-gate.json <<'EOF'\n{}\nEOF", "mv /tmp/x.json ./.review-gate/review-rules.json",
    "python3 -c \"open('.review-gate/review-rules.json', 'w').write('{}')\"",
    # read as bash reads it (`was allowed`: the shell-like splitter's answer where it differed)
    "cat <<EOF\n$(review-gate accept 4f2a9c --reason x)\nEOF",  # was allowed: the body expands
    "echo x > .review-g\\\nate/review-rules.json", "f() { rm -rf .review-gate; }",
    "echo \"`review-gate accept 4f2a9c --reason x`\"",
    "sh -c 'cd /tmp'; echo x > .review-gate/review-rules.json",  # was allowed: a child shell's cd is its own
    "true || cd /tmp; rm -rf .review-gate",  # was allowed: the cd may not run (nor in `if`, `case`, `&`)
]
NOT_PERSONS_STEPS = [
    "review-gate", "review-gate --format agent", "review-gate accepted", "review-gate gaps",
    "review-gate loop status fix-tls", "review-gate loop log fix-tls", "review-gate init --help",
    "review-gate baseline -h", "review-gate loop approve --help",
    "review-gate explain accept.py",
    "review-gate config validate", "cat .review-gate/review-rules.json", "grep -rn tls .review-gate",
    "cp .review-gate/review-rules.json /tmp/rules.json", "git diff -- .review-gate", "echo 'review-gate accept x'",
    "ls -la .review-gate", "jq . .review-gate/review-rules.json > /tmp/rules.json",
    # a coder in the loop writes its responses into the session's files
    "echo 'Turned TLS verification back on.' > .review-gate/sessions/client/2/revise.response.md",
    # read as bash reads it (`was denied`: the shell-like splitter's answer where it differed)
    '[[ -n "$CI" && -d .review-gate ]] && echo configured',  # was denied
    'if [[ -f .review-gate/review-rules.json && -n "$CI" ]]; then cat .review-gate/review-rules.json; fi',  # was denied
    "echo '$(rm -rf .review-gate)'",  # was denied: single quotes hold no substitution
    "echo 'run `review-gate accept ID --reason TEXT` in a terminal'",  # was denied
    "x=$(cd .review-gate && pwd); rm -f review-rules.json",  # was denied: the cd stays in the substitution
    "cat <<'EOF'\n$(review-gate accept 4f2a9c --reason x)\nEOF", "test -d .review-gate && ls .review-gate",
]


@pytest.mark.parametrize("command", PERSONS_STEPS)
def test_an_agent_cannot_waive_findings_or_write_the_configuration(cli, repo: GitRepo, command: str) -> None:
    repo.write("calc.py", CLEAN)  # the gate passes: the denial is not about the change
    denied = answer(hook(cli, bash(repo, command)))["hookSpecificOutput"]
    assert denied["permissionDecision"] == "deny", command
    reason = denied["permissionDecisionReason"]
    assert "Only a person may do that" in reason and "`review-gate accept ID --reason TEXT`" in reason
    assert ".review-gate" in reason


@pytest.mark.parametrize("command", NOT_PERSONS_STEPS)
def test_reading_the_configuration_and_other_review_gate_commands_are_allowed(cli, repo: GitRepo,
                                                                           command: str) -> None:
    repo.write("calc.py", CLEAN)
    result = hook(cli, bash(repo, command))
    assert result.code == 0 and result.out == "", command


# The trial's bypasses of the above: a command not on the line, a `cd` before the write, globs and
# brace lists, find's actions, links to the configuration.
HIDDEN_PERSONS_STEPS = [
    "review-gate $'acc\\x65pt' b99aa1 --reason ok", 'review-gate "$CMD" b99aa1 --reason ok', "$CMD",
    "$'review-g\\x61te' accept b99aa1 --reason ok", "nice $RG accept b99aa1 --reason ok",
    "review-gate $(echo accept) b99aa1 --reason ok", "echo accept b99aa1 | xargs review-gate",
    "review-g?te accept b99aa1 --reason ok", "$RG accept b99aa1 --reason ok", "review-gate loop $'appr\\x6fve' t",
    "cd .review-gate && echo '{}' > review-rules.json", "cd .review-gate; rm review-rules.json",
    "pushd .review-gate && sed -i /tls/d review-rules.json", "cd .claude && echo '{}' > settings.json",
    "cd sub && cd .. && cd .review-gate && tee review-rules.json < /dev/null",
    'cd "$D" && rm review-rules.json', "rm .review-gat?/review-rules.json", "rm -r .revie*",
    "rm -rf .review-{gate,x}", "echo '{}' > .review-gat[e]/review-rules.json", "rm -rf ./.claude/*",
    "find . -name review-rules.json -delete", "find . -name '*.json' -exec rm {} +",
    "find .review-gate -type f -delete", "find . -path '*review-gate*' -exec sed -i /tls/d {} \\;",
    "find . ! -name '*.py' -delete", "ln -s .review-gate cfg", "ln -sf .review-gate/review-rules.json x.json",
]
NOT_HIDDEN_PERSONS_STEPS = [
    "echo $HOME", "echo $'it\\'s fine'", "pytest $A $B", "$(npm bin)/eslint .",
    "cat .review-gate/review-rules.json", "cd .review-gate && cat review-rules.json",
    "cd .review-gate && ls -la", "ls .revie*", "cat .review-gat?/review-rules.json", "rm -rf build/*",
    "rm -f *.pyc", "find . -name '*.pyc' -delete", "find . -name '*.json' -print",
    "find .review-gate -name '*.json'", "find . -name '*.json' -exec grep -l tls {} +",
    "cd /tmp && echo x > review-rules.json", 'cd "$D" && echo x > notes.txt', "ln -s calc.py calc2.py",
    "review-gate --format agent", "git status", "pushd src && popd",
]


@pytest.mark.parametrize("command", HIDDEN_PERSONS_STEPS)
def test_a_persons_step_hidden_from_the_literal_line_is_denied(cli, repo: GitRepo, command: str) -> None:
    repo.write(".review-gate/review-rules.json", "{}")
    repo.write("calc.py", CLEAN)
    denied = answer(hook(cli, bash(repo, command))).get("hookSpecificOutput", {})
    assert denied.get("permissionDecision") == "deny", command
    assert "Only a person may do that" in denied["permissionDecisionReason"]


@pytest.mark.parametrize("command", NOT_HIDDEN_PERSONS_STEPS)
def test_look_alikes_of_hidden_persons_steps_are_allowed(cli, repo: GitRepo, command: str) -> None:
    repo.write(".review-gate/review-rules.json", "{}")
    repo.write("calc.py", CLEAN)
    (repo.root / "src").mkdir()
    result = hook(cli, bash(repo, command))
    assert result.code == 0 and result.out == "", command


def test_a_link_to_the_configuration_does_not_open_it_to_writes(cli, repo: GitRepo) -> None:
    """`ln -s .review-gate cfg`, then a write through cfg: the path is compared with its links resolved."""
    repo.write(".review-gate/review-rules.json", "{}")
    (repo.root / "cfg").symlink_to(".review-gate")
    (repo.root / "rules.json").symlink_to(".review-gate/review-rules.json")
    for command in ("echo x > cfg/review-rules.json", "sed -i /tls/d cfg/review-rules.json",
                    "cp /tmp/x rules.json", "cd cfg && echo x > review-rules.json"):
        denied = answer(hook(cli, bash(repo, command)))["hookSpecificOutput"]
        assert denied["permissionDecision"] == "deny", command
    for tool in ("Write", "Edit"):
        for path in ("cfg/review-rules.json", "rules.json"):
            assert answer(hook(cli, edit(repo, tool, path)))["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert hook(cli, bash(repo, "cat cfg/review-rules.json")).out == ""


def test_a_planted_secret_cannot_be_waived_by_the_agent(cli, repo: GitRepo) -> None:
    """The trial: the Stop hook blocks on an AWS key; the agent's `review-gate accept` (and its
    edits of the configuration) are denied, and its next stop is blocked again."""
    repo.write("keys.py", 'AWS_ACCESS_KEY_ID = "AKIA' + 'Q7WZ3M9K2R5T8XB4"\n')  # not AWS's documented EXAMPLE key
    blocked = answer(hook(cli, stop(repo)))
    assert blocked["decision"] == "block" and "critical" in blocked["reason"]
    assert "keys.py:1 critical" in blocked["reason"]
    for command in ("review-gate accept deadbeef --reason 'a test key'", "review-gate baseline"):
        assert answer(hook(cli, bash(repo, command)))["hookSpecificOutput"]["permissionDecision"] == "deny"
    for tool in ("Write", "Edit", "MultiEdit"):
        for path in (".review-gate/review-rules.json", ".claude/settings.json"):
            denied = answer(hook(cli, edit(repo, tool, path)))
            assert denied["hookSpecificOutput"]["permissionDecision"] == "deny", (tool, path)
    assert hook(cli, edit(repo, "Edit", "keys.py")).out == ""  # fixing the code is the way out
    assert hook(cli, edit(repo, "Write", ".review-gate/sessions/t/1/revise.response.md")).out == ""
    assert answer(hook(cli, stop(repo, active=True)))["decision"] == "block"


def test_codex_gets_the_denial_in_a_shape_its_schema_accepts(cli, repo: GitRepo) -> None:
    payload = {**bash(repo, "review-gate accept 4f2a9c --reason x"), "turn_id": "t", "model": "gpt-5-codex"}
    denied = answer(hook(cli, payload, host="codex"))
    jsonschema.validate(denied, CODEX_PRE_TOOL_USE_OUTPUT)
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"


# -------------------------------------------------------------------------------------- Codex

# What Codex accepts on stdout (its published hook output schemas): unknown fields are rejected.
CODEX_STOP_OUTPUT = {"type": "object", "additionalProperties": False, "properties": {
    "continue": {"type": "boolean"}, "decision": {"enum": ["block", None]}, "reason": {"type": ["string", "null"]},
    "stopReason": {"type": ["string", "null"]}, "suppressOutput": {"type": "boolean"},
    "systemMessage": {"type": ["string", "null"]}}}
CODEX_PRE_TOOL_USE_OUTPUT = {"type": "object", "additionalProperties": False, "properties": {
    "continue": {"type": "boolean"}, "stopReason": {"type": "string"}, "suppressOutput": {"type": "boolean"},
    "systemMessage": {"type": "string"},
    "hookSpecificOutput": {"type": "object", "additionalProperties": False, "required": ["hookEventName"],
                           "properties": {"hookEventName": {"const": "PreToolUse"},
                                          "permissionDecision": {"enum": ["deny"]},
                                          "permissionDecisionReason": {"type": "string"},
                                          "additionalContext": {"type": "string"}}}}}


def test_codex_gets_answers_its_schemas_accept(cli, repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    blocked = answer(hook(cli, codex_stop(repo), "--max-blocks", "1", host="codex"))
    jsonschema.validate(blocked, CODEX_STOP_OUTPUT)
    assert blocked["decision"] == "block" and "sec-tls-verify-01" in blocked["reason"]
    handed_off = answer(hook(cli, codex_stop(repo, active=True), "--max-blocks", "1", host="codex"))
    jsonschema.validate(handed_off, CODEX_STOP_OUTPUT)
    assert "decision" not in handed_off
    payload = {**bash(repo, "git commit -am wip"), "turn_id": "t", "model": "gpt-5-codex", "transcript_path": None}
    payload["tool_input"] = {"command": "git commit -am wip"}
    denied = answer(hook(cli, payload, host="codex"))
    jsonschema.validate(denied, CODEX_PRE_TOOL_USE_OUTPUT)


def test_a_payload_that_is_not_json_is_a_usage_error(cli) -> None:
    result = cli("hook", "claude-code", stdin=b"not json")
    assert result.code == 2 and "not JSON" in result.err and "Traceback" not in result.err


# ---------------------------------------------------------------------------------- init --hooks


def test_init_merges_the_hooks_into_existing_settings(cli, repo: GitRepo) -> None:
    existing = {"permissions": {"allow": ["Bash(npm test:*)"]}, "hooks": {
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
    settings = repo.write(".claude/settings.json", json.dumps(existing, indent=4))
    result = cli("init", "--hooks", "claude-code")
    assert result.code == 0, result.err
    merged = json.loads(settings.read_text())
    assert merged["permissions"] == existing["permissions"]
    assert merged["hooks"]["PostToolUse"] == existing["hooks"]["PostToolUse"]
    stops = merged["hooks"]["Stop"]
    assert stops[0] == existing["hooks"]["Stop"][0]
    [ours] = stops[1]["hooks"]
    program = ours["command"].split(" hook ")[0]
    assert ours == {"type": "command", "command": f"{program} hook claude-code --budget 50", "timeout": 60}
    assert Path(program).is_absolute() or program.endswith("-m review_gate")  # never a bare name to resolve
    assert merged["hooks"]["PreToolUse"] == [{"matcher": "Bash|Write|Edit|MultiEdit|NotebookEdit",
                                              "hooks": stops[1]["hooks"]}]
    again = cli("init", "--hooks", "claude-code")
    assert again.code == 0 and "nothing was changed" in again.out
    assert json.loads(settings.read_text()) == merged


def test_init_refuses_a_settings_file_it_cannot_parse(cli, repo: GitRepo) -> None:
    broken = '{"hooks": {"Stop": [ // a comment\n]}}'
    settings = repo.write(".claude/settings.json", broken)
    result = cli("init", "--hooks", "claude-code")
    assert result.code == 2 and "not valid JSON" in result.err and "nothing was changed" in result.err
    assert settings.read_text() == broken
    repo.write(".claude/settings.json", '{"hooks": []}')
    assert cli("init", "--hooks", "claude-code").code == 2


def test_init_writes_codex_hooks_json(cli, repo: GitRepo) -> None:
    assert cli("init", "--hooks", "codex").code == 0
    written = json.loads((repo.root / ".codex" / "hooks.json").read_text())
    assert written["hooks"]["Stop"][0]["hooks"][0]["command"].endswith(" hook codex --budget 50")
    assert written["hooks"]["PreToolUse"][0]["matcher"] == "Bash"
