"""Input errors that used to crash (exit 3 with a crash log): each is now a one- or two-line
message naming the input and exit 2, or, where the input is fine, a correct review."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from review_gate.config import builtin_dir
from tests.agents.test_command import agent, script, write_config
from tests.conftest import GitRepo, make_diff

DIFF = make_diff("app.py", ["x = 1"])
QUIET = "import sys\nsys.stdin.read()\nprint('[]')\n"


def assert_clean_error(result: Any, *names: str) -> None:
    """Exit 2, a short message naming each of ``names``, a fix, and no crash."""
    assert result.code == 2, result.out + result.err
    assert "internal error" not in result.err and "Traceback" not in result.err
    assert "fix:" in result.err
    for name in names:
        assert name in result.err, (name, result.err)
    assert not crash_logs()


def crash_logs() -> list[Path]:
    cache = Path.home() / ".cache" / "review-gate"
    return sorted(cache.glob("crash-*.log")) if cache.is_dir() else []


def quiet_config(tmp_path: Path) -> Path:
    return write_config(tmp_path, [agent("quiet", script(tmp_path, "quiet.py", QUIET))])


def builtin_copy(tmp_path: Path) -> Path:
    cfg = tmp_path / "cfg"
    shutil.copytree(builtin_dir("config"), cfg)
    return cfg


def edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def plan_files(cli: Any, *args: str, stdin: bytes | None = None) -> list[dict[str, Any]]:
    result = cli("plan", "--format", "json", *args, stdin=stdin)
    assert result.code == 0, result.err
    files: list[dict[str, Any]] = result.json()["facts"]["files"]
    return files


# ---------------------------------------------------------------------------- diffs


def test_files_named_with_a_space_that_are_empty_or_only_change_mode_are_reviewed(cli, repo: GitRepo) -> None:
    repo.write("run me.sh", "echo hi\n")
    repo.commit("a script")
    (repo.root / "run me.sh").chmod(0o755)
    repo.write("empty file.txt", "")
    repo.write("bin ary.dat", b"\x00\x01\x02")
    files = {f["path"]: f for f in plan_files(cli)}
    assert set(files) == {"run me.sh", "empty file.txt", "bin ary.dat"}
    assert files["empty file.txt"]["status"] == "added"
    assert (files["run me.sh"]["old_mode"], files["run me.sh"]["new_mode"]) == ("100644", "100755")
    result = cli("--format", "json", "--no-state")
    assert result.code == 0, result.err
    report = result.json()
    assert report["coverage"]["files_changed"] == 3
    # the binary file is listed as not inspected (no agent can read it); it does not block by default
    assert report["coverage"]["files_reviewed"] == 2 and report["coverage"]["unreviewed"] == []
    assert [(u["path"], u["kind"], u["counted"]) for u in report["coverage"]["not_inspected"]] == [
        ("bin ary.dat", "binary", False)]


def test_a_staged_empty_file_with_a_space_is_reviewed(cli, repo: GitRepo) -> None:
    repo.write("empty file.txt", "")
    repo.git("add", "empty file.txt")
    assert [f["path"] for f in plan_files(cli, "--staged")] == ["empty file.txt"]


@pytest.mark.parametrize(("quoted", "path"), [(b"x\\9", "x\\9"), (b"x\\400", "x\\400"),
                                              (b"caf\\303\\251", "caf\u00e9")])
def test_quoted_paths_with_escapes_git_never_writes_stay_literal(cli, quoted: bytes, path: str) -> None:
    diff = (b'diff --git "a/' + quoted + b'" "b/' + quoted + b'"\nnew file mode 100644\n--- /dev/null\n'
            b'+++ "b/' + quoted + b'"\n@@ -0,0 +1 @@\n+hello\n')
    assert [f["path"] for f in plan_files(cli, "--diff", "-", stdin=diff)] == [path]
    result = cli("--diff", "-", "--no-state", stdin=diff)
    assert result.code in (0, 1) and "internal error" not in result.err


def test_a_mode_line_that_is_not_utf8_is_read(cli) -> None:
    diff = b"diff --git a/x b/x\nnew file mode 100\xff44\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+hi\n"
    [change] = plan_files(cli, "--diff", "-", stdin=diff)
    assert change["path"] == "x" and change["status"] == "added"
    result = cli("--diff", "-", "--no-state", stdin=diff)
    assert result.code in (0, 1) and "internal error" not in result.err


# ---------------------------------------------------------------------------- config, baseline and bundle files


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("levels", [900, 3000])
def test_deeply_nested_json_in_config_is_a_config_error(cli, tmp_path: Path, levels: int) -> None:
    cfg = builtin_copy(tmp_path)
    (cfg / "review-gate.json").write_text('{"version": 1, "timeout_s": ' + deep(levels) + "}")
    for command in (["config", "validate"], ["--diff", "-", "--no-state"]):
        result = cli(*command, "--config", str(cfg), stdin=DIFF.encode())
        assert_clean_error(result, str(cfg / "review-gate.json"))


def test_deeply_nested_json_in_a_baseline_is_an_error_naming_it(cli, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"version": 1, "findings": ' + deep(3000) + "}")
    result = cli("--config", str(quiet_config(tmp_path)), "--diff", "-", "--no-state", "--baseline", str(baseline),
                 stdin=DIFF.encode())
    assert_clean_error(result, str(baseline), "nested too deeply")


def bundle_of_a_run(cli: Any, tmp_path: Path) -> Path:
    bundle = tmp_path / "bundle"
    result = cli("--config", str(quiet_config(tmp_path)), "--diff", "-", "--no-state", "--bundle", str(bundle),
                 stdin=DIFF.encode())
    assert result.code == 0, result.err
    return bundle


def test_deeply_nested_json_in_a_bundle_is_an_error_naming_it(cli, tmp_path: Path) -> None:
    bundle = bundle_of_a_run(cli, tmp_path)
    (bundle / "gaps.json").write_text(deep(3000))
    assert_clean_error(cli("replay", str(bundle)), str(bundle / "gaps.json"), "nested too deeply")


def test_a_bogus_fail_on_in_a_bundle_is_an_error_naming_it(cli, tmp_path: Path) -> None:
    bundle = bundle_of_a_run(cli, tmp_path)
    edit(bundle / "bundle.json", lambda d: d.update(fail_on="sometimes"))
    result = cli("replay", str(bundle))
    assert_clean_error(result, f"{bundle / 'bundle.json'}: /fail_on:")


@pytest.mark.parametrize(("number", "what"), [("1e400", "the number 1e400"), ("-1e400", "the number -1e400"),
                                              ("1" * 5000, "5000 digits")])
def test_a_number_too_large_in_config_is_a_config_error(cli, tmp_path: Path, number: str, what: str) -> None:
    cfg = builtin_copy(tmp_path)
    (cfg / "review-gate.json").write_text(
        '{\n  "version": 1,\n  "gate": {"conditions": [\n    {"metric": "critical", "op": ">", "value": '
        + number + ', "decision": "fail"}\n  ]}\n}\n')
    for command in (["config", "validate"], ["--diff", "-", "--no-state"]):
        result = cli(*command, "--config", str(cfg), stdin=DIFF.encode())
        assert_clean_error(result, f"{cfg / 'review-gate.json'}: /: invalid JSON at line 4: ", what)


def test_a_state_path_with_a_nul_is_a_config_error(cli, tmp_path: Path) -> None:
    cfg = builtin_copy(tmp_path)
    edit(cfg / "review-gate.json", lambda d: d.update(state_path="state\u0000.db"))
    for command in (["config", "validate"], ["--diff", "-"], ["history"]):
        result = cli(*command, "--config", str(cfg), stdin=DIFF.encode())
        assert_clean_error(result, f"{cfg / 'review-gate.json'}: /state_path: ", "NUL")


@pytest.mark.parametrize("where", ["rule", "domain"])
def test_an_inverted_bracket_range_in_a_glob_is_a_config_error(cli, tmp_path: Path, where: str) -> None:
    cfg = builtin_copy(tmp_path)
    if where == "rule":
        edit(cfg / "review-rules.json", lambda d: d["rules"][0].update(paths=["src/[z-a].py"]))
        pointer = f"{cfg / 'review-rules.json'}: /rules/0/paths/0: invalid glob 'src/[z-a].py'"
    else:
        edit(cfg / "review-domains.json", lambda d: d["domains"][0].update(paths=["[z-a]"]))
        pointer = f"{cfg / 'review-domains.json'}: /domains/0/paths/0: invalid glob '[z-a]'"
    for command in (["config", "validate"], ["--diff", "-", "--no-state"]):
        result = cli(*command, "--config", str(cfg), stdin=DIFF.encode())
        assert_clean_error(result, pointer, "bad character range")


def test_an_empty_rule_pattern_is_a_config_error(cli, tmp_path: Path) -> None:
    cfg = builtin_copy(tmp_path)
    rules = json.loads((cfg / "review-rules.json").read_text())["rules"]
    index = next(i for i, r in enumerate(rules) if r.get("pattern"))
    edit(cfg / "review-rules.json", lambda d: d["rules"][index].update(pattern=""))
    result = cli("config", "validate", "--config", str(cfg))
    assert_clean_error(result, f"/rules/{index}/pattern: rule '{rules[index]['id']}'", "matches every line")


def test_an_invalid_re2_pattern_names_its_rule(cli, tmp_path: Path) -> None:
    cfg = builtin_copy(tmp_path)
    rules = json.loads((cfg / "review-rules.json").read_text())["rules"]
    index = next(i for i, r in enumerate(rules) if r.get("pattern"))
    edit(cfg / "review-rules.json", lambda d: d["rules"][index].update(pattern="(unclosed"))
    result = cli("config", "validate", "--config", str(cfg))
    assert_clean_error(result, f"/rules/{index}/pattern: not a valid RE2 pattern",
                       f"(rule '{rules[index]['id']}')")


def test_half_a_surrogate_pair_in_config_is_a_config_error(cli, tmp_path: Path) -> None:
    cfg = builtin_copy(tmp_path)
    text = (cfg / "review-rules.json").read_text()
    rules = json.loads(text)["rules"]
    index = next(i for i, r in enumerate(rules) if r.get("pattern"))
    edit(cfg / "review-rules.json", lambda d: d["rules"][index].update(pattern="a\ud800"))
    result = cli("config", "validate", "--config", str(cfg))
    assert_clean_error(result, f"{cfg / 'review-rules.json'}: /: ", "\\ud800")


def without_permission_override() -> None:
    """In the child: as root, give up the capabilities that let root read what it may not
    (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so that file modes apply to it as to anyone."""
    if os.geteuid() != 0:
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP: gone after exec
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def test_an_unreadable_config_directory_is_a_config_error(tmp_path: Path, review_gate_bin: list[str]) -> None:
    cfg = builtin_copy(tmp_path)
    cfg.chmod(0o000)
    try:
        result = subprocess.run([*review_gate_bin, "config", "validate", "--config", str(cfg)], cwd=tmp_path,
                                capture_output=True, text=True, timeout=60, check=False,
                                preexec_fn=without_permission_override)
    finally:
        cfg.chmod(0o755)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{cfg}: /: cannot read the config directory: Permission denied" in result.stderr
    assert "fix:" in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------------------- command-line values


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999", "0", "-1", "3601"])
def test_a_timeout_that_is_not_a_finite_positive_number_is_refused(cli, tmp_path: Path, value: str) -> None:
    result = cli(f"--timeout={value}", "--config", str(quiet_config(tmp_path)), "--diff", "-", "--no-state",
                 stdin=DIFF.encode())
    # not a number at all is refused as typed; a number out of range says the range
    said = f"{value!r} is not a finite number" if value in ("nan", "inf", "-inf", "1e999") else "at most 3600 seconds"
    assert_clean_error(result, "--timeout", said)
    assert_clean_error(cli("agents", "check", "anything", f"--timeout={value}"), "--timeout")


def recorded_run(cli: Any, tmp_path: Path) -> Path:
    cfg = quiet_config(tmp_path)
    assert cli("--config", str(cfg), "--diff", "-", stdin=DIFF.encode()).code == 0
    return cfg


def test_history_limit_beyond_sqlites_range_shows_every_run(cli, tmp_path: Path) -> None:
    cfg = recorded_run(cli, tmp_path)
    listed = cli("history", "--limit", "100000000000000000000", "--config", str(cfg))
    assert listed.code == 0, listed.err
    assert len(listed.out.splitlines()) == 2  # the header and the one run
    refused = cli("history", "--limit", "1e20", "--config", str(cfg))
    assert refused.code == 2 and "--limit" in refused.err


def test_gc_days_beyond_any_date_drops_nothing_by_age(cli, tmp_path: Path) -> None:
    cfg = recorded_run(cli, tmp_path)
    result = cli("gc", "--days", "99999999999", "--config", str(cfg))
    assert result.code == 0, result.err
    assert result.out.strip() == "nothing to drop"
    assert len(cli("history", "--config", str(cfg)).out.splitlines()) == 2
    dropped = cli("gc", "--days", "99999999999", "--keep", "0", "--config", str(cfg))
    assert dropped.code == 0 and dropped.out.startswith("dropped 1 run")


# ---------------------------------------------------------------------------- the state database


def test_a_full_disk_while_recording_the_run_is_a_state_error(cli, tmp_path: Path, review_gate_bin: list[str]) -> None:
    """RLIMIT_FSIZE makes every write past the limit fail, as a full disk does (SQLite reports
    "database or disk is full" or a disk I/O error)."""
    recorded_run(cli, tmp_path)  # the store exists
    store = Path.home() / ".cache" / "review-gate" / "state.db"
    assert store.is_file()
    big = tmp_path / "big.diff"
    big.write_text(make_diff("notes.py", [f"x = {i}  # TODO item {i} " + "y" * 100 for i in range(3000)]))
    limit = store.stat().st_size

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = subprocess.run([*review_gate_bin, "--diff", str(big), "--format", "json", "--output", os.devnull],
                            capture_output=True, text=True, timeout=120, preexec_fn=cap, check=False)
    assert result.returncode == 2, result.stderr
    assert f"cannot write the run state {store}:" in result.stderr
    assert "fix:" in result.stderr and "internal error" not in result.stderr


# ---------------------------------------------------------------------------- a reader that goes away


@pytest.mark.parametrize("stderr", ["same pipe", "own pipe"])
def test_a_closed_pipe_ends_the_run_quietly(tmp_path: Path, review_gate_bin: list[str], stderr: str) -> None:
    big = tmp_path / "big.diff"
    big.write_text(make_diff("notes.py", [f"x = {i}  # TODO item {i}" for i in range(3000)]))
    process = subprocess.Popen([*review_gate_bin, "--diff", str(big), "--no-state"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT if stderr == "same pipe" else subprocess.PIPE)
    assert process.stdout is not None
    try:
        assert process.stdout.readline()  # `| head -1`
        process.stdout.close()
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 141
    assert b"Traceback" not in (err or b"") and b"Exception ignored" not in (err or b"")
    assert b"internal error" not in (err or b"")
    assert not crash_logs()


# ---------------------------------------------------------------------------- outside a repository


def test_outside_a_repository_a_git_review_fails_before_writing_anything(cli) -> None:
    before = sorted(Path.cwd().iterdir())
    result = cli()
    assert result.code == 2 and "not inside a git repository" in result.err
    assert sorted(Path.cwd().iterdir()) == before
    assert not (Path.home() / ".cache" / "review-gate" / "state.db").exists()


def test_a_diff_that_cannot_be_read_writes_no_state(cli, repo: GitRepo) -> None:
    result = cli("--diff", "no-such.diff")
    assert result.code == 2 and "no-such.diff" in result.err
    assert not (repo.root / ".review-gate").exists()
    malformed = cli("--diff", "-", stdin=b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n x\n")
    assert malformed.code == 2 and not (repo.root / ".review-gate").exists()


def test_a_diff_reviewed_outside_a_repository_keeps_its_state_in_the_user_cache(cli, tmp_path: Path) -> None:
    before = sorted(Path.cwd().iterdir())
    cfg = quiet_config(tmp_path)
    assert cli("--config", str(cfg), "--diff", "-", stdin=DIFF.encode()).code == 0
    assert sorted(Path.cwd().iterdir()) == before
    assert (Path.home() / ".cache" / "review-gate" / "state.db").is_file()
    listed = cli("history", "--config", str(cfg))
    assert listed.code == 0 and "stdin" in listed.out


def test_xdg_cache_home_moves_the_state_outside_a_repository(cli, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cli("--config", str(quiet_config(tmp_path)), "--diff", "-", stdin=DIFF.encode()).code == 0
    assert (tmp_path / "xdg" / "review-gate" / "state.db").is_file()



def test_a_name_ending_in_a_space_keeps_it(cli, repo: GitRepo) -> None:
    """git ends such a name on the +++ line with a tab; the space before it is the name's own."""
    repo.write("trail.py ", "password = 'hunter2hunter2'\n")
    files = plan_files(cli, "--offline")
    assert [f["path"] for f in files] == ["trail.py "]
    repo.git("add", "-A")
    repo.git("commit", "-qm", "trail")
    repo.git("mv", "trail.py ", "moved file.py ")
    [moved] = plan_files(cli, "--offline", "--staged")
    assert (moved["path"], moved["old_path"], moved["status"]) == ("moved file.py ", "trail.py ", "renamed")


@pytest.mark.parametrize("command", [[], ["sweep"]])
@pytest.mark.parametrize("value", ["0", "257", "99999999999999999999999"])
def test_concurrency_out_of_the_configs_range_is_refused(cli, repo: GitRepo, command: list[str], value: str) -> None:
    result = cli(*command, "--concurrency", value, "--offline")
    assert result.code == 2 and f"--concurrency {value}: must be from 1 to 256" in result.err


def test_a_version_of_true_is_not_version_1(cli, tmp_path: Path) -> None:
    config = builtin_copy(tmp_path)
    edit(config / "review-gate.json", lambda data: data.update(version=True))
    result = cli("config", "validate", "--config", str(config))
    assert result.code == 2 and "/version: expected an integer, got true" in result.err


@pytest.mark.parametrize("given", ["src", "src/", "./src"])
def test_explain_of_a_directory_names_it_and_the_fix(cli, repo: GitRepo, given: str) -> None:
    repo.write("src/app.py", "x = 1\n")
    result = cli("explain", given)
    assert_clean_error(result, f"explain {given}: a directory", "src/app.py")


@pytest.mark.parametrize("argv, said, fix", [
    (["--format", "nosuch"], "invalid choice: 'nosuch'", "review-gate run --help"),
    (["--fail-on", "nosuch"], "invalid choice: 'nosuch'", "review-gate run --help"),
    (["accepted", "--revoke", "abc"], "invalid int value: 'abc'", "review-gate accepted --help"),
    (["--config", ".", "plan"], "unrecognized arguments: plan", "name the command first"),
])
def test_a_flag_argparse_refuses_is_two_lines(repo: GitRepo, review_gate_bin: list[str], argv: list[str], said: str,
                                              fix: str) -> None:
    """A trial: a wrong choice printed the command's whole usage (14 lines) above the error, and no fix."""
    done = subprocess.run([*review_gate_bin, *argv], cwd=repo.root, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 2 and said in lines[0] and lines[1].startswith("  fix:") and fix in lines[1], done.stderr
    assert "usage:" not in done.stderr


@pytest.mark.parametrize("argv, name", [
    (["--base", ""], "--base is empty"), (["--shard", ""], "--shard is empty"), (["--diff", ""], "--diff is empty"),
    (["plan", "--head", ""], "--head is empty")])
def test_an_empty_value_is_refused_not_read_as_not_given(cli, repo: GitRepo, argv: list[str], name: str) -> None:
    """A trial: `--shard ""` (a CI matrix variable left unset) reviewed everything, `--base ""` the
    default branch, and `--diff ""` said it was a directory."""
    assert_clean_error(cli(*argv, "--offline", "--no-state") if argv[0] != "plan" else cli(*argv), name)


def test_errors_name_what_was_given(cli, repo: GitRepo, tmp_path: Path) -> None:
    """A trial: `--baseline DIR` and `--constitution DIR` said "no such file" of a directory, and
    `--timeout 1e400` echoed the `inf` it became, not what was typed."""
    folder = tmp_path / "folder"
    folder.mkdir()
    assert_clean_error(cli("--baseline", str(folder), "--offline", "--no-state"), f"--baseline {folder}: a directory")
    assert_clean_error(cli("--constitution", str(folder), "--offline", "--no-state"),
                       f"--constitution {folder}: a directory")
    assert_clean_error(cli("--timeout", "1e400", "--offline", "--no-state"), "'1e400' is not a finite number")


def test_a_repository_with_no_commit_and_a_bare_one_say_so(cli, tmp_path: Path) -> None:
    """A trial: `--base main` in a repository with no commit said "unknown git ref 'HEAD'", and a
    bare clone "not inside a git repository"."""
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    subprocess.run(["git", "init", "-q", str(fresh)], check=True)
    assert_clean_error(cli("--base", "main", "--offline", "--no-state", cwd=fresh), "no commit yet")
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    assert_clean_error(cli("--offline", "--no-state", cwd=bare), "a bare repository has no working tree")
