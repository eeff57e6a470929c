"""What a command imports is what it costs before it does anything (issue 23: plan is 3x ``git
diff`` at best when the interpreter, pydantic and the models alone are 1.5x). A whole process of
the real CLI, in a real repository, lists the modules it imported: ``plan`` imports no agent kind,
no run state, no HTTP client and no event loop; an offline review no llm machinery; a checked configuration is
read from its snapshot, not checked again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo

# main() as the console script runs it, then the names of the modules this process imported
_LISTED = ("import json, sys\nsys.path.pop(0)\nfrom review_gate.surfaces.cli.main import main\n"
           "try:\n    code = main(sys.argv[1:])\nexcept SystemExit as exc:\n    code = exc.code\n"
           "from review_gate.models import ReviewConfig\n"
           "print(json.dumps({'code': code, 'modules': sorted(sys.modules),\n"
           "                  'checked': ReviewConfig.__pydantic_complete__}), file=sys.stderr)\n")

NEVER = ("httpx", "rich", "jsonschema", "tree_sitter", "review_gate.llm.client", "review_gate.llm.governor",
         "review_gate.llm.review", "review_gate.llm.providers", "review_gate.scale.batch.runs",
         "review_gate.scale.merge", "review_gate.scale.sweep", "review_gate.acceptances",
         "review_gate.state.session", "review_gate.state.runs")
# a plan that asks no model has nothing to wait for: it runs in the main thread, with no event loop
EVENT_LOOP = ("asyncio", "anyio._backends")
ONLY_REVIEWS = ("review_gate.agents.pattern", "review_gate.agents.command", "review_gate.agents.llm",
                "review_gate.pipeline.dispatch", "review_gate.pipeline.aggregate", "review_gate.judging.waivers",
                "tenacity")


def listed(repo: GitRepo, *args: str, stdin: str = "") -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.endswith("_API_KEY")}
    done = subprocess.run([sys.executable, "-c", _LISTED, *args], cwd=repo.root, env=env, capture_output=True,
                          text=True, timeout=120, input=stdin)
    found: dict[str, Any] = json.loads(done.stderr.strip().splitlines()[-1])
    return found


def imported(repo: GitRepo, *args: str) -> tuple[int, set[str]]:
    found = listed(repo, *args)
    return found["code"], set(found["modules"])


@pytest.fixture
def change(repo: GitRepo) -> GitRepo:
    repo.branch("feature")
    repo.write("app/service.py", "import requests\n\n\ndef fetch(url):\n    return requests.get(url, timeout=5)\n")
    repo.write("docs/guide.md", "# Guide\n")
    repo.commit("a service")
    return repo


def _found(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_plan_imports_no_agent_no_state_no_http_client_and_no_event_loop(change: GitRepo) -> None:
    code, modules = imported(change, "plan", "--base", "main", "--head", "feature", "--format", "json",
                             "--output", os.devnull)
    assert code == 0
    assert _found(modules, NEVER + ONLY_REVIEWS + EVENT_LOOP) == []


def test_an_offline_review_imports_no_llm_machinery_and_no_run_state(change: GitRepo) -> None:
    code, modules = imported(change, "--base", "main", "--head", "feature", "--offline", "--no-state",
                             "--format", "json", "--output", str(Path(change.root).parent / "report.json"))
    assert code in (0, 1)
    assert _found(modules, NEVER) == []
    assert "review_gate.agents.pattern" in modules  # it did review


def test_the_second_run_reads_the_checked_configuration_and_checks_nothing_again(change: GitRepo) -> None:
    # the configuration's models are validated (their validators built) only when it is checked
    plan = ("plan", "--base", "main", "--head", "feature", "--format", "json", "--output", os.devnull)
    first, second = listed(change, *plan), listed(change, *plan)
    assert (first["code"], first["checked"]) == (0, True)
    assert (second["code"], second["checked"]) == (0, False)


def test_an_offline_stop_hook_imports_no_llm_machinery_and_no_retry_library(repo: GitRepo) -> None:
    # issue 33: the Stop hook runs at the end of every turn of a coding agent; offline (no key) no
    # llm agent runs, and no agent's transient fault is retried, so neither is paid for
    repo.write("app/calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("calc")
    repo.write("app/calc.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    stop = {"session_id": "s", "cwd": str(repo.root), "hook_event_name": "Stop", "stop_hook_active": False}
    found = listed(repo, "hook", "claude-code", stdin=json.dumps(stop))
    modules = set(found["modules"])
    assert found["code"] == 0
    assert "review_gate.agents.pattern" in modules  # it did review
    assert _found(modules, ("httpx", "tenacity", "review_gate.llm.client", "review_gate.llm.providers",
                            "review_gate.llm.review")) == []
    # nor the shell reader a tool call's waiver check loads: a stop writes nothing
    assert _found(modules, ("review_gate.surfaces.hooks.written", "review_gate.surfaces.hooks.script")) == []
