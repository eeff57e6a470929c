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
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Literal, ParamSpec, TypeVar

import anyio
import anyio.to_thread

from review_gate.change import git
from review_gate.change import intent as purpose
from review_gate.change.blobs import blob_ids
from review_gate.change.own_files import relative
from review_gate.errors import GitError, InputError, ReviewGateError, StateError, UsageError
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
)
from review_gate.pipeline import arguments, bootstrap, runner
from review_gate.pipeline.gap_detect import check_requests
from review_gate.pipeline.normalize import DiffRequest
from review_gate.pipeline.options import Listener
from review_gate.scale import bundles
from review_gate.state.session import NoState, RunState, run_state

if TYPE_CHECKING:
    import httpx

    from review_gate.scale.sweep_facts import Swept
    from review_gate.state.store import Store

__all__ = ["Accepted", "Acknowledged", "BatchCollected", "BatchInfo", "BatchStatus", "BatchSubmitted", "Explanation",
           "PolicyMatch", "ReviewReport", "accept", "ack", "batch_collect", "batch_collect_async", "batch_status",
           "batch_status_async", "batch_submit", "batch_submit_async", "change", "explain", "merge", "plan",
           "plan_async", "replay", "review", "review_async", "sweep", "sweep_async"]

MAX_EXPLAIN_PATHS = 1000  # paths explained at once: each is classified against every policy
MAX_REASON = 2000  # characters of an added agent's reason (it is logged in every report and the gap log)
Render = Callable[[ReviewReport], str]
"""A format's ``render``, for a format whose options its caller sets (``--max-chars`` of ``agent``)."""
P = ParamSpec("P")
R = TypeVar("R")


def change(*, cwd: str | Path | None = None, base: str | None = None, head: str | None = None,
           staged: bool = False, diff: bytes | None = None, diff_file: str | Path | None = None,
           pushed: str | None = None, remote: str | None = None) -> DiffRequest:
    """What to review, checked: the arguments that name a change must not clash. ``pushed``: a
    ref being pushed to ``remote`` with no range known (everything the remote lacks)."""
    _typed(texts={"pushed": pushed, "remote": remote}, flags={"staged": staged}, paths={"diff_file": diff_file})
    for name, value in (("base", base), ("head", head), ("pushed", pushed), ("remote", remote)):
        arguments.ref(name, value)
    if diff is not None and not isinstance(diff, (bytes, bytearray)):
        raise UsageError(f"diff {arguments.shown(diff)}: not bytes", fix="give diff as the bytes of a unified diff "
                                                                       "(text.encode())")
    root = git.repo_root(arguments.workdir(cwd))
    root_str = str(root) if root else None
    if diff is not None or diff_file is not None:
        clash = [name for name, value in (("base", base), ("head", head), ("staged", staged),
                                          ("diff and diff_file", diff is not None and diff_file is not None))
                 if value]
        if clash:
            raise UsageError(f"a diff cannot be reviewed with {', '.join(clash)} as well",
                             fix="review either a diff or a git range")
        if diff is not None:
            return DiffRequest(mode="stdin", stdin_data=diff, repo_root=root_str)
        path = Path(str(diff_file))
        if not path.is_file():
            raise InputError(f"{path}: {'not a file' if path.exists() else 'no such file'}",
                             fix="name a unified diff file")
        return DiffRequest(mode="file", path=str(path), repo_root=root_str)
    if root_str is None:
        raise GitError(f"{arguments.workdir(cwd)} is not inside a git repository",
                       fix="review a diff instead, or run in a repository")
    if pushed is not None:
        return DiffRequest(mode="push", repo_root=root_str, head=pushed, remote=remote)
    if staged:
        if base or head:
            raise UsageError("staged changes are compared with HEAD; give no base or head with them")
        return DiffRequest(mode="staged", repo_root=root_str)
    if head:
        return DiffRequest(mode="range", repo_root=root_str, base=base, head=head)
    return DiffRequest(mode="worktree", repo_root=root_str, base=base)


