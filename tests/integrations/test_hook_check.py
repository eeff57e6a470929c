"""Hooks that prove they run: `init --hooks` writes the running review-gate by its absolute path,
and `review-gate hook check` runs the project's hook settings as the host would."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import GitRepo, env_without_ci

INSECURE = "import requests\nr = requests.get(url, verify=False, timeout=5)\n"


def run(argv: list[str], cwd: Path, path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess[str]:
    """A real process, with a PATH that does not hold review-gate (as a host's may not)."""
    env = {**env_without_ci(), "PATH": path}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=300, check=False)


def test_init_writes_a_path_that_runs_without_the_path_variable(repo: GitRepo, review_gate_bin: list[str]) -> None:
    done = run([*review_gate_bin, "init", "--hooks", "claude-code"], repo.root)
    assert done.returncode == 0, done.stderr
    assert "hook check" in done.stdout and "this machine's" in done.stdout
    settings = json.loads((repo.root / ".claude" / "settings.json").read_text(encoding="utf-8"))
    command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    program = command.split(" hook ")[0]
    assert os.path.isabs(program.split(" ")[0].strip("'"))
    checked = run([*review_gate_bin, "hook", "check"], repo.root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Stop: ran" in checked.stdout and "answer: allow" in checked.stdout
    assert "an edit of .review-gate/review-rules.json (Write): ran" in checked.stdout
    assert "answer: deny" in checked.stdout


def test_check_says_the_gate_would_block_a_failing_change(repo: GitRepo, review_gate_bin: list[str]) -> None:
    assert run([*review_gate_bin, "init", "--hooks", "claude-code"], repo.root).returncode == 0
    repo.write("app.py", INSECURE)
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 0
    assert "Stop: ran" in checked.stdout and "answer: block" in checked.stdout
    assert "git commit (Bash): ran" in checked.stdout and checked.stdout.count("answer: deny") == 2


def test_a_bare_name_the_path_lacks_is_the_silent_exit_127(repo: GitRepo, review_gate_bin: list[str]) -> None:
    """The README's old way: `review-gate hook ...` with review-gate only in a virtual environment."""
    hook = {"type": "command", "command": "review-gate hook claude-code --budget 50", "timeout": 60}
    repo.write(".claude/settings.json", json.dumps({"hooks": {
        "Stop": [{"hooks": [hook]}], "PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}))
    checked = run([*review_gate_bin, "hook", "check"], repo.root)
    assert checked.returncode == 1
    assert "`review-gate`, which is not on this PATH" in checked.stdout and "exit 127" in checked.stdout
    assert "does not send Write, Edit, MultiEdit, NotebookEdit" in checked.stdout
    assert "fix: run `review-gate init --hooks claude-code`" in checked.stdout
    # init points the existing entries at this review-gate, keeping their place
    assert run([*review_gate_bin, "init", "--hooks", "claude-code"], repo.root).returncode == 0
    settings = json.loads((repo.root / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert len(settings["hooks"]["Stop"]) == 1
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"] != hook["command"]


def test_no_settings_is_a_usage_error(repo: GitRepo, review_gate_bin: list[str]) -> None:
    checked = run([*review_gate_bin, "hook", "check"], repo.root)
    assert checked.returncode == 2 and "init --hooks" in checked.stderr


def _configured(repo: GitRepo, program: str, tail: str) -> None:
    hook = {"type": "command", "command": f"{program} hook claude-code --budget 50{tail}", "timeout": 60}
    repo.write(".claude/settings.json", json.dumps({"hooks": {
        "Stop": [{"hooks": [hook]}],
        "PreToolUse": [{"matcher": "Bash|Write|Edit|MultiEdit|NotebookEdit", "hooks": [hook]}]}}))


@pytest.mark.parametrize("tail, said", [
    (" --fail-on never", "--fail-on never: the gate never fails"),
    (" --fail-on=never", "--fail-on never: the gate never fails"),
    (" > /dev/null", "sends its standard output elsewhere"),
    (" >&2", "sends its standard output elsewhere"),
    (" || true", "its exit code is swallowed"),
    ("; true", "its exit code is swallowed"),
])
def test_a_hook_that_can_never_block_is_not_ok(repo: GitRepo, review_gate_bin: list[str], tail: str,
                                               said: str) -> None:
    _configured(repo, shlex.join(review_gate_bin), tail)
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert said in checked.stdout and "ok:" not in checked.stdout
    assert f"in {repo.root / '.claude' / 'settings.json'}" in checked.stdout


def test_a_hook_that_only_quiets_its_errors_is_ok(repo: GitRepo, review_gate_bin: list[str]) -> None:
    _configured(repo, shlex.join(review_gate_bin), " 2>/dev/null")
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_host_named_without_its_settings_file_is_a_usage_error(repo: GitRepo, review_gate_bin: list[str]) -> None:
    checked = run([*review_gate_bin, "hook", "check", "codex"], repo.root)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert f"{repo.root / '.codex' / 'hooks.json'} does not exist" in checked.stderr
    assert "review-gate init --hooks codex" in checked.stderr and "Traceback" not in checked.stderr


def _lax_config(tmp: Path) -> Path:
    """The built-in configuration with fail_on never: a run that finds anything still exits 0."""
    from review_gate.config.locations import builtin_dir

    lax = tmp / "lax"
    lax.mkdir()
    settings = json.loads((builtin_dir("config") / "review-gate.json").read_text(encoding="utf-8"))
    settings["gate"]["fail_on"] = "never"
    (lax / "review-gate.json").write_text(json.dumps(settings), encoding="utf-8")
    return lax


@pytest.mark.parametrize("where", ["repository", "command", "environment"])
def test_a_configuration_that_never_fails_is_a_hook_that_never_blocks(repo: GitRepo, review_gate_bin: list[str],
                                                                       tmp_path: Path, where: str) -> None:
    """A trial: `hook check` looked only at the command's words, so `"fail_on": "never"` in the
    configuration the hook reads (the repository's, a --config, $REVIEW_GATE_CONFIG in the
    command) passed as ok, while the real Stop let a failing change through."""
    lax = _lax_config(tmp_path)
    if where == "repository":
        (repo.root / ".review-gate").mkdir()
        (repo.root / ".review-gate" / "review-gate.json").write_text((lax / "review-gate.json").read_text())
        _configured(repo, shlex.join(review_gate_bin), "")
    elif where == "command":
        _configured(repo, shlex.join(review_gate_bin), f" --config {shlex.quote(str(lax))}")
    else:
        _configured(repo, f"REVIEW_GATE_CONFIG={shlex.quote(str(lax))} {shlex.join(review_gate_bin)}", "")
    repo.write("app.py", INSECURE)
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "fail_on never" in checked.stdout and "ok:" not in checked.stdout, checked.stdout


def test_a_shell_script_that_swallows_the_hooks_exit_code_is_not_ok(repo: GitRepo, review_gate_bin: list[str]) -> None:
    """A trial: `sh -c "review-gate hook ...; exit 0"` passed as ok where `|| true` did not."""
    program = shlex.join(review_gate_bin)
    hook = {"type": "command", "command": f"sh -c {shlex.quote(program + ' hook claude-code --budget 50; exit 0')}",
            "timeout": 60}
    repo.write(".claude/settings.json", json.dumps({"hooks": {
        "Stop": [{"hooks": [hook]}],
        "PreToolUse": [{"matcher": "Bash|Write|Edit|MultiEdit|NotebookEdit", "hooks": [hook]}]}}))
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 1 and "its exit code is swallowed" in checked.stdout, checked.stdout


def test_settings_the_last_commit_has_and_the_tree_lost_are_a_problem(repo: GitRepo,
                                                                      review_gate_bin: list[str]) -> None:
    """A trial: with .codex/hooks.json in place and .claude/settings.json deleted, a plain
    `hook check` checked Codex only and said ok."""
    assert run([*review_gate_bin, "init", "--hooks", "claude-code"], repo.root).returncode == 0
    assert run([*review_gate_bin, "init", "--hooks", "codex"], repo.root).returncode == 0
    repo.commit("hooks for both hosts")
    (repo.root / ".claude" / "settings.json").unlink()
    checked = run([*review_gate_bin, "hook", "check"], repo.root)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "claude-code" in checked.stdout and "settings.json" in checked.stdout and "deleted" in checked.stdout


def _hooked(repo: GitRepo, command: str) -> None:
    hook = {"type": "command", "command": command, "timeout": 60}
    repo.write(".claude/settings.json", json.dumps({"hooks": {
        "Stop": [{"hooks": [hook]}],
        "PreToolUse": [{"matcher": "Bash|Write|Edit|MultiEdit|NotebookEdit", "hooks": [hook]}]}}))


def test_a_shell_whose_exit_code_the_line_swallows_is_not_ok(repo: GitRepo, review_gate_bin: list[str]) -> None:
    """A trial: `bash -c "review-gate hook ..." || exit 0` passed as ok: the `-c` script was read
    and what followed the shell on the line was not."""
    script = shlex.join(review_gate_bin) + " hook claude-code --budget 50"
    _hooked(repo, f"bash -c {shlex.quote(script)} || exit 0")
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 1 and "its exit code is swallowed" in checked.stdout, checked.stdout


@pytest.mark.parametrize("where", ["local", "user"])
def test_hooks_the_host_is_told_to_skip_are_not_ok(repo: GitRepo, review_gate_bin: list[str], where: str) -> None:
    """A trial: `"disableAllHooks": true` in settings.local.json or the user's settings passed as ok,
    the check running the command itself where the host runs none."""
    assert run([*review_gate_bin, "init", "--hooks", "claude-code"], repo.root).returncode == 0
    settings = (repo.root / ".claude" / "settings.local.json" if where == "local"
                else Path(os.environ["HOME"]) / ".claude" / "settings.json")
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"disableAllHooks": True}), encoding="utf-8")
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "disableAllHooks" in checked.stdout and str(settings) in checked.stdout


def test_a_configuration_the_hosts_settings_point_at_is_the_one_checked(repo: GitRepo, review_gate_bin: list[str],
                                                                        tmp_path: Path) -> None:
    """A trial: REVIEW_GATE_CONFIG in the settings' `env` (which the host gives its hooks) naming a
    configuration with fail_on never passed as ok."""
    lax = _lax_config(tmp_path)
    assert run([*review_gate_bin, "init", "--hooks", "claude-code"], repo.root).returncode == 0
    repo.write(".claude/settings.local.json", json.dumps({"env": {"REVIEW_GATE_CONFIG": str(lax)}}))
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert f"({lax}) has fail_on never" in checked.stdout


def test_a_hook_that_exits_2_on_an_error_is_not_ok(repo: GitRepo, review_gate_bin: list[str]) -> None:
    """A trial: a flag the hook does not know (exit 2, a usage error) was reported as ok, the
    host then blocking every stop with that error for a reason."""
    _configured(repo, shlex.join(review_gate_bin), " --exit-zero")
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 1 and "ok:" not in checked.stdout, checked.stdout
    assert "exited 2" in checked.stdout and "unrecognized arguments: --exit-zero" in checked.stdout


@pytest.mark.parametrize("form", ["exec {program} hook claude-code --budget 50",
                                  "( {program} hook claude-code --budget 50 )"])
def test_shell_forms_that_run_the_hook_last_are_ok(repo: GitRepo, review_gate_bin: list[str], form: str) -> None:
    """A trial: `exec review-gate hook ...` was read as a program named `exec`, not on the PATH, and
    `(review-gate hook ...)` as a program named `(review-gate`."""
    _hooked(repo, form.format(program=shlex.join(review_gate_bin)))
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_fail_on_flag_is_not_blamed_on_the_configuration(repo: GitRepo, review_gate_bin: list[str]) -> None:
    _configured(repo, shlex.join(review_gate_bin), " --fail-on=never")
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 1 and "--fail-on never: the gate never fails" in checked.stdout
    assert "the configuration the hook judges with" not in checked.stdout, checked.stdout


def test_check_says_which_reviewers_the_hooks_run_with_a_key_and_without(
        repo: GitRepo, review_gate_bin: list[str]) -> None:
    """`hook check` printed `ok` while the hook ran no LLM reviewer (none fit its budget)."""
    assert run([*review_gate_bin, "init", "--hooks", "claude-code"], repo.root).returncode == 0
    checked = run([*review_gate_bin, "hook", "check", "claude-code"], repo.root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    lines = checked.stdout.splitlines()
    assert any(ln.startswith("  reviewers without the network, always run: ") and "secrets-scanner" in ln
               for ln in lines)
    anthropic = next(ln for ln in lines if "with ANTHROPIC_API_KEY" in ln)
    assert "build-reviewer" in anthropic and "security-reviewer" in anthropic
    assert "(NOT set here) run, their 180 s deadline clipped to 45 s (the --budget of 50 s less 5 s)" in anthropic
    assert "without it not run, counted as skipped" in anthropic
    assert any("with OPENAI_API_KEY" in ln and "test-reviewer" in ln for ln in lines)
    # and with the host: what a keyless Claude Code session gets instead
    host = next(ln for ln in lines if "with no key at all" in ln)
    assert "sub-agents" in host and "host_reviews: outside_ci" in host
