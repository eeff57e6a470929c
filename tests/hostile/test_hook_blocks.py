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
from typing import Any

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
