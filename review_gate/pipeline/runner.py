"""The order of the stages: read the change, plan (stages 2-4), review (stages 5-6). A run whose
agents answer at different times (a provider batch, a host) takes the same steps apart: the
agents run (``run_agents``), and once every result is in, ``decide``."""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio.to_thread

from review_gate import __version__
from review_gate.change.content_kind import annotate as annotate_kinds
from review_gate.change.git import LINK_MODE
from review_gate.change.own_files import OwnFiles, sealed, secret_scope, split
from review_gate.change.shebang import annotate
from review_gate.models import (
    AgentManifest,
    AgentRequest,
    AgentResult,
    FileChange,
    FilterMode,
    Finding,
    Gap,
    PRClassification,
    PRFacts,
    ReviewConfig,
    ReviewReport,
    Waiver,
)
from review_gate.models.plan import Plan
from review_gate.pipeline.classify import classify
from review_gate.pipeline.compose import compose
from review_gate.pipeline.gap_detect import deterministic_gaps, gap_detect
from review_gate.pipeline.normalize import DiffRequest, normalize, normalize_now
from review_gate.pipeline.options import DispatchOptions, Listener

if TYPE_CHECKING:
    import httpx

    from review_gate.judging.surroundings import GitSurroundings

__all__ = ["Plan", "Reuse", "connect", "decide", "new_run_id", "plan", "plan_now", "read_change", "read_change_now",
           "review", "run_agents"]


class Reuse(Protocol):
    """Cached results (review_gate.state): dispatch only ``manifest``, then ``merge`` the results
    back into one per original manifest entry."""

    manifest: AgentManifest

    def merge(self, dispatched: list[AgentResult]) -> list[AgentResult]: ...


async def read_change(request: DiffRequest) -> PRFacts:
    """Stage 1: the change as the diff says it, the gate's own files included."""
    return await normalize(request)


def read_change_now(request: DiffRequest) -> PRFacts:
    """``read_change`` in this thread."""
    return normalize_now(request)


async def plan(facts: PRFacts, config: ReviewConfig, *, own: OwnFiles | None = None,
               offline: bool = False, http: httpx.AsyncClient | None = None,
               requests: Sequence[AgentRequest] = (), root: Path | None = None,
               committed: Callable[[str], bool] | None = None) -> Plan:
    """Stages 2-4 on the change without the gate's own files (``own``), whose changes become gaps.
    Scripts get the interpreter of their ``#!`` line first, read in repository ``root`` when
    the change does not show it (``shebang.annotate``). The agents the caller adds
    (``requests``) join the manifest after the deterministic part; the LLM gap detector
    (``gap_detector`` in review-gate.json) runs last unless ``offline``. The gate's data files
    the change commits (``committed(path)``; None: all it holds) come back last, for the
    secret rules only (``own_files.sealed``)."""
    staged = await anyio.to_thread.run_sync(_staged, facts, config, own, root, committed)
    manifest, gaps = await gap_detect(staged.facts, staged.classification, staged.manifest, config, offline=offline,
                                      http=http, requests=requests)
    return await anyio.to_thread.run_sync(_finished, staged, manifest, gaps, config, own, root)


def plan_now(facts: PRFacts, config: ReviewConfig, *, own: OwnFiles | None = None,
             requests: Sequence[AgentRequest] = (), root: Path | None = None,
             committed: Callable[[str], bool] | None = None) -> Plan:
    """``plan`` of a run that asks no model (``gap_detect.asks_model`` is false), in this thread:
    a plan of its own then starts no event loop (asyncio, anyio's backend and their threads cost
    it some 40 ms of CPU, whatever the size of the change)."""
    staged = _staged(facts, config, own, root, committed)
    manifest, gaps = deterministic_gaps(staged.facts, staged.classification, staged.manifest, config,
                                        requests=requests)
    return _finished(staged, manifest, gaps, config, own, root)


