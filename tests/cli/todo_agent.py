"""A command agent for the baseline and replay tests: flags each added line holding TODO, and one
finding far outside the change; every call appends a line to a counter file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agents.test_command import agent, script, write_config

BODY = """\
    import json, re, sys
    severity, counter = sys.argv[1], sys.argv[2]
    with open(counter, "a") as handle:
        handle.write("called\\n")
    findings, path, line = [], None, 0
    for text in sys.stdin.read().splitlines():
        if text.startswith("+++ "):
            path = text[6:] if text.startswith("+++ b/") else None
        elif text.startswith("@@"):
            line = int(re.match(r"@@ -\\d+(?:,\\d+)? \\+(\\d+)", text).group(1))
        elif text.startswith("+") and path:
            if "TODO" in text:
                findings.append({"severity": severity, "message": "unfinished work", "rule_id": "todo",
                                 "file": path, "line": line})
            line += 1
        elif text.startswith(" "):
            line += 1
    if path:
        findings.append({"severity": severity, "message": "far away", "rule_id": "far",
                         "file": path, "line": 999})
    print(json.dumps({"findings": findings}))
"""


def todo_config(tmp_path: Path, severity: str = "major") -> tuple[Path, Path]:
    """A config dir with the one agent ``todo``; returns it and the counter file."""
    program = script(tmp_path, "todo.py", BODY)
    counter = tmp_path / "counter.txt"
    return write_config(tmp_path, [agent("todo", program, severity, counter)]), counter


def calls(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def write_gate(directory: Path, **settings: Any) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "review-gate.json").write_text(json.dumps({"version": 1, **settings}), encoding="utf-8")


