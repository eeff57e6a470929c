"""review-gate as a library: what the command line, the MCP server and the coder/reviewer loop
call, and what a build agent written in Python calls directly.

``review`` runs the whole gate on a change and returns its report (``ReviewReport``: the
decision, the exit code the CLI would give, findings, agents, coverage, gaps); ``plan`` runs
the first four stages (no agent); ``explain`` says which domains, policies and agents a path
triggers; ``accept`` records a person's acceptance of a reported finding, so it stops counting.
``review`` and ``plan`` have ``_async`` twins for callers inside an event loop. Bad input (an unknown
ref, a malformed diff, a broken config) raises a ``review_gate.errors.ReviewGateError`` whose
message and ``fix`` are what the CLI prints.

    >>> from review_gate import api
    >>> change = b"--- a/app.py\\n+++ b/app.py\\n@@ -0,0 +1 @@\\n+total = eval(expression)\\n"
    >>> report = api.review(diff=change, state=False)
    >>> report.decision, report.exit_code, report.verdict
    ('needs_fixes', 1, 'FAIL')
    >>> [(f.file, f.line, f.rule_id) for f in report.findings]
    [('app.py', 1, 'sec-py-eval-01')]

What to review: the working tree against the merge-base with the default branch (the
default), ``base`` for another base, ``head`` for a commit range, ``staged`` for the index,
``diff`` (the bytes of a unified diff) or ``diff_file``. ``cwd`` is where the repository is
looked for (default: the current directory).

Past one pull request: ``sweep`` reviews files as they are (each as if added whole);
``batch_submit``, ``batch_status`` and ``batch_collect`` run a review through the providers'
batch APIs; ``review(shard=(K, N))`` reviews one share of a CI matrix and ``merge`` combines
the shards' reports (docs/sweeps-and-batches.md).

This module is the facade: ``review``, ``plan``, ``explain`` and ``replay`` are here; the other
entry points live with their concern and are re-exported, so ``from review_gate.api import X``
holds for each: ``sweep`` (``scale.sweep``), the batch runs (``scale.batch.runs``), ``merge``
(``scale.merge``), ``accept`` and ``ack`` (``acceptances``); what they share is
``pipeline.review_request`` (a caller's arguments, checked) and ``pipeline.recorded_run`` (one
review run, recorded).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from review_gate.change import git
from review_gate.change import intent as purpose
from review_gate.errors import UsageError
from review_gate.models import FailOn, FilterMode, Packing, Plan, PRFacts, ReviewReport
from review_gate.pipeline import arguments, recorded_run, review_request, runner
from review_gate.pipeline.gap_detect import asks_model, check_requests
from review_gate.pipeline.normalize import DiffRequest
from review_gate.pipeline.options import Listener
from review_gate.pipeline.recorded_run import Render, load, write_file
from review_gate.pipeline.review_request import MAX_REASON, agent_requests, change

if TYPE_CHECKING:
    from review_gate.acceptances import Accepted, Acknowledged, accept, ack, person
    from review_gate.pipeline import bootstrap
    from review_gate.scale.batch.runs import (
        BatchCollected,
        BatchInfo,
        BatchStatus,
        BatchSubmitted,
        batch_collect,
        batch_collect_async,
        batch_status,
        batch_status_async,
        batch_submit,
        batch_submit_async,
    )
    from review_gate.scale.host.runs import (
        HostCollected,
        HostRun,
        HostStarted,
        host_answer,
        host_collect,
        host_collect_async,
        host_start,
        host_start_async,
        host_tasks,
        wants_host,
    )
    from review_gate.scale.merge import merge
    from review_gate.scale.sweep import sweep, sweep_async

# The entry points that live with their concern, imported when first asked for: ``plan`` and a
# review never load the batch runs, the merge, the sweep or the acceptances (their run state).
_ELSEWHERE = {
    **dict.fromkeys(("Accepted", "Acknowledged", "accept", "ack", "person"), "review_gate.acceptances"),
    **dict.fromkeys(("BatchCollected", "BatchInfo", "BatchStatus", "BatchSubmitted", "batch_collect",
                     "batch_collect_async", "batch_status", "batch_status_async", "batch_submit",
                     "batch_submit_async"), "review_gate.scale.batch.runs"),
    **dict.fromkeys(("HostCollected", "HostRun", "HostStarted", "host_answer", "host_collect", "host_collect_async",
                     "host_start", "host_start_async", "host_tasks", "wants_host"), "review_gate.scale.host.runs"),
    "merge": "review_gate.scale.merge",
    **dict.fromkeys(("sweep", "sweep_async"), "review_gate.scale.sweep"),
}


def __getattr__(name: str) -> Any:
    home = _ELSEWHERE.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


# With the entry points, what their callers use beside them: the configuration as a command
# loads it, a report file written, who is at the keyboard, the agents a caller adds, and what a
# render function is.
__all__ = ["MAX_REASON", "Accepted", "Acknowledged", "BatchCollected", "BatchInfo", "BatchStatus", "BatchSubmitted",
           "Explanation", "HostCollected", "HostRun", "HostStarted", "PolicyMatch", "Render", "ReviewReport", "accept",
           "ack", "agent_requests", "batch_collect", "batch_collect_async", "batch_status", "batch_status_async",
           "batch_submit", "batch_submit_async", "change", "explain", "host_answer", "host_collect",
           "host_collect_async", "host_start", "host_start_async", "host_tasks", "load", "merge", "person", "plan",
           "plan_async", "replay", "review", "review_async", "sweep", "sweep_async", "wants_host", "write_file"]

MAX_EXPLAIN_PATHS = 1000  # paths explained at once: each is classified against every policy


async def review_async(
    *, cwd: str | Path | None = None, base: str | None = None, head: str | None = None, staged: bool = False,
    diff: bytes | None = None, diff_file: str | Path | None = None, request: DiffRequest | None = None,
    config: str | Path | None = None, fail_on: FailOn | None = None, filter_mode: FilterMode | None = None,
    offline: bool = False, concurrency: int | None = None, agent_timeout: float | None = None,
    constitution: str | None = None, baseline: str | Path | None = None, use_baseline: bool = True,
    packing: Packing | None = None, state: bool = True, cache: bool = True,
    outputs: Sequence[tuple[str | Render, str | Path]] = (), bundle_dir: str | Path | None = None,
    listener: Listener | None = None, shard: tuple[int, int] | None = None,
    add_agents: Sequence[tuple[str, str]] = (), accepted_before: str | None = None, intent: str | None = None,
    reuse_only: Sequence[str] | None = None, added_waivers: bool = True, committed_waivers: bool = False,
    llm_left_out: str | None = None,
) -> ReviewReport:
    """Review a change: all six stages, the run state (cache, acceptances, history) unless
    ``state`` is false, reports written to ``outputs`` (format name or render function, path)
    and a replay bundle to
    ``bundle_dir``. ``agent_timeout``: every agent's deadline in seconds (retries included),
    over the config's. ``request``: a change made with ``change()`` instead of the arguments that
    name one. ``shard``: (K, N), review only the K-th of N balanced shares of the files (a CI
    matrix job; ``merge`` combines the N reports). ``add_agents``: (``ID`` or ``ID:GLOB``,
    reason) pairs: registry agents to dispatch as well, over the changed files (those GLOB
    selects), each logged as an ``agent_addition`` gap with the reason (docs/gaps.md).
    ``accepted_before``: a UTC time stamp (``2026-11-26T10:00:00Z``); acceptances recorded at or
    after it waive nothing (a loop session's review: its coder cannot accept its own findings).
    ``intent``: what the change is for (a task, a pull request's title and description; at most
    64 KB of text), given to every llm agent as data and judged by them (``criteria_met``).
    ``reuse_only``: run ids whose review pairs may be reused (a loop session's own reviews: a run
    its coder made, in whatever environment, never stands in for the session's); None: any run's.
    ``added_waivers`` false: inline waivers the change adds waive nothing (listed with why; a loop
    session's review: its coder cannot waive its own findings either). ``committed_waivers``: only
    the inline waivers the last commit holds waive, none the working tree or the index adds since
    (a coding agent's hook: a waiver it wrote past the PreToolUse hook waives nothing).
    ``llm_left_out``: why the LLM reviewers are left out of this run though they should run (a
    hook's budget too short for any request): each is skipped with that reason and counts in
    ``agents_skipped`` (``offline`` is the person's choice: they are listed as off, not counted)."""
    with git.one_run():  # each of the run's questions about refs asked of git once
        review_request.run_options(fail_on=fail_on, filter_mode=filter_mode, concurrency=concurrency,
                                   agent_timeout=agent_timeout, outputs=outputs, packing=packing, shard=shard)
        review_request.typed(flags={"offline": offline, "use_baseline": use_baseline, "state": state, "cache": cache,
                                    "added_waivers": added_waivers, "committed_waivers": committed_waivers},
                             paths={"config": config, "baseline": baseline, "bundle_dir": bundle_dir,
                                    "constitution": constitution})
        arguments.utc_stamp("accepted_before", accepted_before)
        intent = purpose.check(intent)
        if reuse_only is not None:
            arguments.texts("reuse_only", reuse_only)
        review_request.given(request)
        request = request or review_request.change(cwd=cwd, base=base, head=head, staged=staged, diff=diff,
                                                   diff_file=diff_file)
        setup = recorded_run.setup(request, config=config, offline=offline, concurrency=concurrency,
                                   timeout=agent_timeout, constitution=constitution, baseline=baseline,
                                   use_baseline=use_baseline, packing=packing, intent=intent, llm_left_out=llm_left_out)
        requests = review_request.agent_requests(add_agents)
        check_requests(requests, setup.config)  # before the change is read or any agent runs
        target = Path(bundle_dir) if bundle_dir is not None else None
        if target is not None:
            from review_gate.pipeline import bundles

            bundles.check_target(target)  # before any agent runs
        if state:
            setup.keep_state_ignored()
        facts = await runner.read_change(setup.request)
        how = recorded_run.How(fail_on=fail_on, filter_mode=filter_mode, listener=listener, shard=shard,
                               requests=tuple(requests), accepted_before=accepted_before,
                               reuse_only=tuple(reuse_only) if reuse_only is not None else None,
                               added_waivers=added_waivers, committed_waivers=committed_waivers)
        return await recorded_run.review(setup, facts, how, state=state, cache=cache, outputs=outputs, target=target)


async def plan_async(*, cwd: str | Path | None = None, base: str | None = None, head: str | None = None,
                     staged: bool = False, diff: bytes | None = None, diff_file: str | Path | None = None,
                     request: DiffRequest | None = None, config: str | Path | None = None,
                     offline: bool = False) -> Plan:
    """Stages 1-4: the change, its classification, the manifest of agents and the gaps; no agent
    runs (the LLM gap detector does, unless ``offline``)."""
    return await _planned(_plan_setup(cwd=cwd, base=base, head=head, staged=staged, diff=diff, diff_file=diff_file,
                                      request=request, config=config, offline=offline), offline)


def plan(*, cwd: str | Path | None = None, base: str | None = None, head: str | None = None,
         staged: bool = False, diff: bytes | None = None, diff_file: str | Path | None = None,
         request: DiffRequest | None = None, config: str | Path | None = None, offline: bool = False) -> Plan:
    """``plan_async``, for a caller outside an event loop (the same arguments). A plan that asks
    no model (offline, or no LLM gap detector) runs in this thread and starts no event loop."""
    setup = _plan_setup(cwd=cwd, base=base, head=head, staged=staged, diff=diff, diff_file=diff_file,
                        request=request, config=config, offline=offline)
    if asks_model(setup.config, offline=offline):
        return recorded_run.blocking(_planned)(setup, offline)
    facts = runner.read_change_now(setup.request)
    return runner.plan_now(facts, setup.config, own=setup.own_files(setup.written(facts)), root=setup.root,
                           committed=setup.committed())


async def _planned(setup: bootstrap.Setup, offline: bool) -> Plan:
    facts = await runner.read_change(setup.request)
    connection = runner.connect() if setup.networked() else contextlib.nullcontext()
    async with connection as http:
        return await runner.plan(facts, setup.config, own=setup.own_files(setup.written(facts)), offline=offline,
                                 http=http, root=setup.root, committed=setup.committed())


def _plan_setup(*, cwd: str | Path | None, base: str | None, head: str | None, staged: bool,
                diff: bytes | None, diff_file: str | Path | None, request: DiffRequest | None,
                config: str | Path | None, offline: bool) -> bootstrap.Setup:
    review_request.typed(flags={"offline": offline}, paths={"config": config})
    review_request.given(request)
    request = request or review_request.change(cwd=cwd, base=base, head=head, staged=staged, diff=diff,
                                               diff_file=diff_file)
    return recorded_run.setup(request, config=config, offline=offline)


@dataclass(frozen=True)
class PolicyMatch:
    policy: str
    trigger: str
    priority: int
    fires: str  # "yes", or the condition the whole change must meet
    dispatch: list[str]


@dataclass(frozen=True)
class Explanation:
    """What one changed path triggers: its domains, the policies that fire on it, the agents."""

    path: str
    domains: list[str]
    policies: list[PolicyMatch]
    agents: list[str]


def explain(paths: Sequence[str], *, cwd: str | Path | None = None,
            config: str | Path | None = None) -> list[Explanation]:
    """For each path, as if it were the only changed file: its domains, the policies that fire on
    it (or the condition on the whole change they wait for) and the agents they dispatch. A path
    is a file's (a directory is refused: its files may trigger different agents)."""
    from review_gate.change.shebang import of_file
    from review_gate.config import locate_config_dir
    from review_gate.config.load import load_config
    from review_gate.models import FileChange
    from review_gate.pipeline.classify import classify
    from review_gate.pipeline.compose import policy_scope

    arguments.texts("paths", paths, empty=False)
    if len(paths) > MAX_EXPLAIN_PATHS:
        raise UsageError(f"explain: {len(paths):,} paths, more than {MAX_EXPLAIN_PATHS:,} at once",
                         fix="explain fewer paths at a time (`review-gate plan` shows the whole change)")
    for raw in paths:
        arguments.path_size("explain path", raw)
    review_request.typed(paths={"config": config})
    where = arguments.workdir(cwd)
    root = git.repo_root(where)
    for raw in paths:
        if ((root or where) / raw).is_dir():
            raise UsageError(f"explain {raw}: a directory",
                             fix=f"give the paths of files, e.g. {raw.rstrip('/')}/app.py")
    directory = locate_config_dir(str(config) if config is not None else None, root)
    loaded = load_config(directory)
    out = []
    for raw in paths:
        path = raw.replace(os.sep, "/").removeprefix("./")
        script = of_file(root, path) if root is not None else None  # a script is classified by its #! line too
        alone = classify(PRFacts(source="explain", files=[FileChange(path=path, old_path=path, status="modified",
                                                                     added=0, removed=0, interpreter=script)]),
                         loaded.domains.domains)
        matches = []
        for policy in sorted(loaded.composition.policies, key=lambda p: (-p.priority, p.id)):
            trigger = policy.trigger
            if trigger.type == "risk":
                fires: str | None = f"when the change's risk score is at least {trigger.min_risk}"
            elif trigger.type == "pr_type":
                fires = f"when the change's type is {' or '.join(trigger.pr_types)}"
            else:
                fires = "yes" if policy_scope(policy, alone) else None
            if fires is not None:
                matches.append(PolicyMatch(policy.id, trigger.type, policy.priority, fires, list(policy.dispatch)))
        agents = sorted({a for m in matches if m.fires == "yes" for a in m.dispatch})
        out.append(Explanation(path, alone.files[0].domains, matches, agents))
    return out


def replay(directory: str | Path, *, config: str | Path | None = None, fail_on: FailOn | None = None,
           filter_mode: FilterMode | None = None) -> tuple[ReviewReport, ReviewReport]:
    """Decide again from a replay bundle, calling no agent: the new report (with the bundle's
    own config, or ``config``; the run's filter mode and fail-on unless given) and the bundle's.
    With ``config``, the recorded findings are judged by its rules (``review_gate.judging.rejudge``): a
    rule it deleted or disabled drops its findings, one it changed gives them its metadata."""
    from review_gate import __version__
    from review_gate.config import locate_config_dir
    from review_gate.config.load import load_config
    from review_gate.judging import rejudge
    from review_gate.pipeline import bundles
    from review_gate.pipeline.aggregate import aggregate

    review_request.run_options(fail_on=fail_on, filter_mode=filter_mode)
    review_request.typed(paths={"directory": directory, "config": config})
    if directory is None:
        raise UsageError("directory None: not a path", fix="give the replay bundle's directory")
    where = Path(directory)
    saved = bundles.read(where)
    recorded = load_config(bundles.config_dir(where))
    judge = load_config(locate_config_dir(str(config), None)) if config is not None else recorded
    results = rejudge.results(saved.results, recorded, judge) if judge is not recorded else saved.results
    info = saved.info
    report = aggregate(saved.facts, saved.classification, saved.manifest, saved.gaps, results,
                       judge, run_id=runner.new_run_id(), tool_version=__version__,
                       filter_mode=filter_mode or info.filter_mode, fail_on=fail_on or info.fail_on,
                       waivers=info.waivers, gate_findings=info.own_file_findings)
    return report, saved.report


review = recorded_run.blocking(review_async)
