"""Hostile text and hostile files at the trust boundaries: terminal escapes from agents and
servers (every sink, plain and on a real pseudo-terminal), credentials in a base_url, paths with
newlines handed to a command agent, the crash log, and a state path or config file that is not
what it seems."""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from review_gate.surfaces.cli import main as cli_module
from tests.agents.test_command import agent, script, write_config
from tests.conftest import GitRepo, env_without_ci, make_diff
from tests.llm.conftest import llm_agent
from tests.llm.conftest import write_config as write_llm_config
from tests.llm.server import LlmServer, Step

TITLE = "\x1b]0;pwned\x07"  # sets the window title
CLEAR = "\x1b[2J"  # clears the screen
LINK = "\x1b]8;;http://x\x1b\\click\x1b]8;;\x1b\\"  # an OSC 8 hyperlink
CSI = "\x9b31m"  # the 8-bit CSI some terminals still act on
PAYLOAD = f"{TITLE}{CLEAR}{LINK}{CSI}\u202e"
DIFF = make_diff("app.py", ["x = 1"])

# A command agent whose one finding carries the payload in every text field.
EVIL = f"""\
    import json, sys
    sys.stdin.read()
    bad = {PAYLOAD!r}
    print(json.dumps({{"findings": [
        {{"severity": "major", "message": "msg" + bad, "rule_id": "rule" + bad, "category": "cat" + bad,
         "file": "app.py" + bad, "line": 1, "recommendation": "fix" + bad}},
        {{"severity": "warning", "message": "other", "category": "cat" + bad}},
    ]}}))
"""


def quiet_config(tmp_path: Path) -> Path:
    quiet = script(tmp_path, "quiet.py", "import sys\nsys.stdin.read()\nprint('[]')\n")
    return write_config(tmp_path, [agent("quiet", quiet)])


def evil_config(tmp_path: Path) -> Path:
    return write_config(tmp_path, [agent("evil", script(tmp_path, "evil.py", EVIL))])


def assert_inert(text: str) -> None:
    """Nothing that acts on a terminal: no ESC, no BEL, no 8-bit CSI, no bidi override."""
    for char in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert char not in text, f"{char!r} reached the output: {text[:300]!r}"


def assert_inert_on_a_terminal(text: str) -> None:
    """On a terminal rich draws its own colours (CSI ... m) and cursor moves: the payload's
    sequences must not be there, and its escaped form must."""
    for sequence in ("\x1b]", "\x07", CLEAR, "\x9b", "\u202e"):
        assert sequence not in text, f"{sequence!r} reached the terminal: {text[:300]!r}"
    assert "\\x1b]0;pwned\\x07" in text