@dataclass(frozen=True)
class _Staged:
    """Stages 2 and 3 done, before the gaps: the change as given and as the agents will see it."""

    given: PRFacts
    facts: PRFacts
    scanned: list[FileChange]  # the gate's data files the change commits, for the secret rules
    own_gaps: list[Gap]
    left_out: int
    classification: PRClassification
    manifest: AgentManifest


def _staged(facts: PRFacts, config: ReviewConfig, own: OwnFiles | None, root: Path | None,
            committed: Callable[[str], bool] | None) -> _Staged:
    given = facts
    scanned = sealed(facts, own, committed) if own is not None else []
    facts, own_gaps = split(facts, own) if own is not None else (facts, [])
    left_out = len(given.files) - len(facts.files) - len(scanned)
    facts = annotate(_moves_whole(facts, config, root), root, config.domains.domains)
    facts = annotate_kinds(facts, root)  # a workflow, a manifest, a Compose file by what it holds
    classification = classify(facts, config.domains.domains)
    return _Staged(given=given, facts=facts, scanned=scanned, own_gaps=own_gaps, left_out=left_out,
                   classification=classification, manifest=compose(classification, config.composition.policies))


def _finished(staged: _Staged, manifest: AgentManifest, gaps: list[Gap], config: ReviewConfig,
              own: OwnFiles | None, root: Path | None) -> Plan:
    facts, left_out = staged.facts, staged.left_out
    scanning = secret_scope(manifest, staged.scanned, config)
    if scanning is not None:
        manifest = scanning
        facts = facts.model_copy(update={"files": [*facts.files, *staged.scanned]})
    else:
        left_out += len(staged.scanned)
    return Plan(facts=facts, classification=staged.classification, manifest=manifest,
                gaps=[*staged.own_gaps, *gaps], left_out=left_out,
                own_file_findings=_own_file_findings(staged.given, own, root))


def _moves_whole(facts: PRFacts, config: ReviewConfig, root: Path | None) -> PRFacts:
    from review_gate.judging.class_moves import read_moves  # only a change that renames reads it

    moving = any(f.status in ("renamed", "copied") or f.new_mode == LINK_MODE for f in facts.files)
    return read_moves(facts, config, root) if moving else facts


def _own_file_findings(facts: PRFacts, own: OwnFiles | None, root: Path | None) -> list[Finding]:
    if own is None:
        return []
    from review_gate.judging.own_file_checks import check

    return check(facts, own, root)


@contextlib.asynccontextmanager
async def connect() -> AsyncIterator[httpx.AsyncClient]:
    """The run's one HTTP client, for the gap detector and every llm agent alike."""
    from review_gate.llm.client import new_client

    async with new_client() as client:
        yield client


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


async def review(
    the_plan: Plan,
    config: ReviewConfig,
    options: DispatchOptions,
    *,
    filter_mode: FilterMode | None = None,
    fail_on: str | None = None,
    listener: Listener | None = None,
    waivers: Mapping[str, Waiver] | None = None,
    run_id: str | None = None,
    reuse: Reuse | None = None,
    http: httpx.AsyncClient | None = None,
    honour_added_waivers: bool = True,
    sweep: bool = False,
    change: PRFacts | None = None,
    uncommitted: Mapping[str, AbstractSet[int]] | None = None,
) -> ReviewReport:
    """Stages 5-6: dispatch the plan's manifest (only its stale part, with ``reuse``), then
    ``decide`` (in a worker thread). ``change``: the whole change when the plan is one shard of it
    (a line moved from a file of another shard is still a move)."""
    if reuse is None:
        results = await run_agents(the_plan.manifest, the_plan.facts, config, options, listener, http)
    else:
        results = reuse.merge(await run_agents(reuse.manifest, the_plan.facts, config, options, listener, http))
    return await anyio.to_thread.run_sync(functools.partial(
        decide, the_plan, results, config, root=options.repo_root, run_id=run_id, filter_mode=filter_mode,
        fail_on=fail_on, waivers=waivers, honour_added_waivers=honour_added_waivers, sweep=sweep, change=change,
        uncommitted=uncommitted))


