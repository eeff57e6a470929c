"""One review run for a caller of the API, recorded: the configuration loaded and the setup built
(``setup``), the run state opened once the change is known not to bring its own, the stages run
(``review``), and the reports and the replay bundle written (``write``), with what landed in the
repository recorded for the next run to leave out. ``review``, ``sweep`` and a batch's submit
share it; ``blocking`` makes each coroutine entry point a plain function for a caller outside an
event loop.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, ParamSpec, TypeVar

import anyio
import anyio.to_thread

from review_gate.change import git
from review_gate.change.blobs import blob_ids
from review_gate.change.own_files import relative
from review_gate.errors import ReviewGateError
from review_gate.models import (
    AgentRequest,
    FailOn,
    FilterMode,
    Gap,
    Packing,
    Plan,
    PRFacts,
    ReviewConfig,
    ReviewReport,
    ShardInfo,
    Waiver,
)
from review_gate.pipeline import bootstrap, runner
from review_gate.pipeline.normalize import DiffRequest
from review_gate.pipeline.options import Listener
from review_gate.text.waiver_markers import MARKERS

if TYPE_CHECKING:
    import httpx

    from review_gate.state.no_state import NoState

Render = Callable[[ReviewReport], str]
"""A format's ``render``, for a format whose options its caller sets (``--max-chars`` of ``agent``)."""
P = ParamSpec("P")
R = TypeVar("R")


def load(config: str | Path | None, root: Path | None) -> ReviewConfig:
    """The configuration in ``config``, else the one found for repository ``root`` (its error
    names the command that lists every problem)."""
    from review_gate.config import locate_config_dir
    from review_gate.config.load import load_config

    directory = locate_config_dir(str(config) if config is not None else None, root)
    where = f" --config {directory}" if directory is not None else ""
    return load_config(directory, listed_by=f"review-gate config validate{where}")


def setup(request: DiffRequest, *, config: str | Path | None, offline: bool, concurrency: int | None = None,
          timeout: float | None = None, constitution: str | None = None, baseline: str | Path | None = None,
          use_baseline: bool = True, packing: Packing | None = None, intent: str | None = None,
          llm_left_out: str | None = None) -> bootstrap.Setup:
    from review_gate.agents import program

    root = Path(request.repo_root) if request.repo_root else None
    loaded = load(config, root)
    program.check(loaded, root)  # a configuration from outside the working tree runs only what it holds
    return bootstrap.setup(root=root, config=loaded, request=request, offline=offline, concurrency=concurrency,
                           timeout_s=timeout, constitution=constitution,
                           baseline_file=str(baseline) if baseline is not None else None,
                           no_baseline=not use_baseline, packing=packing, intent=intent, llm_left_out=llm_left_out)


@dataclass(frozen=True)
class How:
    """How a change is reviewed, beside the setup: the run's flags, and what kind of change it is."""

    fail_on: FailOn | None = None
    filter_mode: FilterMode | None = None
    listener: Listener | None = None
    shard: tuple[int, int] | None = None
    kind: Literal["live", "sweep"] = "live"
    gaps: tuple[Gap, ...] = ()  # found before planning (a sweep's files too large to read)
    commit: str | None = None  # the commit reviewed, when the change does not name it (a sweep's HEAD)
    requests: tuple[AgentRequest, ...] = ()  # agents the caller adds, with why
    accepted_before: str | None = None  # acceptances recorded since do not waive (a loop session's)
    left_out: int = 0  # the gate's own files left out before planning (a sweep's), counted in the report
    reuse_only: tuple[str, ...] | None = None  # the runs whose pairs may be reused (a loop session's own)
    added_waivers: bool = True  # inline waivers the change adds waive (not in a loop session's review)
    committed_waivers: bool = False  # only those the last commit holds waive (a coding agent's hook)


async def review(setup: bootstrap.Setup, facts: PRFacts, how: How, *, state: bool, cache: bool,
                 outputs: Sequence[tuple[str | Render, str | Path]], target: Path | None) -> ReviewReport:
    from review_gate.state.no_state import run_state  # the state's modules: not imported by what only plans

    # The run state is opened only once the change is known not to bring its own.
    run = run_state(setup.config, setup.root, enabled=state and setup.state_trusted(facts), use_cache=cache)
    # One HTTP client for the run (the gap detector and every llm agent), when it may use one.
    connection = runner.connect() if setup.networked() else contextlib.nullcontext()
    with run:
        async with connection as http:
            the_plan, report, waivers = await _plan_and_review(setup, facts, run, http, how)
        written = write(setup.root, setup.config, report, the_plan, waivers, outputs, target, how.fail_on,
                        how.filter_mode, setup.options.intent)
        await anyio.to_thread.run_sync(run.record_written, report.run_id, written)
    return report


async def _added_waivers(setup: bootstrap.Setup, how: How,
                         facts: PRFacts) -> tuple[bool, dict[str, frozenset[int]] | None]:
    """(whether inline waivers the change adds may waive, the lines they may not be on). With
    ``committed_waivers``: a working tree's lines added since HEAD are listed (read from git);
    the index, or a repository with no commit yet, has nothing committed: no added waiver counts.
    A change that adds no line with a waiver's marker on it has no added waiver to place: the
    second reading (ten git processes and a parse, a fifth of a small review) is skipped."""
    if not how.added_waivers or not how.committed_waivers:
        return how.added_waivers, None
    request = setup.request
    if request.mode != "worktree" or setup.root is None or not git.has_head(setup.root):
        return request.mode not in ("worktree", "staged"), None
    if not any(marker in change.patch for change in facts.files for marker in MARKERS):
        return True, {}
    since = await runner.read_change(request.model_copy(update={"base": "HEAD", "exact_base": True}))
    return True, {f.path: frozenset(line.number for hunk in f.hunks for line in hunk.lines if line.added)
                  for f in since.files}


