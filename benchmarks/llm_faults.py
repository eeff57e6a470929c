#!/usr/bin/env python3
"""LLM review against the faults a real provider account produces (issue 20).

Run from the repository root with the interpreter review-gate is installed in:

    python benchmarks/llm_faults.py [--strict] [--only TEXT]

The six built-in LLM reviewers (their instructions, rules, routing and settings, only their
``base_url`` pointed at the test server of ``tests/llm/server.py``) review a synthetic change
in-process (``review_gate.api.review``, no run state), with the built-in pattern agents beside
them. Each row prints the requests sent against the chunks they carried (a chunk is the user
message of a request: a retry sends the same one again), the 429s the server sent after the
first answer's headers (and in all), the agents that did not complete (or left files
unreviewed), the decision and the wall time. Exits 0 unless --strict is given and a goal is
missed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measure import Row, Table
from synthetic_diff import DiffWriter

SEED = 20240611
SMALL = (60, 320_000)  # files, bytes: the change whose chunks (at 3,000 input tokens) the faults hit
BIG = (800, 2_200_000)  # files, bytes: the change of the packing rows
SMALL_INPUT_TOKENS = 3000
FAULT_LATENCY_S = 0.2  # the model's answer time in the fault rows
WIDE_LATENCY_S = 2.0  # ... in the rows without limits
FAULT_EVERY = 7  # the scattered 500s: every 7th request
REQUEST_WINDOW = (10, 4.0)  # requests, seconds
TOKEN_WINDOW = (20_000, 6.0)  # tokens, seconds
WIDE = 64  # the explicit max_concurrency the default is compared with
WIDE_GOAL = 1.5  # the default's wall time, at most this many times the wide setting's
KEYS = {"anthropic": "BENCH_ANTHROPIC_KEY", "openai": "BENCH_OPENAI_KEY"}
FAULT_REVIEWERS = ("build-reviewer", "test-reviewer")  # one lens an endpoint: Anthropic's headers and OpenAI's
BUILT_IN_REVIEWERS = ("build-reviewer", "security-reviewer", "architecture-reviewer", "test-reviewer",
                      "performance-reviewer", "finance-sme")


def write_config(directory: Path, server_url: str, reviewers: Sequence[str], **fields: Any) -> Path:
    """The built-in configuration with only the LLM ``reviewers`` it names, pointed at the test
    server; ``fields`` go into each reviewer's entry."""
    from review_gate.config import load_config

    built_in = load_config(None)
    agents = []
    for agent in built_in.agents.agents:
        entry = agent.model_dump(mode="json", by_alias=True, exclude_defaults=True)
        if agent.kind == "llm":
            if agent.id not in reviewers:
                continue
            entry["base_url"] = server_url + ("/v1" if entry["provider"] == "openai" else "")
            entry["api_key_env"] = KEYS[entry["provider"]]
            entry.update(fields)
        agents.append(entry)
    kept = {a["id"] for a in agents}
    policies = [p.model_dump(mode="json", exclude_defaults=True) for p in built_in.composition.policies]
    policies = [p for p in policies if set(p["dispatch"]) <= kept]
    rules = [r.model_dump(mode="json", exclude_defaults=True) for r in built_in.rules.rules if r.agent in kept]
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in (("review-agents.json", {"version": 1, "agents": agents}),
                       ("review-composition.json", {"version": 1, "policies": policies}),
                       ("review-rules.json", {"version": 1, "rules": rules})):
        (directory / name).write_text(json.dumps(data), encoding="utf-8")
    return directory


@dataclass
class Outcome:
    requests: int
    chunks: int
    late: int  # 429s after the first answer's headers
    rejected: int  # 429s in all
    faults: int  # 500s the server answered on purpose
    troubled: list[str]  # agents that did not complete, or left files unreviewed
    decision: str
    seconds: float


def review(work: Path, name: str, diff: bytes, setup: Callable[[Any], None], reviewers: Sequence[str],
           **fields: Any) -> Outcome:
    """One review of ``diff`` against a fresh test server that ``setup`` configures."""
    from review_gate import api
    from tests.llm.server import LlmServer

    for variable in KEYS.values():
        os.environ[variable] = "bench-key-not-secret"
    with LlmServer() as server:
        setup(server)
        config = write_config(work / name / "config", server.url, reviewers, **fields)
        cwd = work / name / "cwd"
        cwd.mkdir(parents=True)
        started = time.perf_counter()
        report = api.review(diff=diff, cwd=cwd, config=config, state=False)
        seconds = time.perf_counter() - started
        shown = {(r.path, _user(r.body)) for r in server.requests}
        limit = server.rate_limit
        faults = getattr(server, "faults", 0)
        requests = len(server.requests)
    llm = [a for a in report.agents if a.kind == "llm"]
    troubled = [f"{a.id} {a.status}" + (f" ({len(a.unreviewed)} files unreviewed)" if a.unreviewed else "")
                for a in llm if a.status != "completed" or a.unreviewed]
    late = limit.rejected_late + limit.busy_late if limit else 0
    return Outcome(requests, len(shown), late, limit.rejected if limit else 0, faults, troubled, report.decision,
                   seconds)


