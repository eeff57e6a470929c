#!/usr/bin/env python3
"""Speed where it is felt (issue 33): each row beside its floor, measured in the same run.

    python benchmarks/speed_felt.py [--runs 7] [--only TEXT] [--llm-runs 1]

Whole processes of the installed CLI; each row and its floor are measured in turns (floor, row,
floor, row...) so that a machine shared with other work slows both alike, and the medians are
compared. CPU is user + system time of the process and its children (``wait4``).

- hook: ``review-gate hook claude-code`` answering a PreToolUse event for ``ls -la``, ``pytest
  -q``, an Edit of a ``.py`` file and a Read, against ``python -c "import pydantic"`` (target:
  at most its CPU); the bare interpreter as information;
- stop: the Stop hook, offline (no key: the LLM reviewers are skipped), on a change of 10 small
  Python files and 30 added lines in the working tree, against Bandit on the same 10 files
  (when ``bandit`` is installed beside this interpreter; target: 1.5x its CPU);
- agents: 20 llm agents whose endpoint answers after 1 s, through the whole CLI, against the
  1 s (the same 20 requests sent at once by threads as the floor; target: 1.4 s wall). Each
  agent has instructions of its own and the run packs none (``packing: per_agent``): each
  run must send 20 requests, or the row fails unmeasured;
- no headers: the built-in LLM reviewers over the 800-file change at an endpoint that sends no
  rate-limit headers and answers after 2 s, against the same with ``max_concurrency: 64``
  (target: 1.5x; ``--llm-runs`` turns, 1 by default: each takes about 10 s);
- Semgrep: the offline review row of ``benchmarks/speed.py`` (needs Semgrep installed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measure import Row, Table, child_env, cli_command

SEED = 20240611
HOOK_TARGET = 1.0  # x the CPU of `import pydantic`
STOP_TARGET = 1.5  # x Bandit's CPU
AGENTS_TARGET_S = 1.4
WIDE_TARGET = 1.5  # x the wide setting's wall time


def usage(argv: Sequence[str], cwd: Path, stdin: bytes = b"", env: dict[str, str] | None = None) -> tuple[float, float]:
    """(CPU seconds of the process and its children, wall seconds) of one run of ``argv``."""
    with tempfile.TemporaryFile() as feed:
        feed.write(stdin)
        feed.seek(0)
        started = time.perf_counter()
        process = subprocess.Popen(argv, cwd=cwd, env=env or _env(), stdin=feed, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        _, status, used = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise RuntimeError(f"{' '.join(argv[:4])}... exited {os.waitstatus_to_exitcode(status)}")
    return used.ru_utime + used.ru_stime, wall


def _env() -> dict[str, str]:
    env = child_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # what users run: the byte code cached
    return env


def in_turns(runs: int, *measures: Callable[[], float]) -> list[float]:
    """The median of each measure, run in turns (one of each, ``runs`` times) after a warm-up."""
    for measure in measures:
        measure()
    seen: list[list[float]] = [[] for _ in measures]
    for _ in range(runs):
        for index, measure in enumerate(measures):
            seen[index].append(measure())
    return [statistics.median(values) for values in seen]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def repository(work: Path) -> Path:
    """A repository of 10 small Python files, committed, then 3 lines added to each in the tree."""
    repo = work / "repo"
    (repo / "app").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "user.name", "bench")
    for i in range(10):
        body = "".join(f"def f{i}_{n}(x):\n    return x * {n} + {i}\n\n\n" for n in range(8))
        (repo / "app" / f"m{i}.py").write_text(body, encoding="utf-8")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{}\n", encoding="utf-8")
    # offline: no host review is offered for the llm reviewers (no key is set), which are skipped
    (repo / ".review-gate").mkdir()
    (repo / ".review-gate" / "review-gate.json").write_text('{"version": 1, "host_reviews": "never"}\n',
                                                            encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for i in range(10):
        with (repo / "app" / f"m{i}.py").open("a", encoding="utf-8") as handle:
            handle.write(f"def g{i}(items):\n    total = sum(items)\n    return total / max(len(items), {i + 1})\n")
    return repo


def bench_hook(table: Table, work: Path, repo: Path, runs: int) -> None:
    python = sys.executable
    base = {"session_id": "bench", "transcript_path": "/nonexistent.jsonl", "cwd": str(repo),
            "permission_mode": "default", "hook_event_name": "PreToolUse"}
    events = {
        "ls -la": {**base, "tool_name": "Bash", "tool_input": {"command": "ls -la"}},
        "pytest -q": {**base, "tool_name": "Bash", "tool_input": {"command": "pytest -q"}},
        "Edit app/m1.py": {**base, "tool_name": "Edit", "tool_input": {
            "file_path": str(repo / "app" / "m1.py"), "old_string": "return x * 1 + 1", "new_string": "return x + 1"}},
        "Read app/m2.py": {**base, "tool_name": "Read", "tool_input": {"file_path": str(repo / "app" / "m2.py")}},
    }
    hook = [*cli_command(), "hook", "claude-code", "--budget", "50"]
    measures = [lambda: usage([python, "-c", "import pydantic"], repo)[0],
                lambda: usage([python, "-c", "pass"], repo)[0]]
    for payload in events.values():
        data = json.dumps(payload).encode()
        measures.append(lambda data=data: usage(hook, repo, data)[0])
    floor, bare, *ours = in_turns(runs, *measures)
    table.info("floor: python -c 'import pydantic' (CPU)", f"{floor:.3f} s (the bare interpreter: {bare:.3f} s)")
    for name, seconds in zip(events, ours, strict=True):
        table.check(f"hook PreToolUse {name} (CPU, x import pydantic)", seconds / floor, HOOK_TARGET, "x",
                    f"{seconds:.3f} s")


def bench_stop(table: Table, work: Path, repo: Path, runs: int) -> None:
    bandit = shutil.which("bandit", path=str(Path(sys.executable).parent)) or shutil.which("bandit")
    stop = json.dumps({"session_id": "bench-stop", "transcript_path": "/nonexistent.jsonl", "cwd": str(repo),
                       "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": False}).encode()
    env = {k: v for k, v in _env().items() if not k.endswith("_API_KEY")}  # offline: the LLM reviewers are skipped
    ours = lambda: usage([*cli_command(), "hook", "claude-code", "--budget", "50"], repo, stop, env)[0]  # noqa: E731
    files = [str(p) for p in sorted((repo / "app").glob("*.py"))]
    if bandit is None:
        [seconds] = in_turns(runs, ours)
        table.info("Stop hook, offline, 10 files / 30 added lines (CPU)", f"{seconds:.3f} s (Bandit not installed)")
        return
    theirs = lambda: usage([bandit, "-q", *files], repo, env=env)[0]  # noqa: E731
    # what any review by this design pays before it reads the change: the interpreter, pydantic
    # with the models (the stage boundaries) and the event loop, as the CLI tunes its collector
    boundary = ("import gc, atexit; gc.set_threshold(100_000, 50, 100); atexit.register(gc.freeze); "
                "import anyio, anyio._backends._asyncio, review_gate.models")
    design = lambda: usage([sys.executable, "-c", boundary], repo, env=env)[0]  # noqa: E731
    floor, least, seconds = in_turns(runs, theirs, design, ours)
    table.info("floor: bandit -q on the 10 files (CPU)", f"{floor:.3f} s")
    table.info("  the design's floor: pydantic, the models, anyio (CPU)",
               f"{least:.3f} s ({least / floor:.2f} x Bandit)")
    table.check("Stop hook, offline, 10 files / 30 added lines (CPU, x Bandit)", seconds / floor, STOP_TARGET, "x",
                f"{seconds:.3f} s")


def bench_agents(table: Table, work: Path, runs: int) -> None:
    from tests.llm.server import LlmServer, Step

    directory = work / "llm-agents"
    (directory / "instructions").mkdir(parents=True)
    diff = work / "small.diff"  # one request an agent: 10 small files, 30 added lines
    subprocess.run(["git", "diff", "--no-color"], cwd=work / "repo", check=True, stdout=diff.open("wb"))
    env = {**_env(), "BENCH_OPENAI_KEY": "bench-key-not-secret"}
    with LlmServer() as server:
        server.default = Step(findings=[], delay=1.0)
        ids = [f"llm-{i:02d}" for i in range(20)]
        for i in ids:  # each reviewer its own instructions: 20 different requests, none shared
            (directory / "instructions" / f"{i}.md").write_text(f"# Reviewer {i}\nFind bugs of kind {i}.\n",
                                                                 encoding="utf-8")
        agents = [{"id": i, "name": i, "description": "bench llm agent", "kind": "llm", "provider": "openai",
                   "model": "bench", "base_url": f"{server.url}/v1", "api_key_env": "BENCH_OPENAI_KEY",
                   "instructions": f"instructions/{i}.md", "retries": 0, "timeout_s": 30, "max_concurrency": 20}
                  for i in ids]
        # per_agent: with the default packing (agent_packed) agents of one endpoint and model share
        # their requests, and the 20 would be one request, not 20
        files = {"review-agents.json": {"version": 1, "agents": agents},
                 "review-composition.json": {"version": 1, "policies": [{
                     "id": "all", "description": "every agent", "trigger": {"type": "always"}, "dispatch": ids}]},
                 "review-rules.json": {"version": 1, "rules": []},
                 "review-gate.json": {"version": 1, "packing": "per_agent"}}
        for name, data in files.items():
            (directory / name).write_text(json.dumps(data), encoding="utf-8")
        # --concurrency 20: all 20 at once, as the floor sends them (the default, 8, makes three waves)
        argv = [*cli_command(), "--diff", str(diff), "--config", str(directory), "--no-state", "--concurrency", "20",
                "--format", "json", "--output", str(work / "agents.json")]
        sent: list[int] = []  # the requests each run of the CLI sent

        def floor() -> float:
            body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": "x"}]}).encode()

            def one() -> None:
                request = urllib.request.Request(f"{server.url}/v1/chat/completions", data=body,
                                                 headers={"content-type": "application/json"})
                with urllib.request.urlopen(request, timeout=30) as answer:
                    answer.read()

            started = time.perf_counter()
            threads = [threading.Thread(target=one) for _ in range(20)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            return time.perf_counter() - started

        def ours() -> float:
            before = len(server.requests)
            wall = usage(argv, work, env=env)[1]
            sent.append(len(server.requests) - before)
            return wall

        low, wall = in_turns(runs, floor, ours)
        report = json.loads((work / "agents.json").read_text(encoding="utf-8"))
        done = sum(a["status"] == "completed" for a in report["agents"])
    table.info("  requests to the endpoint, each run", f"{', '.join(map(str, sent))} (20 agents a run)")
    table.info("floor: the same 20 requests sent at once by threads (wall)", f"{low:.3f} s")
    if any(count != len(ids) for count in sent) or done != len(ids):
        table.rows.append(Row("20 llm agents at 1 s latency through the CLI", f"< {AGENTS_TARGET_S:g} s",
                              f"not measured: the runs sent {sent} requests, not 20 each, or the last "
                              f"completed {done} agents of 20", "FAIL"))
        return
    table.check(f"20 llm agents at 1 s latency through the CLI (wall; {done} of 20 completed)", wall,
                AGENTS_TARGET_S, "s", f"{wall - low:.3f} s above the floor")


def bench_no_headers(table: Table, work: Path, runs: int) -> None:
    from llm_faults import BIG, BUILT_IN_REVIEWERS, WIDE_LATENCY_S, answers, describe, review
    from synthetic_diff import DiffWriter

    def no_headers(server: Any) -> None:
        server.default = answers(WIDE_LATENCY_S)  # no rate_limit: no header on any answer

    diff = DiffWriter(SEED + 3).diff(*BIG)
    outcomes: dict[str, list[Any]] = {"wide": [], "default": []}
    for turn in range(runs):
        for label, fields in (("wide", {"max_concurrency": 64}), ("default", {})):
            outcomes[label].append(review(work / f"nh-{turn}", label, diff, no_headers, BUILT_IN_REVIEWERS,
                                          timeout_s=600, **fields))
    wide = statistics.median(o.seconds for o in outcomes["wide"])
    ours = statistics.median(o.seconds for o in outcomes["default"])
    name = f"{BIG[0]} files, no rate-limit headers, {WIDE_LATENCY_S:g} s latency"
    table.info(f"floor: {name}, max_concurrency 64 (wall)", describe(outcomes["wide"][-1]))
    troubled = outcomes["default"][-1].troubled
    ok = not troubled and ours / wide <= WIDE_TARGET
    table.rows.append(Row(f"{name}, default (wall, x max_concurrency 64)", f"<= {WIDE_TARGET:g}x",
                          f"{ours / wide:.2f}x ({describe(outcomes['default'][-1])})", "ok" if ok else "FAIL"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=7, help="turns of each whole-process row (medians)")
    parser.add_argument("--llm-runs", type=int, default=1, help="turns of the 800-file row")
    parser.add_argument("--only", default="", help="the rows to run: hook, stop, agents, headers, semgrep")
    args = parser.parse_args(argv)
    table = Table()
    wanted = args.only.split(",") if args.only else ["hook", "stop", "agents", "headers", "semgrep"]
    with tempfile.TemporaryDirectory(prefix="review-gate-felt-") as temporary:
        work = Path(temporary).resolve()
        os.environ["XDG_CACHE_HOME"] = str(work / "cache")
        repo = repository(work)
        rows: list[tuple[str, Callable[[], None]]] = [
            ("hook", lambda: bench_hook(table, work, repo, args.runs)),
            ("stop", lambda: bench_stop(table, work, repo, args.runs)),
            ("agents", lambda: bench_agents(table, work, args.runs)),
            ("headers", lambda: bench_no_headers(table, work, args.llm_runs)),
        ]
        for name, bench in rows:
            if name in wanted:
                try:
                    bench()
                except Exception as exc:  # one broken row must not hide the others
                    table.error(name, "-", exc)
        if "semgrep" in wanted:
            table.info("offline review vs Semgrep", "run benchmarks/speed.py --only offline --semgrep PATH"
                       + ("" if shutil.which("semgrep") else " (Semgrep is not installed here)"))
    print(table.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
