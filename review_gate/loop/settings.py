"""The loop settings a session runs with: review-gate.json's ``loop``, then the flags of
``loop start`` over it; and the checks made before a session starts (every named agent exists
and can do its job; an automated session has no person in it, seed 002's key insight).

    >>> parse_approver("review.response=manual")
    ('review', 'response', 'manual')
    >>> parse_approver("plan=skip")
    ('plan', None, 'skip')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from review_gate.errors import UsageError
from review_gate.loop.model import STAGES, StartPhase, phases_from
from review_gate.models import CommandAgent, LlmAgent, ReviewConfig
from review_gate.models.loop import GATE, MANUAL, SKIP, LoopSettings, PhaseName, StageApprovers, StageName, role_problem

_PHASES: tuple[PhaseName, ...] = ("plan", "generate", "review", "revise")


def parse_approver(text: str) -> tuple[PhaseName, StageName | None, str]:
    """``PHASE[.STAGE]=VALUE`` of ``--approver``."""
    target, sep, value = text.partition("=")
    phase, _, stage = target.partition(".")
    if not sep or not value or phase not in _PHASES or (stage and stage not in STAGES):
        raise UsageError(f"--approver {text}: expected PHASE[.STAGE]=skip|manual|AGENT, with PHASE one of "
                         f"{', '.join(_PHASES)} and STAGE prompt or response",
                         fix="e.g. --approver review.response=manual or --approver generate=my-approver")
    return phase, stage or None, value


@dataclass
class Effective:
    """The settings, and where each ai and approver came from (for messages)."""

    settings: LoopSettings
    origin: dict[str, str] = field(default_factory=dict)

    def said_by(self, key: str) -> str:
        return self.origin.get(key, f"review-gate.json /loop/phases/{key.replace('.', '/')}")


def effective(base: LoopSettings, *, coder: str | None = None, max_iterations: int | None = None,
              mode: str | None = None, approvers: list[str] | None = None) -> Effective:
    data = base.model_dump()
    origin: dict[str, str] = {}
    if coder:
        for phase in ("plan", "generate", "revise"):
            data["phases"][phase]["ai"] = coder
            origin[f"{phase}.ai"] = f"--coder {coder}"
    for text in approvers or []:
        phase, stage, value = parse_approver(text)
        current = data["phases"][phase]["approver"]
        both = current if isinstance(current, dict) else {"prompt": current, "response": current}
        for one in (stage,) if stage else STAGES:
            both[one] = value
            origin[f"{phase}.approver.{one}"] = f"--approver {text}"
        data["phases"][phase]["approver"] = both
    if max_iterations is not None:
        data["max_iterations"] = max_iterations
    if mode is not None:
        data["mode"] = mode
    from pydantic import ValidationError

    try:
        return Effective(LoopSettings.model_validate(data), origin)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise UsageError(f"loop settings: {where}: {error['msg']}",
                         fix="check the flags of loop start and review-gate.json's loop") from None


def check(chosen: Effective, config: ReviewConfig, start: StartPhase) -> None:
    """Refuse, before anything runs, a session that cannot run as configured."""
    settings = chosen.settings
    automated = settings.mode == "automated"
    for phase in phases_from(start):
        ai = settings.phases.ai(phase)
        if ai == MANUAL and automated:
            raise UsageError(f"automated mode cannot wait for a person, but the {phase} phase's ai is manual "
                             f"({chosen.said_by(f'{phase}.ai')})",
                             fix="give a coder agent with --coder AGENT, or use --mode interactive")
        if ai not in (MANUAL, GATE):
            _agent(config, ai, f"{phase}.ai", chosen, coder_for=phase)
        for stage in STAGES:
            approver = settings.phases.get(phase).approver_for(stage)
            key = f"{phase}.approver.{stage}"
            if approver == MANUAL and automated:
                raise UsageError(
                    f"automated mode cannot wait for a person, but the approver of {phase}.{stage} is manual "
                    f"({chosen.said_by(key)})",
                    fix=f"use --approver {phase}.{stage}=skip or an approver agent, or --mode interactive")
            if approver not in (SKIP, MANUAL):
                _agent(config, approver, key, chosen, coder_for=None)


def _agent(config: ReviewConfig, agent_id: str, key: str, chosen: Effective, *, coder_for: PhaseName | None) -> None:
    agent = config.agent(agent_id)
    role: Literal["coder", "approver"] = "coder" if coder_for else "approver"
    where = chosen.said_by(key)
    if agent is None:
        # only agents that can take this role here: an llm agent cannot edit the working tree
        known = sorted(a.id for a in config.agents.agents if isinstance(a, (CommandAgent, LlmAgent))
                       and a.enabled and role_problem(a.kind, coder_for or "review", role) is None)
        raise UsageError(f"{key}: unknown agent {agent_id!r} ({where})",
                         fix=f"add a command agent with id {agent_id!r} to review-agents.json"
                             + (f", or use one of: {', '.join(known)}" if known else "")
                             + (f", or {SKIP} / {MANUAL}" if role == "approver" else f", or {MANUAL}"))
    if not agent.enabled:
        raise UsageError(f"{key}: agent {agent_id!r} is disabled ({where})",
                         fix=f"set \"enabled\": true on it in review-agents.json, or choose another {role}")
    why = role_problem(agent.kind, coder_for or "review", role)
    if why is None:
        return
    raise UsageError(f"{key}: agent {agent_id!r} cannot be the {role} here: {why} ({where})",
                     fix=f"name a command agent (a coding CLI that reads the prompt on stdin) as the {role}")


__all__ = ["Effective", "StageApprovers", "check", "effective", "parse_approver"]
