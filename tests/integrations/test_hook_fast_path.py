"""The hook's fast path (``surfaces/hooks/fast_path.py``): the tool calls an agent makes all day
are answered without the gate, and it never lets through what the gate would stop.

Every table the hook tests replay (each ``parametrize`` list of their modules: shell lines,
edit-tool inputs) goes through both the fast path and the full path (``gate.decide``) in a real
repository with the configuration and the hosts' settings in it, from its top and from a
subdirectory, with and without a ``--config`` and ``$REVIEW_GATE_CONFIG``: wherever the fast
path answers, the full path answers a silent allow too. Whole processes show what the common
events import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from review_gate.surfaces.hooks import fast_path
from review_gate.surfaces.hooks.base import Payload, read_payload
from review_gate.surfaces.hooks.gate import Options, decide
from tests.conftest import GitRepo
from tests.hostile import test_hook_blocks
from tests.integrations import (
    test_hook_everyday_lines,
    test_hook_settings_protected,
    test_hook_uncommitted_waivers,
    test_hook_waivers,
    test_hook_waivers_completed,
    test_hooks,
)
from tests.integrations.test_hooks import bash

TABLES: tuple[ModuleType, ...] = (test_hooks, test_hook_everyday_lines, test_hook_settings_protected,
                                  test_hook_waivers, test_hook_waivers_completed, test_hook_uncommitted_waivers,
                                  test_hook_blocks)
# what an agent runs all day, and near misses of it that name what the hook guards
EVERYDAY = ["ls -la", "pytest -q", "ls", "pytest -q tests/test_app.py -x", "cat app.py", "rg -n TODO src",
            "head -n 20 app.py", "wc -l app.py", "ruff check .", "mypy", "pwd", "ls -la ..", "ls .claude",
            "cat .review-gate/review-rules.json", "pytest --rootdir=..", "ls -la /", "ls -la .Claude",
            "pytest -q app.py && git push", "ls; git push", "cat x | sh", "grep -rn nosec src", "ls src/link",
            "pytest -q --basetemp=.review-gate", "ls -la ~", "echo noqa", "cat app.py > .claude/x", "rm -rf src",
            "pytest -q $(git push)", "env git push", "timeout 60 pytest", "ls ./.codex", "cat src/../.claude/x"]
READ_ONLY_TOOLS = ["Read", "Grep", "Glob", "WebFetch", "Task", "TodoWrite", None]


def _values(module: ModuleType) -> Iterator[object]:
    for item in vars(module).values():
        for mark in getattr(item, "pytestmark", ()):
            if mark.name == "parametrize":
                for value in mark.args[1]:
                    yield from (value.values if hasattr(value, "values") else (value,))


def table() -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """Every shell line and every (tool, input) of an edit tool in the hook tests' tables."""
    lines: list[str] = list(EVERYDAY)
    edits: list[tuple[str, dict[str, Any]]] = []
    for module in TABLES:
        for value in _values(module):
            if isinstance(value, str):
                lines.append(value)
            elif isinstance(value, tuple) and value and isinstance(value[0], str):
                if len(value) == 2 and isinstance(value[1], dict):
                    edits.append((value[0], value[1]))
                else:
                    lines.append(value[0])
            elif isinstance(value, dict) and isinstance(value.get("command"), str):
                lines.append(value["command"])
            elif isinstance(value, dict):
                edits.append(("Edit", value))
    return list(dict.fromkeys(lines)), edits


def _repo(repo: GitRepo) -> GitRepo:
    repo.write(".claude/settings.json", "{}")
    repo.write(".review-gate/review-rules.json", "{}")
    repo.write("app.py", "import requests\nr = requests.get(u, verify=False, timeout=5)  # nosXec B501\n"
                         "total = eval(expression)\na = 1\n")
    repo.write("src/core.py", "old_name = 1\n")
    repo.commit("the configuration, the hooks and some code")
    (repo.root / "src" / "link").symlink_to(repo.root / ".claude")
    return repo


