"""Submit, watch and collect a batch run: the order of things, as ``runner`` is for a live run.

Submit plans the run as a live run does, records it and its pairs before anything is asked,
runs the agents that need no provider batch (pattern, command, an llm agent whose key is not
set: skipped) at once and finishes their pairs, then sends the llm requests as one batch per
endpoint and records each batch id on the run, with everything collecting needs (the frozen
run). Collect downloads the results once, completes or marks missing exactly the run's pending
pairs and decides the gate as a live run would, with the configuration of the submit.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from review_gate.errors import AgentFault, ReviewGateError, StateError, UsageError
from review_gate.models import (
    AgentManifest,
    AgentResult,
    FailOn,
    FilterMode,
    Gap,
    LlmAgent,
    Plan,
    PRFacts,
    ReviewReport,
)
from review_gate.models.report import HOST_REVIEWER
from review_gate.pipeline import bootstrap, runner
from review_gate.pipeline.dispatch import agent_result
from review_gate.pipeline.options import Listener
from review_gate.scale.batch import ingest, requests, wire
from review_gate.scale.batch.models import Endpoint, FrozenRun
from review_gate.state import batches, runs
from review_gate.state.session import RunState
from review_gate.state.store import open_store

if TYPE_CHECKING:
    import httpx

POLL_S = 30.0  # between status checks of ``collect --wait``
CANCEL_S = 15.0  # the most a failed submit spends cancelling the batches it created


@dataclass(frozen=True)
class Sent:
    """One provider batch of a run, as last seen."""

    provider: str
    endpoint: str
    batch_id: str
    requests: int
    status: str
    counts: dict[str, int] = field(default_factory=dict)
    ended: bool = False


@dataclass(frozen=True)
class Submitted:
    run_id: str
    batches: list[Sent]
    requests: int
    local: list[str]  # agents run at submit
    tokens: tuple[int, int]  # estimated input tokens, at most output tokens
    cost: tuple[float, float]  # at most, at batch and interactive prices
    report: ReviewReport | None = None  # nothing had to be sent: the run is finished
    plan: Plan | None = None
    not_run: list[str] = field(default_factory=list)  # local agents that did not review: "id (status: why)"


@dataclass(frozen=True)
class Status:
    run_id: str
    state: str  # submitted | collected
    batches: list[Sent]

    @property
    def ended(self) -> bool:
        return all(b.ended for b in self.batches)


@dataclass
class Fetched:
    """An ended batch run's results, downloaded, not yet ingested."""

    run_id: str
    frozen: FrozenRun
    outcomes: dict[str, wire.Outcome]
    failed: dict[int, str]  # endpoint -> why its requests have no result
    raw: dict[int, list[str]]  # endpoint -> the result lines as downloaded
    status: Status


def _models(plan: Plan, config_agents: dict[str, LlmAgent]) -> str:
    return ",".join(sorted({config_agents[e.agent].model for e in plan.manifest.entries if e.agent in config_agents}))


