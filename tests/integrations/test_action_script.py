"""The action's gate step, run for real: its ``run:`` script, taken from action.yml, executed by
bash the way the runner does (``bash --noprofile --norc -eo pipefail``) in a clone with a pull
request branch, with the environment the step's ``env:`` gives it and the files the runner
provides ($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY, $RUNNER_TEMP)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.integrations.conftest import ACTION_FILE, PRIVATE_KEY, git, load_yaml, missing_formats, tool_env

# Every run renders these; a run that stops before rendering (exit 2) needs none of them.
RENDERED = missing_formats("github", "markdown", "sarif")
needs_formats = pytest.mark.skipif(bool(RENDERED), reason=f"output formats not written yet: {', '.join(RENDERED)}")


@dataclass
class StepResult:
    code: int
    out: str
    err: str
    outputs: dict[str, str]
    summary: str
    cwd: Path


@pytest.fixture(scope="module")
def gate_step() -> dict[str, Any]:
    action = load_yaml(ACTION_FILE)
    step: dict[str, Any] = next(s for s in action["runs"]["steps"] if s.get("id") == "gate")
    step["defaults"] = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    return step


@pytest.fixture
def pr(repo: GitRepo, tmp_path: Path) -> Path:
    """What actions/checkout leaves: a clone (origin/main fetched) on the pull request's branch."""
    repo.write("app.py", "def total(a, b):\n    return a + b\n")
    repo.commit("app")
    clone = tmp_path / "workspace"
    git(tmp_path, "clone", "-q", str(repo.root), str(clone))
    git(clone, "checkout", "-q", "-b", "feature")
    return clone


def commit(clone: Path, path: str, text: str) -> None:
    target = clone / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", f"change {path}")


@pytest.fixture
def run_step(gate_step: dict[str, Any], tmp_path: Path):
    def run(cwd: Path, event: str = "pull_request", given: dict[str, str] | None = None, **inputs: str) -> StepResult:
        runner = tmp_path / "runner"
        runner.mkdir(exist_ok=True)
        output, summary, temp = runner / "output", runner / "summary.md", runner / "temp"
        output.write_text("")
        summary.write_text("")
        temp.mkdir(exist_ok=True)
        env = tool_env(GITHUB_ACTIONS="true", GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary),
                       RUNNER_TEMP=str(temp), GITHUB_EVENT_NAME=event, GITHUB_WORKSPACE=str(cwd))
        env.pop("GITHUB_BASE_REF", None)
        if event == "pull_request":
            env["GITHUB_BASE_REF"] = "main"
        for var, value in gate_step["env"].items():
            # INPUT_X: the input's default unless the test gives it; the rest as the runner would.
            name = value.strip("${} ").removeprefix("inputs.")
            if var.startswith("INPUT_"):
                env[var] = inputs.pop(name.replace("-", "_"), gate_step["defaults"][name])
            elif var == "DEFAULT_BRANCH":
                env[var] = "main"
            else:
                env[var] = (given or {}).get(var, "")  # REVIEW_GATE_BIN_DIR: review-gate is already on PATH
        assert not inputs, f"not inputs of the action: {inputs}"
        script = runner / "gate.sh"
        script.write_text(gate_step["run"], encoding="utf-8")
        result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd,
                                env=env, capture_output=True, text=True, timeout=60, check=False)
        outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if line)
        return StepResult(result.returncode, result.stdout, result.stderr, outputs, summary.read_text(), cwd)

    return run


