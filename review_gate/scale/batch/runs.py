"""A review run through the providers' batch APIs, for a caller of the API: ``batch_submit``
plans the change and sends its llm requests, ``batch_status`` says how the batches are doing,
``batch_collect`` records their results and decides the gate (``service`` does each step; the
API re-exports these entry points).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread

from review_gate.change import git
from review_gate.errors import StateError
from review_gate.models import FailOn, FilterMode, Packing, Plan, ReviewReport
from review_gate.pipeline import arguments, bundles, recorded_run, review_request, runner
from review_gate.pipeline.normalize import DiffRequest
from review_gate.pipeline.options import Listener
from review_gate.pipeline.recorded_run import Render
from review_gate.scale.sweep import prepare
from review_gate.state.session import RunState

__all__ = ["BatchCollected", "BatchInfo", "BatchStatus", "BatchSubmitted", "batch_collect", "batch_collect_async",
           "batch_status", "batch_status_async", "batch_submit", "batch_submit_async"]


@dataclass(frozen=True)
class BatchSubmitted:
    """A run sent to provider batches: its id, each batch, and what it may cost. ``report`` is
    set when nothing had to be sent (every llm pair fresh, or no llm agent): the run is done."""

    run_id: str
    batches: list[BatchInfo]
    requests: int
    local_agents: list[str]
    tokens_in: int
    max_tokens_out: int
    max_cost_usd: float  # at batch prices
    max_cost_interactive_usd: float  # the same requests at interactive prices
    report: ReviewReport | None = None
    not_run: list[str] = field(default_factory=list)
    """Agents of the run that neither ran at submit nor went to a batch: ``id (status: why)``."""


@dataclass(frozen=True)
class BatchInfo:
    provider: str
    endpoint: str
    batch_id: str
    requests: int
    status: str
    counts: dict[str, int]
    ended: bool


@dataclass(frozen=True)
class BatchStatus:
    run_id: str
    state: str  # submitted (waiting for its batches) | collected
    batches: list[BatchInfo]

    @property
    def ended(self) -> bool:
        return all(b.ended for b in self.batches)


@dataclass(frozen=True)
class BatchCollected:
    """``report``: the run's report (``already``: collected before, nothing was done); or
    ``pending``: a batch has not ended yet, nothing was recorded."""

    run_id: str
    report: ReviewReport | None
    already: bool = False
    pending: BatchStatus | None = None


async def batch_submit_async(
    *, cwd: str | Path | None = None, base: str | None = None, head: str | None = None, staged: bool = False,
    diff: bytes | None = None, diff_file: str | Path | None = None, request: DiffRequest | None = None,
    sweep: Sequence[str] | None = None, since: str | None = None, max_file_bytes: int | None = None,
    config: str | Path | None = None, fail_on: FailOn | None = None, filter_mode: FilterMode | None = None,
    concurrency: int | None = None, agent_timeout: float | None = None, constitution: str | None = None,
    baseline: str | Path | None = None, use_baseline: bool = True, packing: Packing | None = None,
    cache: bool = True, bundle_dir: str | Path | None = None, outputs: Sequence[tuple[str | Render, str | Path]] = (),
    listener: Listener | None = None,
) -> BatchSubmitted:
    """Plan a change (or, with ``sweep``, a sweep of those pathspecs), record the run and its
    pending pairs, run the agents that need no provider batch now, and send the llm requests to
    their providers' batch APIs (one batch per endpoint). The run waits in the run state until
    ``batch_collect``. ``bundle_dir``: where collecting it writes its replay bundle (with the
    request and result files of each batch)."""
    from review_gate.scale.batch import service

    review_request.run_options(fail_on=fail_on, filter_mode=filter_mode, concurrency=concurrency,
                               agent_timeout=agent_timeout, outputs=outputs, packing=packing)
    if sweep is not None:
        arguments.texts("sweep", sweep)
    arguments.ref("since", since)
    review_request.typed(flags={"use_baseline": use_baseline, "cache": cache},
                         paths={"config": config, "baseline": baseline, "bundle_dir": bundle_dir,
                                "constitution": constitution})
    review_request.given(request)
    commit = None
    if sweep is not None:
        setup, swept = await prepare(sweep, since=since, cwd=cwd, max_file_bytes=max_file_bytes, config=config,
                                     offline=False, concurrency=concurrency, agent_timeout=agent_timeout,
                                     constitution=constitution, baseline=baseline, use_baseline=use_baseline,
                                     packing=packing)
        facts, gaps, commit, left_out = swept.facts, swept.gaps, swept.head, swept.left_out
    else:
        request = request or review_request.change(cwd=cwd, base=base, head=head, staged=staged, diff=diff,
                                                   diff_file=diff_file)
        setup = recorded_run.setup(request, config=config, offline=False, concurrency=concurrency,
                                   timeout=agent_timeout, constitution=constitution, baseline=baseline,
                                   use_baseline=use_baseline, packing=packing)
        facts, gaps, left_out = await runner.read_change(setup.request), [], 0
    target = Path(bundle_dir) if bundle_dir is not None else None
    if target is not None:
        bundles.check_target(target)
    if not setup.state_trusted(facts):
        raise StateError("the change adds or edits the run-state database, which a batch run waits in",
                         fix="remove the state file from the change, or review it live (review-gate run)")
    run = RunState(setup.config, setup.root, use_cache=cache)
    with run:
        async with runner.connect() as http:
            sent = await service.submit(setup, facts, gaps, run, http, fail_on=fail_on, filter_mode=filter_mode,
                                        listener=listener, bundle_dir=str(target) if target is not None else None,
                                        commit=commit, left_out=left_out)
        if sent.report is not None and sent.plan is not None:
            written = recorded_run.write(setup.root, setup.config, sent.report, sent.plan, setup.waivers(facts),
                                         outputs, target, fail_on, filter_mode)
            await anyio.to_thread.run_sync(run.record_written, sent.run_id, written)
    return BatchSubmitted(run_id=sent.run_id, batches=[_info(b) for b in sent.batches], requests=sent.requests,
                          local_agents=sent.local, tokens_in=sent.tokens[0], max_tokens_out=sent.tokens[1],
                          max_cost_usd=round(sent.cost[0], 6), max_cost_interactive_usd=round(sent.cost[1], 6),
                          report=sent.report, not_run=sent.not_run)


def _info(sent: object) -> BatchInfo:
    from review_gate.scale.batch.service import Sent

    assert isinstance(sent, Sent)
    return BatchInfo(sent.provider, sent.endpoint, sent.batch_id, sent.requests, sent.status, dict(sent.counts),
                     sent.ended)


def _state_path(cwd: str | Path | None, config: str | Path | None) -> tuple[Path | None, Path]:
    """The repository and the run-state file a batch command reads (the config names it)."""
    from review_gate.config import locate_config_dir
    from review_gate.config.load import load_config
    from review_gate.state.location import state_file

    review_request.typed(paths={"config": config})
    root = git.repo_root(arguments.workdir(cwd))
    loaded = load_config(locate_config_dir(str(config) if config is not None else None, root))
    return root, state_file(loaded, root)


async def batch_status_async(run: str | None = None, *, cwd: str | Path | None = None,
                             config: str | Path | None = None) -> BatchStatus:
    """A batch run's batches as the providers report them now (``run``: its id, a unique prefix
    or suffix, ``last``; default: the newest run still waiting, else the newest batch run)."""
    from review_gate.scale.batch import service

    arguments.text("run", run)
    _, path = _state_path(cwd, config)
    async with runner.connect() as http:
        seen = await service.status(path, run, http)
    return BatchStatus(seen.run_id, seen.state, [_info(b) for b in seen.batches])


async def batch_collect_async(run: str | None = None, *, cwd: str | Path | None = None,
                              config: str | Path | None = None, wait_s: float | None = None,
                              poll_s: float | None = None, outputs: Sequence[tuple[str | Render, str | Path]] = (),
                              bundle_dir: str | Path | None = None) -> BatchCollected:
    """Once every batch of the run has ended: download the results (once), complete or mark
    missing exactly the run's pending pairs, decide the gate, write ``outputs`` and the replay
    bundle. Collecting a collected run does nothing and returns its report (``already``)."""
    from review_gate.scale.batch import service

    review_request.run_options(outputs=outputs)
    arguments.text("run", run)
    review_request.typed(paths={"bundle_dir": bundle_dir})
    root, path = _state_path(cwd, config)
    async with runner.connect() as http:
        fetched = await service.fetch(path, run, http, wait_s=wait_s, poll_s=poll_s or service.POLL_S)
    if isinstance(fetched, ReviewReport):
        return BatchCollected(fetched.run_id, fetched, already=True)
    if isinstance(fetched, service.Status):
        return BatchCollected(fetched.run_id, None, pending=BatchStatus(
            fetched.run_id, fetched.state, [_info(b) for b in fetched.batches]))
    frozen = fetched.frozen
    target = Path(bundle_dir) if bundle_dir is not None else Path(frozen.bundle_dir) if frozen.bundle_dir else None
    if target is not None:
        bundles.check_target(target)
    with RunState(frozen.config, root, use_cache=True, path=path) as state:
        report = await anyio.to_thread.run_sync(service.ingest_fetched, state, fetched,
                                                 str(root) if root is not None else None)
        if report is None:
            return BatchCollected(fetched.run_id, service.stored_report(path, fetched.run_id), already=True)
        the_plan = Plan(facts=frozen.facts, classification=frozen.classification, manifest=frozen.manifest,
                        gaps=frozen.gaps, own_file_findings=frozen.own_file_findings)
        written = recorded_run.write(root, frozen.config, report, the_plan, frozen.waivers, outputs, target,
                                     frozen.fail_on, frozen.filter_mode)
        if target is not None:
            written += service.write_results(target, fetched, root)
        await anyio.to_thread.run_sync(state.record_written, report.run_id, written)
    return BatchCollected(report.run_id, report)


batch_submit = recorded_run.blocking(batch_submit_async)
batch_status = recorded_run.blocking(batch_status_async)
batch_collect = recorded_run.blocking(batch_collect_async)