def _typed(*, texts: dict[str, object] | None = None, flags: dict[str, object] | None = None,
           paths: dict[str, object] | None = None) -> None:
    """Arguments of the wrong type, refused by name before anything runs: a caller in Python can
    pass anything, and a TypeError from deep inside names nothing the caller wrote."""
    for name, value in (texts or {}).items():
        arguments.text(name, value)
    for name, value in (flags or {}).items():
        arguments.flag(name, value)
    for name, value in (paths or {}).items():
        arguments.pathlike(name, value)


def _check(*, fail_on: str | None = None, filter_mode: str | None = None, concurrency: int | None = None,
           agent_timeout: float | None = None, outputs: Sequence[tuple[object, object]] = (),
           packing: str | None = None, shard: tuple[int, int] | None = None) -> None:
    """The arguments of how a review runs, checked before anything is read: a bad one is a
    UsageError naming it (what the CLI's own choices and checks refuse)."""
    arguments.choice("fail_on", fail_on, arguments.FAIL_ON)
    arguments.choice("filter_mode", filter_mode, arguments.FILTER_MODES)
    arguments.choice("packing", packing, arguments.PACKINGS)
    arguments.concurrency(concurrency)
    arguments.timeout(agent_timeout)
    arguments.shard(shard)
    arguments.formats(outputs)


def _setup(request: DiffRequest, *, config: str | Path | None, offline: bool, concurrency: int | None = None,
           timeout: float | None = None, constitution: str | None = None, baseline: str | Path | None = None,
           use_baseline: bool = True, packing: Packing | None = None, intent: str | None = None) -> bootstrap.Setup:
    from review_gate.agents import program

    root = Path(request.repo_root) if request.repo_root else None
    loaded = load(config, root)
    program.check(loaded, root)  # a configuration from outside the working tree runs only what it holds
    return bootstrap.setup(root=root, config=loaded, request=request, offline=offline, concurrency=concurrency,
                           timeout_s=timeout, constitution=constitution,
                           baseline_file=str(baseline) if baseline is not None else None,
                           no_baseline=not use_baseline, packing=packing, intent=intent)


def load(config: str | Path | None, root: Path | None) -> ReviewConfig:
    """The configuration in ``config``, else the one found for repository ``root`` (its error
    names the command that lists every problem)."""
    from review_gate.config import locate_config_dir
    from review_gate.config.load import load_config

    directory = locate_config_dir(str(config) if config is not None else None, root)
    where = f" --config {directory}" if directory is not None else ""
    return load_config(directory, listed_by=f"review-gate config validate{where}")


def write_file(path: Path, text: str) -> tuple[Path, bytes]:
    """A report written to ``path`` as UTF-8 (its folders made); the file and the bytes written."""
    data = text.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise ReviewGateError(f"cannot write {path}: {exc.strerror}", fix="choose a writable path") from exc
    return path, data


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
    reuse_only: Sequence[str] | None = None, added_waivers: bool = True,
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
    session's review: its coder cannot waive its own findings either)."""
    _check(fail_on=fail_on, filter_mode=filter_mode, concurrency=concurrency, agent_timeout=agent_timeout,
           outputs=outputs, packing=packing, shard=shard)
    _typed(flags={"offline": offline, "use_baseline": use_baseline, "state": state, "cache": cache,
                  "added_waivers": added_waivers},
           paths={"config": config, "baseline": baseline, "bundle_dir": bundle_dir, "constitution": constitution})
    arguments.utc_stamp("accepted_before", accepted_before)
    intent = purpose.check(intent)
    if reuse_only is not None:
        arguments.texts("reuse_only", reuse_only)
    _request(request)
    request = request or change(cwd=cwd, base=base, head=head, staged=staged, diff=diff, diff_file=diff_file)
    setup = _setup(request, config=config, offline=offline, concurrency=concurrency, timeout=agent_timeout,
                   constitution=constitution, baseline=baseline, use_baseline=use_baseline, packing=packing,
                   intent=intent)
    requests = agent_requests(add_agents)
    check_requests(requests, setup.config)  # before the change is read or any agent runs
    target = Path(bundle_dir) if bundle_dir is not None else None
    if target is not None:
        bundles.check_target(target)  # before any agent runs
    facts = await runner.read_change(setup.request)
    how = _How(fail_on=fail_on, filter_mode=filter_mode, listener=listener, shard=shard, requests=tuple(requests),
               accepted_before=accepted_before, reuse_only=tuple(reuse_only) if reuse_only is not None else None,
               added_waivers=added_waivers)
    return await _reviewed(setup, facts, how, state=state, cache=cache, outputs=outputs, target=target)


