"""How a hook spends its time: which reviewers run, with what deadline, and what is said of those
left out.

A host kills a hook that outlives its ``timeout``, and a killed hook blocks nothing, so a review in
a hook gets ``--budget`` seconds in all, ``RESERVE_S`` of them kept for reading the change,
deciding and answering. Agents that need no network always run. An LLM reviewer runs too, with its
deadline clipped to what is left of the budget less the reserve: the built-in reviewers'
``timeout_s`` of 180 s becomes 45 s under ``init --hooks``'s ``--budget 50``, time for the requests
of an ordinary change. Only when what is left is under ``MIN_LLM_S`` (no model answers a review in
less) are they left out; then each is skipped with the true reason as its error (it should have
run: it counts in ``agents_skipped``, and a required one makes the gate ``incomplete``), and the
hook's answer says so on a line of its own, which the report's size limit never cuts.

    >>> from review_gate.config import load_config
    >>> plan = plan_time(load_config(None), left=50.0, budget=50.0, has_key=lambda a: True)
    >>> plan.left_out is None, plan.agent_timeout
    (True, 45.0)
    >>> plan = plan_time(load_config(None), left=12.0, budget=12.0, has_key=lambda a: True)
    >>> print(plan.line[:80])
    [review-gate ran no LLM reviewer: the hook's --budget of 12 s leaves 7 s, less t
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from review_gate.models import Agent, ReviewConfig
from review_gate.surfaces.hooks.base import RESERVE_S

MIN_LLM_S = 10.0  # the least deadline an LLM reviewer is given: under it, no model answers a review


@dataclass(frozen=True)
class TimePlan:
    left_out: str | None  # why the LLM reviewers are left out (each one's error); None: they run
    agent_timeout: float | None  # every agent's deadline; None: each its own
    line: str | None  # what the hook's answer says of it, on a line of its own


def _networked(config: ReviewConfig) -> list[Agent]:
    from review_gate.agents import KINDS

    return [a for a in config.agents.agents if a.enabled and a.kind in KINDS and KINDS[a.kind].needs_network]


def _key_set(agent: Agent) -> bool:
    from review_gate.agents import KINDS

    return KINDS[agent.kind].unavailable(agent) is None


def plan_time(config: ReviewConfig, left: float, budget: float,
              has_key: Callable[[Agent], bool] = _key_set) -> TimePlan:
    """The deadlines of a review that has ``left`` seconds of the hook's ``budget``: every agent
    cut to what is left less the reserve, the LLM reviewers (those that can run: ``has_key``)
    left out only when that is under ``MIN_LLM_S``."""
    from review_gate.agents import KINDS

    usable = left - RESERVE_S
    default = config.settings.timeout_s
    running = [a for a in config.agents.agents if a.enabled and a.kind in KINDS]
    networked = {a.id for a in _networked(config) if has_key(a)}
    left_out = line = None
    if networked and usable < MIN_LLM_S:
        why = (f"the hook's --budget of {budget:g} s leaves {max(usable, 0.0):.0f} s, less than the {MIN_LLM_S:g} s "
               "an LLM reviewer needs at least; a person can raise the hook's timeout and --budget, or run "
               "`review-gate` in a terminal")
        left_out = why
        line = f"[review-gate ran no LLM reviewer: {why}.]"
        running = [a for a in running if a.id not in networked]
    slowest = max((a.timeout_s or default for a in running), default=0.0)
    return TimePlan(left_out, round(usable, 3) if slowest > usable else None, line)


def reviewers(config: ReviewConfig, budget: float) -> list[str]:
    """What ``hook check`` says of the reviewers a hook with ``budget`` runs: the offline ones,
    and each LLM reviewer with its key and without it (and whether the key is set here)."""
    from review_gate.agents import KINDS

    offline = [a.id for a in config.agents.agents if a.enabled and a.kind in KINDS
               and not KINDS[a.kind].needs_network]
    lines = [f"reviewers without the network, always run: {', '.join(offline) or 'none'}"]
    with_key = plan_time(config, budget, budget, has_key=lambda _a: True)
    default = config.settings.timeout_s
    keys: dict[str, list[Agent]] = {}
    for agent in _networked(config):
        keys.setdefault(str(getattr(agent, "api_key_env", None) or "no key"), []).append(agent)
    for key, agents in keys.items():
        names = ", ".join(a.id for a in agents)
        own = max(a.timeout_s or default for a in agents)
        if with_key.left_out is not None:
            ran = f"not run ({with_key.left_out})"
        elif with_key.agent_timeout is not None and own > with_key.agent_timeout:
            ran = (f"run, their {own:g} s deadline clipped to {with_key.agent_timeout:g} s (the --budget of "
                   f"{budget:g} s less {RESERVE_S:g} s)")
        else:
            ran = f"run, with their own deadline ({own:g} s)"
        state = "set here" if all(_key_set(a) for a in agents) else "NOT set here"
        lines.append(f"LLM reviewers {names}: with {key} ({state}) {ran}; without it not run, counted as "
                     "skipped (the gate passes with warnings at best)")
    if not keys:
        lines.append("LLM reviewers: none enabled")
    else:
        lines.append(_host_line(config))
    return lines


def _host_line(config: ReviewConfig) -> str:
    """What the host does when no LLM reviewer has its key (``host_reviews``)."""
    setting = config.settings.host_reviews
    if setting == "never":
        return ("with no key at all: the host's sub-agents do not answer them (host_reviews: never); they count as "
                "skipped")
    where = "here and in CI" if setting == "everywhere" else "outside CI (in CI they count as skipped)"
    return (f"with no key at all: the Claude Code Stop hook hands their requests to the agent's own sub-agents "
            f"(a self-review, shown as such; host_reviews: {setting}, counted {where}); a task left unanswered "
            "is a reviewer that did not run")
