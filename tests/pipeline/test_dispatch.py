"""Stage 5: dispatch runs the manifest's agents under a concurrency limit, deadlines and retries.

The agents are real command agents (Python scripts that record when they ran), loaded from a
config directory written here; retry timing uses a small agent kind registered for the test in
the explicit ``KINDS`` plugin registry. Every test runs on both of anyio's backends, asyncio
and trio: dispatch is written against anyio alone.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from review_gate.agents import KINDS, AgentContext, AgentOutput, AgentSpec, AgentTask, base
from review_gate.agents.base import Estimate
from review_gate.change.diff_parser import parse_diff
from review_gate.config import load_config
from review_gate.errors import AgentFault, TransientAgentFault
from review_gate.models import AgentManifest, AgentResult, ManifestEntry, PRFacts, RawFinding, ReviewConfig
from review_gate.pipeline.dispatch import DispatchOptions, dispatch
from tests.conftest import make_diff


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Dispatch is written against anyio alone: every test runs on both of its backends."""
    backend: str = request.param
    return backend


FILES = ["app.py", "lib/util.py"]
FACTS = PRFacts(source="test", files=parse_diff(
    "".join(make_diff(p, ["x = 1", "y = 2"]) for p in FILES).encode()))

RECORDER = """\
    import json, sys, time
    start = time.time()
    time.sleep(float(sys.argv[2]))
    with open(sys.argv[1], "w") as out:
        json.dump([start, time.time()], out)
    print(json.dumps([{"severity": "info", "message": "ran " + sys.argv[1].rsplit("/", 1)[-1],
                       "file": "app.py", "line": 1}]))
"""


# Agents that wait for each other, not for the clock: what they prove holds on any machine, and
# where dispatch were wrong they would wait until their deadline and end timed_out.
WAITER = """\
    import json, os, sys, time
    mine, deadline = sys.argv[1], time.monotonic() + 120
    waits_for = sys.argv[2:]  # files that must exist before this agent finishes
    with open(mine + ".started", "w"):
        pass
    while not all(os.path.exists(w) for w in waits_for) and time.monotonic() < deadline:
        time.sleep(0.01)
    done = sorted(n for n in os.listdir(os.path.dirname(mine)) if n.endswith(".done"))
    with open(mine, "w") as out:
        json.dump(done, out)  # the agents that finished before this one
    print("[]")
"""


def waiting_agent(tmp_path: Path, agent_id: str, waits_for: list[str]) -> dict[str, Any]:
    """An agent that starts, waits until the agents ``waits_for`` name have started (``x.started``)
    or finished (``x.done``), then finishes, writing ``agent_id.done``; 120 s to spare."""
    script = tmp_path / "waiter.py"
    script.write_text(textwrap.dedent(WAITER), encoding="utf-8")
    marks = tmp_path / "marks"
    marks.mkdir(exist_ok=True)
    argv = [sys.executable, str(script), str(marks / f"{agent_id}.done"), *(str(marks / w) for w in waits_for)]
    return command_agent(agent_id, argv, timeout_s=150)


def recorder(tmp_path: Path) -> Path:
    path = tmp_path / "recorder.py"
    path.write_text(textwrap.dedent(RECORDER), encoding="utf-8")
    return path


def command_agent(agent_id: str, argv: list[str], **fields: Any) -> dict[str, Any]:
    return {"id": agent_id, "name": agent_id, "description": f"test agent {agent_id}",
            "kind": "command", "command": argv, "timeout_s": 5, **fields}


def timed_agent(tmp_path: Path, agent_id: str, seconds: float, **fields: Any) -> dict[str, Any]:
    argv = [sys.executable, str(recorder(tmp_path)), str(tmp_path / f"{agent_id}.json"), str(seconds)]
    return command_agent(agent_id, argv, **fields)


def config_with(tmp_path: Path, agents: list[dict[str, Any]], settings: dict[str, Any] | None = None) -> ReviewConfig:
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    files = {
        "review-agents.json": {"version": 1, "agents": agents},
        "review-composition.json": {"version": 1, "policies": [{
            "id": "everything", "description": "every agent on every change",
            "trigger": {"type": "always"}, "dispatch": [a["id"] for a in agents]}]},
        "review-rules.json": {"version": 1, "rules": []},
        **({"review-gate.json": {"version": 1, **settings}} if settings else {}),
    }
    for name, data in files.items():
        (cfg / name).write_text(json.dumps(data), encoding="utf-8")
    return load_config(cfg)