@dataclass(frozen=True)
class _How:
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


def _request(request: object) -> None:
    if request is not None and not isinstance(request, DiffRequest):
        raise UsageError(f"request {arguments.shown(request)}: not a change", fix="make it with api.change(...)")


def agent_requests(pairs: Sequence[tuple[str, str]]) -> list[AgentRequest]:
    """(``ID`` or ``ID:GLOB``, reason) pairs as AgentRequests; an agent id has no ``:``."""
    arguments.pairs("add_agents", pairs, '[("security-reviewer", "touches auth")]')
    requests = []
    for target, reason in pairs:
        arguments.text("added agent", target, optional=False)
        arguments.text(f"the reason for {target}", reason, optional=False)
        agent, colon, glob = target.partition(":")
        if not agent or (colon and not glob):
            raise UsageError(f"added agent {target!r}: give an agent id, or ID:GLOB with a glob after the colon",
                             fix="e.g. security-reviewer, or security-reviewer:'src/auth/**'")
        if not reason or not reason.strip():
            raise UsageError(f"added agent {agent!r} has no reason", fix="say why the change needs this agent")
        if len(reason) > MAX_REASON:
            raise UsageError(f"added agent {agent!r}: the reason has {len(reason):,} characters, more than "
                             f"{MAX_REASON:,}", fix="say why in a sentence or two")
        requests.append(AgentRequest(agent=agent, reason=reason.strip(), glob=glob if colon else None))
    return requests


async def _reviewed(setup: bootstrap.Setup, facts: PRFacts, how: _How, *, state: bool, cache: bool,
                    outputs: Sequence[tuple[str | Render, str | Path]], target: Path | None) -> ReviewReport:
    # The run state is opened only once the change is known not to bring its own.
    run = run_state(setup.config, setup.root, enabled=state and setup.state_trusted(facts), use_cache=cache)
    # One HTTP client for the run (the gap detector and every llm agent), when it may use one.
    connection = runner.connect() if setup.networked() else contextlib.nullcontext()
    with run:
        async with connection as http:
            the_plan, report, waivers = await _review(setup, facts, run, http, how)
        written = _write(setup.root, setup.config, report, the_plan, waivers, outputs, target, how.fail_on,
                         how.filter_mode, setup.options.intent)
        await anyio.to_thread.run_sync(run.record_written, report.run_id, written)
    return report


async def _review(setup: bootstrap.Setup, facts: PRFacts, run: NoState, http: httpx.AsyncClient | None,
                  how: _How) -> tuple[Plan, ReviewReport, dict[str, str]]:
    from review_gate.scale import shards

    the_plan = await runner.plan(facts, setup.config, own=setup.own_files(run.written()),
                                 offline=setup.options.offline, http=http, requests=how.requests, root=setup.root,
                                 committed=setup.committed())
    if how.gaps or how.left_out:
        the_plan = the_plan.model_copy(update={"gaps": [*how.gaps, *the_plan.gaps],
                                               "left_out": the_plan.left_out + how.left_out})
    work, info = shards.share(the_plan, setup.config, *how.shard) if how.shard else (the_plan, None)
    waivers = setup.waivers(facts)
    run_id = runner.new_run_id()
    extras = await anyio.to_thread.run_sync(setup.extras, {e.agent for e in work.manifest.entries})
    reuse = await anyio.to_thread.run_sync(functools.partial(
        run.start, work, run_id, extras, setup.options.packing, kind=how.kind, model=_models(setup, work),
        commit=how.commit, accepted_before=how.accepted_before, reuse_only=how.reuse_only))
    report = await runner.review(
        work, setup.config, setup.options, filter_mode=how.filter_mode, fail_on=how.fail_on, listener=how.listener,
        waivers={**waivers, **run.waivers}, run_id=run_id, reuse=reuse, http=http,
        honour_added_waivers=how.added_waivers, sweep=how.kind == "sweep", change=the_plan.facts)
    if info is not None:  # a shard's report names the whole run's manifest and its own share
        report = report.model_copy(update={"manifest": the_plan.manifest.entries, "shard": info})
    await anyio.to_thread.run_sync(run.finish, report)
    return work, report, waivers


