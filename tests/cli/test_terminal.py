"""The text report, `agents list` and `history` as a person sees them: a real pseudo-terminal at
80 and 120 columns. Nothing runs past the width, no line ends in padding, a wrapped line keeps
its indent, and the ids people copy (agents, findings) are never cut."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import termios
from pathlib import Path

import pytest

from tests.conftest import GitRepo, env_without_ci

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
LONG_SQL = ('    query = "SELECT * FROM accounts WHERE owner = \'%s\' AND created_at > now() - interval '
            '\'7 days\' ORDER BY balance" % owner_name_from_the_request_parameters')
APP = "\n".join(["import requests", "def f(expr, amount, url, owner_name_from_the_request_parameters):",
                 "    total = float(amount) * 1.1", "    x = eval(expr)",
                 "    r = requests.get(url, verify=False, timeout=5)", LONG_SQL, "    return x", ""])


def on_terminal(argv: list[str], cwd: Path, columns: int) -> tuple[int, list[str]]:
    """Run ``argv`` with its stdout on a pseudo-terminal ``columns`` wide; the lines it showed."""
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {**env_without_ci(), "TERM": "xterm-256color", "COLUMNS": str(columns)}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(argv, cwd=cwd, stdout=secondary, stderr=subprocess.DEVNULL, env=env)
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # EIO: the program closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    code = process.wait(timeout=60)
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r\n", "\n")
    return code, text.split("\n")


def assert_fits(lines: list[str], columns: int) -> None:
    for line in lines:
        assert len(line) <= columns, f"wider than {columns}: {line!r}"
        assert line == line.rstrip(), f"padded: {line!r}"


@pytest.fixture
def changed(repo: GitRepo) -> GitRepo:
    repo.write("app.py", APP)
    repo.write("Dockerfile", "FROM python:latest\nRUN curl https://x.sh | sh\n")
    return repo


@pytest.mark.parametrize("columns", [80, 120])
def test_the_verbose_report_reads_well_at_80_and_120_columns(changed: GitRepo, review_gate_bin: list[str],
                                                             columns: int) -> None:
    code, lines = on_terminal([*review_gate_bin, "--verbose"], changed.root, columns)
    assert code == 1
    assert_fits(lines, columns)
    report = lines[lines.index(next(line for line in lines if line.startswith("review-gate "))):]
    findings = report[report.index(next(line for line in report if re.match(r"^[A-Z]+ \(\d+\)$", line))):
                      report.index(next(line for line in report if line.startswith("agent ")))]
    for line in findings:  # a finding's lines are indented, wrapped ones included
        assert not line or line[0] == " " or re.match(r"^[A-Z]+ \(\d+\)$", line), repr(line)
    body = "\n".join(findings)
    assert re.search(r"id [0-9a-f]{6} · sec-py-eval-01 · security-patterns", body)
    assert "eval/exec of dynamic input: x = eval(expr)" in body  # the whole line, not "eval(e"
    assert "owner_name_from_the_request_parameters" in body.replace("\n", "").replace(" ", "")
    table = report[report.index(next(line for line in report if line.startswith("agent "))):]
    for agent in ("architecture-reviewer", "performance-reviewer", "security-patterns"):
        assert any(line.startswith(agent + " ") for line in table), agent  # never cut
    assert "2 files changed" in "\n".join(report) and "1 findings" not in "\n".join(report)
    dropped = [line for line in report if "columns are left out" in line]
    assert len(dropped) == (1 if columns < 100 else 0)  # said once, and only when it happens


@pytest.mark.parametrize("columns", [80, 120])
def test_the_concise_report_is_a_line_a_finding(changed: GitRepo, review_gate_bin: list[str], columns: int) -> None:
    changed.write("fetch.py", "import requests\nrequests.get(url, verify=False)\n")
    code, lines = on_terminal(review_gate_bin, changed.root, columns)
    assert code == 1
    assert_fits(lines, columns)
    report = lines[lines.index(next(line for line in lines if line.startswith("review-gate "))):]
    assert re.search(r"against main \([0-9a-f]{7}\)", report[0])  # the base branch it chose
    heads = [line for line in report if re.match(r"^[\w./-]+:\d+:\d+: (critical|major|warning|info) ", line)]
    assert any(re.match(r"^app\.py:4:\d+: major sec-py-eval-01 \[[0-9a-f]{6}\] eval/exec of dynamic input", h)
               for h in heads)
    assert all(line.startswith(("  ", "+")) or line in heads or not line or not line[0].isspace()
               for line in report)
    merged = [line for line in report if line.startswith("  + ")]
    assert any("sec-requests-timeout-01" in line for line in merged)  # one line, two rules
    assert "::" not in "\n".join(heads)
    fixes = [line for line in report if line.strip().startswith("fix: ")]
    assert len(fixes) >= len(heads)
    assert len(report) <= 4 * len(heads) + 14  # a line a finding, its fix (wrapped at most twice), a dozen more


@pytest.mark.parametrize("columns", [80, 120])
def test_agents_list_and_history_fit_and_keep_ids_whole(changed: GitRepo, review_gate_bin: list[str],
                                                        columns: int) -> None:
    code, lines = on_terminal([*review_gate_bin, "agents", "list"], changed.root, columns)
    assert code == 0
    assert_fits(lines, columns)
    for agent in ("architecture-reviewer", "performance-reviewer", "dependency-patterns"):
        assert any(line.startswith(agent + " ") for line in lines), agent
    subprocess.run(review_gate_bin, cwd=changed.root, capture_output=True, check=False)
    code, lines = on_terminal([*review_gate_bin, "history"], changed.root, columns)
    assert code == 0
    assert_fits(lines, columns)
    assert re.match(r"^\d{8}T\d{6}Z-[0-9a-f]{8}  ", lines[1])  # the run id, whole
