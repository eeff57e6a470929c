"""A configuration whose one reviewer is a team's lint script, as the docs write it: a command
agent ``["python3", ".review-gate/lint.py"]`` run in the repository, flagging every added line
that holds FORBIDDEN as critical. The script asks ``rglib.bad`` (a module beside it) whether a
line is bad, so rewriting either file, or a look-alike directory holding a no-op copy, is how a
change would try to steer its own judge."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

FORBIDDEN = "value = FORBIDDEN  # the line the lint script fails\n"

LINT = '''\
import json, re, sys
from rglib import bad
findings, path, line = [], None, 0
for text in sys.stdin.read().splitlines():
    if text.startswith("+++ "):
        path = text[6:] if text.startswith("+++ b/") else None
    elif text.startswith("@@"):
        line = int(re.search(r"\\+(\\d+)", text).group(1)) - 1
    elif text.startswith("+"):
        line += 1
        if bad(text[1:]):
            findings.append({"severity": "critical", "message": "FORBIDDEN on an added line", "file": path,
                             "line": line, "rule_id": "team-forbidden"})
    elif not text.startswith("-"):
        line += 1
print(json.dumps({"findings": findings}))
'''
RGLIB = "def bad(line):\n    return 'FORBIDDEN' in line\n"
NO_OP = 'import json\nprint(json.dumps({"findings": []}))\n'
GOOD_RGLIB = "def bad(line):\n    return False\n"


def lint_agent(argv: list[str] | None = None, **fields: Any) -> dict[str, Any]:
    return {"id": "team-lint", "name": "Team lint", "description": "the team's FORBIDDEN check", "kind": "command",
            "command": argv or ["python3", ".review-gate/lint.py"], "timeout_s": 60, "retries": 0, **fields}


def write_lint_config(directory: Path, agent: dict[str, Any] | None = None, *, scripts: bool = True,
                      extra_agents: list[dict[str, Any]] | None = None) -> Path:
    """The configuration in ``directory``: the lint agent (and ``extra_agents``, not dispatched),
    one ``always`` policy, no rules; with ``scripts``, lint.py and rglib.py beside it."""
    directory.mkdir(parents=True, exist_ok=True)
    agents = [agent or lint_agent(), *(extra_agents or [])]
    files = {
        "review-agents.json": {"version": 1, "agents": agents},
        "review-composition.json": {"version": 1, "policies": [
            {"id": "team", "description": "every change gets the team's lint", "trigger": {"type": "always"},
             "dispatch": [agents[0]["id"]]}]},
        "review-rules.json": {"version": 1, "rules": []},
    }
    for name, data in files.items():
        (directory / name).write_text(json.dumps(data, indent=2), encoding="utf-8")
    if scripts:
        (directory / "lint.py").write_text(LINT, encoding="utf-8")
        (directory / "rglib.py").write_text(RGLIB, encoding="utf-8")
    return directory


def look_alike(real: Path, evil: Path) -> Path:
    """A copy of ``real``'s JSON files with a no-op lint.py beside them: what a coder makes to
    record "fresh" passing pairs for the real configuration."""
    evil.mkdir(parents=True, exist_ok=True)
    for path in real.glob("*.json"):
        shutil.copy(path, evil / path.name)
    (evil / "lint.py").write_text(NO_OP, encoding="utf-8")
    return evil


PYTHON = sys.executable