def _models(setup: bootstrap.Setup, the_plan: Plan) -> str:
    """The models the run's llm agents use (recorded on the run)."""
    from review_gate.models import LlmAgent

    found = {spec.model for e in the_plan.manifest.entries
             if isinstance(spec := setup.config.agent(e.agent), LlmAgent)}
    return ",".join(sorted(found))


def _write(root: Path | None, config: ReviewConfig, report: ReviewReport, the_plan: Plan, waivers: dict[str, str],
           outputs: Sequence[tuple[str | Render, str | Path]], target: Path | None, fail_on: FailOn | None,
           filter_mode: FilterMode | None, intent: str | None = None) -> list[tuple[str, list[str], str]]:
    """The bundle and the report files; what landed inside the repository, for the next run to leave out."""
    from review_gate.outputs import renderer

    written: list[tuple[Path, bytes, str]] = []
    if target is not None:
        info = bundles.BundleInfo(tool_version=report.tool_version, run_id=report.run_id, filter_mode=filter_mode,
                                 fail_on=fail_on,
                                 waivers={**waivers, **{f.fingerprint: f.waived for f in report.waived if f.waived}})
        written += [(p, data, "bundle") for p, data in bundles.write(
            target, facts=the_plan.facts, classification=the_plan.classification,
            manifest=the_plan.manifest.entries, gaps=the_plan.gaps, config=config, report=report, info=info,
            intent=intent)]
    for fmt, path in outputs:
        render = renderer(fmt) if isinstance(fmt, str) else fmt
        written.append((*write_file(Path(path), render(report)), "report"))
    return [(rel, blob_ids(data), kind) for path, data, kind in written
            if (rel := relative(path, root)) is not None]


async def plan_async(*, cwd: str | Path | None = None, base: str | None = None, head: str | None = None,
                     staged: bool = False, diff: bytes | None = None, diff_file: str | Path | None = None,
                     request: DiffRequest | None = None, config: str | Path | None = None,
                     offline: bool = False) -> Plan:
    """Stages 1-4: the change, its classification, the manifest of agents and the gaps; no agent
    runs (the LLM gap detector does, unless ``offline``)."""
    _typed(flags={"offline": offline}, paths={"config": config})
    _request(request)
    request = request or change(cwd=cwd, base=base, head=head, staged=staged, diff=diff, diff_file=diff_file)
    setup = _setup(request, config=config, offline=offline)
    facts = await runner.read_change(setup.request)
    connection = runner.connect() if setup.networked() else contextlib.nullcontext()
    async with connection as http:
        return await runner.plan(facts, setup.config, own=setup.own_files(setup.written(facts)), offline=offline,
                                 http=http, root=setup.root, committed=setup.committed())


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
    _typed(paths={"config": config})
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
    from review_gate.pipeline.aggregate import aggregate

    _check(fail_on=fail_on, filter_mode=filter_mode)
    _typed(paths={"directory": directory, "config": config})
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
                       waivers=info.waivers)
    return report, saved.report