def _edit_payloads(repo: GitRepo, edits: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    targets = ["app.py", "src/core.py", "src/new.py", ".claude/settings.json", ".review-gate/x.json",
               "src/link/settings.json", "src/../.codex/hooks.json", "cfg/review-gate.json", "."]
    found = []
    for name, given in [*edits, ("Edit", {"old_string": "a = 1", "new_string": "a = 2"}),
                        ("Edit", {"old_string": "nosXec", "new_string": "nosec"}),
                        ("Write", {"content": "x = 1\n"}), ("NotebookEdit", {"new_source": "x = 1"})]:
        for target in ([given["file_path"]] if "file_path" in given else targets):
            found.append({**bash(repo, ""), "tool_name": name,
                          "tool_input": {**given, "file_path": str(repo.root / target)}})
    return found


def _full(payload: dict[str, Any], config: str | None) -> Any:
    return decide("claude-code", read_payload(json.dumps(payload).encode()), Options(config=config, budget_s=60))


def _replay(payloads: list[dict[str, Any]], config: str | None, environ: dict[str, str],
            monkeypatch: pytest.MonkeyPatch) -> int:
    """How many ``payloads`` the fast path answered; each checked against the full path."""
    answered = 0
    for raw in payloads:
        payload = read_payload(json.dumps(raw).encode())
        if fast_path.allowed(payload, config, environ):
            answered += 1
            with monkeypatch.context() as patched:
                for key, value in environ.items():
                    patched.setenv(key, value)
                outcome = _full(raw, config)
            assert (outcome.action, outcome.note) == ("allow", ""), (raw["tool_input"], outcome)
    return answered


@pytest.mark.parametrize("where", [".", "src"])
def test_the_fast_path_answers_only_what_the_full_path_allows(repo: GitRepo, tmp_path: Path, where: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _repo(repo)
    monkeypatch.delenv("REVIEW_GATE_CONFIG", raising=False)
    lines, edits = table()
    assert len(lines) > 300 and len(edits) >= 9  # the tables are read
    cwd = str(repo.root / where)
    shell = [{**bash(repo, line), "cwd": cwd} for line in lines]
    tools = [{**p, "cwd": cwd} for p in _edit_payloads(repo, edits)]
    reads = [{**bash(repo, ""), "tool_name": t, "tool_input": {"file_path": str(repo.root / ".claude/settings.json")},
              "cwd": cwd} for t in READ_ONLY_TOOLS]
    events = [{**bash(repo, "git push"), "hook_event_name": e, "cwd": cwd} for e in ("PostToolUse", "Notification")]
    config = repo.root / "cfg"
    config.mkdir()
    answered = {
        "plain": _replay([*shell, *tools, *reads, *events], None, {}, monkeypatch),
        "--config": _replay(tools, str(config), {}, monkeypatch),
        "$REVIEW_GATE_CONFIG": _replay(tools, None, {"REVIEW_GATE_CONFIG": str(config)}, monkeypatch),
    }
    assert answered["plain"] >= 20 and answered["--config"] >= 4 and answered["$REVIEW_GATE_CONFIG"] >= 4, answered


def test_the_everyday_calls_are_answered_by_the_fast_path(repo: GitRepo) -> None:
    _repo(repo)
    for line in ("ls -la", "pytest -q", "ruff check .", "cat app.py"):
        assert fast_path.allowed(Payload("PreToolUse", cwd=str(repo.root), tool_name="Bash", command=line), None)
    edit = Payload("PreToolUse", cwd=str(repo.root), tool_name="Edit", file_path="src/core.py", new_text="n = 2",
                   old_text="old_name = 1", edits=(("old_name = 1", "n = 2", False),))
    assert fast_path.allowed(edit, None)
    assert fast_path.allowed(Payload("PreToolUse", cwd=str(repo.root), tool_name="Read", file_path="app.py"), None)
    # what the gate must judge: a stop, a push, a guarded write, a waiver the edit completes
    assert fast_path.allowed(Payload("Stop", cwd=str(repo.root)), None) is None
    assert fast_path.allowed(Payload("PreToolUse", cwd=str(repo.root), tool_name="Bash", command="git push"),
                             None) is None
    assert fast_path.allowed(Payload("PreToolUse", cwd=str(repo.root), tool_name="Write",
                                     file_path=".claude/settings.json", new_text="{}"), None) is None
    completed = Payload("PreToolUse", cwd=str(repo.root), tool_name="Edit", file_path="app.py", new_text="s",
                        old_text="X", edits=(("nosXec", "nosec", False),))
    assert fast_path.allowed(completed, None) is None


# --------------------------------------------------------------------------------------- whole processes

# main() as the console script runs it, then the modules this process imported
_LISTED = ("import json, sys\nsys.path.pop(0)\nfrom review_gate.surfaces.cli.main import main\n"
           "code = main(sys.argv[1:])\n"
           "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}), file=sys.stderr)\n")
# what answering an everyday tool call needs none of
HEAVY = ("pydantic", "review_gate.models", "review_gate.config", "review_gate.api", "review_gate.pipeline.runner",
         "review_gate.judging", "review_gate.surfaces.hooks.gate", "review_gate.surfaces.hooks.shell",
         "review_gate.surfaces.hooks.syntax", "review_gate.surfaces.hooks.written", "tree_sitter", "anyio", "rich",
         "review_gate.state", "review_gate.change.git")


def _run(repo: GitRepo, payload: dict[str, Any]) -> tuple[int, str, set[str]]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "REVIEW_GATE_CONFIG")}
    done = subprocess.run([sys.executable, "-c", _LISTED, "hook", "claude-code", "--budget", "50"], cwd=repo.root,
                          env=env, input=json.dumps(payload), capture_output=True, text=True, timeout=120)
    found = json.loads(done.stderr.strip().splitlines()[-1])
    return found["code"], done.stdout, set(found["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in HEAVY))


def test_an_everyday_tool_call_imports_no_model_no_configuration_and_no_shell_reader(repo: GitRepo) -> None:
    _repo(repo)
    payloads = [bash(repo, "ls -la"), bash(repo, "pytest -q"),
                {**bash(repo, ""), "tool_name": "Edit",
                 "tool_input": {"file_path": str(repo.root / "src/core.py"), "old_string": "old_name = 1",
                                "new_string": "new_name = 1"}},
                {**bash(repo, ""), "tool_name": "Read", "tool_input": {"file_path": str(repo.root / "app.py")}}]
    for payload in payloads:
        code, out, modules = _run(repo, payload)
        assert (code, out) == (0, ""), payload["tool_input"]
        assert _heavy(modules) == [], payload["tool_input"]


def test_a_guarded_write_loads_what_it_needs_and_is_denied(repo: GitRepo) -> None:
    _repo(repo)
    code, out, modules = _run(repo, bash(repo, "echo x > .review-gate/review-rules.json"))
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "review_gate.surfaces.hooks.shell" in modules
