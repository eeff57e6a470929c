#!/usr/bin/env python3
"""Performance benchmarks of review-gate against its targets.

Run from the repository root with the interpreter review-gate is installed in:

    python benchmarks/bench.py [--strict] [--keep]

Every input (a synthetic 5 MB, 600-file git diff, a small diff, a config directory of 20
sleeping command agents) is generated into a temporary directory, which is removed at the end
unless --keep is given. Prints one table row per measurement; exits 0 unless --strict is given
and a target is missed.
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
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from measure import (  # benchmarks/ is on sys.path: the scripts run from there
    PYTHON_SLEEPER,
    SHELL_SLEEPER,
    SLEEP_AGENTS,
    BenchError,
    Row,
    Table,
    child_env,
    last_line,
    median_seconds,
    run_cli,
    spawn_floor,
    write_sleep_config,
)
from synthetic_diff import DiffWriter, small_diff

SEED = 20240611
BIG_FILES = 600
BIG_BYTES = 5_000_000
SIZE_TOLERANCE = 0.05


# --------------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------------


def bench_version(table: Table, work: Path) -> None:
    name = "review-gate --version (median of 7)"
    try:
        run_cli(["--version"], work)  # warm-up: bytecode caches, page cache
        seconds = median_seconds(["--version"], work, 7)
        table.check(name, seconds, 0.2, "s")
    except BenchError as exc:
        table.error(name, "< 0.2 s", exc)


def bench_plan(table: Table, work: Path, big: Path) -> None:
    name = "plan --diff big.diff (median of 3)"
    try:
        seconds = median_seconds(["plan", "--diff", str(big)], work, 3)
        table.check(name, seconds, 1.5, "s")
    except BenchError as exc:
        table.error(name, "< 1.5 s", exc)


def bench_pattern_scan(table: Table, big: Path) -> None:
    name = "pattern scan, all built-in rules (median of 3)"
    try:
        from review_gate.agents.base import AgentTask
        from review_gate.agents.pattern import scan
        from review_gate.change.diff_parser import parse_diff
        from review_gate.config import load_config
    except ImportError as exc:
        reason = f"review_gate is not importable by {sys.executable}: {exc}"
        table.error(name, "< 2 s", BenchError(reason))
        return
    try:
        data = big.read_bytes()
        started = time.perf_counter()
        files = parse_diff(data)
        parse_s = time.perf_counter() - started
        config = load_config(None)
        pattern_agents = {a.id for a in config.agents.agents if a.kind == "pattern" and a.enabled}
        rules = [r for r in config.rules.rules
                 if r.enabled and r.pattern and r.agent in pattern_agents]
        task = AgentTask(files=files, rules=rules, repo_root=None, config_dir=None)
        times = []
        findings = 0
        for _ in range(3):
            started = time.perf_counter()
            output = scan(task)
            times.append(time.perf_counter() - started)
            findings = len(output.findings)
    except Exception as exc:  # a broken package or config: report it, run the other benchmarks
        table.error(name, "< 2 s", BenchError(f"{type(exc).__name__}: {exc}"))
        return
    added = sum(1 for f in files for h in f.hunks for ln in h.lines if ln.added)
    table.check(name, statistics.median(times), 2.0, "s",
                f"{findings} findings, {len(rules)} rules, {added} added lines")
    table.info("  parse_diff of big.diff, in-process", f"{parse_s:.3f} s ({len(files)} files)")


def bench_dedupe(table: Table) -> None:
    name = "dedupe, 3,000 findings on one line"
    try:
        from review_gate.models import Finding
        from review_gate.pipeline.aggregate import dedupe

        findings = [Finding(fingerprint=f"f{i}", agent=f"agent{i % 3}", rule_id=f"rule-{i}", severity="major",
                            category="c", file="a.py", line=1, end_line=1,
                            message=f"finding {i * 7919:x} about {i * 104729:x}") for i in range(3000)]
        started = time.perf_counter()
        kept = dedupe(findings)
        seconds = time.perf_counter() - started
    except Exception as exc:  # a broken package: report it, run the other benchmarks
        table.error(name, "< 1 s", BenchError(f"{type(exc).__name__}: {exc}"))
        return
    table.check(name, seconds, 1.0, "s", f"{len(kept)} kept")


def _llm_dispatch(work: Path, server: Any, agents: int, concurrency: int, name: str, diff: bytes | None = None,
                  packing: str = "per_agent", **fields: Any) -> tuple[float, list[Any]]:
    """Dispatch ``agents`` llm agents (openai wire format) at the test server, in-process, over
    ``diff`` (default: a small one); ``fields`` go into every agent's entry. The agents share the
    endpoint, so its governor lets ``max_concurrency`` requests in flight (default: ``concurrency``)."""
    import anyio

    from review_gate.change.diff_parser import parse_diff
    from review_gate.config import load_config
    from review_gate.models import AgentManifest, ManifestEntry, PRFacts
    from review_gate.pipeline.dispatch import DispatchOptions, dispatch

    directory = work / name
    (directory / "instructions").mkdir(parents=True, exist_ok=True)
    (directory / "instructions" / "r.md").write_text("# Reviewer\nFind bugs.\n", encoding="utf-8")
    ids = [f"llm-{i:03d}" for i in range(agents)]
    specs = [{"id": i, "name": i, "description": "bench llm agent", "kind": "llm", "provider": "openai",
              "model": "bench", "base_url": f"{server.url}/v1", "instructions": "instructions/r.md",
              "retries": 1, "timeout_s": 30, "max_concurrency": concurrency, **fields} for i in ids]
    files = {"review-agents.json": {"version": 1, "agents": specs},
             "review-composition.json": {"version": 1, "policies": [{
                 "id": "all", "description": "every agent", "trigger": {"type": "always"}, "dispatch": ids}]},
             "review-rules.json": {"version": 1, "rules": []}}
    for file_name, data in files.items():
        (directory / file_name).write_text(json.dumps(data), encoding="utf-8")
    config = load_config(directory)
    facts = PRFacts(source="bench", files=parse_diff(diff if diff is not None else small_diff(SEED + 2)))
    paths = [f.path for f in facts.files]
    manifest = AgentManifest(entries=[ManifestEntry(agent=i, files=paths, policies=["all"], priority=50) for i in ids])
    options = DispatchOptions(concurrency=concurrency, default_timeout_s=120, config_dir=str(directory),
                              packing=packing)
    started = time.perf_counter()
    results = anyio.run(dispatch, manifest, facts, config, options)
    return time.perf_counter() - started, results


def bench_llm(table: Table, work: Path) -> None:
    """llm agents against the scriptable test server of tests/llm/server.py, in-process."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    try:
        from tests.llm.server import LlmServer, Step
    except ImportError as exc:
        table.error("llm agents", "-", BenchError(f"tests/llm/server.py is not importable: {exc}"))
        return
    for agents, concurrency, limit in ((20, 20, 1.5), (20, 5, 4.5)):
        name = f"{agents} llm agents at 1 s latency, --concurrency {concurrency}"
        try:
            with LlmServer() as server:
                server.default = Step(findings=[], delay=1.0)
                seconds, results = _llm_dispatch(work, server, agents, concurrency, f"llm-{concurrency}")
            bad = [r for r in results if r.status != "completed"]
            if bad:
                raise BenchError(f"{bad[0].id} {bad[0].status}: {bad[0].error}")
            table.check(name, seconds, limit, "s")
        except Exception as exc:
            table.error(name, f"< {limit:g} s", exc)
    name = "llm orchestration overhead per call (200 calls, 0 latency)"
    try:
        with LlmServer() as server:
            seconds, results = _llm_dispatch(work, server, 200, 1, "llm-overhead")
        per_call_ms = seconds / 200 * 1000
        if any(r.status != "completed" for r in results):
            raise BenchError("not every call completed")
        table.check(name, per_call_ms, 5, "ms", "server time included")
    except Exception as exc:
        table.error(name, "< 5 ms", exc)
    name = "llm 429 with Retry-After: 1, then an answer"
    try:
        with LlmServer() as server:
            server.script(Step(status=429, headers={"retry-after": "1"}))
            seconds, results = _llm_dispatch(work, server, 1, 1, "llm-429")
        if results[0].status != "completed" or results[0].attempts != 2:
            raise BenchError(f"{results[0].status} after {results[0].attempts} attempts")
        table.check(name, seconds, 1.5, "s", "about 1 s expected")
    except Exception as exc:
        table.error(name, "< 1.5 s", exc)
    bench_rate_limited(table, work)
    bench_packing(table, work)
    bench_tools(table, work)


