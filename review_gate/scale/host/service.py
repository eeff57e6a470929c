"""Start, answer and collect a host run: a batch run whose requests the coding agent's host answers.

Start plans the run as a live run does, records it and its pairs before anything is asked, runs
the agents that need no model (pattern, command) at once and finishes their pairs, plans the llm
requests as a batch's (``scale.batch.requests``) and writes each as a task into the run's
directory. An answer is checked (``tasks.check``) before it is kept; a refused one is never
written. Collect checks every kept answer again, and only then takes the run: the answered
requests become each agent's result through the batch's ingest (``unit_results``), each marked
``reviewed_by: host sub-agent``; an agent none of whose tasks was answered did not run (skipped);
the run is decided by the batch's ``conclude``, with the configuration of the start.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from review_gate.errors import AnswerError
from review_gate.llm import review as lens_review
from review_gate.models import (
    AgentManifest,
    AgentResult,
    FailOn,
    FilterMode,
    LlmAgent,
    ManifestEntry,
    Plan,
    PRFacts,
    ReviewReport,
    Usage,
)
from review_gate.models.host import HostAnswered, HostTask
from review_gate.models.report import HOST_REVIEWER
from review_gate.pipeline import bootstrap, runner
from review_gate.pipeline.dispatch import agent_result, line_index
from review_gate.pipeline.options import Listener
from review_gate.scale.batch import requests
from review_gate.scale.batch.ingest import unit_results
from review_gate.scale.batch.models import FrozenRun
from review_gate.scale.batch.requests import packed_spec
from review_gate.scale.batch.service import conclude
from review_gate.scale.host import tasks
from review_gate.state import batches
from review_gate.state.session import RunState
from review_gate.state.store import open_store

if TYPE_CHECKING:
    import httpx

HOST_SALT = "\nanswered-by:host"  # a host's answers are cached apart from a provider's (freshness extras)
NOT_COUNTED = ("a review by the coding agent's host does not count here (host_reviews: outside_ci in review-gate.json, "
               "and this is CI)")
NO_ANSWER = "no answer came back from the host for its {count} task(s): it did not run"


@dataclass(frozen=True)
class Started:
    run_id: str
    directory: Path
    tasks: list[HostTask]
    local: list[str]  # agents run at the start
    not_run: list[str]
    report: ReviewReport | None = None  # nothing to ask the host: the run is finished
    plan: Plan | None = None


async def start(setup: bootstrap.Setup, facts: PRFacts, run: RunState, http: httpx.AsyncClient | None, *,
                fail_on: FailOn | None, filter_mode: FilterMode | None, listener: Listener | None,
                counted: bool) -> Started:
    """``counted``: a host review counts here (``host_reviews``); else the llm agents are skipped."""
    config = setup.config
    the_plan = await runner.plan(facts, config, own=setup.own_files(run.written()), offline=True, http=None,
                                 root=setup.root, committed=setup.committed())
    run_id = runner.new_run_id()
    hosted = {e.agent for e in the_plan.manifest.entries if requests.batchable(e, config, host=True) is not None}
    extras = await anyio.to_thread.run_sync(setup.extras, {e.agent for e in the_plan.manifest.entries})
    if counted:  # cached apart from a provider's answers: a self-review never passes for one, nor one for it
        extras = {a: text + HOST_SALT if a in hosted else text for a, text in extras.items()}
    models = "host" if hosted and counted else ""
    reuse = await anyio.to_thread.run_sync(lambda: run.start(
        the_plan, run_id, extras, setup.options.packing, kind="batch", runner="host", model=models))
    batched = [(e, spec) for e in reuse.manifest.entries
               if e.agent in hosted and (spec := requests.batchable(e, config, host=True)) is not None]
    local_entries = [e for e in reuse.manifest.entries if e.agent not in hosted]
    local = await runner.run_agents(AgentManifest(entries=local_entries), the_plan.facts, config, setup.options,
                                    listener, http) if local_entries else []
    planned = requests.plan(batched if counted else [], {f.path: f for f in the_plan.facts.files}, config,
                            run_id=run_id, packing=setup.options.packing, standards=setup.options.standards,
                            repo_root=setup.options.repo_root, intent=setup.options.intent, spends=False)
    # The local results are judged with the host's answers when the run is decided (``conclude``).
    local += [r.model_copy(update={"reviewed_by": HOST_REVIEWER}) for r in planned.refused]
    if not counted:
        local += [agent_result(e, "skipped", error=NOT_COUNTED, kind="llm", required=s.required,
                               on_failure=s.on_failure) for e, s in batched]
    await anyio.to_thread.run_sync(run.record, local, [r.id for r in local])
    frozen = FrozenRun(run_id=run_id, runner="host", intent=setup.options.intent, facts=the_plan.facts,
                       classification=the_plan.classification, manifest=the_plan.manifest, gaps=the_plan.gaps,
                       config=config, extras=extras, local=local, waivers=setup.waivers(facts),
                       filter_mode=filter_mode, fail_on=fail_on, endpoints=planned.endpoints, units=planned.units,
                       requests=planned.requests, left_out=the_plan.left_out,
                       own_file_findings=the_plan.own_file_findings)
    directory = tasks.run_directory(run.path, run_id)
    not_run = [f"{r.id} ({r.status}{': ' + r.error if r.error else ''})" for r in local
               if r.status not in ("completed", "cached")]
    local_ids = [r.id for r in local if r.status in ("completed", "cached")]
    if not planned.requests:  # every host pair fresh, no llm agent, or not counted: nothing to ask
        report = await anyio.to_thread.run_sync(conclude, run, frozen, [], hosted if counted else (),
                                                 setup.options.repo_root)
        return Started(run_id, directory, [], local_ids, not_run, report, the_plan)
    made = tasks.tasks_of(frozen, directory)
    await anyio.to_thread.run_sync(tasks.write_tasks, directory, made)
    await anyio.to_thread.run_sync(lambda: run.record_batch(frozen.dump(), [], runner="host"))
    return Started(run_id, directory, made, local_ids, not_run, None, the_plan)


def load(path: Path, ref: str | None) -> tuple[str, batches.BatchRun, FrozenRun]:
    store = open_store(path, create=False)
    if store is None:
        raise AnswerError(f"no run state at {path}: no host review was started here",
                          fix="start one with `review-gate --llm host` (with the same --config)")
    with store:
        run_id = batches.find(store, ref, runner="host")
        batch_run = batches.load(store, run_id)
    return run_id, batch_run, FrozenRun.load(batch_run.frozen)


def answer(path: Path, ref: str, task: str, text: str) -> HostAnswered:
    """Check and keep one answer; refused (``AnswerError``) for a finished run or a bad answer."""
    run_id, batch_run, frozen = load(path, ref)
    if batch_run.state != "submitted":
        raise AnswerError(f"task {task} of run {run_id}: the run is finished (collected at {batch_run.collected_at}); "
                          "the answer was refused", fix=f"start a new host review; see this one with "
                                                         f"`review-gate show {run_id}`")
    answered = tasks.check(frozen, task, text)
    directory = tasks.run_directory(path, run_id)
    tasks.keep_answer(directory, task, text)
    open_tasks = [s.task for s in tasks.states(frozen, directory) if not s.answered]
    return HostAnswered(run_id=run_id, task=task, findings=len(answered.parsed.findings), unanswered=open_tasks)


def gather(path: Path, ref: str | None) -> tuple[str, batches.BatchRun, FrozenRun, list[lens_review.Answered | None]]:
    """Every task's kept answer, checked again (None: unanswered), before anything is recorded:
    a bad answer file refuses the collect and leaves the run as it was."""
    run_id, batch_run, frozen = load(path, ref)
    directory = tasks.run_directory(path, run_id)
    found: list[lens_review.Answered | None] = []
    if batch_run.state == "submitted":
        for request in frozen.requests:
            task = tasks.task_id(frozen, request)
            text = tasks.read_answer(directory, task)
            found.append(tasks.check(frozen, task, text) if text is not None else None)
    return run_id, batch_run, frozen, found


def ingest(run: RunState, frozen: FrozenRun, answered: list[lens_review.Answered | None],
           root: str | None = None) -> ReviewReport | None:
    """The run's report from the answers (judged in the repository at ``root``, as a live run's
    are); None when another collect took the run first. Every
    result is made before the run is taken: what could still fail after it is only the decision
    and its recording."""
    reuse = run.resume(Plan(facts=frozen.facts, classification=frozen.classification, manifest=frozen.manifest,
                            gaps=frozen.gaps), frozen.run_id, frozen.extras)
    entries = {e.agent: e for e in reuse.manifest.entries}
    files = {f.path: f for f in frozen.facts.files}
    lines = line_index(frozen.facts)
    results: list[AgentResult] = []
    for index, unit in enumerate(frozen.units):
        mine = [(i, r) for i, r in enumerate(frozen.requests) if r.unit == index]
        chunks = [answered[i] for i, _ in mine]
        spec = packed_spec(unit, frozen.config)
        if not any(chunks):
            results += [_unanswered(entries[a], frozen, len(mine)) for a in unit.agents if a in entries]
            continue
        reasons = ["no answer came back from the host for this task" for chunk in chunks if chunk is None]
        results += unit_results(frozen, unit, entries, files, lines, [r for _, r in mine], chunks, reasons,
                                Usage(), spec, source="host")
    hosted = {e.agent for e in frozen.manifest.entries if requests.batchable(e, frozen.config, host=True)}
    if not run.claim_batch(frozen.run_id):
        return None
    return conclude(run, frozen, results, hosted, root)


def _unanswered(entry: ManifestEntry, frozen: FrozenRun, count: int) -> AgentResult:
    spec = frozen.config.agent(entry.agent)
    assert isinstance(spec, LlmAgent)
    return agent_result(entry, "skipped", error=NO_ANSWER.format(count=count), kind="llm", required=spec.required,
                        on_failure=spec.on_failure).model_copy(update={"reviewed_by": HOST_REVIEWER})


__all__ = ["Started", "answer", "gather", "ingest", "load", "start"]