def _user(body: dict[str, Any]) -> str:
    """A request's chunk: its (first) user message, the same when the request is sent again."""
    return next(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user")


def answers(latency: float) -> Callable[[Any], Any]:
    from tests.llm.server import Recorded, Step, every_file

    def answer(request: Recorded) -> Step:
        step = every_file(request)
        step.delay = latency
        return step

    return answer


def scattered_500s(server: Any) -> None:
    from tests.llm.server import Recorded, Step

    inner = answers(FAULT_LATENCY_S)
    lock = threading.Lock()
    server.faults = 0

    def answer(request: Recorded) -> Step:
        with lock:
            count = len(server.requests)
            if count % FAULT_EVERY == 0:
                server.faults += 1
                return Step(status=500, delay=FAULT_LATENCY_S)
        return inner(request)  # type: ignore[no-any-return]

    server.default = answer


def request_window(server: Any) -> None:
    from tests.llm.server import RateLimit

    server.rate_limit = RateLimit(concurrent=64, requests=REQUEST_WINDOW[0], window_s=REQUEST_WINDOW[1])
    server.default = answers(FAULT_LATENCY_S)


def token_window(server: Any) -> None:
    from tests.llm.server import RateLimit

    server.rate_limit = RateLimit(concurrent=64, requests=10_000, tokens=TOKEN_WINDOW[0], window_s=TOKEN_WINDOW[1])
    server.default = answers(FAULT_LATENCY_S)


def no_limits(server: Any) -> None:
    from tests.llm.server import RateLimit

    server.rate_limit = RateLimit(concurrent=10_000, requests=1_000_000, tokens=1_000_000_000, window_s=60.0)
    server.default = answers(WIDE_LATENCY_S)


SCENARIOS: dict[str, Callable[[Any], None]] = {
    f"scattered 500s (every {FAULT_EVERY}th request)": scattered_500s,
    f"request window ({REQUEST_WINDOW[0]} per {REQUEST_WINDOW[1]:g} s)": request_window,
    f"token window ({TOKEN_WINDOW[0]:,} per {TOKEN_WINDOW[1]:g} s)": token_window,
}


def describe(outcome: Outcome) -> str:
    failed = f"{len(outcome.troubled)} agents failed" + (f" ({'; '.join(outcome.troubled)})" if outcome.troubled
                                                        else "")
    return (f"{outcome.requests} requests for {outcome.chunks} chunks, {outcome.faults} 500s, {outcome.late} late "
            f"429s ({outcome.rejected} in all), {failed}, {outcome.decision}, {outcome.seconds:.1f} s")


def bench_faults(table: Table, work: Path, only: str) -> None:
    diff = DiffWriter(SEED + 5).diff(*SMALL)
    target = "all complete, requests <= chunks + 2 x faults, 0 late 429s"
    for label, setup in SCENARIOS.items():
        name = f"{SMALL[0]} files, {label}"
        if only not in name:
            continue
        try:
            outcome = review(work, name.replace(" ", "-"), diff, setup, FAULT_REVIEWERS,
                             max_input_tokens=SMALL_INPUT_TOKENS, timeout_s=300)
        except Exception as exc:
            table.error(name, target, exc)
            continue
        faults = outcome.faults + outcome.rejected
        ok = not outcome.troubled and outcome.requests <= outcome.chunks + 2 * faults and outcome.late == 0
        table.rows.append(Row(name, target, describe(outcome), "ok" if ok else "FAIL"))


def bench_wide(table: Table, work: Path, only: str) -> None:
    diff = DiffWriter(SEED + 3).diff(*BIG)
    measured: dict[str, Outcome] = {}
    for label, fields in (("default", {}), (f"max_concurrency {WIDE}", {"max_concurrency": WIDE})):
        name = f"{BIG[0]} files, no limits, {WIDE_LATENCY_S:g} s latency, {label}"
        if only not in name:
            continue
        try:
            measured[label] = outcome = review(work, name.replace(" ", "-"), diff, no_limits, BUILT_IN_REVIEWERS,
                                               timeout_s=600, **fields)
        except Exception as exc:
            table.error(name, "-", exc)
            continue
        if label != "default":
            table.info(name, describe(outcome))
    if "default" in measured:
        outcome = measured["default"]
        name = f"{BIG[0]} files, no limits, {WIDE_LATENCY_S:g} s latency, default"
        wide = measured.get(f"max_concurrency {WIDE}")
        ratio = outcome.seconds / wide.seconds if wide else float("nan")
        ok = not outcome.troubled and ratio <= WIDE_GOAL
        table.rows.append(Row(name, f"<= {WIDE_GOAL:g}x the wide setting", f"{describe(outcome)}, {ratio:.2f}x",
                              "ok" if ok else "FAIL"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a goal is missed")
    parser.add_argument("--only", default="", help="run only the rows whose name contains this text")
    args = parser.parse_args(argv)
    table = Table()
    with tempfile.TemporaryDirectory(prefix="review-gate-llm-faults-") as temporary:
        work = Path(temporary).resolve()
        os.environ["XDG_CACHE_HOME"] = str(work / "cache")
        bench_faults(table, work, args.only)
        bench_wide(table, work, args.only)
    print(table.render())
    return 1 if args.strict and table.failed else 0


if __name__ == "__main__":
    sys.exit(main())