def strings(data: Any) -> list[str]:
    """Every string in a JSON document."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for value in data.values() for s in strings(value)]
    if isinstance(data, list):
        return [s for value in data for s in strings(value)]
    return []


def in_terminal(argv: list[str], cwd: Path, timeout: float = 60) -> str:
    """Run a command with a pseudo-terminal as stdout and stderr (CI unset, so review-gate
    believes a person is watching) and return everything it drew."""
    main, child = pty.openpty()
    env = {**env_without_ci(), "TERM": "xterm-256color", "COLUMNS": "250", "LINES": "50"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=child, stderr=child, cwd=cwd, env=env)
    os.close(child)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.2)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the child side is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(main)
    return b"".join(chunks).decode("utf-8", "replace")


# ---------------------------------------------------------------------------- agent text in reports


def test_text_report_escapes_every_field_of_an_agents_finding(cli, tmp_path: Path) -> None:
    result = cli("--config", str(evil_config(tmp_path)), "--diff", "-", "--filter-mode", "nofilter",
                 "--no-state", stdin=DIFF.encode())
    assert result.code == 1, result.err
    assert_inert(result.out + result.err)
    for field in ("rule", "cat", "msg", "app.py", "fix"):
        assert f"{field}\\x1b]0;pwned\\x07" in result.out, field


def test_text_report_on_a_terminal_escapes_every_field(tmp_path: Path, review_gate_bin: list[str]) -> None:
    diff = tmp_path / "change.diff"
    diff.write_text(DIFF)
    drawn = in_terminal([*review_gate_bin, "--config", str(evil_config(tmp_path)), "--diff", str(diff),
                         "--filter-mode", "nofilter", "--no-state"], tmp_path)
    assert "REVIEW: FAIL |" in drawn, repr(drawn[-500:])
    assert_inert_on_a_terminal(drawn)
    for field in ("rule", "cat", "msg", "fix"):
        assert f"{field}\\x1b]0;pwned\\x07" in drawn, field


def test_a_failing_agents_stderr_is_escaped_in_progress_lines(cli, tmp_path: Path) -> None:
    failing = script(tmp_path, "fail.py", f"import sys\nsys.stdin.read()\nsys.stderr.write({PAYLOAD!r})\nsys.exit(1)\n")
    cfg = write_config(tmp_path, [agent("broken", failing)])
    # progress lines go to stderr when the report on stdout does not list the agents
    result = cli("--config", str(cfg), "--diff", "-", "--no-state", "--format", "json", stdin=DIFF.encode())
    assert result.code == 3
    assert "\\x1b]0;pwned\\x07" in result.err
    assert_inert(result.out + result.err)
    text = cli("--config", str(cfg), "--diff", "-", "--no-state", stdin=DIFF.encode())
    assert "\\x1b]0;pwned\\x07" in text.out and "agent broken:" not in text.err  # said once, in the report
    assert_inert(text.out + text.err)


def test_progress_and_report_on_a_terminal_escape_a_failing_agents_stderr(tmp_path: Path,
                                                                        review_gate_bin: list[str]) -> None:
    failing = script(tmp_path, "fail.py", f"import sys\nsys.stdin.read()\nsys.stderr.write({PAYLOAD!r})\nsys.exit(1)\n")
    cfg = write_config(tmp_path, [agent("broken", failing)])
    diff = tmp_path / "change.diff"
    diff.write_text(DIFF)
    drawn = in_terminal([*review_gate_bin, "--config", str(cfg), "--diff", str(diff), "--no-state"], tmp_path)
    assert "REVIEW: FAIL |" in drawn, repr(drawn[-500:])
    assert_inert_on_a_terminal(drawn)


@pytest.mark.parametrize("fmt", ["markdown", "github", "meta", "json", "sarif", "gitlab", "rdjsonl"])
def test_other_formats_carry_no_terminal_control(cli, tmp_path: Path, fmt: str) -> None:
    result = cli("--config", str(evil_config(tmp_path)), "--diff", "-", "--filter-mode", "nofilter",
                 "--no-state", "--format", fmt, stdin=DIFF.encode())
    assert result.code == 1, result.err
    assert "rule" in result.out and "pwned" in result.out
    assert_inert(result.out + result.err)


@pytest.mark.parametrize("fmt", ["json", "sarif", "gitlab", "rdjsonl"])
def test_json_formats_keep_the_agents_text_exactly(cli, tmp_path: Path, fmt: str) -> None:
    """The escaping of C1 controls and bidi overrides is JSON's own \\u escaping: lossless."""
    result = cli("--config", str(evil_config(tmp_path)), "--diff", "-", "--filter-mode", "nofilter",
                 "--no-state", "--format", fmt, stdin=DIFF.encode())
    documents = [json.loads(line) for line in result.out.splitlines()] if fmt == "rdjsonl" else [result.json()]
    assert any(text.startswith("msg" + PAYLOAD) for text in strings(documents))


