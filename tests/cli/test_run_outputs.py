"""The run command's outputs, exit codes and flags, through the CLI."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

from tests.conftest import GitRepo, env_without_ci, make_diff

MIXED = (make_diff("app/settings.py",
                   ["import requests", "requests.get(url, verify=False, timeout=5)", "x = 1  # TODO later"])
         + make_diff("keys/id.pem", ["-----BEGIN OPENSSH PRIVATE KEY-----"]))


def test_text_report_groups_by_severity_with_places_statuses_and_summary(cli) -> None:
    result = cli("--diff", "-", "--verbose", stdin=MIXED.encode())
    assert result.code == 1
    out = result.out
    assert "\x1b[" not in out  # plain text when not a terminal
    assert out.index("CRITICAL (1)") < out.index("MAJOR (1)") < out.index("INFO (1)")
    assert "keys/id.pem:1" in out
    assert "app/settings.py:2" in out
    assert "secrets-scanner" in out and "completed" in out
    assert "decision: fail" in out
    assert out.rstrip().splitlines()[-1] == "REVIEW: FAIL | issues=3 (critical=1) | missing_inputs=0"


def test_the_concise_text_report_is_a_line_a_finding_most_severe_first(cli) -> None:
    out = cli("--diff", "-", stdin=MIXED.encode()).out
    lines = out.splitlines()
    heads = [line for line in lines if not line.startswith(" ") and ": " in line and line.split(":")[0] in (
        "keys/id.pem", "app/settings.py")]
    assert [h.split(" ")[1] for h in heads] == ["critical", "major", "info"]
    assert heads[0].startswith("keys/id.pem:1:1: critical sec-private-key-01 [")
    assert heads[1].startswith("app/settings.py:2:") and "sec-tls-verify-01" in heads[1]
    assert lines[lines.index(heads[1]) + 1].startswith("  fix: Keep verification on")
    assert "decision: fail · 1 critical, 1 major, 1 info" in out
    assert out.rstrip().splitlines()[-1] == "REVIEW: FAIL | issues=3 (critical=1) | missing_inputs=0"


def test_untrusted_text_cannot_drive_the_terminal(cli) -> None:
    diff = make_diff("evil\x1b[2J\x07.py", ["# TODO \x1b]0;pwned\x07"])
    result = cli("--diff", "-", stdin=diff.encode())
    assert "\x1b" not in result.out and "\x07" not in result.out
    assert "evil\\x1b[2J\\x07.py" in result.out


def test_json_to_a_file_and_text_to_stdout(cli, isolated: Path) -> None:
    result = cli("--diff", "-", "--format", "text", "--format", "json", "--output", "out/report.json",
                 stdin=MIXED.encode())
    report = json.loads((isolated / "out" / "report.json").read_text())
    assert report["decision"] == "fail"
    assert report["exit_code"] == result.code == 1
    assert "decision: fail" in result.out


def test_json_only_to_a_file_prints_the_summary_line(cli, isolated: Path) -> None:
    result = cli("--diff", "-", "--format", "json", "--output", "r.json", stdin=MIXED.encode())
    assert result.out == ""
    assert "REVIEW: FAIL | issues=3 (critical=1) | missing_inputs=0" in result.err


def test_json_report_fields(cli) -> None:
    report = cli("--diff", "-", "--format", "json", stdin=MIXED.encode()).json()
    assert report["schema_version"] == 1
    assert report["metrics"] == {"critical": 1, "major": 1, "warning": 0, "info": 1, "total": 3,
                                 "missing_inputs": 0, "unreviewed_files": 0, "agents_failed": 0,
                                 "agents_skipped": 4,  # the built-in LLM reviewers: no key
                                 "waived_inline": 0,
                                 "risk_score": report["classification"]["risk_score"]}
    secret = next(f for f in report["findings"] if f["severity"] == "critical")
    assert set(secret) >= {"fingerprint", "agent", "rule_id", "severity", "category", "file", "line",
                           "end_line", "message", "recommendation", "confidence"}
    assert "OPENSSH PRIVATE KEY" not in json.dumps(report["findings"])  # secrets are redacted
    agent = report["agents"][0]
    assert set(agent) >= {"id", "kind", "status", "attempts", "duration_s", "files", "error",
                          "tokens_in", "tokens_out", "cost_usd"}
    assert report["coverage"]["files_reviewed"] == 2
    assert {e["agent"] for e in report["manifest"]} == {a["id"] for a in report["agents"]}


def test_fingerprints_survive_unrelated_lines_moving(cli) -> None:
    before = make_diff("a.py", ["x = 1", "eval(data)"])
    after = make_diff("a.py", ["import os", "", "x = 1", "eval(data)"])
    first = cli("--diff", "-", "--format", "json", stdin=before.encode()).json()["findings"]
    second = cli("--diff", "-", "--format", "json", stdin=after.encode()).json()["findings"]
    assert [f["line"] for f in first] != [f["line"] for f in second]
    assert [f["fingerprint"] for f in first] == [f["fingerprint"] for f in second]


def test_two_formats_on_stdout_is_a_usage_error(cli) -> None:
    result = cli("--diff", "-", "--format", "text", "--format", "json", stdin=b"")
    assert result.code == 2
    assert "--output" in result.err


def test_fail_on_moves_the_line(cli) -> None:
    warning_diff = make_diff("a.py", ["try:", "    go()", "except:", "    pass"])
    base = cli("--diff", "-", "--format", "json", stdin=warning_diff.encode())
    assert base.json()["decision"] in ("pass_with_warnings", "needs_fixes")
    strict = cli("--diff", "-", "--fail-on", "pass_with_warnings", stdin=warning_diff.encode())
    assert strict.code == 1
    lenient = cli("--diff", "-", "--fail-on", "never", stdin=MIXED.encode())
    assert lenient.code == 0
    assert "decision: fail" in lenient.out


def test_filter_mode_flag(cli, repo: GitRepo) -> None:
    repo.write("a.py", "# TODO old\n" + "x = 1\n" * 20)
    repo.commit("old todo")
    repo.write("a.py", "# TODO old\n" + "x = 1\n" * 20 + "y = 2\n")
    added = cli("--format", "json").json()
    assert added["findings"] == []
    nofilter = cli("--format", "json", "--filter-mode", "nofilter").json()
    assert nofilter["findings"] == []  # the pattern agent only ever scans added lines
    assert added["coverage"]["filter_mode"] == "added"


def test_empty_diff_passes_and_says_nothing_was_reviewed(cli, repo: GitRepo) -> None:
    result = cli()
    assert result.code == 0
    assert "Nothing to review" in result.out
    assert "REVIEW: PASS | issues=0 (critical=0) | missing_inputs=0" in result.out


def test_bad_flags(cli) -> None:
    assert cli("--concurrency", "0", "--diff", "-", stdin=b"").code == 2
    assert cli("--timeout", "-1", "--diff", "-", stdin=b"").code == 2
    assert cli("--format", "pdf").code == 2
    assert cli("--filter-mode", "everything").code == 2


def test_malformed_diff_is_exit_2_without_traceback(cli) -> None:
    result = cli("--diff", "-", stdin=b"--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n a\n")
    assert result.code == 2
    assert "truncated" in result.err
    assert "Traceback" not in result.err


def test_console_script_in_a_real_process(repo: GitRepo, review_gate_bin: list[str]) -> None:
    repo.write("app.py", "eval(user_input)\n")
    done = subprocess.run([*review_gate_bin, "--format", "json"], cwd=repo.root, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert json.loads(done.stdout)["findings"][0]["rule_id"]
    assert "REVIEW: FAIL" in done.stderr
    module = subprocess.run([sys.executable, "-m", "review_gate", "--version"],
                            capture_output=True, text=True, timeout=60)
    assert module.stdout.startswith("review-gate ")


def test_live_progress_on_a_terminal(repo: GitRepo, review_gate_bin: list[str]) -> None:
    repo.write("app.py", "x = 1  # TODO\n")
    leader, follower = pty.openpty()
    process = subprocess.Popen(review_gate_bin, cwd=repo.root, stdin=subprocess.DEVNULL, stdout=follower,
                               stderr=follower, env={**env_without_ci(), "TERM": "xterm-256color"})
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    assert process.wait(timeout=30) == 0
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert "\x1b[" in screen  # colours and cursor control on a terminal
    assert "REVIEW: PASS |" in screen


def test_the_summary_line_is_printed_once_with_the_github_format(cli) -> None:
    result = cli("--diff", "-", "--format", "github", stdin=MIXED.encode())
    line = "REVIEW: FAIL | issues=3 (critical=1) | missing_inputs=0"
    assert (result.out + result.err).count(line) == 1
    assert result.out.rstrip().endswith(line)


def test_exit_zero_is_advisory_but_not_for_errors(cli, tmp_path: Path) -> None:
    advisory = cli("--diff", "-", "--exit-zero", "--format", "json", stdin=MIXED.encode())
    assert advisory.code == 0
    assert advisory.json()["decision"] == "fail"
    # what was decided is still said, to people and to agents that grep: only the exit code changes
    text = cli("--diff", "-", "--exit-zero", stdin=MIXED.encode())
    assert text.code == 0
    assert text.out.rstrip().splitlines()[-1].startswith("REVIEW: FAIL | ")
    github = cli("--diff", "-", "--exit-zero", "--format", "github", stdin=MIXED.encode())
    assert github.out.rstrip().splitlines()[-1].startswith("REVIEW: FAIL | ")
    assert cli("--diff", "-", "--exit-zero", "--fail-on", "fail", stdin=MIXED.encode()).code == 2
    assert cli("--diff", "-", "--exit-zero", stdin=b"@@ -1 +1 @@\n+x\n").code == 2  # bad input is still an error
    config = tmp_path / "cfg"
    config.mkdir()
    (config / "review-agents.json").write_text(
        '{"version": 1, "agents": [{"id": "gone", "name": "g", "description": "d", "kind": "command", '
        '"command": ["/bin/false"]}]}')
    (config / "review-composition.json").write_text(
        '{"version": 1, "policies": [{"id": "all", "description": "d", "trigger": {"type": "always"}, '
        '"dispatch": ["gone"]}]}')
    (config / "review-rules.json").write_text('{"version": 1, "rules": []}')
    broken = cli("--diff", "-", "--exit-zero", "--config", str(config), stdin=MIXED.encode())
    assert broken.code == 3  # a reviewer that broke is never waved through
