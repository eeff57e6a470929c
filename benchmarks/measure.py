"""What every benchmark script shares: running review-gate as a whole process (wall time, exit
code, its own peak RSS), the table of rows they print, and the 20 sleeping command agents the
dispatch rows start, with the same programs started directly for the floor."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SLEEP_AGENTS = 20
SLEEP_CODE = "import time,sys; sys.stdin.read(); time.sleep(1); print('{\"findings\": []}')"
# The target is about orchestration: a sleeper that costs nothing to start. Twenty Python
# interpreters starting at once on two cores cost ~1.1 s by themselves (reported as info).
SHELL_SLEEPER = ["/bin/sh", "-c", 'cat >/dev/null; sleep 1; echo \'{"findings": []}\'']
PYTHON_SLEEPER = [sys.executable, "-c", SLEEP_CODE]


# --------------------------------------------------------------------------------------------
# Running review-gate
# --------------------------------------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    code: int
    max_rss: int  # ru_maxrss: KiB on Linux, bytes on macOS
    out: str
    err: str


def cli_command() -> list[str]:
    script = Path(sys.executable).parent / "review-gate"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "review_gate"]


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REVIEW_GATE_CONFIG"}
    env["CI"] = "1"  # no live progress display
    env["NO_COLOR"] = "1"
    return env


def run_cli(args: Sequence[str], cwd: Path) -> Run:
    """One whole review-gate process: wall time, exit code, and its own peak RSS (via wait4)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen([*cli_command(), *args], cwd=cwd, env=child_env(),
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(seconds, process.returncode, usage.ru_maxrss,
                   out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))


def median_seconds(args: Sequence[str], cwd: Path, times: int) -> float:
    runs = [run_cli(args, cwd) for _ in range(times)]
    for run in runs:
        if run.code != 0:
            raise BenchError(f"exit {run.code}: {last_line(run.err)}")
    return statistics.median(r.seconds for r in runs)


def last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:160] if lines else "(no output)"


class BenchError(Exception):
    pass


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    target: str
    measured: str
    status: str  # ok, FAIL or info


class Table:
    def __init__(self) -> None:
        self.rows: list[Row] = []

    def check(self, name: str, value: float, limit: float, unit: str, detail: str = "") -> None:
        digits = 3 if unit == "s" else 2 if value < 100 else 0
        measured = f"{value:.{digits}f} {unit}"
        if detail:
            measured += f" ({detail})"
        self.rows.append(Row(name, f"< {limit:g} {unit}", measured, "ok" if value < limit else "FAIL"))

    def info(self, name: str, measured: str) -> None:
        self.rows.append(Row(name, "-", measured, "info"))

    def error(self, name: str, target: str, exc: Exception) -> None:
        self.rows.append(Row(name, target, f"error: {exc}", "FAIL"))

    def render(self) -> str:
        header = Row("measurement", "target", "measured", "ok/FAIL")
        rows = [header, *self.rows]
        columns = ("name", "target", "measured", "status")
        widths = [max(len(getattr(r, col)) for r in rows) for col in columns]

        def fmt(r: Row) -> str:
            cells = (r.name, r.target, r.measured, r.status)
            return " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

        rule = "-+-".join("-" * w for w in widths)
        return "\n".join([fmt(header), rule, *(fmt(r) for r in self.rows)])

    @property
    def failed(self) -> bool:
        return any(r.status == "FAIL" for r in self.rows)


# --------------------------------------------------------------------------------------------
# Sleeping command agents
# --------------------------------------------------------------------------------------------


def write_sleep_config(directory: Path, command: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    agents = [{"id": f"sleeper-{i:02d}", "name": f"Sleeper {i}", "kind": "command",
               "description": "Reads its input, sleeps one second, finds nothing.",
               "command": command, "retries": 0, "timeout_s": 30}
              for i in range(SLEEP_AGENTS)]
    composition = {"version": 1, "policies": [{
        "id": "everyone", "description": "Every sleeper on every change.",
        "trigger": {"type": "always"}, "dispatch": [a["id"] for a in agents]}]}
    files = {"review-agents.json": {"version": 1, "agents": agents},
             "review-composition.json": composition,
             "review-rules.json": {"version": 1, "rules": []}}
    for name, data in files.items():
        (directory / name).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def spawn_floor(small: Path, command: list[str]) -> float:
    """The same 20 programs started directly, all at once: what any runner pays on this machine."""
    data = small.read_bytes()  # a few KB: fits in a pipe buffer, so writing cannot block
    started = time.perf_counter()
    processes = [subprocess.Popen(command, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  start_new_session=True) for _ in range(SLEEP_AGENTS)]
    for process in processes:
        assert process.stdin is not None
        process.stdin.write(data)
        process.stdin.close()
    for process in processes:
        assert process.stdout is not None
        process.stdout.read()
        process.stdout.close()
        process.wait()
    return time.perf_counter() - started