PACK_REVIEWERS = 5
PACK_BIG = (800, 2_200_000)  # files, bytes: the change the issue measured
PACK_GOAL = 1.5  # input tokens of a packed review, at most this many times the diff's own tokens


def bench_packing(table: Table, work: Path) -> None:
    """Five llm reviewers of one endpoint over an 800-file and a 3-file diff, each agent in its own
    requests (per_agent) and packed into shared ones (agent_packed), against a test-server model
    that reports every file it is shown: requests, input tokens against the diff's own, findings
    kept, wall at 0 s and 2 s latency."""
    from tests.llm.server import LlmServer, Recorded, Step, every_file

    diffs = {"800 files, 2.2 MB": DiffWriter(SEED + 3).diff(*PACK_BIG),
             "3 files": b"".join(_first_files(small_diff(SEED + 4), 3))}
    for label, diff in diffs.items():
        own = len(diff) // 4
        for latency in (0.0, 2.0):
            measured: dict[str, tuple[int, int, int, float]] = {}
            for packing in ("per_agent", "agent_packed"):
                name = f"{PACK_REVIEWERS} reviewers, {label}, {packing}, {latency:g} s latency"
                try:
                    with LlmServer() as server:
                        def answer(request: Recorded, delay: float = latency) -> Step:
                            step = every_file(request)
                            step.delay = delay
                            return step

                        server.default = answer
                        seconds, results = _llm_dispatch(work, server, PACK_REVIEWERS, 16, f"pack-{packing}", diff,
                                                          packing=packing, max_concurrency=16, timeout_s=600)
                        requests = len(server.requests)
                    if any(r.status != "completed" for r in results):
                        bad = next(r for r in results if r.status != "completed")
                        raise BenchError(f"{bad.id} {bad.status}: {bad.error}")
                    tokens = sum(r.tokens_in for r in results)
                    found = sum(len(r.findings) for r in results)
                    measured[packing] = (requests, tokens, found, seconds)
                except Exception as exc:
                    table.error(name, "-", exc)
            if len(measured) < 2:
                continue
            alone = measured["per_agent"]
            for packing, (requests, tokens, found, seconds) in measured.items():
                name = f"{PACK_REVIEWERS} reviewers, {label}, {packing}, {latency:g} s latency"
                ratio = tokens / own
                detail = (f"{requests} requests, {tokens:,} input tokens = {ratio:.2f}x the diff's {own:,}, "
                          f"{found} findings, {seconds:.1f} s")
                if packing == "agent_packed":
                    ok = ratio <= PACK_GOAL and found == alone[2]
                    table.rows.append(Row(name, f"<= {PACK_GOAL:g}x diff tokens, all findings", detail,
                                          "ok" if ok else "FAIL"))
                else:
                    table.info(name, detail)
    bench_prompt_cache(table, work)


