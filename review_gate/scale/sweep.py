"""``sweep``: the repository's files as they are, each reviewed as if it were added whole
(``sweep_facts`` makes that change), then reviewed, cached and gated as a diff is. An entry point
of the API (``review_gate.api`` re-exports it).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from review_gate.change import git
from review_gate.errors import GitError, UsageError
from review_gate.models import FailOn, FilterMode, Packing, PRFacts, ReviewReport
from review_gate.pipeline import arguments, bootstrap, bundles, recorded_run, review_request
from review_gate.pipeline.normalize import DiffRequest
from review_gate.pipeline.options import Listener
from review_gate.pipeline.recorded_run import Render

if TYPE_CHECKING:
    from review_gate.scale.sweep_facts import Swept

__all__ = ["prepare", "sweep", "sweep_async"]


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
    review_request.run_options(fail_on=fail_on, filter_mode=filter_mode, concurrency=concurrency,
                               agent_timeout=agent_timeout, outputs=outputs, packing=packing, shard=shard)
    arguments.texts("paths", paths)
    arguments.ref("since", since)
    review_request.typed(flags={"offline": offline, "use_baseline": use_baseline, "state": state, "cache": cache},
                         paths={"config": config, "baseline": baseline, "bundle_dir": bundle_dir,
                                "constitution": constitution})
    setup, swept = await prepare(paths, since=since, cwd=cwd, max_file_bytes=max_file_bytes, config=config,
                                 offline=offline, concurrency=concurrency, agent_timeout=agent_timeout,
                                 constitution=constitution, baseline=baseline, use_baseline=use_baseline,
                                 packing=packing)
    target = Path(bundle_dir) if bundle_dir is not None else None
    if target is not None:
        bundles.check_target(target)
    how = recorded_run.How(fail_on=fail_on, filter_mode=filter_mode, listener=listener, shard=shard, kind="sweep",
                           gaps=tuple(swept.gaps), commit=swept.head, left_out=swept.left_out)
    return await recorded_run.review(setup, swept.facts, how, state=state, cache=cache, outputs=outputs, target=target)


async def prepare(paths: Sequence[str], *, since: str | None, cwd: str | Path | None, max_file_bytes: int | None,
                  config: str | Path | None, offline: bool, concurrency: int | None, agent_timeout: float | None,
                  constitution: str | None, baseline: str | Path | None, use_baseline: bool,
                  packing: Packing | None) -> tuple[bootstrap.Setup, Swept]:
    """The setup of a sweep (the arguments of ``recorded_run.setup``) and its synthesized change."""
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
    setup = recorded_run.setup(request, config=config, offline=offline, concurrency=concurrency,
                               timeout=agent_timeout, constitution=constitution, baseline=baseline,
                               use_baseline=use_baseline, packing=packing)
    own = setup.own_files(setup.written(PRFacts(source="sweep", files=[])))
    swept = await anyio.to_thread.run_sync(functools.partial(
        sweep_facts, where, root, paths, since=since, own=own, max_bytes=max_file_bytes or MAX_FILE_BYTES))
    return setup, swept


sweep = recorded_run.blocking(sweep_async)
