"""Shared by the run-state tests: counting command agents and a config directory for them."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from tests.agents.test_command import script
from tests.conftest import make_diff

# Appends one line (the files it was given) to the counter file named by argv[1]; with
# $COUNTER_SLEEP, writes its pid to <counter>.pid and sleeps that long; then reports
# a warning ($COUNTER_SEVERITY) on line 1 of each file and one finding about its scope as a whole.
COUNTER = """\
    import json, os, sys, time
    sys.stdin.read()
    files = json.loads(os.environ["REVIEW_GATE_FILES"])
    with open(sys.argv[1], "a", encoding="utf-8") as handle:
        handle.write(",".join(files) + "\\n")
    if os.environ.get("COUNTER_SLEEP"):
        with open(sys.argv[1] + ".pid", "w", encoding="utf-8") as handle:
            handle.write(str(os.getpid()))
        time.sleep(float(os.environ["COUNTER_SLEEP"]))
    severity = os.environ.get("COUNTER_SEVERITY", "warning")
    found = [{"severity": severity, "message": "look at " + f, "file": f, "line": 1, "rule_id": "count-01"}
             for f in files]
    found.append({"severity": "info", "message": "the scope as a whole"})
    print(json.dumps({"findings": found}))
"""

DIFF = make_diff("a.py", ["x = 1", "y = 2"]) + make_diff("b.py", ["z = 3"])
DIFF_A_CHANGED = make_diff("a.py", ["x = 1", "y = 22"]) + make_diff("b.py", ["z = 3"])


def rule(agent: str, text: str) -> dict[str, Any]:
    return {"id": f"{agent}-01", "name": f"{agent} rule", "severity": "warning", "agent": agent,
            "category": "style", "description": text, "detection": "by looking", "recommendation": "fix it"}


def counting_config(tmp_path: Path, agents: tuple[str, ...] = ("one", "two"), *,
                    rule_text: str = "first text", settings: dict[str, Any] | None = None) -> Path:
    """Counting agents (counter file tmp_path/<id>.calls each), one policy, a rule for each agent."""
    prog = script(tmp_path, "counter.py", COUNTER)
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    entries = [{"id": a, "name": a, "description": f"counting agent {a}", "kind": "command",
                "command": [sys.executable, str(prog), str(tmp_path / f"{a}.calls")],
                "timeout_s": 30, "retries": 0} for a in agents]
    files: dict[str, Any] = {
        "review-agents.json": {"version": 1, "agents": entries},
        "review-composition.json": {"version": 1, "policies": [
            {"id": "everything", "description": "every change, every agent", "trigger": {"type": "always"},
             "dispatch": list(agents)}]},
        "review-rules.json": {"version": 1, "rules": [rule(a, rule_text) for a in agents]},
    }
    if settings is not None:
        files["review-gate.json"] = {"version": 1, **settings}
    for name, data in files.items():
        (cfg / name).write_text(json.dumps(data, indent=2), encoding="utf-8")
    return cfg


def state_db() -> Path:
    """Where a run outside any repository keeps its state: the user's cache (the test's HOME)."""
    return Path.home() / ".cache" / "review-gate" / "state.db"


def calls(tmp_path: Path, agent: str) -> list[str]:
    path = tmp_path / f"{agent}.calls"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def run_json(cli: Any, cfg: Path, diff: str, *extra: str) -> tuple[int, dict[str, Any]]:
    result = cli("--config", str(cfg), "--diff", "-", "--format", "json", *extra, stdin=diff.encode())
    assert result.out, result.err
    return result.code, json.loads(result.out)


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {a["id"]: a["status"] for a in report["agents"]}


def query(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(db)
    try:
        return connection.execute(sql, params).fetchall()
    finally:
        connection.close()
