"""A review with no run state (``--no-state``, or a change that brings its own): the methods of
``state.session.RunState``, touching no file; and the choice between the two. Apart from the
session, so that a run without state never imports the store, SQLite and the state's tables."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from review_gate.models import Plan, ReviewConfig, ReviewReport, Waiver

if TYPE_CHECKING:
    from review_gate.state.freshness import CacheSplit
    from review_gate.state.pairs import ReviewKind


class NoState:
    """No store: nothing waived, nothing reused, nothing recorded."""

    def __init__(self) -> None:
        self.waivers: dict[str, Waiver] = {}

    def __enter__(self) -> NoState:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None

    def written(self) -> dict[str, list[str]]:
        return {}

    def start(self, plan: Plan, run_id: str, extras: Mapping[str, str] | None = None,
              packing: str = "per_agent", *, kind: ReviewKind = "live", runner: str = "live",
              model: str = "", commit: str | None = None, accepted_before: str | None = None,
              reuse_only: Collection[str] | None = None) -> CacheSplit | None:
        return None

    def finish(self, report: ReviewReport, raw_output: str | None = None) -> None:
        return None

    def record_written(self, run_id: str, files: list[tuple[str, list[str], str]]) -> None:
        return None


def run_state(config: ReviewConfig, root: Path | None, *, enabled: bool, use_cache: bool) -> NoState:
    if not enabled:
        return NoState()
    from review_gate.state.session import RunState

    return RunState(config, root, use_cache=use_cache)