@dataclass(frozen=True)
class Accepted:
    """An acceptance recorded: the finding's whole fingerprint, the acceptance's id (what
    ``review-gate accepted --revoke ID`` takes) and the last day it applies (None: no end)."""

    fingerprint: str
    acceptance: int
    expires: date | None
    kind: Literal["accept", "override"] = "accept"
    """``override`` when no recorded run reported the fingerprint (``force``)."""
    shared: Path | None = None
    """The committed file it was written to (``shared``); None: the run state of this machine."""


def accept(id_or_fingerprint: str, reason: str, expires: date | str | None = None, cwd: str | Path | None = None,
           config: str | Path | None = None, *, force: bool = False, who: str | None = None,
           shared: bool = False) -> Accepted:
    """A person accepts a finding a recorded run reported: from then on it is reported as
    accepted and does not count. ``id_or_fingerprint``: the short id a report shows beside the
    finding, or its whole fingerprint; ``expires``: the last day it applies (a date or
    ``YYYY-MM-DD``, today or later); ``force``: take a whole fingerprint no recorded run reported;
    ``who``: who accepts it (default: git's user.email, else $USER); ``shared``: write it to the
    committed ``acceptances.json`` of the configuration (``.review-gate/``) instead of this
    machine's run state: it waives the finding for everyone once it is on the base branch."""
    from review_gate.state import acceptance
    from review_gate.state.store import open_store, state_file

    arguments.text("id_or_fingerprint", id_or_fingerprint, optional=False)
    arguments.text("reason", reason, optional=False)
    arguments.flag("force", force)
    _typed(texts={"who": who}, paths={"config": config})
    if expires is not None and not isinstance(expires, (date, str)):
        raise UsageError(f"expires {arguments.shown(expires)}: not a date", fix="give it as a date or YYYY-MM-DD")
    given = _finding_id(id_or_fingerprint)
    if not reason.strip():
        raise UsageError("the reason is empty", fix="say why the finding is accepted")
    day = _last_day(expires)
    root = git.repo_root(arguments.workdir(cwd))
    loaded = load(config, root)
    path = state_file(loaded, root)
    arguments.flag("shared", shared)
    if shared:
        return _accept_shared(given, reason.strip(), day, loaded, root, path, force=force, who=who or person())
    store = open_store(path, create=force)
    if store is None:
        raise StateError(f"no runs recorded yet ({path} does not exist), so {given} is unknown",
                         fix="accept a finding from a recorded run, or force its whole fingerprint "
                             "(`review-gate accept --force`)")
    with store:
        fingerprint, pair, seen = _reported(store, given, force)
        # A fingerprint no run reported is a person's decision over the review (seed 003's override).
        kind: Literal["accept", "override"] = "accept" if seen else "override"
        event = acceptance.record(store, kind, fingerprint, reason.strip(), who or person(),
                                  day.isoformat() if day else None, pair)
    return Accepted(fingerprint, event, day, kind)


@dataclass(frozen=True)
class Acknowledged:
    """An ack recorded: the finding's whole fingerprint and the event's id."""

    fingerprint: str
    event: int


def ack(id_or_fingerprint: str, reason: str, *, cwd: str | Path | None = None, config: str | Path | None = None,
        who: str | None = None) -> Acknowledged:
    """A person notes that they saw a finding a recorded run reported (seed 003's ``ack``): who,
    when and why are recorded beside the acceptances, and nothing else changes. The finding
    keeps counting, and freshness is untouched: the pair that reported it is reused or reviewed
    again exactly as without the ack. ``id_or_fingerprint``: the short id a report shows, or the
    whole fingerprint."""
    from review_gate.state import acceptance
    from review_gate.state.store import open_store, state_file

    arguments.text("id_or_fingerprint", id_or_fingerprint, optional=False)
    arguments.text("reason", reason, optional=False)
    _typed(texts={"who": who}, paths={"config": config})
    given = _finding_id(id_or_fingerprint)
    if not reason.strip():
        raise UsageError("the reason is empty", fix="say what you saw, or what will be done about it")
    root = git.repo_root(arguments.workdir(cwd))
    path = state_file(load(config, root), root)
    store = open_store(path, create=False)
    if store is None:
        raise StateError(f"no runs recorded yet ({path} does not exist), so {given} is unknown",
                         fix="acknowledge a finding a recorded run reported (`review-gate show last`)")
    with store:
        fingerprint, pair, _ = _reported(store, given, force=False)
        event = acceptance.ack(store, fingerprint, reason.strip(), who or person(), pair)
    return Acknowledged(fingerprint, event)


