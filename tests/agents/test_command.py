"""The ``command`` agent kind, driven through the real CLI with a real config directory.

Every agent here is a small Python script written to a temporary directory and run as
``[sys.executable, script, ...]``; it reports what it saw by writing files the test reads back.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo, make_diff

APP_DIFF = make_diff("app.py", ["import os", "x = 1", "y = 2"])


# ---------------------------------------------------------------------------- helpers


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / "scripts" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def agent(agent_id: str, program: Path, *args: str | Path, **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": agent_id, "name": agent_id, "description": f"test agent {agent_id}",
        "kind": "command", "command": [sys.executable, str(program), *map(str, args)],
        "timeout_s": 5,
    }
    entry.update(fields)
    return entry


def write_config(tmp_path: Path, agents: list[dict[str, Any]],
                 policies: list[dict[str, Any]] | None = None) -> Path:
    """A config dir: these agents, one ``always`` policy dispatching them all, and no rules."""
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    if policies is None:
        policies = [{"id": "everything", "description": "every change, every agent",
                     "trigger": {"type": "always"}, "dispatch": [a["id"] for a in agents]}]
    files = {
        "review-agents.json": {"version": 1, "agents": agents},
        "review-composition.json": {"version": 1, "policies": policies},
        "review-rules.json": {"version": 1, "rules": []},
    }
    for name, data in files.items():
        (cfg / name).write_text(json.dumps(data, indent=2), encoding="utf-8")
    return cfg


def review(cli: Any, cfg: Path, diff: str | bytes = APP_DIFF, *extra: str) -> tuple[Any, dict[str, Any]]:
    data = diff.encode() if isinstance(diff, str) else diff
    result = cli("--config", str(cfg), "--diff", "-", "--format", "json", *extra, stdin=data)
    assert result.out, result.err
    return result, result.json()


def agent_result(report: dict[str, Any], agent_id: str) -> dict[str, Any]:
    return next(a for a in report["agents"] if a["id"] == agent_id)


def process_gone(pid: int) -> bool:
    """True once ``pid`` no longer runs. A killed process whose parent died too may linger as a
    zombie until init reaps it; it runs no code, so it counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_gone(pid: int, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if process_gone(pid):
            return True
        time.sleep(0.05)
    return process_gone(pid)


def read_pid(path: Path, within: float = 2.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if text.strip():
            return int(text)
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


PRINT_FINDINGS = """\
    import json, sys
    sys.stdin.read()
    print(json.dumps({payload}))
"""


def printing(tmp_path: Path, name: str, payload: Any) -> Path:
    return script(tmp_path, name, PRINT_FINDINGS.format(payload=repr(payload)))


# ---------------------------------------------------------------------------- config


def test_the_config_used_by_these_tests_validates(cli, tmp_path: Path) -> None:
    prog = printing(tmp_path, "ok.py", [])
    cfg = write_config(tmp_path, [agent("one", prog), agent("two", prog, input="file")])
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 0, result.err


# ---------------------------------------------------------------------------- output formats


def test_findings_object_is_read_with_every_field(cli, tmp_path: Path) -> None:
    prog = printing(tmp_path, "finder.py", {"findings": [{
        "severity": "major", "message": "os is imported but unused", "rule_id": "unused-import",
        "category": "maintainability", "file": "app.py", "line": 1, "end_line": 1,
        "recommendation": "remove the import", "confidence": 0.9,
    }]})
    cfg = write_config(tmp_path, [agent("finder", prog)])
    result, report = review(cli, cfg)
    assert result.code == 1
    assert report["decision"] == "needs_fixes"
    status = agent_result(report, "finder")
    assert (status["kind"], status["status"], status["attempts"], status["error"]) == \
        ("command", "completed", 1, None)
    assert status["files"] == ["app.py"]
    [finding] = report["findings"]
    assert finding["agent"] == "finder"
    assert finding["severity"] == "major"
    assert finding["message"] == "os is imported but unused"
    assert finding["rule_id"] == "unused-import"
    assert finding["category"] == "maintainability"
    assert (finding["file"], finding["line"], finding["end_line"]) == ("app.py", 1, 1)
    assert finding["recommendation"] == "remove the import"
    assert finding["confidence"] == 0.9
    assert finding["fingerprint"]


def test_a_bare_list_of_findings_is_accepted(cli, tmp_path: Path) -> None:
    prog = printing(tmp_path, "finder.py", [
        {"severity": "warning", "message": "magic number", "file": "app.py", "line": 2},
        {"severity": "info", "message": "consider a docstring"},
    ])
    cfg = write_config(tmp_path, [agent("finder", prog)])
    result, report = review(cli, cfg)
    assert result.code == 0
    assert report["decision"] == "pass_with_warnings"
    assert agent_result(report, "finder")["status"] == "completed"
    assert [(f["severity"], f["message"], f["file"], f["line"]) for f in report["findings"]] == [
        ("warning", "magic number", "app.py", 2),
        ("info", "consider a docstring", None, None),
    ]


def test_an_empty_list_is_a_clean_review(cli, tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [agent("quiet", printing(tmp_path, "quiet.py", {"findings": []}))])
    result, report = review(cli, cfg)
    assert result.code == 0
    assert report["decision"] == "pass"
    assert agent_result(report, "quiet")["status"] == "completed"
    assert report["coverage"]["files_reviewed"] == 1


SARIF_AGENT = """\
    import json, os, sys
    sys.stdin.read()
    root = os.getcwd()

    def result(rule, level, uri, start, end=None):
        region = {"startLine": start}
        if end is not None:
            region["endLine"] = end
        out = {"ruleId": rule, "message": {"text": rule + " here"},
               "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri},
                                                   "region": region}}]}
        if level is not None:
            out["level"] = level
        return out

    print(json.dumps({"version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "fake-lint", "rules": [
            {"id": "R-default", "defaultConfiguration": {"level": "error"},
             "help": {"text": "follow the rule"}, "properties": {"category": "security"}},
        ]}},
        "results": [
            result("R-error", "error", "src/app.py", 1, 2),
            result("R-warning", "warning", "file://" + root + "/src/app.py", 3),
            result("R-note", "note", "./src/app.py", 4),
            result("R-none", "none", "src/app.py", 5),
            result("R-default", None, "src/app.py", 6),
            {"ruleId": "R-pass", "kind": "pass", "message": {"text": "fine"}},
        ],
    }]}))
"""


def test_sarif_levels_locations_and_rules_become_findings(cli, repo: GitRepo, tmp_path: Path) -> None:
    repo.branch("feature")
    repo.write("src/app.py", "".join(f"line{n} = {n}\n" for n in range(1, 7)))
    cfg = write_config(tmp_path, [agent("lint", script(tmp_path, "sarif.py", SARIF_AGENT),
                                        output="sarif")])
    result = cli("--config", str(cfg), "--format", "json")
    report = result.json()
    assert agent_result(report, "lint")["status"] == "completed", report["agents"]
    by_rule = {f["rule_id"]: f for f in report["findings"]}
    assert {rule: f["severity"] for rule, f in by_rule.items()} == {
        "R-error": "major", "R-warning": "warning", "R-note": "info", "R-none": "info",
        "R-default": "major",
    }
    # Relative, ./-prefixed and absolute file:// URIs inside the repository all end up relative.
    assert {f["file"] for f in report["findings"]} == {"src/app.py"}
    assert {rule: (f["line"], f["end_line"]) for rule, f in by_rule.items()} == {
        "R-error": (1, 2), "R-warning": (3, 3), "R-note": (4, 4), "R-none": (5, 5),
        "R-default": (6, 6),
    }
    assert by_rule["R-default"]["recommendation"] == "follow the rule"
    assert by_rule["R-default"]["category"] == "security"
    assert by_rule["R-error"]["message"] == "R-error here"
    assert result.code == 1 and report["decision"] == "needs_fixes"


# ---------------------------------------------------------------------------- what the agent gets


RECORD_STDIN = """\
    import sys
    data = sys.stdin.buffer.read()
    with open(sys.argv[1], "wb") as out:
        out.write(data)
    print("[]")
"""


def test_stdin_carries_exactly_the_diff_of_the_agents_scope(cli, tmp_path: Path) -> None:
    py_part = make_diff("app.py", ["x = 1", "y = 2"])
    doc_part = make_diff("docs/guide.md", ["# Guide", "", "Text."])
    prog = script(tmp_path, "record.py", RECORD_STDIN)
    seen_py, seen_all = tmp_path / "py.diff", tmp_path / "all.diff"
    cfg = write_config(
        tmp_path, [agent("py-only", prog, seen_py), agent("every-file", prog, seen_all)],
        policies=[
            {"id": "python", "description": "python files", "trigger": {"type": "paths", "paths": ["*.py"]},
             "dispatch": ["py-only"]},
            {"id": "everything", "description": "all files", "trigger": {"type": "always"},
             "dispatch": ["every-file"]},
        ])
    result, report = review(cli, cfg, py_part + doc_part)
    assert result.code == 0, report["agents"]
    assert agent_result(report, "py-only")["files"] == ["app.py"]
    assert seen_py.read_bytes() == py_part.encode()
    assert seen_all.read_bytes() == (py_part + doc_part).encode()


def test_stdin_left_unread_does_not_break_the_agent(cli, tmp_path: Path) -> None:
    big = make_diff("big.py", [f"value_{n} = {'x' * 100!r}" for n in range(5000)])
    prog = script(tmp_path, "deaf.py", "print('[]')\n")
    cfg = write_config(tmp_path, [agent("deaf", prog)])
    result, report = review(cli, cfg, big)
    assert agent_result(report, "deaf")["status"] == "completed", report["agents"]
    assert result.code == 0


RECORD_FILE_ARG = """\
    import json, sys
    path = sys.argv[-1]
    with open(path, "rb") as diff:
        content = diff.read()
    record = {"argv": sys.argv[1:], "stdin": sys.stdin.read(), "content": content.decode()}
    with open(sys.argv[1], "w") as out:
        json.dump(record, out)
    print("[]")
"""


def test_input_file_appends_the_path_of_the_diff_as_last_argument(cli, tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    prog = script(tmp_path, "record_file.py", RECORD_FILE_ARG)
    cfg = write_config(tmp_path, [agent("filer", prog, record, "--strict", input="file")])
    result, report = review(cli, cfg)
    assert agent_result(report, "filer")["status"] == "completed", report["agents"]
    assert result.code == 0
    seen = json.loads(record.read_text())
    assert seen["argv"][:2] == [str(record), "--strict"]
    assert len(seen["argv"]) == 3
    assert seen["content"] == APP_DIFF
    assert seen["stdin"] == ""
    assert not Path(seen["argv"][-1]).exists(), "the temporary diff file outlived the run"


RECORD_ENV = """\
    import json, os, sys
    sys.stdin.read()
    with open(sys.argv[1], "w") as out:
        json.dump({"files": os.environ.get("REVIEW_GATE_FILES"), "cwd": os.getcwd()}, out)
    print("[]")
"""


def test_review_gate_files_lists_the_scoped_paths(cli, tmp_path: Path) -> None:
    diff = (make_diff("pkg/b.py", ["b = 2"]) + make_diff("a.py", ["a = 1"])
            + make_diff("notes.md", ["hello"]))
    record = tmp_path / "env.json"
    cfg = write_config(
        tmp_path, [agent("env", script(tmp_path, "env.py", RECORD_ENV), record)],
        policies=[{"id": "python", "description": "python", "trigger": {"type": "paths", "paths": ["*.py"]},
                   "dispatch": ["env"]},
                  {"id": "fallback", "description": "always", "trigger": {"type": "always"},
                   "dispatch": ["spare"]}])
    agents = json.loads((cfg / "review-agents.json").read_text())
    agents["agents"].append(agent("spare", printing(tmp_path, "spare.py", [])))
    (cfg / "review-agents.json").write_text(json.dumps(agents))
    _, report = review(cli, cfg, diff)
    assert agent_result(report, "env")["status"] == "completed", report["agents"]
    assert json.loads(json.loads(record.read_text())["files"]) == ["a.py", "pkg/b.py"]


def test_cwd_is_the_repository_root_or_the_config_directory(cli, repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", "x = 1\n")
    prog = script(tmp_path, "env.py", RECORD_ENV)
    in_repo, in_config = tmp_path / "repo-cwd.json", tmp_path / "config-cwd.json"
    cfg = write_config(tmp_path, [agent("at-repo", prog, in_repo),
                                  agent("at-config", prog, in_config, cwd="config")])
    result = cli("--config", str(cfg), "--format", "json")
    assert result.code == 0, result.out
    assert Path(json.loads(in_repo.read_text())["cwd"]).resolve() == repo.root.resolve()
    assert Path(json.loads(in_config.read_text())["cwd"]).resolve() == cfg.resolve()


# ---------------------------------------------------------------------------- failures


def test_a_command_that_does_not_exist_fails_and_makes_the_run_incomplete(cli, tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [{
        "id": "ghost", "name": "ghost", "description": "not installed", "kind": "command",
        "command": ["review-gate-test-no-such-tool", "--check"],
    }])
    result, report = review(cli, cfg)
    assert result.code == 3
    assert report["decision"] == "incomplete"
    assert report["metrics"]["missing_inputs"] == 1
    status = agent_result(report, "ghost")
    assert status["status"] == "failed"
    assert "review-gate-test-no-such-tool" in status["error"]
    assert "not found" in status["error"]


HANG = """\
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(sys.argv[1], "w") as out:
        out.write(str(child.pid))
    time.sleep(60)
"""


def test_a_hung_command_is_killed_with_its_children_at_the_deadline(cli, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    cfg = write_config(tmp_path, [agent("sleepy", script(tmp_path, "hang.py", HANG), pid_file,
                                        timeout_s=1)])
    started = time.monotonic()
    result, report = review(cli, cfg)
    elapsed = time.monotonic() - started
    assert elapsed < 5, f"the run took {elapsed:.1f} s"
    assert result.code == 3
    assert report["decision"] == "incomplete"
    status = agent_result(report, "sleepy")
    assert status["status"] == "timed_out"
    assert "1 s deadline" in status["error"]
    assert 1 <= status["duration_s"] < 3
    child = read_pid(pid_file)
    assert wait_gone(child), f"child process {child} survived the deadline"


def test_a_hung_agent_does_not_lose_the_other_agents_findings(cli, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    finder = printing(tmp_path, "finder.py", [
        {"severity": "major", "message": "hard-coded value", "file": "app.py", "line": 2}])
    cfg = write_config(tmp_path, [
        agent("sleepy", script(tmp_path, "hang.py", HANG), pid_file, timeout_s=1),
        agent("finder", finder),
    ])
    result, report = review(cli, cfg)
    assert result.code == 3
    assert agent_result(report, "sleepy")["status"] == "timed_out"
    assert agent_result(report, "finder")["status"] == "completed"
    assert [(f["agent"], f["message"]) for f in report["findings"]] == [("finder", "hard-coded value")]
    assert report["metrics"]["major"] == 1
    assert wait_gone(read_pid(pid_file))


LEAVES_A_CHILD = """\
    import json, subprocess, sys
    sys.stdin.read()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(sys.argv[1], "w") as out:
        out.write(str(child.pid))
    print(json.dumps([{"severity": "warning", "message": "left a helper running"}]), flush=True)
"""


def test_a_child_left_holding_stdout_neither_hangs_the_run_nor_survives_it(cli, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    cfg = write_config(tmp_path, [agent("leaky", script(tmp_path, "leaky.py", LEAVES_A_CHILD),
                                        pid_file, timeout_s=4)])
    started = time.monotonic()
    result, report = review(cli, cfg)
    assert time.monotonic() - started < 3
    status = agent_result(report, "leaky")
    assert status["status"] == "completed", status
    assert [f["message"] for f in report["findings"]] == ["left a helper running"]
    assert result.code == 0
    assert wait_gone(read_pid(pid_file))


CRASH = """\
    import sys
    sys.stdin.read()
    sys.stderr.write("x" * 9000 + "\\nTraceback (most recent call last):\\nValueError: database exploded\\n")
    sys.exit(1)
"""


def test_a_crash_fails_with_the_tail_of_stderr(cli, tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [agent("crasher", script(tmp_path, "crash.py", CRASH))])
    result, report = review(cli, cfg)
    assert result.code == 3
    status = agent_result(report, "crasher")
    assert status["status"] == "failed"
    assert status["attempts"] == 1
    assert "exited 1" in status["error"]
    assert status["error"].endswith("ValueError: database exploded")
    assert len(status["error"]) < 2500, "the whole stderr went into the report"


def test_output_that_is_not_json_fails(cli, tmp_path: Path) -> None:
    prog = script(tmp_path, "chatty.py", "import sys\nsys.stdin.read()\nprint('All good, no issues!')\n")
    cfg = write_config(tmp_path, [agent("chatty", prog)])
    result, report = review(cli, cfg)
    assert result.code == 3
    status = agent_result(report, "chatty")
    assert status["status"] == "failed"
    assert "not JSON" in status["error"]
    assert "All good" in status["error"]


def test_sarif_agent_printing_findings_json_fails(cli, tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [agent("confused", printing(tmp_path, "confused.py", []), output="sarif")])
    result, report = review(cli, cfg)
    assert result.code == 3
    assert "not SARIF" in agent_result(report, "confused")["error"]


@pytest.mark.parametrize(("bad", "expected"), [
    ({"message": "no severity given"}, "severity: Field required"),
    ({"severity": "high", "message": "severity from another tool"}, "'high'"),
])
def test_a_finding_without_a_valid_severity_fails_naming_it(cli, tmp_path: Path, bad: dict[str, Any],
                                                            expected: str) -> None:
    prog = printing(tmp_path, "sloppy.py", {"findings": [
        {"severity": "info", "message": "fine"}, bad]})
    cfg = write_config(tmp_path, [agent("sloppy", prog)])
    result, report = review(cli, cfg)
    assert result.code == 3
    status = agent_result(report, "sloppy")
    assert status["status"] == "failed"
    assert "finding 1" in status["error"]
    assert expected in status["error"]
    assert report["findings"] == [], "a half-valid output must not count"


FLOOD = """\
    import os, sys
    with open(sys.argv[1], "w") as out:
        out.write(str(os.getpid()))
    chunk = b"[" * (1 << 20)
    for _ in range(100):
        sys.stdout.buffer.write(chunk)
"""


def test_printing_100_mb_fails_fast_at_the_output_limit(cli, tmp_path: Path) -> None:
    pid_file = tmp_path / "flood.pid"
    cfg = write_config(tmp_path, [agent("flood", script(tmp_path, "flood.py", FLOOD), pid_file)])
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    started = time.monotonic()
    result, report = review(cli, cfg)
    elapsed = time.monotonic() - started
    peak_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert elapsed < 4, f"took {elapsed:.1f} s"
    assert result.code == 3
    status = agent_result(report, "flood")
    assert status["status"] == "failed"
    assert "printed more than 10000000 bytes" in status["error"]
    assert "max_output_bytes" in status["error"]
    assert (peak_after - peak_before) < 60 * 1024, "the output was buffered beyond the limit"
    assert wait_gone(read_pid(pid_file))


def test_max_output_bytes_is_configurable(cli, tmp_path: Path) -> None:
    prog = script(tmp_path, "wordy.py", "import json\nprint(json.dumps([{'severity': 'info', "
                                        "'message': 'x' * 5000}]))\n")
    cfg = write_config(tmp_path, [agent("wordy", prog, max_output_bytes=2048)])
    _, report = review(cli, cfg)
    assert "printed more than 2048 bytes" in agent_result(report, "wordy")["error"]


# ---------------------------------------------------------------------------- retries and required


FLAKY = """\
    import json, sys
    sys.stdin.read()
    counter = sys.argv[1]
    try:
        with open(counter) as f:
            runs = int(f.read())
    except FileNotFoundError:
        runs = 0
    with open(counter, "w") as f:
        f.write(str(runs + 1))
    if runs < int(sys.argv[2]):
        sys.stderr.write("backend busy\\n")
        sys.exit(75)
    print(json.dumps([{"severity": "warning", "message": "found on a retry"}]))
"""


def test_exit_75_is_retried(cli, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    cfg = write_config(tmp_path, [agent("flaky", script(tmp_path, "flaky.py", FLAKY), counter, 1,
                                        retries=1)])
    result, report = review(cli, cfg)
    status = agent_result(report, "flaky")
    assert (status["status"], status["attempts"]) == ("completed", 2), status
    assert counter.read_text() == "2"
    assert [f["message"] for f in report["findings"]] == ["found on a retry"]
    assert result.code == 0 and report["decision"] == "pass_with_warnings"


def test_exit_75_every_time_fails_after_the_last_retry(cli, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    cfg = write_config(tmp_path, [agent("down", script(tmp_path, "flaky.py", FLAKY), counter, 99,
                                        retries=1)])
    result, report = review(cli, cfg)
    status = agent_result(report, "down")
    assert (status["status"], status["attempts"]) == ("failed", 2), status
    assert "75" in status["error"] and "backend busy" in status["error"]
    assert result.code == 3


def test_other_exit_codes_are_not_retried(cli, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    prog = script(tmp_path, "broken.py", """\
        import sys
        with open(sys.argv[1], "a") as f:
            f.write("x")
        sys.exit(2)
    """)
    cfg = write_config(tmp_path, [agent("broken", prog, counter, retries=3)])
    _, report = review(cli, cfg)
    assert agent_result(report, "broken")["attempts"] == 1
    assert counter.read_text() == "x"


def test_a_failing_optional_agent_is_no_missing_input_but_fails_the_gate_closed_unless_it_fails_open(
        cli, tmp_path: Path) -> None:
    # Issue 20: an optional agent that was run and failed left the gate at pass.
    cfg = write_config(tmp_path, [
        agent("optional", script(tmp_path, "crash.py", CRASH), required=False),
        agent("main", printing(tmp_path, "clean.py", [])),
    ])
    result, report = review(cli, cfg)
    status = agent_result(report, "optional")
    assert (status["status"], status["required"]) == ("failed", False)
    assert "database exploded" in status["error"]
    assert (report["metrics"]["missing_inputs"], report["metrics"]["agents_failed"]) == (0, 1)
    assert (report["decision"], result.code) == ("incomplete", 3)
    cfg = write_config(tmp_path, [
        agent("optional", script(tmp_path, "crash.py", CRASH), required=False, on_failure="fail_open"),
        agent("main", printing(tmp_path, "clean.py", [])),
    ])
    result, report = review(cli, cfg)
    assert (report["metrics"]["agents_failed"], report["metrics"]["agents_skipped"]) == (0, 1)
    assert (report["decision"], result.code) == ("pass_with_warnings", 0)
