"""A review run answered by the coding agent's host, for a caller of the API: ``host_start`` plans
the change, runs the agents that need no model and writes each llm request as a review task;
``host_tasks`` lists a run's tasks; ``host_answer`` checks and keeps one answer; ``host_collect``
decides the gate from the answers (``service`` does each step; the API re-exports them).

Where a host review counts is the configuration's (``host_reviews`` in review-gate.json):
``outside_ci`` (the default) counts it locally and in hooks, and in CI (the ``CI`` variable set,
or ``ci=True``) makes the llm agents skipped instead; ``everywhere`` counts it in CI too;
``never`` offers no host review at all.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from review_gate.change import git
from review_gate.errors import StateError, UsageError
from review_gate.models import FailOn, FilterMode, LlmAgent, Packing, Plan, ReviewConfig, ReviewReport
from review_gate.models.host import HostAnswered, HostTask, HostTaskState
from review_gate.pipeline import arguments, recorded_run, review_request, runner
from review_gate.pipeline.normalize import DiffRequest
from review_gate.pipeline.options import Listener
from review_gate.pipeline.recorded_run import Render
from review_gate.state.session import RunState

__all__ = ["HostCollected", "HostRun", "HostStarted", "host_answer", "host_collect", "host_collect_async",
           "host_counts", "host_start", "host_start_async", "host_tasks", "in_ci", "wants_host"]


@dataclass(frozen=True)
class HostStarted:
    """A run waiting for its host: its id, its directory and tasks. ``report`` is set when nothing
    had to be asked (every llm pair fresh, no llm agent, or a host review not counted here)."""

    run_id: str
    directory: str
    tasks: list[HostTask]
    local_agents: list[str]
    not_run: list[str]
    report: ReviewReport | None = None


@dataclass(frozen=True)
class HostRun:
    run_id: str
    state: str  # submitted (waiting for answers) | collected
    directory: str
    tasks: list[HostTask]
    states: list[HostTaskState]


@dataclass(frozen=True)
class HostCollected:
    """``report``: the run's report; ``already``: it was collected before, nothing was done."""

    run_id: str
    report: ReviewReport
    already: bool = False
    unanswered: list[str] | None = None  # the tasks no answer came back for (their agents did not run)


def in_ci(ci: bool | None = None) -> bool:
    """Whether this is CI: ``ci`` when given (``--ci``), else the ``CI`` variable CI services set."""
    if ci is not None:
        return ci
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def host_counts(config: ReviewConfig, ci: bool | None = None) -> bool:
    """Whether a host review counts here (``host_reviews``)."""
    setting = config.settings.host_reviews
    return setting == "everywhere" or (setting == "outside_ci" and not in_ci(ci))


def wants_host(config: ReviewConfig, ci: bool | None = None) -> bool:
    """A hook's or a server's own choice: the host answers when no llm agent of the configuration
    has its key set and the configuration lets a host review count here."""
    from review_gate.llm import keys

    llm = [a for a in config.agents.agents if isinstance(a, LlmAgent) and a.enabled]
    return bool(llm) and all(keys.missing_key(a) is not None for a in llm) and host_counts(config, ci)


async def host_start_async(
    *, cwd: str | Path | None = None, base: str | None = None, head: str | None = None, staged: bool = False,
    diff: bytes | None = None, diff_file: str | Path | None = None, request: DiffRequest | None = None,
    config: str | Path | None = None, fail_on: FailOn | None = None, filter_mode: FilterMode | None = None,
    concurrency: int | None = None, agent_timeout: float | None = None, constitution: str | None = None,
    baseline: str | Path | None = None, use_baseline: bool = True, packing: Packing | None = None,
    cache: bool = True, outputs: Sequence[tuple[str | Render, str | Path]] = (), listener: Listener | None = None,
    intent: str | None = None, ci: bool | None = None,
) -> HostStarted:
    """Plan a change, record the run and its pending pairs, run the agents that need no model, and
    write every llm request as a review task for the host (``HostStarted.tasks``). The run waits
    in the run state until ``host_collect``. ``ci``: whether this is CI (default: the ``CI``
    variable), where a host review counts only as ``host_reviews`` says."""
    from review_gate.scale.host import service

    review_request.run_options(fail_on=fail_on, filter_mode=filter_mode, concurrency=concurrency,
                               agent_timeout=agent_timeout, outputs=outputs, packing=packing)
    review_request.typed(flags={"use_baseline": use_baseline, "cache": cache},
                         paths={"config": config, "baseline": baseline, "constitution": constitution})
    review_request.given(request)
    request = request or review_request.change(cwd=cwd, base=base, head=head, staged=staged, diff=diff,
                                               diff_file=diff_file)
    setup = recorded_run.setup(request, config=config, offline=False, concurrency=concurrency, timeout=agent_timeout,
                               constitution=constitution, baseline=baseline, use_baseline=use_baseline,
                               packing=packing, intent=intent)
    if setup.config.settings.host_reviews == "never":
        raise UsageError("host reviews are off in this configuration (host_reviews: never in review-gate.json)",
                         fix="review with the providers' keys set (review-gate run), or ask a person to allow them")
    facts = await runner.read_change(setup.request)
    if not setup.state_trusted(facts):
        raise StateError("the change adds or edits the run-state database, which a host review waits in",
                         fix="remove the state file from the change, or review it with the providers' keys")
    run = RunState(setup.config, setup.root, use_cache=cache)
    with run:
        started = await service.start(setup, facts, run, None, fail_on=fail_on, filter_mode=filter_mode,
                                      listener=listener, counted=host_counts(setup.config, ci))
        if started.report is not None and started.plan is not None:
            written = recorded_run.write(setup.root, setup.config, started.report, started.plan,
                                         setup.waivers(facts), outputs, None, fail_on, filter_mode)
            await anyio.to_thread.run_sync(run.record_written, started.run_id, written)
    return HostStarted(run_id=started.run_id, directory=str(started.directory), tasks=started.tasks,
                       local_agents=started.local, not_run=started.not_run, report=started.report)


