"""docs/outputs.md's "Reading the report" shows what the gate prints for its example: the example
is run for real, so the page cannot go stale (it had)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import GitRepo

PAGE = Path(__file__).resolve().parents[1] / "docs" / "outputs.md"
COMMIT = re.compile(r"\(([0-9a-f]{7,12})\)$", re.MULTILINE)


def shown() -> str:
    text = PAGE.read_text(encoding="utf-8")
    block = text.split("## Reading the report\n\n```text\n", 1)[1].split("```", 1)[0]
    return block


def test_the_example_report_is_what_the_gate_prints(repo: GitRepo) -> None:
    repo.write("app.py", "import requests\nr = requests.get(url, verify=False, timeout=5)\n")
    env = {**os.environ, "COLUMNS": "130"}
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CI"):
        env.pop(name, None)
    result = subprocess.run([sys.executable, "-m", "review_gate", "--offline", "--no-state"], cwd=repo.root,
                            capture_output=True, text=True, env=env)
    assert result.returncode == 1, result.stderr
    printed = result.stdout.replace(f"review-gate {_version()} ·", "review-gate 0.3.0 ·")
    assert COMMIT.sub("(COMMIT)", printed) == COMMIT.sub("(COMMIT)", shown())


def _version() -> str:
    from review_gate import __version__

    return __version__
