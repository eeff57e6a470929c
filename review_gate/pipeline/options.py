"""How stage 5 runs agents (``DispatchOptions``) and who hears of it (``Listener``): apart from
``pipeline.dispatch``, so that what only plans (``plan``, the bootstrap) does not import every
agent kind, their HTTP clients and retry machinery to name them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from review_gate.models import AgentResult, Packing
from review_gate.models.base import Frozen

Event = Literal["queued", "running", "retrying", "done"]
Listener = Callable[[str, Event, AgentResult | None], None]


class DispatchOptions(Frozen):
    concurrency: int
    timeout_s: float | None = None  # overrides every agent's timeout when given
    default_timeout_s: float
    offline: bool = False  # the person turned the network agents off: they are listed as off, not counted
    # why the network agents are left out of this run though they should run (a hook's budget too
    # short for any model request): each is skipped with this reason and counts in agents_skipped
    llm_left_out: str | None = None
    repo_root: str | None = None
    config_dir: str | None = None
    standards: str | None = None  # the constitution's Standards section (resolved by the bootstrap)
    intent: str | None = None  # what the change is for (review_gate.change.intent), for every llm agent
    packing: Packing = "agent_packed"  # agents that can share requests run as one unit (per_agent: never)
    staged: bool = False  # the change is the index's: an llm agent's tools read the staged files
    private_paths: tuple[str, ...] = ()  # globs an llm agent's tools never read (config and the run state)


__all__ = ["DispatchOptions", "Event", "Listener"]