def _state_path(cwd: str | Path | None, config: str | Path | None) -> tuple[Path | None, Path]:
    """The repository and the run-state file a host command reads (the config names it)."""
    from review_gate.config import locate_config_dir
    from review_gate.config.load import load_config
    from review_gate.state.location import state_file

    review_request.typed(paths={"config": config})
    root = git.repo_root(arguments.workdir(cwd))
    loaded = load_config(locate_config_dir(str(config) if config is not None else None, root))
    return root, state_file(loaded, root)


def host_tasks(run: str | None = None, *, cwd: str | Path | None = None,
               config: str | Path | None = None) -> HostRun:
    """A host run's tasks, each answered or not (``run``: its id, a unique prefix or suffix,
    ``last``; default: the newest run still waiting, else the newest host run)."""
    from review_gate.scale.host import service, tasks

    arguments.text("run", run)
    _, path = _state_path(cwd, config)
    run_id, batch_run, frozen = service.load(path, run)
    directory = tasks.run_directory(path, run_id)
    return HostRun(run_id, batch_run.state, str(directory), tasks.tasks_of(frozen, directory),
                   tasks.states(frozen, directory))


def host_answer(run: str, task: str, answer: str, *, cwd: str | Path | None = None,
                config: str | Path | None = None) -> HostAnswered:
    """Check the host's ``answer`` to ``task`` and keep it; ``AnswerError`` (exit 2) when the run
    is unknown or finished, the task unknown, or the answer does not validate or names a file
    outside the task: the task then stays unanswered."""
    from review_gate.scale.host import service

    arguments.text("run", run)
    arguments.text("task", task)
    _, path = _state_path(cwd, config)
    return service.answer(path, run, task, answer)


async def host_collect_async(run: str | None = None, *, cwd: str | Path | None = None,
                             config: str | Path | None = None,
                             outputs: Sequence[tuple[str | Render, str | Path]] = ()) -> HostCollected:
    """Decide the gate from the answers kept: each is checked again first, and a bad one refuses
    the collect with nothing recorded. A task with no answer is a reviewer that did not run.
    Collecting a collected run does nothing and returns its report (``already``)."""
    from review_gate.scale.batch.service import stored_report
    from review_gate.scale.host import service, tasks

    review_request.run_options(outputs=outputs)
    arguments.text("run", run)
    root, path = _state_path(cwd, config)
    run_id, batch_run, frozen, answered = await anyio.to_thread.run_sync(service.gather, path, run)
    if batch_run.state != "submitted":
        return HostCollected(run_id, await anyio.to_thread.run_sync(stored_report, path, run_id), already=True)
    missing = [tasks.task_id(frozen, r) for r, a in zip(frozen.requests, answered, strict=True) if a is None]
    with RunState(frozen.config, root, use_cache=True, path=path) as state:
        report = await anyio.to_thread.run_sync(service.ingest, state, frozen, answered,
                                                 str(root) if root is not None else None)
        if report is None:
            return HostCollected(run_id, stored_report(path, run_id), already=True)
        the_plan = Plan(facts=frozen.facts, classification=frozen.classification, manifest=frozen.manifest,
                        gaps=frozen.gaps, own_file_findings=frozen.own_file_findings)
        written = recorded_run.write(root, frozen.config, report, the_plan, frozen.waivers, outputs, None,
                                     frozen.fail_on, frozen.filter_mode, frozen.intent)
        await anyio.to_thread.run_sync(state.record_written, report.run_id, written)
    return HostCollected(report.run_id, report, unanswered=missing)


host_start = recorded_run.blocking(host_start_async)
host_collect = recorded_run.blocking(host_collect_async)