def test_half_a_surrogate_pair_from_an_agent_does_not_crash_any_format(cli, tmp_path: Path) -> None:
    body = ('import sys\nsys.stdin.read()\n'
            'print(\'{"findings": [{"severity": "major", "message": "half \\\\udc80"}]}\')\n')
    cfg = write_config(tmp_path, [agent("halves", script(tmp_path, "halves.py", body))])
    for fmt in ("text", "json", "sarif", "gitlab", "markdown"):
        result = cli("--config", str(cfg), "--diff", "-", "--no-state", "--format", fmt, stdin=DIFF.encode())
        assert result.code == 1, (fmt, result.err)
        assert "half" in result.out and "internal error" not in result.err


def test_show_prints_a_stored_report_escaped(cli, tmp_path: Path) -> None:
    cfg = evil_config(tmp_path)
    assert cli("--config", str(cfg), "--diff", "-", "--filter-mode", "nofilter", stdin=DIFF.encode()).code == 1
    shown = cli("show", "last", "--config", str(cfg))
    assert shown.code == 0 and "rule\\x1b]0;pwned\\x07" in shown.out
    assert_inert(shown.out + shown.err)


def test_history_escapes_the_source_of_a_run(cli, tmp_path: Path) -> None:
    diff = tmp_path / f"x{TITLE}.diff"
    diff.write_text(DIFF)
    cfg = quiet_config(tmp_path)
    assert cli("--config", str(cfg), "--diff", str(diff)).code == 0
    listed = cli("history", "--config", str(cfg))
    assert listed.code == 0 and "pwned" in listed.out
    assert_inert(listed.out + listed.err)


# ---------------------------------------------------------------------------- commands that echo input


def test_accept_echoes_its_argument_escaped(cli, tmp_path: Path) -> None:
    result = cli("accept", f"fp{PAYLOAD}", "--reason", "testing", "--force")
    assert result.code == 2  # not a finding id at all
    assert "fp\\x1b]0;pwned\\x07" in result.err
    assert_inert(result.out + result.err)


def test_explain_and_plan_escape_paths(cli, tmp_path: Path) -> None:
    explained = cli("explain", f"src/a{PAYLOAD}.py")
    assert explained.code == 0 and "pwned" in explained.out
    assert_inert(explained.out + explained.err)
    diff = tmp_path / f"change{TITLE}.diff"
    diff.write_text(DIFF)
    planned = cli("plan", "--diff", str(diff))
    assert planned.code == 0 and "pwned" in planned.out
    assert_inert(planned.out + planned.err)


# ---------------------------------------------------------------------------- what a server says


@pytest.fixture
def server() -> Any:
    with LlmServer() as running:
        yield running