def manifest(*agent_ids: str, files: list[str] | None = None) -> AgentManifest:
    return AgentManifest(entries=[
        ManifestEntry(agent=a, files=files or FILES, policies=["everything"], priority=50) for a in agent_ids])


def options(config: ReviewConfig, concurrency: int = 8, **fields: Any) -> DispatchOptions:
    return DispatchOptions(concurrency=concurrency, default_timeout_s=10, config_dir=config.directory, **fields)


def intervals(tmp_path: Path, agent_ids: list[str]) -> list[tuple[float, float]]:
    return [tuple(json.loads((tmp_path / f"{a}.json").read_text())) for a in agent_ids]  # type: ignore[misc]


def most_at_once(spans: list[tuple[float, float]]) -> int:
    return max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)


def by_id(results: list[AgentResult]) -> dict[str, AgentResult]:
    return {r.id: r for r in results}


# ---------------------------------------------------------------------------- concurrency and order


@pytest.mark.anyio
async def test_no_more_than_concurrency_agents_run_at_once(tmp_path: Path) -> None:
    ids = [f"agent-{n}" for n in range(5)]
    config = config_with(tmp_path, [timed_agent(tmp_path, a, 0.3) for a in ids])
    started = time.monotonic()
    results = await dispatch(manifest(*ids), FACTS, config, options(config, concurrency=2))
    elapsed = time.monotonic() - started
    assert [r.status for r in results] == ["completed"] * 5, [r.error for r in results]
    assert most_at_once(intervals(tmp_path, ids)) <= 2
    assert elapsed >= 0.9, "five 0.3 s agents two at a time need at least three rounds"


@pytest.mark.anyio
async def test_concurrency_one_runs_agents_one_after_another(tmp_path: Path) -> None:
    ids = ["first", "second", "third"]
    config = config_with(tmp_path, [timed_agent(tmp_path, a, 0.1) for a in ids])
    results = await dispatch(manifest(*ids), FACTS, config, options(config, concurrency=1))
    assert all(r.status == "completed" for r in results)
    assert most_at_once(intervals(tmp_path, ids)) == 1


@pytest.mark.anyio
async def test_with_enough_slots_every_agent_runs_at_the_same_time(tmp_path: Path) -> None:
    ids = [f"agent-{n}" for n in range(4)]
    # each finishes only once all four have started: were one held back, the others would wait for it
    config = config_with(tmp_path, [waiting_agent(tmp_path, a, [f"{b}.done.started" for b in ids]) for a in ids])
    results = await dispatch(manifest(*ids), FACTS, config, options(config, concurrency=4))
    assert [r.status for r in results] == ["completed"] * 4, [r.error for r in results]


@pytest.mark.anyio
async def test_results_come_back_in_manifest_order_not_finishing_order(tmp_path: Path) -> None:
    # alpha finishes first, mid after it, zeta last: each waits for the one before
    config = config_with(tmp_path, [waiting_agent(tmp_path, "zeta", ["mid.done"]),
                                    waiting_agent(tmp_path, "alpha", []),
                                    waiting_agent(tmp_path, "mid", ["alpha.done"])])
    order = ["zeta", "alpha", "mid"]
    results = await dispatch(manifest(*order), FACTS, config, options(config))
    assert [r.id for r in results] == order
    assert json.loads((tmp_path / "marks" / "zeta.done").read_text()) == ["alpha.done", "mid.done"]
    for result in results:
        assert result.status == "completed", result.error
        assert result.kind == "command"
        assert result.attempts == 1
        assert result.files == FILES


@pytest.mark.anyio
async def test_a_finding_comes_back_with_its_agent_and_fingerprint(tmp_path: Path) -> None:
    config = config_with(tmp_path, [timed_agent(tmp_path, "alpha", 0)])
    [result] = await dispatch(manifest("alpha"), FACTS, config, options(config))
    assert [f.agent for f in result.findings] == ["alpha"]
    assert result.findings[0].fingerprint


@pytest.mark.anyio
async def test_an_agent_gets_only_its_scope(tmp_path: Path) -> None:
    script = tmp_path / "scope.py"
    script.write_text("import os, sys\nsys.stdout.write('[]')\n"
                      "open(sys.argv[1], 'w').write(os.environ['REVIEW_GATE_FILES'] + '|' + sys.stdin.read())\n")
    seen = tmp_path / "seen.txt"
    config = config_with(tmp_path, [command_agent("scoped", [sys.executable, str(script), str(seen)])])
    [result] = await dispatch(manifest("scoped", files=["lib/util.py"]), FACTS, config, options(config))
    assert result.status == "completed", result.error
    files, diff = seen.read_text().split("|", 1)
    assert json.loads(files) == ["lib/util.py"]
    assert diff == make_diff("lib/util.py", ["x = 1", "y = 2"])