def _finding_id(given: str) -> str:
    """The short id or whole fingerprint of a finding a person names, as ids are stored."""
    from review_gate.state import acceptance
    from review_gate.text.escape import sanitize

    found = given.strip().lower()
    if not acceptance.SHORT_ID.match(found):
        raise UsageError(f"{sanitize(given.strip()) or 'the id'} is not a finding id",
                         fix="give the id a report shows beside the finding (6 or more hex digits), "
                             "or its whole fingerprint")
    return found
def _accept_shared(given: str, reason: str, day: date | None, loaded: ReviewConfig, root: Path | None, state: Path,
                   *, force: bool, who: str) -> Accepted:
    """``accept --shared``: the entry written to the committed acceptances file (the config
    directory in use, else ``.review-gate/``), described from the recorded run that reported it."""
    from review_gate.judging import shared_acceptances
    from review_gate.state import acceptance
    from review_gate.state.store import open_store

    targets = shared_acceptances.candidates(loaded.directory, root)
    if not targets:
        raise UsageError("no repository or config directory here to hold the shared acceptances",
                         fix="run it inside the repository, or name the configuration with --config DIR")
    store = open_store(state, create=False)
    described: dict[str, object] = {}
    if store is None:
        if not (force and acceptance.FINGERPRINT.match(given)):
            raise StateError(f"no runs recorded yet ({state} does not exist), so {given} is unknown",
                             fix="accept a finding from a recorded run, or force its whole fingerprint "
                                 "(`review-gate accept --shared --force`)")
        fingerprint = given
    else:
        with store:
            fingerprint, _, _ = _reported(store, given, force)
            described = acceptance.described(store, fingerprint)
    entry = shared_acceptances.SharedAcceptance(
        fingerprint=fingerprint, reason=reason, who=who, created=shared_acceptances.today(), expires=day,
        **{k: v for k, v in described.items() if isinstance(v, str)})
    shared_acceptances.add(targets[0], entry)
    return Accepted(fingerprint, 0, day, "accept", shared=targets[0])


def _last_day(value: date | str | None) -> date | None:
    """An acceptance's last day: a date or YYYY-MM-DD, today or later."""
    if isinstance(value, str):
        return arguments.last_day("expiry", value)
    if value is not None and value < date.today():
        raise UsageError(f"expiry {value.isoformat()}: that day has passed; the waiver would never apply",
                         fix="give the last day it should apply: today or later")
    return value


def _reported(store: Store, given: str, force: bool) -> tuple[str, int | None, bool]:
    """The one reported fingerprint ``given`` is (or starts), its newest pair, and whether a run
    reported it; with ``force``, a whole fingerprint no run reported is taken as it is."""
    from review_gate.state import acceptance

    matches = acceptance.reported(store, given)
    if len(matches) == 1:
        return (*matches[0], True)
    if not matches:
        if force and acceptance.FINGERPRINT.match(given):
            return given, None, False
        raise StateError(f"no recorded run reported a finding {given}",
                         fix="copy the id from a report (`review-gate show last`), or force the whole "
                             "fingerprint (`review-gate accept --force`)")
    listed = ", ".join(fp for fp, _ in matches[:5])
    raise StateError(f"{given} is the start of several findings' fingerprints: {listed}",
                     fix="give more of the fingerprint")


def person() -> str:
    """Who is at the keyboard, for the records a person makes: git's user.email, else $USER."""
    try:
        result = subprocess.run(["git", "config", "user.email"], capture_output=True, text=True, check=False)
        email = result.stdout.strip() if result.returncode == 0 else ""
    except OSError:
        email = ""
    return email or os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"


def _blocking(function: Callable[P, Awaitable[R]]) -> Callable[P, R]:
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


