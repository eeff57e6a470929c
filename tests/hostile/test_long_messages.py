"""An agent's message or recommendation is cut to a bound: a program that quotes a whole
minified line (or a megabyte of anything) in each finding cannot grow the report, the run
state and every output with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from review_gate.models.findings import TEXT_LIMIT
from tests.conftest import make_diff
from tests.hostile.helpers import command_agent, script, write_config


def test_a_megabyte_message_is_cut_to_the_bound(cli: Any, tmp_path: Path) -> None:
    program = script(tmp_path, "quoter.py", """
        import json, sys
        sys.stdin.read()
        line = "x" * 1_000_000
        print(json.dumps({"findings": [{"severity": "warning", "message": "long: " + line,
                                        "recommendation": line, "file": "a.py", "line": 1}]}))
    """)
    cfg = write_config(tmp_path, [command_agent("quoter", program)])
    result = cli("--config", str(cfg), "--diff", "-", "--no-state", "--format", "json",
                 stdin=make_diff("a.py", ["x = 1"]).encode())
    [finding] = result.json()["findings"]
    assert finding["message"].startswith("long: xxx") and finding["message"].endswith("…")
    assert len(finding["message"]) == TEXT_LIMIT and len(finding["recommendation"]) == TEXT_LIMIT
    assert len(result.out) < 50_000
