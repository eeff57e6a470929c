"""A repository, a config directory with a scripted coder and a scripted approver, and the loop
commands called in-process (the coder and the approver are real subprocesses).

The coder records every prompt it gets (``prompt-N.md`` in its records folder), writes
``app.py`` with a disabled TLS verification (a major finding of the built-in rules) when there is
none, and fixes that line only from its ``fix_on``-th call on (``coder``: the second call, ``fixer``: the
first, ``lazy-coder``: never). The approver records every request
(``request-N.json``), rejects its first ``reject`` calls with feedback, then approves.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo, Result

BUILTIN = Path(__file__).resolve().parents[2] / "config"
FLAWED = "import requests\n\nr = requests.get(url, verify=False, timeout=5)\n"
FLAGGED = "app.py:3"
MESSAGE = "TLS verification disabled"
RECOMMENDATION = "Keep verification on"

CODER = r'''
import os, pathlib, sys
records, fix_on = pathlib.Path(sys.argv[1]), int(sys.argv[2])
records.mkdir(exist_ok=True)
n = len(list(records.glob("prompt-*.md"))) + 1
(records / f"prompt-{n}.md").write_text(sys.stdin.read())
(records / f"phase-{n}.txt").write_text(os.environ.get("REVIEW_GATE_LOOP_PHASE", "?"))
app = pathlib.Path("app.py")
if not app.exists():
    app.write_text(FLAWED)
if n >= fix_on:
    app.write_text(app.read_text().replace("verify=False", "verify=True"))
    print(f"call {n}: fixed the TLS verification in app.py")
else:
    print(f"call {n}: wrote app.py")
'''.replace("FLAWED", repr(FLAWED))

APPROVER = r'''
import json, pathlib, sys
records, reject = pathlib.Path(sys.argv[1]), int(sys.argv[2])
records.mkdir(exist_ok=True)
n = len(list(records.glob("request-*.json"))) + 1
request = json.loads(sys.stdin.read())
(records / f"request-{n}.json").write_text(json.dumps(request))
if n <= reject:
    print(json.dumps({"approved": False, "feedback": f"rejection {n}: say which line you changed"}))
else:
    print(json.dumps({"approved": True, "feedback": "approved by the script"}))
'''


def command_agent(agent_id: str, argv: list[str], **fields: Any) -> dict[str, Any]:
    return {"id": agent_id, "name": agent_id, "description": f"scripted {agent_id} for the loop tests",
            "kind": "command", "command": argv, "timeout_s": 60, **fields}


@dataclass
class LoopRig:
    repo: GitRepo
    config: Path
    records: Path
    approvals: Path
    cli: Any

    def loop(self, *args: str, stdin: bytes | None = None) -> Result:
        result: Result = self.cli("loop", *args, "--config", str(self.config), stdin=stdin)
        return result

    def prompts(self) -> list[str]:
        count = len(list(self.records.glob("prompt-*.md")))
        return [(self.records / f"prompt-{n}.md").read_text() for n in range(1, count + 1)]

    def requests(self) -> list[dict[str, Any]]:
        count = len(list(self.approvals.glob("request-*.json")))
        return [json.loads((self.approvals / f"request-{n}.json").read_text()) for n in range(1, count + 1)]

    def status(self, task: str) -> dict[str, Any]:
        result = self.loop("status", task, "--format", "json")
        assert result.code == 0, result.err
        data: dict[str, Any] = result.json()
        return data

    def decisions(self, task: str) -> list[dict[str, Any]]:
        path = self.repo.root / ".review-gate" / "review-logs" / f"{task}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def session_file(self, task: str, iteration: int, name: str) -> Path:
        return self.repo.root / ".review-gate" / "sessions" / task / str(iteration) / name

    def write_config(self, *, loop: dict[str, Any] | None = None, agents: list[dict[str, Any]] | None = None,
                     policies: list[dict[str, Any]] | None = None, **settings: Any) -> None:
        write_config(self.config, self.records, self.approvals, loop=loop, agents=agents, policies=policies,
                     **settings)


def write_config(directory: Path, records: Path, approvals: Path, *, fix_on: int = 2, reject: int = 1,
                 loop: dict[str, Any] | None = None, agents: list[dict[str, Any]] | None = None,
                 policies: list[dict[str, Any]] | None = None, **settings: Any) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    scripts = directory.parent / "scripts"
    scripts.mkdir(exist_ok=True)
    (scripts / "coder.py").write_text(CODER)
    (scripts / "approver.py").write_text(APPROVER)
    registry = json.loads((BUILTIN / "review-agents.json").read_text())
    registry["agents"] += [
        command_agent("coder", [sys.executable, str(scripts / "coder.py"), str(records), str(fix_on)]),
        command_agent("fixer", [sys.executable, str(scripts / "coder.py"), str(records), "1"]),
        command_agent("lazy-coder", [sys.executable, str(scripts / "coder.py"), str(records), "99"]),
        command_agent("approver", [sys.executable, str(scripts / "approver.py"), str(approvals), str(reject)]),
        command_agent("naysayer", [sys.executable, str(scripts / "approver.py"), str(approvals), "99"]),
        *(agents or []),
    ]
    (directory / "review-agents.json").write_text(json.dumps(registry, indent=1))
    if policies:
        composition = json.loads((BUILTIN / "review-composition.json").read_text())
        composition["policies"] += policies
        (directory / "review-composition.json").write_text(json.dumps(composition, indent=1))
    gate = json.loads((BUILTIN / "review-gate.json").read_text())
    gate.update(settings)
    if loop is not None:
        gate["loop"] = loop
    (directory / "review-gate.json").write_text(json.dumps(gate, indent=1))


@pytest.fixture
def rig(repo: GitRepo, tmp_path: Path, cli: Any) -> LoopRig:
    made = LoopRig(repo, tmp_path / "cfg", tmp_path / "records", tmp_path / "approvals", cli)
    write_config(made.config, made.records, made.approvals)
    return made


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    path = tmp_path / "task.md"
    path.write_text("Fetch the status page with requests and keep a 5 second timeout.\n")
    return path
