"""What the GitHub Action and pre-commit tests share: the files under test, loaded, and the
environment a real hook or a real action step would run review-gate in."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
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


def action_steps(*ids: str) -> dict[str, dict[str, Any]]:
    """The action's steps with these ids, each with the inputs' defaults (``defaults``) beside it."""
    action = load_yaml(ACTION_FILE)
    defaults = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    return {s["id"]: {**s, "defaults": defaults} for s in action["runs"]["steps"] if s.get("id") in ids}


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


# A stand-in for the GitHub CLI: every call is a line of JSON in $FAKE_GH_LOG; issues live in
# $FAKE_GH_ISSUES. `issue create` prints the new issue's URL as gh does; `issue list --search`
# prints the URL of the first issue whose body holds the search's first word (what --jq asks for).
FAKE_GH = """\
    import json, os, sys
    args = sys.argv[1:]
    store = os.environ["FAKE_GH_ISSUES"]
    issues = json.load(open(store)) if os.path.exists(store) else []
    entry = {"argv": args, "token": os.environ.get("GH_TOKEN"), "repo": os.environ.get("GH_REPO")}
    if args[:2] == ["issue", "create"]:
        body = open(args[args.index("--body-file") + 1], encoding="utf-8").read()
        url = "https://github.com/acme/shop/issues/%d" % (len(issues) + 1)
        issues.append({"url": url, "title": args[args.index("--title") + 1], "body": body})
        json.dump(issues, open(store, "w"))
        entry["body"] = body
        print("Creating issue in acme/shop")
        print(url)
    elif args[:2] == ["issue", "list"]:
        word = args[args.index("--search") + 1].split()[0]
        found = [i["url"] for i in issues if word in i["body"]]
        if found:
            print(found[0])
    else:
        sys.exit("fake gh: unexpected call %r" % (args,))
    with open(os.environ["FAKE_GH_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(entry) + "\\n")
"""


@dataclass
class Step:
    code: int
    err: str
    outputs: dict[str, str]


@pytest.fixture
def gh(tmp_path: Path) -> Path:
    """A directory holding the fake ``gh``; its log and issues beside it."""
    directory = tmp_path / "fake-bin"
    directory.mkdir()
    program = directory / "gh"
    program.write_text(f"#!{sys.executable}\n" + textwrap.dedent(FAKE_GH), encoding="utf-8")
    program.chmod(0o755)
    return directory


def calls(gh: Path) -> list[dict[str, Any]]:
    log = gh.parent / "gh.log"
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def run(step: dict[str, Any], cwd: Path, tmp_path: Path, gh: Path, env: dict[str, str]) -> Step:
    """The step's script as the runner runs it, with the env its ``env:`` gives and the runner's files."""
    runner = tmp_path / "runner"
    (runner / "temp").mkdir(parents=True, exist_ok=True)
    output = runner / f"output-{step['id']}"
    output.write_text("")
    full = tool_env(GITHUB_ACTIONS="true", GITHUB_OUTPUT=str(output), RUNNER_TEMP=str(runner / "temp"),
                    GITHUB_EVENT_NAME="pull_request", GITHUB_BASE_REF="main", GITHUB_WORKSPACE=str(cwd),
                    GITHUB_STEP_SUMMARY=str(runner / "summary.md"), FAKE_GH_LOG=str(gh.parent / "gh.log"),
                    FAKE_GH_ISSUES=str(gh.parent / "issues.json"))
    full["PATH"] = f"{gh}:{full['PATH']}"
    for var, value in step["env"].items():
        name = value.strip("${} ").removeprefix("inputs.")
        if var.startswith("INPUT_"):
            full[var] = step["defaults"][name]
        elif var == "DEFAULT_BRANCH":
            full[var] = "main"
        else:
            full[var] = env.get(var, "")
    script = runner / f"{step['id']}.sh"
    script.write_text(step["run"], encoding="utf-8")
    result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=full,
                            capture_output=True, text=True, timeout=120, check=False)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if line)
    return Step(result.returncode, result.stderr, outputs)