async def _plan_and_review(setup: bootstrap.Setup, facts: PRFacts, run: NoState, http: httpx.AsyncClient | None,
                           how: How) -> tuple[Plan, ReviewReport, dict[str, Waiver]]:
    no_model = setup.options.offline or bool(setup.options.llm_left_out)  # no gap detector either
    the_plan = await runner.plan(facts, setup.config, own=setup.own_files(run.written()), offline=no_model,
                                 http=http, requests=how.requests, root=setup.root, committed=setup.committed())
    if how.gaps or how.left_out:
        the_plan = the_plan.model_copy(update={"gaps": [*how.gaps, *the_plan.gaps],
                                               "left_out": the_plan.left_out + how.left_out})
    work, info = _share(the_plan, setup.config, how.shard) if how.shard else (the_plan, None)
    waivers = setup.waivers(facts)
    run_id = runner.new_run_id()
    extras = await anyio.to_thread.run_sync(setup.extras, {e.agent for e in work.manifest.entries})
    honour_added, uncommitted = await _added_waivers(setup, how, facts)
    reuse = await anyio.to_thread.run_sync(functools.partial(
        run.start, work, run_id, extras, setup.options.packing, kind=how.kind, model=_models(setup, work),
        commit=how.commit, accepted_before=how.accepted_before, reuse_only=how.reuse_only))
    report = await runner.review(
        work, setup.config, setup.options, filter_mode=how.filter_mode, fail_on=how.fail_on, listener=how.listener,
        waivers={**waivers, **run.waivers}, run_id=run_id, reuse=reuse, http=http,
        honour_added_waivers=honour_added, sweep=how.kind == "sweep", change=the_plan.facts,
        uncommitted=uncommitted)
    if info is not None:  # a shard's report names the whole run's manifest and its own share
        report = report.model_copy(update={"manifest": the_plan.manifest.entries, "shard": info})
    await anyio.to_thread.run_sync(run.finish, report)
    return work, report, waivers


def _share(the_plan: Plan, config: ReviewConfig, shard: tuple[int, int]) -> tuple[Plan, ShardInfo]:
    from review_gate.pipeline import shards  # a run that is one of N shards

    return shards.share(the_plan, config, *shard)


def _models(setup: bootstrap.Setup, the_plan: Plan) -> str:
    """The models the run's llm agents use (recorded on the run)."""
    from review_gate.models import LlmAgent

    found = {spec.model for e in the_plan.manifest.entries
             if isinstance(spec := setup.config.agent(e.agent), LlmAgent)}
    return ",".join(sorted(found))


def write(root: Path | None, config: ReviewConfig, report: ReviewReport, the_plan: Plan, waivers: dict[str, Waiver],
          outputs: Sequence[tuple[str | Render, str | Path]], target: Path | None, fail_on: FailOn | None,
          filter_mode: FilterMode | None, intent: str | None = None) -> list[tuple[str, list[str], str]]:
    """The bundle and the report files; what landed inside the repository, for the next run to leave out."""
    from review_gate.outputs import renderer

    written: list[tuple[Path, bytes, str]] = []
    if target is not None:
        from review_gate.pipeline import bundles

        info = bundles.BundleInfo(tool_version=report.tool_version, run_id=report.run_id, filter_mode=filter_mode,
                                  fail_on=fail_on, own_file_findings=the_plan.own_file_findings,
                                  waivers=_decided(waivers, report))
        written += [(p, data, "bundle") for p, data in bundles.write(
            target, facts=the_plan.facts, classification=the_plan.classification,
            manifest=the_plan.manifest.entries, gaps=the_plan.gaps, config=config, report=report, info=info,
            intent=intent)]
    for fmt, path in outputs:
        render = renderer(fmt) if isinstance(fmt, str) else fmt
        written.append((*write_file(Path(path), render(report)), "report"))
    return [(rel, blob_ids(data), kind) for path, data, kind in written
            if (rel := relative(path, root)) is not None]


def _decided(waivers: dict[str, Waiver], report: ReviewReport) -> dict[str, Waiver]:
    """The waivers a replay applies: what this run left out, and the entries it read that paid for
    none of its findings (a finding an entry did not pay for counts again in the replay: its
    entry is not kept)."""
    counted = {f.fingerprint for f in report.findings}
    kept = {fp: waiver for fp, waiver in waivers.items() if fp not in counted}
    return {**kept, **{f.fingerprint: Waiver(kind=f.waived_kind, reason=f.waived)
                       for f in report.waived if f.waived and f.waived_kind}}


def write_file(path: Path, text: str) -> tuple[Path, bytes]:
    """A report written to ``path`` as UTF-8 (its folders made); the file and the bytes written."""
    data = text.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise ReviewGateError(f"cannot write {path}: {exc.strerror}", fix="choose a writable path") from exc
    return path, data


def blocking(function: Callable[P, Awaitable[R]]) -> Callable[P, R]:
    """The coroutine function ``function`` as a plain one that runs its own event loop."""

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        out: list[R] = []

        async def main() -> None:  # returns nothing: asyncio keeps a finished task's repr, and a report is big
            out.append(await function(*args, **kwargs))

        anyio.run(main)
        return out[0]

    call.__doc__ = f"``{function.__name__}``, for a caller outside an event loop (the same arguments)."
    return call