def test_agents_check_escapes_the_model_name_the_server_reports(cli, tmp_path: Path, server: LlmServer,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test")
    server.default = Step(model=f"gpt{PAYLOAD}")
    cfg = write_llm_config(tmp_path, [llm_agent("remote", server)])
    result = cli("agents", "check", "remote", "--config", str(cfg))
    assert "gpt\\x1b]0;pwned\\x07" in result.out, result.out + result.err
    assert_inert(result.out + result.err)


def test_agents_check_escapes_the_servers_error(cli, tmp_path: Path, server: LlmServer,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test")
    server.default = Step(status=400, body=json.dumps({"error": {"message": f"no{PAYLOAD}"}}).encode())
    cfg = write_llm_config(tmp_path, [llm_agent("remote", server, retries=0)])
    result = cli("agents", "check", "remote", "--config", str(cfg))
    assert result.code == 1, result.out + result.err
    assert "result:     failed" in result.out
    assert_inert(result.out + result.err)


def test_agents_check_on_a_terminal_escapes_the_model_name(tmp_path: Path, server: LlmServer,
                                                           review_gate_bin: list[str]) -> None:
    server.default = Step(model=f"gpt{PAYLOAD}")
    cfg = write_llm_config(tmp_path, [llm_agent("remote", server, api_key_env=None)])
    drawn = in_terminal([*review_gate_bin, "agents", "check", "remote", "--config", str(cfg)], tmp_path)
    assert "model:" in drawn, drawn
    assert_inert_on_a_terminal(drawn)


# ---------------------------------------------------------------------------- credentials in base_url


@pytest.mark.parametrize("url", ["https://alice:hunter2-SECRET@llm.example.com/v1",
                                 "https://llm.example.com/v1?api-key=SECRET-42",
                                 "https://llm.example.com/v1#key=SECRET-42"])
def test_a_base_url_with_credentials_is_refused_without_echoing_them(cli, tmp_path: Path, server: LlmServer,
                                                                     url: str) -> None:
    cfg = write_llm_config(tmp_path, [llm_agent("remote", server, base_url=url, api_key_env=None)])
    for command in (["config", "validate"], ["--diff", "-"]):
        result = cli(*command, "--config", str(cfg), stdin=DIFF.encode())
        assert result.code == 2, result.out + result.err
        assert "review-agents.json: /agents/0/base_url:" in result.err
        assert "fix:" in result.err
        assert "SECRET" not in result.out + result.err and "hunter2" not in result.out + result.err
    assert server.requests == []
    assert not (Path.home() / ".cache" / "review-gate").exists()  # nothing reached the state


def test_a_plain_base_url_is_still_accepted(cli, tmp_path: Path, server: LlmServer) -> None:
    cfg = write_llm_config(tmp_path, [llm_agent("remote", server, api_key_env=None)])
    assert cli("config", "validate", "--config", str(cfg)).code == 0


# ---------------------------------------------------------------------------- paths with newlines


RECORD_FILES = """\
    import json, os, sys
    sys.stdin.read()
    with open(os.environ["REVIEW_GATE_FILES_FILE"], "rb") as handle:
        listed = handle.read()
    with open(sys.argv[1], "w") as out:
        json.dump({"env": os.environ["REVIEW_GATE_FILES"], "nul": listed.decode("utf-8")}, out)
    print("[]")
"""


def test_a_path_with_a_newline_reaches_a_command_agent_as_one_path(cli, tmp_path: Path) -> None:
    record = tmp_path / "seen.json"
    cfg = write_config(tmp_path, [agent("lister", script(tmp_path, "lister.py", RECORD_FILES), record)])
    diff = (b'diff --git "a/ok.py\\n/etc/passwd" "b/ok.py\\n/etc/passwd"\nnew file mode 100644\n'
            b'--- /dev/null\n+++ "b/ok.py\\n/etc/passwd"\n@@ -0,0 +1 @@\n+x = 1\n'
            + make_diff("plain.py", ["y = 2"]).encode())
    result = cli("--config", str(cfg), "--diff", "-", "--no-state", "--format", "json", stdin=diff)
    assert result.code == 0, result.err
    seen = json.loads(record.read_text())
    assert json.loads(seen["env"]) == ["ok.py\n/etc/passwd", "plain.py"]
    assert seen["nul"].split("\0") == ["ok.py\n/etc/passwd", "plain.py", ""]
    # a program that splits the variable on lines cannot take /etc/passwd for one of its files
    assert "/etc/passwd" not in seen["env"].splitlines()


# ---------------------------------------------------------------------------- the crash log


def test_the_crash_log_is_a_new_private_file_in_the_users_cache(tmp_path: Path) -> None:
    first, second = cli_module._crash_log("Traceback one\n"), cli_module._crash_log("Traceback two\n")
    assert first is not None and second is not None and first != second
    cache = Path.home() / ".cache" / "review-gate"
    assert first.parent == cache and first.read_text() == "Traceback one\n"
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert first.name.startswith("crash-") and len(first.name.split("-")[-1]) == len("0123abcd.log")


def test_the_crash_log_never_writes_through_a_planted_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    (cache / "review-gate").mkdir(parents=True)
    now = time.strftime("%Y%m%d-%H%M%S")
    for name in (f"crash-{now}.log", f"review-gate-crash-{now}.log"):  # every guessable name
        (cache / "review-gate" / name).symlink_to(victim)
    log = cli_module._crash_log("Traceback\n")
    assert log is not None and not log.is_symlink() and log.read_text() == "Traceback\n"
    assert victim.read_text() == "precious\n"


def test_the_crash_log_falls_back_to_a_fresh_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    log = cli_module._crash_log("Traceback\n")
    assert log is not None and log.read_text() == "Traceback\n"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    log.unlink()


# ---------------------------------------------------------------------------- state and config files


def test_a_committed_state_db_symlink_is_refused(cli, repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.db"
    (repo.root / ".review-gate").mkdir()
    (repo.root / ".review-gate" / "state.db").symlink_to(outside)
    repo.write("app.py", "x = 1\n")
    for command in (["--format", "json"], ["history"], ["accept", "abc123" + "0" * 26, "--reason", "r", "--force"]):
        result = cli(*command)
        assert result.code == 2, (command, result.out, result.err)
        assert "symbolic link" in result.err and "fix:" in result.err
    assert not outside.exists()


def test_a_symlinked_wal_file_is_refused(cli, repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside-wal"
    assert cli("--format", "json", "--output", os.devnull).code == 0  # a real store exists now
    (repo.root / ".review-gate" / "state.db-wal").symlink_to(outside)
    repo.write("app.py", "x = 1\n")
    result = cli("--format", "json")
    assert result.code == 2 and "state.db-wal is a symbolic link" in result.err
    assert not outside.exists()


def test_a_symlinked_state_directory_leading_out_of_the_repository_is_not_followed(cli, repo: GitRepo,
                                                                                    tmp_path: Path) -> None:
    """The run reviews the change without any state (and says so); the state commands refuse."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo.root / ".review-gate").symlink_to(outside, target_is_directory=True)
    repo.write("app.py", "x = 1\n")
    result = cli("--format", "json")
    assert result.code == 0, result.out + result.err
    assert any(g["kind"] == "state_changed" and g["subject"] == ".review-gate" for g in json.loads(result.out)["gaps"])
    history = cli("history")
    assert history.code == 2 and "out of the repository" in history.err and "fix:" in history.err
    assert list(outside.iterdir()) == []


def run_bounded(argv: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A real process with a deadline and a memory cap, for inputs that used to hang or eat memory."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, preexec_fn=cap,
                          check=False)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_config_file_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path, kind: str,
                                                                     review_gate_bin: list[str]) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    if kind == "fifo":
        os.mkfifo(cfg / "review-gate.json")
    else:
        (cfg / "review-gate.json").symlink_to("/dev/zero")
    for command in (["config", "validate"], ["--diff", "-", "--no-state"]):
        result = run_bounded([*review_gate_bin, *command, "--config", str(cfg)], tmp_path)
        assert result.returncode == 2, result.stderr
        assert f"{cfg / 'review-gate.json'}: /: cannot read: not a regular file" in result.stderr


def test_an_oversized_config_file_is_refused(cli, tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "review-rules.json").write_text('{"version": 1, "rules": []' + " " * (6 << 20) + "}")
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 2
    assert f"{cfg / 'review-rules.json'}: /: larger than 5 MiB" in result.err


def test_a_non_regular_bundle_file_is_refused(cli, tmp_path: Path) -> None:
    cfg = quiet_config(tmp_path)
    bundle = tmp_path / "bundle"
    run = cli("--config", str(cfg), "--diff", "-", "--no-state", "--bundle", str(bundle), stdin=DIFF.encode())
    assert run.code == 0, run.err
    (bundle / "report.json").unlink()
    (bundle / "report.json").symlink_to("/dev/zero")
    result = cli("replay", str(bundle))
    assert result.code == 2 and "report.json: /: cannot read: not a regular file" in result.err