async def sweep_async(
    paths: Sequence[str] = (), *, since: str | None = None, cwd: str | Path | None = None,
    config: str | Path | None = None, fail_on: FailOn | None = None, filter_mode: FilterMode | None = None,
    offline: bool = False, concurrency: int | None = None, agent_timeout: float | None = None,
    constitution: str | None = None, baseline: str | Path | None = None, use_baseline: bool = True,
    packing: Packing | None = None, state: bool = True, cache: bool = True,
    outputs: Sequence[tuple[str | Render, str | Path]] = (), bundle_dir: str | Path | None = None,
    listener: Listener | None = None, shard: tuple[int, int] | None = None, max_file_bytes: int | None = None,
) -> ReviewReport:
    """Review the repository's files as they are: each file git lists (tracked, or untracked and
    not ignored) within ``paths`` (git pathspecs, relative to ``cwd``) as if it were added whole;
    ``since``: only the files changed since that ref. Everything else as ``review``; a second
    sweep of an unchanged tree reuses every pair and calls no agent."""
    _check(fail_on=fail_on, filter_mode=filter_mode, concurrency=concurrency, agent_timeout=agent_timeout,
           outputs=outputs, packing=packing, shard=shard)
    arguments.texts("paths", paths)
    arguments.ref("since", since)
    _typed(flags={"offline": offline, "use_baseline": use_baseline, "state": state, "cache": cache},
           paths={"config": config, "baseline": baseline, "bundle_dir": bundle_dir, "constitution": constitution})
    setup, swept = await _swept(paths, since=since, cwd=cwd, max_file_bytes=max_file_bytes, config=config,
                                offline=offline, concurrency=concurrency, agent_timeout=agent_timeout,
                                constitution=constitution, baseline=baseline, use_baseline=use_baseline,
                                packing=packing)
    target = Path(bundle_dir) if bundle_dir is not None else None
    if target is not None:
        bundles.check_target(target)
    how = _How(fail_on=fail_on, filter_mode=filter_mode, listener=listener, shard=shard, kind="sweep",
               gaps=tuple(swept.gaps), commit=swept.head, left_out=swept.left_out)
    return await _reviewed(setup, swept.facts, how, state=state, cache=cache, outputs=outputs, target=target)