def _first_files(diff: bytes, count: int) -> list[bytes]:
    sections = diff.split(b"diff --git ")
    return [b"diff --git " + s for s in sections[1:count + 1]]


def bench_prompt_cache(table: Table, work: Path) -> None:
    """The same change reviewed twice (no run state: both runs ask), Anthropic wire format, packed:
    the second run's requests repeat the first's fixed prefix, which the server reports as read
    from its prompt cache (it caches the system message it was told to, as Anthropic does)."""
    from tests.llm.server import LlmServer, Recorded, Step, every_file

    name = "unchanged diff asked again, anthropic, cached input tokens"
    seen: set[str] = set()

    def cache(request: Recorded) -> Step:
        step = every_file(request)
        block = request.body["system"][0]
        prefix = len(block["text"]) // 4 if block.get("cache_control") else 0
        key = "cached" if block["text"] in seen else "written"
        seen.add(block["text"])
        step.usage = {"cache_read_input_tokens": prefix if key == "cached" else 0,
                      "cache_creation_input_tokens": prefix if key == "written" else 0}
        step.tokens = (step.tokens[0] - prefix, step.tokens[1])  # input_tokens: what the cache did not hold
        return step

    diff = b"".join(_first_files(small_diff(SEED + 4), 3))
    os.environ.setdefault("BENCH_ANTHROPIC_KEY", "bench-key-not-secret")
    try:
        with LlmServer() as server:
            server.default = cache
            _llm_dispatch(work, server, PACK_REVIEWERS, 8, "cache-1", diff, packing="agent_packed",
                          provider="anthropic", base_url=server.url, api_key_env="BENCH_ANTHROPIC_KEY")
            _, again = _llm_dispatch(work, server, PACK_REVIEWERS, 8, "cache-2", diff, packing="agent_packed",
                                     provider="anthropic", base_url=server.url, api_key_env="BENCH_ANTHROPIC_KEY")
    except Exception as exc:
        table.error(name, "> 0 cached", exc)
        return
    cached = sum(r.cached_tokens_in for r in again)
    total = sum(r.tokens_in for r in again)
    table.rows.append(Row(name, "> 0 cached", f"{cached:,} of {total:,} input tokens read from the cache",
                          "ok" if cached > 0 else "FAIL"))


RATE_AGENTS = 8
RATE_FILES = 10  # one request each, at max_input_tokens 1000: 80 requests
RATE_WINDOW_S = 20.0  # 60 requests per 20 s: 60/min scaled by 3, so that the row takes half a minute


