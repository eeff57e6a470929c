"""The state file itself: never someone else's file, safe with concurrent and killed runs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from review_gate.state.migrations import SCHEMA_VERSION
from review_gate.state.store import in_use, open_store
from tests.agents.test_command import read_pid, wait_gone
from tests.conftest import GitRepo
from tests.state.helpers import DIFF, calls, counting_config, query, run_json, state_db, statuses

IN_REPO = Path(".review-gate/state.db")


def test_the_store_has_its_meta_row_and_wal(cli, tmp_path: Path) -> None:
    run_json(cli, counting_config(tmp_path), DIFF)
    assert dict(query(state_db(), "SELECT key, value FROM meta")) == {
        "application": "review-gate", "schema_version": str(SCHEMA_VERSION)}
    assert query(state_db(), "PRAGMA journal_mode") == [("wal",)]
    assert (state_db().parent / ".gitignore").read_text().splitlines()[1:] == ["state.db", "state.db-*", ".gitignore"]


def test_state_path_from_the_config_is_relative_to_the_user_cache_without_a_repository(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path, settings={"state_path": "elsewhere/run.sqlite"})
    before = sorted(Path.cwd().iterdir())
    run_json(cli, cfg, DIFF)
    stored = state_db().parent / "elsewhere" / "run.sqlite"
    assert stored.is_file() and not state_db().exists()
    assert "run.sqlite" in (stored.parent / ".gitignore").read_text()
    assert len(query(stored, "SELECT id FROM review_runs")) == 1
    assert sorted(Path.cwd().iterdir()) == before  # nothing left in the directory the diff was reviewed from


@pytest.mark.parametrize("command", [["--diff", "-"], ["history"], ["show", "last"], ["accepted"], ["gc"]])
def test_a_file_that_is_not_sqlite_is_refused_and_left_alone(cli, tmp_path: Path, command: list[str]) -> None:
    cfg = counting_config(tmp_path)
    state_db().parent.mkdir(parents=True)
    data = b"my notes, not a database\n" * 10
    state_db().write_bytes(data)
    result = cli(*command, "--config", str(cfg), stdin=DIFF.encode())
    assert result.code == 2
    assert str(state_db().resolve()) in result.err.replace("\n", "") or "state.db" in result.err
    assert "not an SQLite database" in result.err and "fix:" in result.err
    assert "Traceback" not in result.err
    assert state_db().read_bytes() == data
    assert calls(tmp_path, "one") == []


@pytest.mark.parametrize("schema", [
    "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('application', 'other-tool')",
])
def test_a_foreign_sqlite_database_is_refused_and_left_alone(cli, tmp_path: Path, schema: str) -> None:
    cfg = counting_config(tmp_path)
    state_db().parent.mkdir(parents=True)
    connection = sqlite3.connect(state_db())
    connection.executescript(schema)
    connection.close()
    data = state_db().read_bytes()
    result = cli("--config", str(cfg), "--diff", "-", stdin=DIFF.encode())
    assert result.code == 2
    assert "state.db" in result.err and "another program" in result.err
    assert "Traceback" not in result.err
    assert state_db().read_bytes() == data
    assert calls(tmp_path, "one") == []


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = open_store(path)
    assert store is not None
    with store:
        store.db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    from review_gate.errors import StateError

    with pytest.raises(StateError, match="newer review-gate"):
        open_store(path)


def test_no_environment_value_reaches_the_database(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET")
    monkeypatch.setenv("REVIEW_GATE_TEST_TOKEN", "tok-PRIVATE-42")
    cfg = counting_config(tmp_path)
    run_json(cli, cfg, DIFF)
    run_json(cli, cfg, DIFF)
    blobs = b"".join(p.read_bytes() for p in state_db().parent.glob("state.db*"))
    assert blobs
    assert b"sk-test-SECRET" not in blobs and b"tok-PRIVATE-42" not in blobs


def test_two_concurrent_runs_both_finish_and_are_recorded(repo: GitRepo, tmp_path: Path,
                                                          review_gate_bin: list[str]) -> None:
    cfg = counting_config(tmp_path)
    repo.write("a.py", "x = 1\n")
    env = {**os.environ, "COUNTER_SLEEP": "0.5"}
    processes = [subprocess.Popen([*review_gate_bin, "--config", str(cfg), "--format", "json"], cwd=repo.root,
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outputs = [p.communicate(timeout=60) for p in processes]
    for process, (_out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err.decode()
    ids = {json.loads(out)["run_id"] for out, _ in outputs}
    rows = dict(query(repo.root / IN_REPO, "SELECT id, status FROM review_runs"))
    assert rows == dict.fromkeys(ids, "completed")
    assert query(repo.root / IN_REPO, "SELECT COUNT(*) FROM review_pairs WHERE status != 'completed'") == [(0,)]


def test_a_killed_run_leaves_pending_pairs_that_the_next_run_marks_missing(
        cli, tmp_path: Path, review_gate_bin: list[str]) -> None:
    cfg = counting_config(tmp_path)
    diff_file = tmp_path / "change.diff"
    diff_file.write_text(DIFF)
    env = {**os.environ, "COUNTER_SLEEP": "60", "TMPDIR": str(tmp_path)}  # SIGKILL leaves the agents' temp dirs
    process = subprocess.Popen([*review_gate_bin, "--config", str(cfg), "--diff", str(diff_file)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    agents = []
    try:
        agents = [read_pid(tmp_path / f"{a}.calls.pid", within=30) for a in ("one", "two")]
        pending = query(state_db(), "SELECT COUNT(*) FROM review_pairs WHERE status = 'pending'")
        assert pending == [(6,)]
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        for pid in agents:  # command agents run in their own process groups
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            assert wait_gone(pid)
    [(killed_run, status)] = query(state_db(), "SELECT id, status FROM review_runs")
    assert status == "running"

    started = time.monotonic()
    _, report = run_json(cli, cfg, DIFF)
    assert time.monotonic() - started < 30
    assert statuses(report) == {"one": "completed", "two": "completed"}  # nothing reused
    assert len(calls(tmp_path, "one")) == 2
    assert query(state_db(), "SELECT DISTINCT status, reason FROM review_pairs WHERE run_id = ?", killed_run) == [
        ("missing", "run abandoned")]
    assert query(state_db(), "SELECT status FROM review_runs WHERE id = ?", killed_run) == [("incomplete",)]


def test_a_second_store_on_an_open_file_keeps_the_first_ones_locks(tmp_path: Path) -> None:
    """Opening the file outside SQLite (to read its header) and closing it would drop every
    POSIX lock this process holds on it: another process closing its connection then takes
    itself for the last one and deletes the WAL under the Store still open here."""
    path = tmp_path / "state.db"
    first = open_store(path)
    assert first is not None
    with first:
        with first.write() as db:
            db.execute("INSERT INTO meta VALUES ('probe', 'x')")
        second = open_store(path)  # the header check must not open and close the file
        assert second is not None
        second.close()
        assert in_use(path)
        last = ("import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
                "db.execute('SELECT count(*) FROM meta').fetchone(); db.close()")
        subprocess.run([sys.executable, "-c", last, str(path)], capture_output=True, timeout=60, check=True)
        assert path.with_name("state.db-wal").exists()  # our connection's lock kept it from being the last
        assert first.db.execute("SELECT value FROM meta WHERE key = 'probe'").fetchone() == ("x",)
    assert not in_use(path)


@pytest.mark.parametrize(("error", "advice"), [
    (sqlite3.OperationalError("database or disk is full"), "free some disk space"),
    (sqlite3.OperationalError("attempt to write a readonly database"), "make the file and its directory writable"),
    (sqlite3.OperationalError("database is locked"), "held the run state for longer than"),
    (sqlite3.OperationalError("disk I/O error"), "integrity_check"),
    (sqlite3.DatabaseError("file is not a database"), "the file is damaged: move it"),
    (sqlite3.DatabaseError("database disk image is malformed"), "the file is damaged: move it"),
])
def test_a_failed_write_gets_the_fix_that_fits_it(tmp_path: Path, error: sqlite3.Error, advice: str) -> None:
    from review_gate.state.store import write_error

    problem = write_error(tmp_path / "state.db", error)
    assert str(error) in problem.message and problem.fix is not None and advice in problem.fix
    if "damaged" in advice:
        assert "disk space" not in problem.fix  # a damaged file is not a full disk