async def _swept(paths: Sequence[str], *, since: str | None, cwd: str | Path | None, max_file_bytes: int | None,
                 config: str | Path | None, offline: bool, concurrency: int | None, agent_timeout: float | None,
                 constitution: str | None, baseline: str | Path | None, use_baseline: bool,
                 packing: Packing | None) -> tuple[bootstrap.Setup, Swept]:
    """The setup of a sweep (the arguments of ``_setup``) and its synthesized change."""
    from review_gate.scale.sweep_facts import MAX_FILE_BYTES, sweep_facts

    where = arguments.workdir(cwd)
    root = git.repo_root(where)
    if root is None:
        raise GitError(f"{where} is not inside a git repository",
                       fix="run the sweep in the repository whose files it should review")
    if max_file_bytes is not None and (isinstance(max_file_bytes, bool) or not isinstance(max_file_bytes, int)
                                       or max_file_bytes < 1):
        raise UsageError(f"--max-file-bytes {arguments.shown(max_file_bytes)}: must be a whole number, at least 1",
                         fix="give the size in bytes past which a file is not read, e.g. 1000000")
    request = DiffRequest(mode="worktree", repo_root=str(root))
    setup = _setup(request, config=config, offline=offline, concurrency=concurrency, timeout=agent_timeout,
                   constitution=constitution, baseline=baseline, use_baseline=use_baseline, packing=packing)
    own = setup.own_files(setup.written(PRFacts(source="sweep", files=[])))
    swept = await anyio.to_thread.run_sync(functools.partial(
        sweep_facts, where, root, paths, since=since, own=own, max_bytes=max_file_bytes or MAX_FILE_BYTES))
    return setup, swept


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

    _check(fail_on=fail_on, filter_mode=filter_mode, concurrency=concurrency, agent_timeout=agent_timeout,
           outputs=outputs, packing=packing)
    if sweep is not None:
        arguments.texts("sweep", sweep)
    arguments.ref("since", since)
    _typed(flags={"use_baseline": use_baseline, "cache": cache},
           paths={"config": config, "baseline": baseline, "bundle_dir": bundle_dir, "constitution": constitution})
    _request(request)
    commit = None
    if sweep is not None:
        setup, swept = await _swept(sweep, since=since, cwd=cwd, max_file_bytes=max_file_bytes, config=config,
                                          offline=False, concurrency=concurrency, agent_timeout=agent_timeout,
                                          constitution=constitution, baseline=baseline, use_baseline=use_baseline,
                                          packing=packing)
        facts, gaps, commit, left_out = swept.facts, swept.gaps, swept.head, swept.left_out
    else:
        request = request or change(cwd=cwd, base=base, head=head, staged=staged, diff=diff, diff_file=diff_file)
        setup = _setup(request, config=config, offline=False, concurrency=concurrency, timeout=agent_timeout,
                       constitution=constitution, baseline=baseline, use_baseline=use_baseline, packing=packing)
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
            written = _write(setup.root, setup.config, sent.report, sent.plan, setup.waivers(facts), outputs, target,
                             fail_on, filter_mode)
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
    from review_gate.state.store import state_file

    _typed(paths={"config": config})
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

    _check(outputs=outputs)
    arguments.text("run", run)
    _typed(paths={"bundle_dir": bundle_dir})
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
        report = await anyio.to_thread.run_sync(service.ingest_fetched, state, fetched)
        if report is None:
            return BatchCollected(fetched.run_id, service.stored_report(path, fetched.run_id), already=True)
        the_plan = Plan(facts=frozen.facts, classification=frozen.classification, manifest=frozen.manifest,
                        gaps=frozen.gaps)
        written = _write(root, frozen.config, report, the_plan, frozen.waivers, outputs, target, frozen.fail_on,
                         frozen.filter_mode)
        if target is not None:
            written += service.write_results(target, fetched, root)
        await anyio.to_thread.run_sync(state.record_written, report.run_id, written)
    return BatchCollected(report.run_id, report)


def merge(reports: Sequence[str | Path], *, cwd: str | Path | None = None, config: str | Path | None = None,
          fail_on: FailOn | None = None, outputs: Sequence[tuple[str | Render, str | Path]] = ()) -> ReviewReport:
    """Combine the JSON reports of the N shards of one run (``--shard K/N``) into one report and
    one decision; reports of another change or configuration, or a shard missing or given twice,
    are refused (InputError, exit 2)."""
    from review_gate import __version__
    from review_gate.config import locate_config_dir
    from review_gate.config.load import load_config
    from review_gate.scale import merge_reports as merging

    _check(fail_on=fail_on, outputs=outputs)
    if isinstance(reports, (str, bytes)) or not isinstance(reports, (list, tuple)):
        raise UsageError(f"reports {arguments.shown(reports)}: not a list of paths",
                         fix="give the shards' JSON reports as a list of paths")
    for report_path in reports:
        arguments.pathlike("report", report_path)
    _typed(paths={"config": config})
    root = git.repo_root(arguments.workdir(cwd))
    loaded = load_config(locate_config_dir(str(config) if config is not None else None, root))
    parts = [(str(path), merging.read(Path(path))) for path in reports]
    report = merging.merge(parts, loaded, run_id=runner.new_run_id(), tool_version=__version__, fail_on=fail_on)
    from review_gate.outputs import renderer

    for fmt, path in outputs:
        write_file(Path(path), (renderer(fmt) if isinstance(fmt, str) else fmt)(report))
    return report


review = _blocking(review_async)
plan = _blocking(plan_async)
sweep = _blocking(sweep_async)
batch_submit = _blocking(batch_submit_async)
batch_status = _blocking(batch_status_async)
batch_collect = _blocking(batch_collect_async)