@needs_formats
def test_a_critical_finding_fails_the_step_with_exit_1_and_annotations(pr: Path, run_step) -> None:
    commit(pr, "deploy/key.pem", PRIVATE_KEY)
    result = run_step(pr, upload_sarif="true")
    assert result.code == 1, result.err
    assert result.outputs["decision"] == "fail"
    assert result.outputs["exit-code"] == "1"
    assert result.outputs["sarif-file"] == "review-gate.sarif"
    assert result.outputs["markdown-file"] == "review-gate.md"
    assert "--base origin/main" in result.err  # the PR's base branch, as actions/checkout fetched it
    assert (result.out + result.err).count("REVIEW: FAIL |") == 1  # the summary line, once, in the log
    assert "::error" in result.out and "deploy/key.pem" in result.out
    sarif = json.loads((pr / "review-gate.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    markdown = (pr / "review-gate.md").read_text().strip()
    assert markdown
    # The github format writes the job summary itself; the action adds no second copy.
    assert "REVIEW: FAIL" in result.summary, "the github format wrote no job summary"
    assert result.summary.count(markdown) <= 1


@needs_formats
def test_a_clean_change_passes_and_extra_report_files_are_written(pr: Path, run_step) -> None:
    commit(pr, "app.py", "def total(a, b):\n    return a + b\n\n\ndef double(a):\n    return 2 * a\n")
    result = run_step(pr, formats="text, json")
    assert result.code == 0, result.err
    # the built-in LLM reviewers had no key: they did not run, a warning, never a plain pass (issue 20)
    assert result.outputs["decision"] == "pass_with_warnings"
    assert result.outputs["exit-code"] == "0"
    assert "sarif-file" not in result.outputs  # upload-sarif defaults to false, sarif not asked for
    report = json.loads((pr / "review-gate.json").read_text())
    assert report["decision"] == "pass_with_warnings" and report["exit_code"] == 0
    assert "REVIEW: PASS" in (pr / "review-gate.txt").read_text()
    # The pull request's commits (merge-base with origin/main .. HEAD), not the base's history.
    assert report["source"] == "origin/main...HEAD"
    assert [f["path"] for f in report["classification"]["files"]] == ["app.py"]


@needs_formats
def test_fail_on_and_extra_args_reach_the_gate(pr: Path, run_step) -> None:
    commit(pr, "deploy/key.pem", PRIVATE_KEY)
    result = run_step(pr, fail_on="never", args="--filter-mode file  --timeout 30")
    assert result.code == 0, result.err
    assert result.outputs["decision"] == "fail"
    assert result.outputs["exit-code"] == "0"
    assert "--fail-on never --filter-mode file --timeout 30" in result.err


@needs_formats
def test_outside_a_pull_request_the_default_branch_is_the_base(pr: Path, run_step) -> None:
    commit(pr, "deploy/key.pem", PRIVATE_KEY)
    result = run_step(pr, event="push")
    assert result.code == 1, result.err
    assert "--base origin/main" in result.err


def test_an_unknown_base_is_exit_2_and_decision_error(pr: Path, run_step) -> None:
    result = run_step(pr, base="no-such-branch")
    assert result.code == 2, result.err
    assert result.outputs == {"decision": "error", "exit-code": "2"}
    assert "unknown git ref 'no-such-branch'" in result.err


def test_an_explicit_branch_name_is_found_as_origin_branch(pr: Path, run_step) -> None:
    git(pr, "branch", "-q", "-D", "main")  # a pull request checkout has no local main
    # An invalid --fail-on stops the gate before it reviews anything: the base is what is checked.
    result = run_step(pr, base="main", fail_on="bogus")
    assert "--base origin/main" in result.err
    assert result.code == 2 and result.outputs["decision"] == "error"


def test_inputs_are_data_never_shell_code(pr: Path, run_step, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for hostile in (f"$(touch {marker})", f"`touch {marker}`", f'"; touch {marker}; "', f"x\ntouch {marker}"):
        result = run_step(pr, config=hostile, args=hostile, base=hostile, formats=hostile)
        assert result.code == 2, result.err
        assert result.outputs["decision"] == "error"
        assert not marker.exists(), f"input {hostile!r} ran as shell code"


WEAK_GATE = json.dumps({"version": 1, "gate": {"conditions": [], "fail_on": "never"}})  # nothing ever fails


@needs_formats
def test_a_pull_request_cannot_weaken_the_configuration_that_judges_it(pr: Path, run_step) -> None:
    commit(pr, ".review-gate/review-gate.json", WEAK_GATE)
    commit(pr, "deploy/key.pem", PRIVATE_KEY)
    judged = run_step(pr)
    assert judged.code == 1, judged.err  # the base branch has no .review-gate/: the built-in configuration
    assert "deploy/key.pem" in judged.out

    as_changed = run_step(pr, config_from_base="false")
    assert as_changed.code == 0, as_changed.err  # what the pull request's own configuration would say


@needs_formats
def test_the_base_branch_configuration_is_used_when_it_has_one(repo: GitRepo, tmp_path: Path, run_step) -> None:
    repo.write(".review-gate/review-gate.json", WEAK_GATE)
    repo.commit("a lenient configuration, reviewed and merged")
    clone = tmp_path / "workspace"
    git(tmp_path, "clone", "-q", str(repo.root), str(clone))
    git(clone, "checkout", "-q", "-b", "feature")
    commit(clone, "deploy/key.pem", PRIVATE_KEY)
    result = run_step(clone)
    assert result.code == 0, result.err  # the base's own (lenient) policy decides, not the built-in one
    assert "review-gate-config." in result.err  # --config names the copy taken from the base


@needs_formats
def test_the_pull_requests_title_and_body_reach_the_reviewers_as_data(pr: Path, run_step, tmp_path: Path) -> None:
    commit(pr, "app.py", "def total(a, b):\n    return a + b + 1\n")
    pwned = tmp_path / "pwned"
    title = f"Fix totals $(touch {pwned})"
    body = f"Totals were off by one.\n\n`touch {pwned}` ${{{{ github.token }}}} \"'; touch {pwned}\n" + "é" * 40_000
    bundle = tmp_path / "bundle"
    result = run_step(pr, given={"PR_TITLE": title, "PR_BODY": body}, args=f"--bundle {bundle}")
    assert result.code == 0, result.err
    intent = (bundle / "intent.md").read_text(encoding="utf-8")
    assert intent.startswith(f"# {title}\n\nTotals were off by one.\n\n`touch {pwned}`")
    assert len(intent.encode("utf-8")) <= 64 * 1024  # a long body is cut to what an intent may hold
    assert not pwned.exists(), "the pull request's text ran as shell code"
    assert not list((tmp_path / "runner" / "temp").glob("review-gate-intent.*"))  # the file is removed
    off = run_step(pr, given={"PR_TITLE": title, "PR_BODY": body}, args=f"--bundle {bundle}", pr_description="false")
    assert off.code == 0 and not (bundle / "intent.md").exists()
    push = run_step(pr, event="push", args=f"--bundle {bundle}")
    assert push.code == 0 and not (bundle / "intent.md").exists()  # no pull request, no intent


@needs_formats
def test_a_pull_request_that_rewrites_the_script_judging_it_runs_nothing_of_its_own(
        repo: GitRepo, tmp_path: Path, run_step) -> None:
    """config-from-base: the base branch's lint agent (["python3", ".review-gate/lint.py"], cwd repo,
    as the docs write it) runs the base's copy of lint.py, never the pull request's rewrite."""
    from tests.hostile.lint_config import FORBIDDEN, NO_OP, write_lint_config

    write_lint_config(repo.root / ".review-gate")
    repo.commit("the team's lint, reviewed and merged")
    clone = tmp_path / "workspace"
    git(tmp_path, "clone", "-q", str(repo.root), str(clone))
    git(clone, "checkout", "-q", "-b", "feature")
    marker = tmp_path / "the-pull-request-ran"
    commit(clone, ".review-gate/lint.py", f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"
                                          + NO_OP)
    commit(clone, "app.py", FORBIDDEN)
    result = run_step(clone)
    assert result.code == 1, result.err
    assert result.outputs["decision"] == "fail"
    assert "app.py" in result.out and "FORBIDDEN on an added line" in result.out
    assert not marker.exists(), "the pull request's lint.py ran with the job's environment"


@needs_formats
def test_the_step_runs_no_module_the_pull_request_brings(pr: Path, run_step, tmp_path: Path) -> None:
    """The step reads the decision with Python in the checkout: a json.py there must not be imported."""
    marker = tmp_path / "the-pull-request-ran"
    commit(pr, "json.py", f"open({str(marker)!r}, 'w').write('ran')\n")
    commit(pr, "deploy/key.pem", PRIVATE_KEY)
    result = run_step(pr)
    assert result.code == 1, result.err
    assert not marker.exists(), "the pull request's json.py ran in the action's step"
    assert result.outputs["decision"] == "fail"
