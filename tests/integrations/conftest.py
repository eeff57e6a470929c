"""What the GitHub Action and pre-commit tests share: the files under test, loaded, and the
environment a real hook or a real action step would run review-gate in."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION_FILE = ROOT / "action.yml"
HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"
EXAMPLE_WORKFLOW = ROOT / "docs" / "examples" / "review-gate.yml"

# Built by concatenation so that this file itself carries no PEM header for a scanner to find.
PRIVATE_KEY = "-----BEGIN " + "RSA PRIVATE KEY" + "-----\nMIIEowIBAAKCAQEA\n"

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def workflow_on(workflow: dict[str, Any]) -> Any:
    """YAML 1.1 (PyYAML) reads the bare key ``on`` as the boolean True."""
    return workflow.get("on", workflow.get(True))


def bin_dir() -> Path:
    """The directory of the installed ``review-gate`` console script (the test's venv)."""
    directory = Path(sys.executable).parent
    if not (directory / "review-gate").exists():
        pytest.skip("the review-gate console script is not installed next to this Python")
    return directory


def tool_env(**extra: str) -> dict[str, str]:
    """The test's environment (isolated HOME and git config) with review-gate first on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(bin_dir()), env.get("PATH", "")])
    env.update(extra)
    return env


def missing_formats(*names: str) -> list[str]:
    """Output format modules that are not there (yet): the runs that render them are skipped."""
    from review_gate.outputs import FORMATS

    return [name for name in names
            if importlib.util.find_spec(f"review_gate.outputs.{FORMATS[name]}") is None]


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=env)
    return result.stdout.strip()