# ---------------------------------------------------------------------------- entries that never run


@pytest.mark.anyio
async def test_an_unknown_agent_id_fails_without_stopping_the_others(tmp_path: Path) -> None:
    config = config_with(tmp_path, [timed_agent(tmp_path, "real", 0)])
    results = await dispatch(manifest("ghost", "real"), FACTS, config, options(config))
    ghost, real = results
    assert (ghost.id, ghost.status, ghost.attempts, ghost.required) == ("ghost", "failed", 0, True)
    assert "'ghost'" in (ghost.error or "") and "review-agents.json" in (ghost.error or "")
    assert ghost.findings == []
    assert real.status == "completed"


@pytest.mark.anyio
async def test_a_disabled_agent_is_skipped_and_never_started(tmp_path: Path) -> None:
    config = config_with(tmp_path, [timed_agent(tmp_path, "off", 0, enabled=False),
                                    timed_agent(tmp_path, "on", 0)])
    off, on = await dispatch(manifest("off", "on"), FACTS, config, options(config))
    assert (off.status, off.attempts, off.kind) == ("skipped", 0, "command")
    assert "enabled: false" in (off.error or "")
    assert not (tmp_path / "off.json").exists(), "a disabled agent ran"
    assert on.status == "completed"


# ---------------------------------------------------------------------------- deadlines


@pytest.mark.anyio
async def test_the_deadline_ends_a_slow_agent_as_timed_out(tmp_path: Path) -> None:
    config = config_with(tmp_path, [timed_agent(tmp_path, "slow", 30, timeout_s=0.5),
                                    timed_agent(tmp_path, "quick", 0)])
    started = time.monotonic()
    slow, quick = await dispatch(manifest("slow", "quick"), FACTS, config, options(config))
    assert time.monotonic() - started < 3
    assert (slow.status, slow.attempts) == ("timed_out", 1)
    assert "0.5 s deadline" in (slow.error or "")
    assert quick.status == "completed"


@pytest.mark.anyio
async def test_the_timeout_option_overrides_every_agents_own(tmp_path: Path) -> None:
    config = config_with(tmp_path, [timed_agent(tmp_path, "slow", 30, timeout_s=60)])
    [slow] = await dispatch(manifest("slow"), FACTS, config, options(config, timeout_s=0.5))
    assert slow.status == "timed_out"
    assert slow.duration_s < 2


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
async def test_the_deadline_starts_when_the_agent_gets_a_slot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two 0.6 s agents, one slot, 1 s deadline each: the second waits 0.6 s yet still finishes.
    # trio's mock clock: the event loop's time moves only when every task waits, so the sleeps
    # and the deadlines are exact on any machine
    monkeypatch.setitem(KINDS, "command", FakeKind(sleeps=0.6))
    config = config_with(tmp_path, [command_agent(a, ["unused"], timeout_s=1) for a in ("one", "two")])
    results = await dispatch(manifest("one", "two"), FACTS, config, options(config, concurrency=1))
    assert [r.status for r in results] == ["completed", "completed"], [r.error for r in results]


# ---------------------------------------------------------------------------- retries (a test kind)


class FakeKind:
    """An agent kind whose attempts follow a script: an exception to raise, or None to succeed."""

    unavailable = staticmethod(base.always_available)
    pack_key = staticmethod(base.never_packed)
    review_pack = base.NO_PACKS

    def __init__(self, *plan: BaseException | None, needs_network: bool = False,
                 estimate: Estimate | None = base.SPENDS_NOTHING, spends: int = 0, sleeps: float = 0) -> None:
        self.plan = list(plan)
        self.sleeps = sleeps
        self.needs_network = needs_network
        self.estimate = estimate
        self.spends = spends
        self.calls: list[float] = []

    async def review(self, spec: AgentSpec, task: AgentTask, context: AgentContext) -> AgentOutput:
        self.calls.append(time.monotonic())
        await anyio.sleep(self.sleeps)
        step = self.plan.pop(0) if self.plan else None
        if step is not None:
            raise step
        return AgentOutput(findings=[RawFinding(severity="warning", message=f"{spec.id} done")],
                           tokens_in=self.spends)


def fake_config(tmp_path: Path, **fields: Any) -> ReviewConfig:
    return config_with(tmp_path, [command_agent("fake", ["unused-by-the-fake-kind"], **fields)])