def bench_rate_limited(table: Table, work: Path) -> None:
    """The request storm of issue 9: many agents, many chunks, one endpoint that admits 5 requests
    at once and 60 per window, and answers 429 beyond."""
    from tests.llm.server import LlmServer, RateLimit, Step

    name = "rate-limited endpoint (5 concurrent, 60/window)"
    target = "0 failed, 0 429s after 1st headers"
    diff = "".join(
        f"diff --git a/src/f{i:02d}.py b/src/f{i:02d}.py\nnew file mode 100644\n--- /dev/null\n"
        f"+++ b/src/f{i:02d}.py\n@@ -0,0 +1,60 @@\n" + "".join(f"+value_{i}_{n} = {n} * {i}\n" for n in range(60))
        for i in range(RATE_FILES)).encode()
    try:
        with LlmServer() as server:
            server.rate_limit = limit = RateLimit(concurrent=5, requests=60, window_s=RATE_WINDOW_S)
            server.default = Step(findings=[], delay=0.2)
            seconds, results = _llm_dispatch(work, server, RATE_AGENTS, 8, "llm-rate", diff,
                                              max_input_tokens=1000, timeout_s=120, max_concurrency=None)
            requests = len(server.requests)
    except Exception as exc:
        table.error(name, target, exc)
        return
    failed = [r for r in results if r.status != "completed" or r.unreviewed]
    measured = (f"{len(failed)} of {RATE_AGENTS} agents failed, {limit.rejected_late} 429s on a budget after 1st "
                f"headers, {limit.busy_late} on its unreported 5 at once ({limit.rejected} in all), "
                f"{requests} requests, {seconds:.1f} s wall")
    table.rows.append(Row(name, target, measured, "ok" if not failed and not limit.rejected_late else "FAIL"))
    windows = -(-requests // limit.requests)
    table.info("  scaled to 60/min", f"window {RATE_WINDOW_S:g} s: the same run at 60/min takes about "
               f"{60 / RATE_WINDOW_S:g}x as long; {requests} requests need {windows} windows at least")


TOOL_FILES = 40  # files of the repository the tool-using reviewer looks around in
TOOL_CALLERS = 12  # of them, modules that call the function the change alters
TOOL_LATENCY = (0.0, 0.5)  # seconds the scripted model takes to answer each request


def _tool_repository(directory: Path) -> None:
    """A 40-file Python repository (core.charge and its callers among 39 other modules) on main;
    feature gives charge a new parameter and touches one more module."""
    env = {**child_env(), "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=directory, env=env, check=True, capture_output=True)

    (directory / "src").mkdir(parents=True)
    core = "def charge(amount):\n    return round(amount * 100)\n\n\ndef refund(amount):\n    return -charge(amount)\n"
    (directory / "src" / "core.py").write_text(core, encoding="utf-8")
    for i in range(TOOL_FILES - 1):
        body = [f'"""Module {i}."""', "from core import charge" if i < TOOL_CALLERS else "", ""]
        for n in range(12):
            body += [f"def step_{i}_{n}(value):", f"    total = value * {n + 1} + {i}",
                     "    return charge(total)" if i < TOOL_CALLERS and n == 5 else "    return total", ""]
        (directory / "src" / f"m{i:02d}.py").write_text("\n".join(body) + "\n", encoding="utf-8")
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    git("checkout", "-q", "-b", "feature")
    changed = core.replace("charge(amount):\n    return round(amount * 100)",
                           "charge(amount, currency):\n    return round(amount * 100), currency")
    (directory / "src" / "core.py").write_text(changed, encoding="utf-8")
    with (directory / "src" / "m39.py").open("a", encoding="utf-8") as handle:
        handle.write("\n\ndef audit(value):\n    return value\n")
    git("commit", "-q", "-am", "charge takes a currency")


def _tool_reviewer(latency: float) -> Any:
    """A scripted model that reviews like a careful person with tools: first grep for the callers
    of charge, then read the first two callers it found, then report each call without a
    currency; without tools it reports the changed line. Tokens count from the request's size."""
    import re

    from tests.llm.server import Recorded, Step, tool_results

    def answer(request: Recorded) -> Step:
        size = len(json.dumps(request.body)) // 4
        results = tool_results(request)
        if "tools" not in request.body:
            findings = [{"severity": "major", "message": "charge's signature changed", "file": "src/core.py",
                         "line": 1}]
            return Step(findings=findings, tokens=(size, 40), delay=latency)
        if not results:
            return Step(tool_calls=[("grep", {"pattern": r"\bcharge\(", "paths": ["src/**"]})], tokens=(size, 30),
                        delay=latency)
        callers = sorted(set(re.findall(r"^(src/m\d+\.py):\d+:", results[0][1], re.MULTILINE)))
        if len(results) == 1:
            reads = [("read_file", {"path": path, "start_line": None, "end_line": None}) for path in callers[:2]]
            return Step(tool_calls=reads, tokens=(size, 60), delay=latency)
        findings = []
        for _, text, _ in results[1:]:
            found = re.search(r"read_file (\S+) .*?\n(?:.*\n)*?\s+(\d+)\s+return charge\(total\)", text)
            if found:
                findings.append({"severity": "major", "message": "calls charge without a currency",
                                 "file": found.group(1), "line": int(found.group(2))})
        return Step(findings=findings, tokens=(size, 30 * len(findings) + 10), delay=latency)

    return answer


def bench_tools(table: Table, work: Path) -> None:
    """One llm reviewer with repository tools (grep, read_file) against the same reviewer without,
    over a change to a 40-file repository, as whole processes against the scripted test server:
    requests, tokens in and out, tool calls and bytes, findings, wall."""
    from tests.llm.server import LlmServer

    repo = work / "tools-repo"
    try:
        _tool_repository(repo)
    except (OSError, subprocess.CalledProcessError) as exc:
        table.error("reviewer with tools", "-", exc)
        return
    for latency in TOOL_LATENCY:
        for tools in ([], ["grep", "read_file"]):
            label = "with tools (grep, read_file)" if tools else "without tools"
            name = f"reviewer {label}, {TOOL_FILES}-file repo, {latency:g} s latency"
            try:
                with LlmServer() as server:
                    server.default = _tool_reviewer(latency)
                    cfg = work / f"tools-cfg-{latency:g}-{len(tools)}"
                    (cfg / "instructions").mkdir(parents=True)
                    (cfg / "instructions" / "r.md").write_text("# Reviewer\nFind what the change breaks.\n")
                    agent = {"id": "reviewer", "name": "reviewer", "description": "bench reviewer", "kind": "llm",
                             "provider": "openai", "model": "bench", "base_url": f"{server.url}/v1",
                             "instructions": "instructions/r.md", "timeout_s": 60, "tools": tools}
                    files = {"review-agents.json": {"version": 1, "agents": [agent]},
                             "review-composition.json": {"version": 1, "policies": [{
                                 "id": "all", "description": "every change", "trigger": {"type": "always"},
                                 "dispatch": ["reviewer"]}]},
                             "review-rules.json": {"version": 1, "rules": []},
                             "review-gate.json": {"version": 1, "filter_mode": "nofilter"}}
                    for file_name, data in files.items():
                        (cfg / file_name).write_text(json.dumps(data), encoding="utf-8")
                    out = work / f"tools-{latency:g}-{len(tools)}.json"
                    run = run_cli(["--config", str(cfg), "--base", "main", "--head", "feature", "--no-state",
                                   "--format", "json", "--output", str(out)], repo)
                    requests = len(server.requests)
                report = json.loads(out.read_text(encoding="utf-8"))
                [agent_out] = report["agents"]
                if agent_out["status"] != "completed":
                    raise BenchError(f"{agent_out['status']}: {agent_out['error']}")
                calls = agent_out["tool_calls"]
                detail = (f"{requests} requests, {agent_out['tokens_in']:,} tokens in, {agent_out['tokens_out']:,} "
                          f"out, {len(calls)} tool calls ({sum(c['bytes'] for c in calls):,} bytes), "
                          f"{len(report['findings'])} findings, {run.seconds:.2f} s wall")
                table.info(name, detail)
            except Exception as exc:
                table.error(name, "-", exc)


def bench_concurrency(table: Table, work: Path, small: Path) -> None:
    cases = ((SHELL_SLEEPER, "sh", 20, 1.5), (SHELL_SLEEPER, "sh", 5, None),
             (PYTHON_SLEEPER, "python", 20, None))
    for command, label, concurrency, target in cases:
        config = work / f"sleepers-{label}"
        write_sleep_config(config, command)
        check = run_cli(["config", "validate", "--config", str(config)], work)
        name = f"20 x 1 s {label} command agents, --concurrency {concurrency}"
        if check.code != 0:
            reason = f"config validate exit {check.code}: {last_line(check.err + check.out)}"
            table.error(name, "< 1.5 s", BenchError(reason))
            return
        report = work / f"sleepers-{label}-{concurrency}.json"
        try:
            # --no-cache: the runs share one state file; every run must call its 20 agents
            run = run_cli(["--diff", str(small), "--config", str(config), "--no-cache",
                           "--concurrency", str(concurrency),
                           "--format", "json", "--output", str(report)], work)
            if run.code != 0:
                raise BenchError(f"exit {run.code}: {last_line(run.err)}")
            agents = json.loads(report.read_text(encoding="utf-8"))["agents"]
            done = sum(1 for a in agents if a["status"] == "completed")
            if done != SLEEP_AGENTS:
                raise BenchError(f"{done} of {SLEEP_AGENTS} agents completed")
        except (BenchError, OSError, ValueError, KeyError) as exc:
            table.error(name, f"< {target:g} s" if target else "-", exc)
            continue
        if target is None:
            table.info(name, f"{run.seconds:.3f} s")
        else:
            table.check(name, run.seconds, target, "s")
        if concurrency == 20:
            floor = spawn_floor(small, command)
            table.info(f"  floor: the 20 {label} programs started directly",
                       f"{floor:.3f} s (review-gate adds {run.seconds - floor:.3f} s)")


def bench_full_run(table: Table, work: Path, big: Path) -> None:
    name = "full run on big.diff, peak RSS"
    out = work / "out.json"
    try:
        run = run_cli(["--diff", str(big), "--format", "json", "--output", str(out)], work)
        if run.code not in (0, 1):  # 1: the gate said needs_fixes/fail, as it should on this diff
            raise BenchError(f"exit {run.code}: {last_line(run.err)}")
        report = json.loads(out.read_text(encoding="utf-8"))
    except (BenchError, OSError, ValueError) as exc:
        table.error(name, "< 300 MB", exc)
        return
    rss_mb = run.max_rss / 1024 / (1024 if sys.platform == "darwin" else 1)
    table.check(name, rss_mb, 300, "MB")
    slowest = max(report["agents"], key=lambda a: a["duration_s"], default=None)
    agents = f"{len(report['agents'])} agents" + (
        f", slowest {slowest['id']} {slowest['duration_s']:.2f} s" if slowest else "")
    table.info("  full run wall time",
               f"{run.seconds:.3f} s (decision {report['decision']}, "
               f"{len(report['findings'])} findings, {out.stat().st_size / 1e6:.1f} MB JSON)")
    table.info("  agents", agents)


def bench_cached_rerun(table: Table, work: Path, big: Path) -> None:
    """The second run of an unchanged big diff: every (file, agent) pair comes from the store."""
    name = "cached re-run of big.diff (2nd run)"
    cwd = work / "cached"
    cwd.mkdir(exist_ok=True)
    out = cwd / "out.json"
    try:
        for _ in range(2):
            run = run_cli(["--diff", str(big), "--format", "json", "--output", str(out)], cwd)
            if run.code not in (0, 1):
                raise BenchError(f"exit {run.code}: {last_line(run.err)}")
        report = json.loads(out.read_text(encoding="utf-8"))
    except (BenchError, OSError, ValueError) as exc:
        table.error(name, "< 1.5 s", exc)
        return
    states = sorted({a["status"] for a in report["agents"]})
    detail = f"{len(report['agents'])} agents, statuses: {', '.join(states)}"
    table.check(name, run.seconds, 1.5, "s", detail)
    # The built-in LLM agents are skipped without their API keys: they make no call either.
    called = [a["id"] for a in report["agents"] if a["status"] not in ("cached", "skipped")]
    if called:
        table.error("  no agent called on the 2nd run", "none", BenchError(f"called: {', '.join(called)}"))


def bench_store_write(table: Table, work: Path, big: Path) -> None:
    """Recording one run of 600 files x 6 agents: run row, pairs pending -> completed, report."""
    name = "store: record a run of 600 files x 6 agents"
    agents = 6
    try:
        import anyio

        from review_gate.config import load_config
        from review_gate.models import AgentManifest, AgentResult, Finding, ManifestEntry, Plan
        from review_gate.pipeline import runner
        from review_gate.pipeline.aggregate import aggregate
        from review_gate.pipeline.normalize import DiffRequest
        from review_gate.state import pairs, runs
        from review_gate.state.freshness import config_sha, plan_reuse
        from review_gate.state.store import open_store
    except ImportError as exc:
        table.error(name, "< 0.3 s", BenchError(f"review_gate is not importable: {exc}"))
        return
    try:
        config = load_config(None)
        plans: list[Plan] = []

        async def make_plan() -> None:
            facts = await runner.read_change(DiffRequest(mode="file", path=str(big)))
            plans.append(await runner.plan(facts, config))

        anyio.run(make_plan)
        [plan] = plans
        paths = [f.path for f in plan.facts.files]
        entries = [ManifestEntry(agent=f"agent-{i}", files=paths, policies=["bench"], priority=50)
                   for i in range(agents)]
        plan = plan.model_copy(update={"manifest": AgentManifest(entries=entries)})
        results = [AgentResult(id=e.agent, kind="command", status="completed", attempts=1, duration_s=0.1,
                               files=paths, findings=[
                                   Finding(fingerprint=f"{e.agent}-{n}", agent=e.agent, severity="warning",
                                           category="general", file=p, line=1, message=f"finding {n}")
                                   for n, p in enumerate(paths) if n % 10 == 0])
                   for e in entries]
        report = aggregate(plan.facts, plan.classification, entries, plan.gaps, results, config,
                           run_id=runner.new_run_id(), tool_version="bench")
        store = open_store(work / "store-bench" / "state.db")
        assert store is not None
        with store:
            started = time.perf_counter()
            runs.begin(store, report.run_id, plan.facts, config_sha(config))
            reuse = plan_reuse(plan.manifest, plan.facts, config, pairs.lookup(store))
            pairs.record_planned(store, report.run_id, reuse)
            pairs.record_results(store, report.run_id, reuse, results)
            runs.finish(store, report, 0.0)
            seconds = time.perf_counter() - started
            count = store.db.execute("SELECT COUNT(*) FROM review_pairs WHERE status = 'completed'").fetchone()[0]
    except Exception as exc:  # report it, run the other benchmarks
        table.error(name, "< 0.3 s", BenchError(f"{type(exc).__name__}: {exc}"))
        return
    table.check(name, seconds, 0.3, "s", f"{count} pairs incl. {agents} scope pairs, report "
                f"{len(report.model_dump_json()) / 1e6:.1f} MB")


SWEEP_FILES = (2000, 6_000_000)  # files, bytes of the synthetic repository a sweep reviews
BATCH_FILES = (800, 2_200_000)  # the change of the batch and shard rows (PACK_BIG's size)
BATCH_REVIEWERS = 3


def _repository(directory: Path, files: int, size: int, seed: int) -> int:
    """A git repository of ``files`` synthetic files (the added lines of a generated diff), one commit."""
    from review_gate.change.diff_parser import parse_diff

    directory.mkdir(parents=True)
    count = 0
    for change in parse_diff(DiffWriter(seed).diff(files, size)):
        if change.status == "deleted":
            continue
        target = directory / change.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(line.text + "\n" for h in change.hunks for line in h.lines if line.added),
                          encoding="utf-8")
        count += 1
    env = {**child_env(), "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "synthetic"]):
        subprocess.run(["git", *args], cwd=directory, env=env, check=True, capture_output=True)
    return count


def bench_sweep(table: Table, work: Path) -> None:
    """A sweep of a 2,000-file repository with the built-in offline agents: wall, peak RSS; then
    the second sweep of the unchanged tree, which calls no agent."""
    name = f"sweep of a {SWEEP_FILES[0]:,}-file repository, built-in config, --offline"
    repo = work / "sweep-repo"
    try:
        files = _repository(repo, *SWEEP_FILES, seed=SEED + 5)
        out = work / "sweep.json"
        first = run_cli(["sweep", "--offline", "--format", "json", "--output", str(out)], repo)
        if first.code not in (0, 1):
            raise BenchError(f"exit {first.code}: {last_line(first.err)}")
        report = json.loads(out.read_text(encoding="utf-8"))
        second = run_cli(["sweep", "--offline", "--format", "json", "--output", str(out)], repo)
        again = json.loads(out.read_text(encoding="utf-8"))
    except (BenchError, OSError, ValueError, subprocess.CalledProcessError) as exc:
        table.error(name, "-", exc)
        return
    rss_mb = first.max_rss / 1024 / (1024 if sys.platform == "darwin" else 1)
    table.info(name, f"{first.seconds:.2f} s wall, {rss_mb:.0f} MB peak RSS ({files} files, "
                     f"{report['coverage']['files_changed']} swept, {len(report['findings'])} findings, "
                     f"decision {report['decision']})")
    called = [a["id"] for a in again["agents"] if a["status"] not in ("cached", "skipped")]
    detail = f"{second.seconds:.2f} s wall; agents called: {', '.join(called) or 'none'}"
    table.rows.append(Row("  second sweep of the unchanged tree", "no agent called", detail,
                          "ok" if not called and again["findings"] == report["findings"] else "FAIL"))


def bench_batch(table: Table, work: Path) -> None:
    """A batch submit/collect round trip of an 800-file change against the test server: HTTP calls
    and model requests, tokens, and the cost at batch prices against interactive ones; the
    findings against a live run of the same change."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from review_gate import api
    from review_gate.llm import client
    from review_gate.models import Price
    from tests.llm.server import LlmServer, every_file

    name = f"batch round trip, {BATCH_FILES[0]} files, {BATCH_REVIEWERS} packed reviewers + pattern agent"
    diff = DiffWriter(SEED + 3).diff(*BATCH_FILES)
    price = Price(input_per_mtok=2.5, output_per_mtok=10.0)  # gpt-4o's list price
    try:
        with LlmServer() as server:
            server.default = every_file
            config = _batch_config(work / "batch-config", server, price)
            cwd = work / "batch-cwd"
            cwd.mkdir()
            started = time.perf_counter()
            sent = api.batch_submit(diff=diff, cwd=cwd, config=config)
            collected = api.batch_collect(sent.run_id, cwd=cwd, config=config)
            seconds = time.perf_counter() - started
            calls = len(server.batches.calls)
            lines = len(server.requests)
            server.requests.clear()
            live = api.review(diff=diff, cwd=cwd, config=config, state=False)
            live_requests = len(server.requests)
        report = collected.report
        if report is None:
            raise BenchError("the batch was not collected")
    except Exception as exc:
        table.error(name, "-", BenchError(f"{type(exc).__name__}: {exc}"))
        return
    usage = report.usage
    interactive = sum(client.cost("bench", a.tokens_in, a.tokens_out, {"bench": price}) for a in report.agents)
    same = sorted(f.fingerprint for f in report.findings) == sorted(f.fingerprint for f in live.findings)
    detail = (f"{calls} HTTP calls for {lines} model requests (live: {live_requests} calls); "
              f"{usage.tokens_in:,} in + {usage.tokens_out:,} out tokens; ${usage.cost_usd:.4f} at batch prices "
              f"vs ${interactive:.4f} interactive; {len(report.findings)} findings, same as live: "
              f"{'yes' if same else 'NO'}; {seconds:.1f} s")
    table.rows.append(Row(name, "same findings as live, half the cost", detail,
                          "ok" if same and abs(usage.cost_usd * 2 - interactive) < 0.001 else "FAIL"))


def _batch_config(directory: Path, server: Any, price: Any) -> Path:
    (directory / "instructions").mkdir(parents=True)
    (directory / "instructions" / "r.md").write_text("# Reviewer\nFind bugs.\n", encoding="utf-8")
    ids = [f"reviewer-{i}" for i in range(BATCH_REVIEWERS)]
    specs = [{"id": i, "name": i, "description": "bench llm agent", "kind": "llm", "provider": "openai",
              "model": "bench", "base_url": f"{server.url}/v1", "instructions": "instructions/r.md",
              "timeout_s": 600} for i in ids]
    builtin = json.loads((Path(__file__).resolve().parent.parent / "config" / "review-agents.json").read_text())
    pattern = [a for a in builtin["agents"] if a["kind"] == "pattern"]
    rules = json.loads((Path(__file__).resolve().parent.parent / "config" / "review-rules.json").read_text())
    kept = {a["id"] for a in pattern}  # the built-in llm agents' own rules go with them
    files = {"review-agents.json": {"version": 1, "agents": [*specs, *pattern]},
             "review-rules.json": {**rules, "rules": [r for r in rules["rules"] if r["agent"] in kept]},
             "review-composition.json": {"version": 1, "policies": [{
                 "id": "all", "description": "every agent", "trigger": {"type": "always"},
                 "dispatch": [*ids, *(a["id"] for a in pattern)]}]},
             "review-gate.json": {"version": 1, "packing": "agent_packed",
                                  "prices": {"bench": price.model_dump(exclude_none=True)}}}
    for file_name, data in files.items():
        (directory / file_name).write_text(json.dumps(data), encoding="utf-8")
    return directory


def bench_shards(table: Table, work: Path) -> None:
    """The 800-file change in a 4-way sharded run merged back: the same report as unsharded."""
    name = f"4-way sharded run of the {BATCH_FILES[0]}-file change, merged"
    diff = work / "shard.diff"
    diff.write_bytes(DiffWriter(SEED + 3).diff(*BATCH_FILES))
    cwd = work / "shards"
    cwd.mkdir()
    try:
        whole = run_cli(["--diff", str(diff), "--offline", "--no-state", "--format", "json", "--output",
                         str(cwd / "whole.json")], cwd)
        walls = []
        for index in range(1, 5):
            part = run_cli(["--diff", str(diff), "--offline", "--no-state", "--shard", f"{index}/4", "--format",
                            "json", "--output", str(cwd / f"shard-{index}.json")], cwd)
            if part.code not in (0, 1):
                raise BenchError(f"shard {index}: exit {part.code}: {last_line(part.err)}")
            walls.append(part.seconds)
        merged = run_cli(["merge", *(str(cwd / f"shard-{i}.json") for i in range(1, 5)), "--format", "json",
                          "--output", str(cwd / "merged.json")], cwd)
        a = json.loads((cwd / "whole.json").read_text(encoding="utf-8"))
        b = json.loads((cwd / "merged.json").read_text(encoding="utf-8"))
    except (BenchError, OSError, ValueError) as exc:
        table.error(name, "same findings and decision", exc)
        return
    same = (sorted(f["fingerprint"] for f in a["findings"]) == sorted(f["fingerprint"] for f in b["findings"])
            and a["decision"] == b["decision"] and merged.code == whole.code)
    shares = [len(json.loads((cwd / f"shard-{i}.json").read_text())["shard"]["files"]) for i in range(1, 5)]
    detail = (f"{len(b['findings'])} findings, decision {b['decision']} (exit {merged.code}); unsharded "
              f"{whole.seconds:.2f} s, shards {', '.join(f'{w:.2f}' for w in walls)} s, files per shard "
              f"{'/'.join(map(str, shares))}")
    table.rows.append(Row(name, "same findings and decision", detail, "ok" if same else "FAIL"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary directory and print its path")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="review-gate-bench-")).resolve()
    # Runs outside a repository keep their state in the user's cache: the bench keeps its own.
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    table = Table()
    try:
        started = time.perf_counter()
        data = DiffWriter(SEED).diff(BIG_FILES, BIG_BYTES)
        big = work / "big.diff"
        big.write_bytes(data)
        small = work / "small.diff"
        small.write_bytes(small_diff(SEED + 1))
        sections = data.count(b"\ndiff --git ") + data.startswith(b"diff --git ")
        lines = data.count(b"\n")
        table.info("synthetic big.diff",
                   f"{len(data) / 1e6:.2f} MB, {sections} files, {lines} lines, "
                   f"generated in {time.perf_counter() - started:.2f} s")
        if sections != BIG_FILES or abs(len(data) - BIG_BYTES) > BIG_BYTES * SIZE_TOLERANCE:
            raise SystemExit(f"bench: generated {sections} files and {len(data)} bytes; "
                             "the generator is off target")

        bench_version(table, work)
        bench_plan(table, work, big)
        bench_pattern_scan(table, big)
        bench_dedupe(table)
        bench_concurrency(table, work, small)
        bench_full_run(table, work, big)
        bench_cached_rerun(table, work, big)
        bench_store_write(table, work, big)
        bench_llm(table, work)
        bench_sweep(table, work)
        bench_batch(table, work)
        bench_shards(table, work)
    finally:
        if args.keep:
            print(f"inputs and outputs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(table.render())
    return 1 if args.strict and table.failed else 0


if __name__ == "__main__":
    sys.exit(main())
