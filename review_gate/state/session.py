"""The run command's use of the store, in one place: open, begin, plan reuse, finish or fail.

Every method is synchronous; the run command calls the ones inside its event loop through
``anyio.to_thread`` (one at a time). ``state.no_state.NoState`` (--no-state) has the same
methods and touches no file.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Collection, Mapping
from pathlib import Path
from types import TracebackType

from review_gate.errors import ReviewGateError
from review_gate.models import AgentResult, Plan, PRFacts, ReviewConfig, ReviewReport
from review_gate.state import acceptance, batches, debt, pairs, runs, written
from review_gate.state.freshness import CacheSplit, config_sha, plan_reuse
from review_gate.state.location import state_file
from review_gate.state.no_state import NoState
from review_gate.state.pairs import ReviewKind
from review_gate.state.store import Store, open_store


class RunState(NoState):
    def __init__(self, config: ReviewConfig, root: Path | None, *, use_cache: bool, path: Path | None = None) -> None:
        super().__init__()
        self.config = config
        self.root = root
        self.path = path or state_file(config, root)
        self.use_cache = use_cache
        self.store: Store | None = None
        self.run_id: str | None = None
        self.reuse: CacheSplit | None = None
        self.facts: PRFacts | None = None  # the change the run reviews: what debt resolution reads
        self.debt: debt.Changes | None = None  # what the finished run did to the deferred debt
        self.started = time.monotonic()

    def __enter__(self) -> RunState:
        self.store = open_store(self.path)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.store is None:
            return
        try:
            if exc is not None and self.run_id is not None:
                # Ctrl-C or SIGTERM cancels the run's main task (asyncio) or interrupts it.
                stopped = isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError))
                why = "interrupted (SIGINT or SIGTERM)" if stopped else f"{type(exc).__name__}: {exc}"[:500]
                runs.fail(self.store, self.run_id, f"run failed: {why}")
                if not stopped and not isinstance(exc, ReviewGateError):
                    log = debug_log(self.run_id, exc)
                    if log is not None:
                        runs.set_debug_log(self.store, self.run_id, str(log))
        finally:
            self.store.close()
            self.store = None

    def written(self) -> dict[str, list[str]]:
        """The files earlier runs wrote into the working tree (reports, bundles)."""
        assert self.store is not None
        return written.load(self.store)

    def start(self, plan: Plan, run_id: str, extras: Mapping[str, str] | None = None,
              packing: str = "per_agent", *, kind: ReviewKind = "live", runner: str = "live",
              model: str = "", commit: str | None = None, accepted_before: str | None = None,
              reuse_only: Collection[str] | None = None) -> CacheSplit:
        """Before dispatch: record the run with its pending and cached pairs; read the acceptances
        (only those recorded before ``accepted_before``, when given).
        ``extras``: agent id -> other text its answer depends on (freshness); ``kind``: how its
        pairs are reviewed; ``runner`` and ``model``: how the run executes, with which models;
        ``commit``: the commit reviewed (default: the change's head; none for a working tree);
        ``reuse_only``: the runs whose pairs may be reused (None: any run's)."""
        assert self.store is not None
        store = self.store
        self.run_id = run_id
        self.facts = plan.facts
        runs.begin(store, run_id, plan.facts, config_sha(self.config), packing, runner=runner, model=model)
        self.waivers = acceptance.waivers(store, before=accepted_before)
        lookup = pairs.lookup(store, reuse_only) if self.use_cache else None
        self.reuse = plan_reuse(plan.manifest, plan.facts, self.config, lookup, extras)
        pairs.record_planned(store, run_id, self.reuse, kind, commit or plan.facts.head)
        return self.reuse

    def resume(self, plan: Plan, run_id: str, extras: Mapping[str, str] | None = None) -> CacheSplit:
        """A run begun earlier (a batch being collected): the same split it made when it began,
        and today's acceptances."""
        assert self.store is not None
        self.run_id = run_id
        self.facts = plan.facts
        self.waivers = acceptance.waivers(self.store)
        self.reuse = plan_reuse(plan.manifest, plan.facts, self.config, pairs.own_lookup(self.store, run_id), extras)
        return self.reuse

    def record(self, results: list[AgentResult], agents: Collection[str]) -> None:
        """Finish the pairs of ``agents`` only (those a batch ran locally at submit)."""
        assert self.store is not None and self.reuse is not None and self.run_id is not None
        pairs.record_results(self.store, self.run_id, self.reuse, results, agents)

    def finish(self, report: ReviewReport, raw_output: str | None = None) -> None:
        """After aggregation: finish the pairs and the run, and record the debt it defers or clears."""
        assert self.store is not None and self.reuse is not None and self.facts is not None
        pairs.record_results(self.store, report.run_id, self.reuse, report.agents)
        runs.finish(self.store, report, time.monotonic() - self.started, raw_output=raw_output,
                    failure=pairs.missing_summary(self.store, report.run_id))
        self.debt = debt.record(self.store, report, self.facts)
        settings = self.config.settings
        runs.prune(self.store, settings.state_max_age_days, settings.state_max_mb << 20, report.run_id)

    def record_written(self, run_id: str, files: list[tuple[str, list[str], str]]) -> None:
        """(repository-relative path, blob ids, kind) of the reports and bundle files this run wrote."""
        assert self.store is not None
        written.record(self.store, run_id, files)

    def record_batch(self, frozen: str, sent: list[batches.ProviderBatch], runner: str = "batch") -> None:
        """The run was sent to provider batches (``runner`` host: its requests wait for the coding
        agent's host): it waits, with what collecting it needs."""
        assert self.store is not None and self.run_id is not None
        batches.record(self.store, self.run_id, frozen, sent, runner)

    def claim_batch(self, run_id: str) -> bool:
        """Take the batch run ``run_id`` to collect it; False when it was collected already."""
        assert self.store is not None
        return batches.claim(self.store, run_id)


def debug_log(run_id: str, exc: BaseException) -> Path | None:
    """The traceback of a run that broke, in a file only this user can read in the user's cache
    (never beside the state: inside a repository it would be an untracked file to review)."""
    import traceback

    from review_gate.state.cache_dir import cache_dir

    path = cache_dir() / "runs" / f"{run_id}.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("".join(traceback.format_exception(exc)))
    except OSError:
        return None
    return path