async def submit(setup: bootstrap.Setup, facts: PRFacts, gaps: list[Gap], run: RunState, http: httpx.AsyncClient, *,
                 fail_on: FailOn | None, filter_mode: FilterMode | None, listener: Listener | None,
                 bundle_dir: str | None, commit: str | None = None, left_out: int = 0) -> Submitted:
    """``left_out``: the gate's own files the caller left out before (a sweep's), for the report."""
    config = setup.config
    the_plan = await runner.plan(facts, config, own=setup.own_files(run.written()), offline=False, http=http,
                                 root=setup.root, committed=setup.committed())
    if gaps or left_out:
        the_plan = the_plan.model_copy(update={"gaps": [*gaps, *the_plan.gaps],
                                               "left_out": the_plan.left_out + left_out})
    run_id = runner.new_run_id()
    extras = setup.extras({e.agent for e in the_plan.manifest.entries})
    llm_agents = {a.id: a for a in config.agents.agents if isinstance(a, LlmAgent)}
    reuse = await anyio.to_thread.run_sync(lambda: run.start(
        the_plan, run_id, extras, setup.options.packing, kind="batch", runner="batch",
        model=_models(the_plan, llm_agents), commit=commit))
    batched = [(e, spec) for e in reuse.manifest.entries if (spec := requests.batchable(e, config)) is not None]
    names = {e.agent for e, _ in batched}
    local_entries = [e for e in reuse.manifest.entries if e.agent not in names]
    local = await runner.run_agents(AgentManifest(entries=local_entries), the_plan.facts, config, setup.options,
                                    listener, http) if local_entries else []
    planned = requests.plan(batched, {f.path: f for f in the_plan.facts.files}, config, run_id=run_id,
                            packing=setup.options.packing, standards=setup.options.standards,
                            repo_root=setup.options.repo_root)
    # The local results are judged with the batched ones when the run is decided (``conclude``).
    local += planned.refused
    await anyio.to_thread.run_sync(run.record, local, [r.id for r in local])
    # a sweep (the caller names its commit) reviews files as they are: nothing in them is pre-existing
    frozen = FrozenRun(run_id=run_id, kind="sweep" if commit is not None else "batch", facts=the_plan.facts,
                       classification=the_plan.classification,
                       manifest=the_plan.manifest, gaps=the_plan.gaps, config=config, extras=extras, local=local,
                       waivers=setup.waivers(facts), filter_mode=filter_mode, fail_on=fail_on,
                       endpoints=planned.endpoints, units=planned.units, requests=planned.requests,
                       bundle_dir=bundle_dir, left_out=the_plan.left_out,
                       own_file_findings=the_plan.own_file_findings)
    local_ids = [r.id for r in local if r.status in ("completed", "cached")]
    not_run = [f"{r.id} ({r.status}{': ' + r.error if r.error else ''})" for r in local
               if r.status not in ("completed", "cached")]
    if not planned.requests:  # everything fresh, or no llm agent: nothing to wait for
        report = await anyio.to_thread.run_sync(conclude, run, frozen, [], (), setup.options.repo_root)
        return Submitted(run_id, [], 0, local_ids, (0, 0), (0.0, 0.0), report, the_plan, not_run)
    sent = await _send(http, frozen, planned)
    try:
        await anyio.to_thread.run_sync(run.record_batch, frozen.dump(), [
            batches.ProviderBatch(ordinal=e.ordinal, provider=e.provider, endpoint=e.url, batch_id=c.batch_id,
                                  input_file_id=c.input_file_id, status=c.status,
                                  requests=sum(1 for r in planned.requests
                                               if planned.units[r.unit].endpoint == e.ordinal))
            for e, c in sent])
    except BaseException:  # a batch nobody will collect must not run (and bill) at the provider
        await _cancel(http, frozen, sent)
        raise
    shown = [Sent(e.provider, e.url, c.batch_id, sum(1 for r in planned.requests
                                                       if planned.units[r.unit].endpoint == e.ordinal), c.status)
             for e, c in sent]
    return Submitted(run_id, shown, len(planned.requests), local_ids, planned.estimate, planned.cost, None, the_plan,
                     not_run)


async def _send(http: httpx.AsyncClient, frozen: FrozenRun,
                planned: requests.Planned) -> list[tuple[Endpoint, wire.Created]]:
    """One batch per endpoint; when one cannot be created (or the submit is interrupted), those
    created already are cancelled."""
    created: list[tuple[Endpoint, wire.Created]] = []
    endpoint = planned.endpoints[0]
    try:
        for endpoint in planned.endpoints:
            spec, key = _spec(frozen, endpoint.agent)
            lines = planned.lines(endpoint, frozen.config)
            created.append((endpoint, await wire.create(http, spec, key, lines, frozen.run_id)))
    except wire.BatchFault as fault:
        await _cancel(http, frozen, created)
        raise ReviewGateError(f"{endpoint.provider} batch API at {endpoint.url} refused the batch: {fault}",
                              fix="check the endpoint, its key and its batch limits; nothing was left "
                                  "queued (the run is recorded as failed)") from None
    except BaseException:
        await _cancel(http, frozen, created)
        raise
    return created


