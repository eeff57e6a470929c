"""Small helpers the hostile-input tests share: config directories, scripts, processes."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / "scripts" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def command_agent(agent_id: str, program: Path, *args: str, **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": agent_id, "name": agent_id, "description": f"test agent {agent_id}",
        "kind": "command", "command": [sys.executable, str(program), *args], "timeout_s": 20,
    }
    entry.update(fields)
    return entry


def write_config(tmp_path: Path, agents: list[dict[str, Any]], rules: list[dict[str, Any]] | None = None) -> Path:
    """A config dir with these agents, one ``always`` policy dispatching them all, and these rules."""
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    files = {
        "review-agents.json": {"version": 1, "agents": agents},
        "review-composition.json": {"version": 1, "policies": [{
            "id": "everything", "description": "every change, every agent", "trigger": {"type": "always"},
            "dispatch": [a["id"] for a in agents]}]},
        "review-rules.json": {"version": 1, "rules": rules or []},
    }
    for name, data in files.items():
        (cfg / name).write_text(json.dumps(data, indent=2), encoding="utf-8")
    return cfg


def process_gone(pid: int) -> bool:
    """True once ``pid`` runs no more; a zombie waiting for its reaper runs no code, so it counts."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if process_gone(pid):
            return True
        time.sleep(0.05)
    return process_gone(pid)


def read_pid(path: Path, within: float = 15.0) -> int:
    """The pid a test script wrote to ``path`` (written whole with a rename, so never half read)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


WRITE_PID = """\
    def write_pid(path):
        tmp = path + ".tmp"
        with open(tmp, "w") as out:
            out.write(str(os.getpid()))
        os.replace(tmp, path)
"""