@pytest.mark.anyio
async def test_a_transient_fault_is_retried_after_its_retry_after(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    kind = FakeKind(TransientAgentFault("429 too many requests", retry_after=0.2))
    monkeypatch.setitem(KINDS, "command", kind)
    config = fake_config(tmp_path, retries=1)
    events: list[str] = []
    [result] = await dispatch(manifest("fake"), FACTS, config, options(config),
                              lambda agent, event, _result: events.append(f"{agent}:{event}"))
    assert (result.status, result.attempts) == ("completed", 2), result.error
    waited = kind.calls[1] - kind.calls[0]
    assert 0.2 <= waited < 2
    assert [f.message for f in result.findings] == ["fake done"]
    assert events == ["fake:queued", "fake:running", "fake:retrying", "fake:done"]


@pytest.mark.anyio
async def test_without_retry_after_the_backoff_is_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = FakeKind(TransientAgentFault("503"))
    monkeypatch.setitem(KINDS, "command", kind)
    config = fake_config(tmp_path, retries=1)
    [result] = await dispatch(manifest("fake"), FACTS, config, options(config))
    assert (result.status, result.attempts) == ("completed", 2)
    assert kind.calls[1] - kind.calls[0] < 1.5


@pytest.mark.anyio
async def test_a_deadline_shorter_than_the_retry_wait_ends_as_timed_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = FakeKind(TransientAgentFault("429", retry_after=5))
    monkeypatch.setitem(KINDS, "command", kind)
    config = fake_config(tmp_path, retries=3, timeout_s=0.3)
    started = time.monotonic()
    [result] = await dispatch(manifest("fake"), FACTS, config, options(config))
    assert time.monotonic() - started < 2
    assert (result.status, result.attempts) == ("timed_out", 1)
    assert len(kind.calls) == 1


@pytest.mark.anyio
async def test_transient_faults_past_the_last_retry_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = FakeKind(*(TransientAgentFault(f"busy {n}", retry_after=0) for n in range(5)))
    monkeypatch.setitem(KINDS, "command", kind)
    config = fake_config(tmp_path, retries=2)
    [result] = await dispatch(manifest("fake"), FACTS, config, options(config))
    assert (result.status, result.attempts) == ("failed", 3)
    assert result.error == "busy 2"


@pytest.mark.anyio
async def test_a_permanent_fault_is_not_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = FakeKind(AgentFault("bad credentials"))
    monkeypatch.setitem(KINDS, "command", kind)
    config = fake_config(tmp_path, retries=3)
    [result] = await dispatch(manifest("fake"), FACTS, config, options(config))
    assert (result.status, result.attempts, result.error) == ("failed", 1, "bad credentials")


@pytest.mark.anyio
async def test_a_bug_in_a_kind_fails_only_its_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KINDS, "command", FakeKind(ZeroDivisionError("division by zero")))
    monkeypatch.setitem(KINDS, "pattern", FakeKind())
    config = config_with(tmp_path, [
        command_agent("buggy", ["unused"]),
        {"id": "other", "name": "other", "description": "a pattern agent", "kind": "pattern"},
    ])
    buggy, other = await dispatch(manifest("buggy", "other"), FACTS, config, options(config))
    assert buggy.status == "failed"
    assert buggy.error == "internal error: ZeroDivisionError: division by zero"
    assert other.status == "completed"


@pytest.mark.anyio
async def test_offline_skips_kinds_that_need_the_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = FakeKind(needs_network=True)
    monkeypatch.setitem(KINDS, "command", kind)
    config = fake_config(tmp_path)
    [result] = await dispatch(manifest("fake"), FACTS, config, options(config, offline=True))
    assert result.status == "skipped"
    assert "--offline" in (result.error or "")
    assert kind.calls == []



@pytest.mark.anyio
async def test_a_kind_that_spends_nothing_is_never_held_back_by_the_run_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent that spent more than its estimate takes the run past max_tokens; an agent that
    calls no model (estimate None, the shared default) still runs after it."""
    monkeypatch.setitem(KINDS, "command", FakeKind(estimate=lambda _spec, _task, _context: (10, 0.0), spends=500))
    monkeypatch.setitem(KINDS, "pattern", FakeKind())
    config = config_with(tmp_path, [
        command_agent("spender", ["unused"]),
        {"id": "free", "name": "free", "description": "a pattern agent", "kind": "pattern"},
    ], settings={"max_tokens": 100})
    spender, free = await dispatch(manifest("spender", "free"), FACTS, config, options(config, concurrency=1))
    assert (spender.status, spender.tokens_in) == ("completed", 500)
    assert free.status == "completed", free.error