async def _cancel(http: httpx.AsyncClient, frozen: FrozenRun, created: list[tuple[Endpoint, wire.Created]]) -> None:
    """Cancel batches a failed submit created, even while it is being cancelled itself (bounded)."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_S):
        for endpoint, made in created:
            spec, key = _spec(frozen, endpoint.agent)
            with contextlib.suppress(wire.BatchFault):
                await wire.cancel(http, spec, key, made.batch_id)


def _spec(frozen: FrozenRun, agent_id: str) -> tuple[LlmAgent, str | None]:
    from review_gate.llm import client

    spec = frozen.config.agent(agent_id)
    assert isinstance(spec, LlmAgent)
    try:
        return spec, client.api_key(spec)
    except AgentFault as fault:
        raise UsageError(f"agent {agent_id}: {fault}", fix=f"set {spec.api_key_env} to the key the batch was "
                                                           "submitted with") from None


def conclude(run: RunState, frozen: FrozenRun, answered: list[AgentResult], hosted: Collection[str] = (),
             root: str | None = None) -> ReviewReport:
    """The run's report from its local and answered results, decided by the runner's own steps
    (``runner.decide``: every result judged where its lines live, in the repository at ``root``,
    all at once, then aggregated with the gate's own findings and the waivers), so that it is the
    report a live review of the change with the same answers gives; its pairs and its row
    finished. ``hosted``: the agents the coding agent's host reviewed (``scale.host``), their
    cached pairs included: each result says so (``reviewed_by``)."""
    assert run.reuse is not None
    given = {r.id: r for r in [*frozen.local, *answered]}
    results = [given.get(e.agent) or agent_result(e, "failed", error="no result came back for this agent",
                                                   kind="llm") for e in run.reuse.manifest.entries]
    merged = [r.model_copy(update={"reviewed_by": HOST_REVIEWER}) if r.id in hosted and r.reviewed_by is None else r
              for r in run.reuse.merge(results)]
    the_plan = Plan(facts=frozen.facts, classification=frozen.classification, manifest=frozen.manifest,
                    gaps=frozen.gaps, left_out=frozen.left_out, own_file_findings=frozen.own_file_findings)
    report = runner.decide(the_plan, merged, frozen.config, root=root, run_id=frozen.run_id,
                           filter_mode=frozen.filter_mode, fail_on=frozen.fail_on,
                           waivers={**frozen.waivers, **run.waivers}, sweep=frozen.kind == "sweep")
    run.finish(report, raw_output=frozen.bundle_dir)
    return report


def load(path: Path, ref: str | None) -> tuple[str, batches.BatchRun]:
    store = open_store(path, create=False)
    if store is None:
        raise StateError(f"no run state at {path}: no batch was submitted here",
                         fix="submit one with `review-gate batch submit` (with the same --config)")
    with store:
        run_id = batches.find(store, ref)
        return run_id, batches.load(store, run_id)


def stored_report(path: Path, run_id: str) -> ReviewReport:
    store = open_store(path, create=False)
    assert store is not None
    with store:
        return runs.find_report(store, run_id)


async def status(path: Path, ref: str | None, http: httpx.AsyncClient | None) -> Status:
    """The run's batches as the providers see them now (as last recorded once it is collected)."""
    _, batch_run = load(path, ref)
    if batch_run.state == "collected" or http is None:
        return _recorded(batch_run)
    return (await _poll(path, batch_run, http))[0]


async def _poll(path: Path, batch_run: batches.BatchRun, http: httpx.AsyncClient) -> tuple[Status, list[wire.State]]:
    frozen = FrozenRun.load(batch_run.frozen)
    seen, states = [], []
    for sent in batch_run.batches:
        endpoint = frozen.endpoints[sent.ordinal]
        spec, key = _spec(frozen, endpoint.agent)
        try:
            state = await wire.state(http, spec, key, sent.batch_id)
        except wire.BatchFault as fault:
            raise ReviewGateError(f"cannot read {sent.provider} batch {sent.batch_id}: {fault}",
                                  fix="try again later; the run waits") from None
        seen.append(Sent(sent.provider, sent.endpoint, sent.batch_id, sent.requests, state.status, state.counts,
                         state.ended))
        states.append(state)
        await anyio.to_thread.run_sync(_update, path, batch_run.run_id, sent.ordinal, state)
    return Status(batch_run.run_id, batch_run.state, seen), states


def _recorded(batch_run: batches.BatchRun) -> Status:
    return Status(batch_run.run_id, batch_run.state, [
        Sent(b.provider, b.endpoint, b.batch_id, b.requests, b.status, b.counts,
             batch_run.state == "collected") for b in batch_run.batches])


def _update(path: Path, run_id: str, ordinal: int, state: wire.State) -> None:
    store = open_store(path, create=False)
    if store is not None:
        with store:
            batches.update(store, run_id, ordinal, state.status, state.counts)


async def fetch(path: Path, ref: str | None, http: httpx.AsyncClient, *, wait_s: float | None = None,
                poll_s: float = POLL_S) -> Fetched | Status | ReviewReport:
    """The results of an ended batch run; its Status while a batch still runs (after ``wait_s``
    seconds of polling, if given); its stored report when it was collected already."""
    run_id, batch_run = load(path, ref)
    if batch_run.state == "collected":
        return stored_report(path, run_id)
    deadline = time.monotonic() + (wait_s or 0.0)
    seen, states = await _poll(path, batch_run, http)
    while not seen.ended and time.monotonic() + poll_s <= deadline:
        await anyio.sleep(poll_s)
        seen, states = await _poll(path, batch_run, http)
    if not seen.ended:
        return seen
    frozen = FrozenRun.load(batch_run.frozen)
    fetched = Fetched(run_id, frozen, {}, {}, {}, seen)
    for sent, recorded, state in zip(seen.batches, batch_run.batches, states, strict=True):
        endpoint = frozen.endpoints[recorded.ordinal]
        spec, key = _spec(frozen, endpoint.agent)
        try:
            outcomes = await wire.results(http, spec, key, state)
        except wire.BatchFault as fault:
            raise ReviewGateError(f"cannot download the results of {sent.provider} batch {sent.batch_id}: {fault}",
                                  fix="try again later; nothing was recorded") from None
        for outcome in outcomes:
            fetched.outcomes.setdefault(outcome.custom_id, outcome)
        fetched.raw[endpoint.ordinal] = [o.raw for o in outcomes]
        if state.status not in ("completed", "ended"):
            why = "; ".join(state.errors[:3]) or "no reason given"
            fetched.failed[endpoint.ordinal] = f"{sent.provider} batch {sent.batch_id} ended {state.status} ({why})"
    return fetched


def write_results(directory: Path, fetched: Fetched, root: Path | None) -> list[tuple[str, list[str], str]]:
    """Each batch's request file, its raw result lines and the batch ids, beside the bundle's files
    (``batch/``)."""
    import json

    from review_gate.change.blobs import blob_ids
    from review_gate.change.own_files import relative

    frozen = fetched.frozen
    planned = requests.Planned(endpoints=frozen.endpoints, units=frozen.units, requests=frozen.requests)
    files = [(directory / "batch" / f"requests-{e.ordinal}-{e.provider}.jsonl", "".join(
        json.dumps(line, ensure_ascii=False) + "\n" for line in planned.lines(e, frozen.config)).encode("utf-8"))
        for e in frozen.endpoints]
    files += [(directory / "batch" / f"results-{ordinal}-{frozen.endpoints[ordinal].provider}.jsonl",
               "".join(line.rstrip("\n") + "\n" for line in lines).encode("utf-8"))
              for ordinal, lines in sorted(fetched.raw.items())]
    files.append((directory / "batch" / "batches.json", (json.dumps(
        [{"provider": b.provider, "endpoint": b.endpoint, "batch_id": b.batch_id, "status": b.status,
          "requests": b.requests, "counts": b.counts} for b in fetched.status.batches], indent=2) + "\n").encode()))
    try:
        (directory / "batch").mkdir(parents=True, exist_ok=True)
        for path, data in files:
            path.write_bytes(data)
    except OSError as exc:
        raise ReviewGateError(f"cannot write the batch's results into {directory}: {exc.strerror}",
                              fix="choose a writable --bundle DIR") from exc
    return [(rel, blob_ids(data), "bundle") for path, data in files if (rel := relative(path, root)) is not None]


def ingest_fetched(run: RunState, fetched: Fetched, root: str | None = None) -> ReviewReport | None:
    """Complete or mark missing the run's pending pairs and decide (judging in the repository at
    ``root``); None when another collect did."""
    if not run.claim_batch(fetched.run_id):
        return None
    frozen = fetched.frozen
    reuse = run.resume(Plan(facts=frozen.facts, classification=frozen.classification, manifest=frozen.manifest,
                            gaps=frozen.gaps), fetched.run_id, frozen.extras)
    entries = {e.agent: e for e in reuse.manifest.entries}
    batched = ingest.ingest(frozen, entries, fetched.outcomes, fetched.failed)
    return conclude(run, frozen, batched, (), root)


__all__ = ["Fetched", "Sent", "Status", "Submitted", "conclude", "fetch", "ingest_fetched", "status", "submit"]