async def run_agents(manifest: AgentManifest, facts: PRFacts, config: ReviewConfig, options: DispatchOptions,
                     listener: Listener | None, http: httpx.AsyncClient | None) -> list[AgentResult]:
    """Stage 5 alone: each entry's agent run; for a run whose other agents answer later (a provider
    batch's, a host's), which then ``decide`` over every result together."""
    from review_gate.pipeline.dispatch import dispatch  # every agent kind: not imported by what only plans

    return await dispatch(manifest, facts, config, options, listener, http)


def decide(
    the_plan: Plan,
    results: list[AgentResult],
    config: ReviewConfig,
    *,
    root: str | None,
    run_id: str | None = None,
    filter_mode: FilterMode | None = None,
    fail_on: str | None = None,
    waivers: Mapping[str, Waiver] | None = None,
    honour_added_waivers: bool = True,
    sweep: bool = False,
    change: PRFacts | None = None,
    uncommitted: Mapping[str, AbstractSet[int]] | None = None,
) -> ReviewReport:
    """What follows the agents, the same for every run (live, or collected from a provider batch
    or a host): every result judged where its lines live, all at once (``refine``, reading the
    repository at ``root`` when there is one: pre-existing findings become waivers, except in a
    ``sweep``, which reviews files as they are), then stage 6 (``aggregate``: the gate's own
    findings, the waivers, the decision). A run whose agents answered at different times decides
    here once, over all their results, so its report is the one a live run would give."""
    from review_gate.pipeline.aggregate import aggregate  # the judging of findings: not imported by what only plans

    around = _surroundings(change or the_plan.facts, root)
    # The baseline's and the acceptances' entries are judged with the findings: each pays for one.
    results, left_out = _judged(results, change or the_plan.facts, config, around, sweep=sweep,
                                entries=waivers or {})
    texts = _waiver_texts(results, the_plan.facts, around)
    return aggregate(
        the_plan.facts, the_plan.classification, the_plan.manifest.entries, the_plan.gaps, results,
        config, run_id=run_id or new_run_id(), tool_version=__version__, filter_mode=filter_mode, fail_on=fail_on,
        waivers=left_out, files_left_out=the_plan.left_out,
        honour_added=honour_added_waivers, gate_findings=the_plan.own_file_findings, uncommitted=uncommitted,
        texts=texts,
    )


def _judged(results: list[AgentResult], facts: PRFacts, config: ReviewConfig, around: GitSurroundings | None, *,
            sweep: bool = False, entries: Mapping[str, Waiver] | None = None,
            ) -> tuple[list[AgentResult], dict[str, Waiver]]:
    """``refine.refine``, reading the repository through ``around`` when there is one: the judged
    results and the waivers of what is not counted (of ``entries``, those that pay for a finding)."""
    from review_gate.judging.refine import refine

    return refine(results, facts, config, around, preexisting=not sweep, entries=entries)


def _surroundings(facts: PRFacts, root: str | None) -> GitSurroundings | None:
    from review_gate.judging.surroundings import GitSurroundings

    return GitSurroundings(Path(root), facts.base) if root is not None else None


def _waiver_texts(results: list[AgentResult], facts: PRFacts, around: GitSurroundings | None) -> dict[str, str]:
    """The new content of the files with findings whose diff holds a waiver's words (read once,
    with what ``refine`` read): an inline waiver counts only in a real comment, which the grammar
    finds in the whole file (``judging.code_regions.Comments``)."""
    from review_gate.judging.waiver_comments import marked

    flagged = {f.file for r in results for f in r.findings if f.file is not None}
    wanted = [c for c in facts.files if c.path in flagged and marked(c)]
    if around is None or not wanted:
        return {}
    return around.new_texts(wanted)
