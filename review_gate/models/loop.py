"""review-gate.json's ``loop``: the coder/reviewer loop (seed 002's shape, seed 001's checks).

    "loop": {"mode": "interactive", "max_iterations": 3,
             "phases": {"generate": {"ai": "my-coder", "approver": "skip", "max_retries": 3},
                        "review": {"approver": {"prompt": "skip", "response": "manual"}}}}

An ``ai`` or an ``approver`` is ``skip`` (approvers only), ``manual`` (a person) or the id of an
agent in review-agents.json. The review phase's AI is the gate itself.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from review_gate.models.base import Frozen

Mode = Literal["interactive", "automated"]
PhaseName = Literal["plan", "generate", "review", "revise"]
StageName = Literal["prompt", "response"]
Actor = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]

SKIP = "skip"
MANUAL = "manual"
GATE = "review-gate"  # the review phase's AI: the gate's own six stages

CRITERIA_CHECK = "acceptance_criteria_met"  # the llm reviewers' judgement against the task, never categories
NOT_JUDGED = "not judged"  # its value when no llm reviewer judged the change against the task
ExitCondition = Literal["review.decision == GO", "review.warnings == 0", "review.acceptance_criteria_met == true"]
EXIT_ON_GO: ExitCondition = "review.decision == GO"  # seed 001's exit condition, always in force
EXIT_ON_NO_WARNING: ExitCondition = "review.warnings == 0"  # listed: a GO only when the gate decided pass
# listed: a GO only when an llm reviewer judged the task's criteria met (not judged is NO_GO); that
# none judged them unmet is always in force (seed 001: GO means every criterion is met)
EXIT_ON_CRITERIA_MET: ExitCondition = "review.acceptance_criteria_met == true"

DEFAULT_QUALITY_CHECKS: dict[str, list[str]] = {
    "code_standards_met": ["build", "type-safety", "correctness", "error-handling", "maintainability",
                           "debug-leftover", "configuration", "compatibility", "reliability", "locking", "performance"],
    "test_coverage_adequate": ["testing"],
    "security_review_passed": ["secrets", "injection", "authentication", "access-control", "cryptography",
                               "transport-security", "data-exposure", "permissions", "filesystem", "network",
                               "ci-security", "container-security", "supply-chain", "data-loss"],
}


def role_problem(kind: str, phase: PhaseName, role: Literal["coder", "approver"]) -> str | None:
    """Why an agent of ``kind`` cannot be ``phase``'s coder or approver, or None when it can:
    a command agent can be either; an llm agent can approve, and write the plan (text) but not
    edit the working tree; a reviewing kind can be neither.

    >>> role_problem("llm", "generate", "coder")
    'an llm agent can write the plan, but cannot edit the working tree'
    >>> role_problem("llm", "plan", "coder") is None
    True
    """
    if kind == "command" or (kind == "llm" and (role == "approver" or phase == "plan")):
        return None
    if kind == "llm":
        return "an llm agent can write the plan, but cannot edit the working tree"
    return f"a {kind} agent reviews; it cannot be a loop {role}"


def named_agents(settings: LoopSettings) -> list[tuple[str, PhaseName, Literal["coder", "approver"], str]]:
    """Every agent the settings name: (key, phase, role, agent id), keys as ``generate.ai`` or
    ``review.approver.response``; ``skip``, ``manual`` and the gate are no agents."""
    named: list[tuple[str, PhaseName, Literal["coder", "approver"], str]] = []
    for phase in ("plan", "generate", "review", "revise"):
        ai = settings.phases.ai(phase)
        if ai not in (MANUAL, GATE):
            named.append((f"{phase}.ai", phase, "coder", ai))
        for stage in ("prompt", "response"):
            approver = settings.phases.get(phase).approver_for(stage)
            if approver not in (SKIP, MANUAL):
                named.append((f"{phase}.approver.{stage}", phase, "approver", approver))
    return named


class StageApprovers(Frozen):
    prompt: Actor = SKIP
    response: Actor = SKIP


class PhaseSettings(Frozen):
    ai: Actor | None = Field(
        default=None,
        description="Who makes the phase's responses: 'manual' (a person writes the response file) or an agent id "
                    "(a command agent that reads the prompt on stdin; an llm agent for plan text). Null: 'manual' "
                    "for plan, generate and revise; the review phase's AI is always the gate itself.",
    )
    approver: Actor | StageApprovers = Field(
        default=SKIP,
        description="Who approves the prompt and the response: 'skip', 'manual' or an agent id; one for both "
                    "stages, or {\"prompt\": ..., \"response\": ...}.",
    )
    max_retries: int = Field(
        default=3, ge=0, le=20,
        description="How many times a response an agent approver rejected is made again before the session stops "
                    "with an error.",
    )

    def approver_for(self, stage: StageName) -> str:
        return self.approver if isinstance(self.approver, str) else getattr(self.approver, stage)


class LoopPhases(Frozen):
    plan: PhaseSettings = Field(default_factory=PhaseSettings)
    generate: PhaseSettings = Field(default_factory=PhaseSettings)
    review: PhaseSettings = Field(default_factory=PhaseSettings)
    revise: PhaseSettings = Field(default_factory=PhaseSettings)

    @model_validator(mode="after")
    def _review_is_the_gate(self) -> LoopPhases:
        if self.review.ai not in (None, GATE):
            raise ValueError(f"phases.review.ai must be null or {GATE!r}: the review phase's AI is the gate itself")
        return self

    def get(self, phase: PhaseName) -> PhaseSettings:
        settings: PhaseSettings = getattr(self, phase)
        return settings

    def ai(self, phase: PhaseName) -> str:
        """Who makes ``phase``'s responses: ``manual``, an agent id, or the gate for review."""
        if phase == "review":
            return GATE
        return self.get(phase).ai or MANUAL


class LoopSettings(Frozen):
    """How ``review-gate loop`` runs a task: who writes, who approves, and how many rounds."""

    mode: Mode = Field(
        default="interactive",
        description="interactive: any approver; automated: no person in the loop ('manual' is refused at start).",
    )
    max_iterations: int = Field(
        default=3, ge=1, le=100,
        description="NO_GO verdicts after which the session stops and hands off to a person (exit code 4).",
    )
    phases: LoopPhases = Field(default_factory=LoopPhases)
    quality_checks: dict[str, list[str]] = Field(
        default_factory=lambda: {name: list(categories) for name, categories in DEFAULT_QUALITY_CHECKS.items()},
        description="Decision-log check -> finding categories ('*': any) that make it false when the review has a "
                    "counted finding of major severity or worse in one of them. acceptance_criteria_met is not one "
                    "of them: it is the llm reviewers' judgement of the change against the task ('not judged' when "
                    "none judged it).",
    )
    exit_conditions: list[ExitCondition] = Field(
        default_factory=lambda: [EXIT_ON_GO], min_length=1, max_length=3,
        description="When the loop ends (seed 001): 'review.decision == GO' (always; a GO also needs that no llm "
                    "reviewer judged the task's acceptance criteria unmet, an intent-unmet finding that counts, "
                    "whatever its severity), 'review.warnings == 0' to end only on a gate that decided pass: a "
                    "warning (or a skipped agent, an inline waiver) is then NO_GO, and the coder revises it; "
                    "'review.acceptance_criteria_met == true' to end only when an llm reviewer judged the criteria "
                    "met (none judged them: NO_GO).",
    )

    @model_validator(mode="after")
    def _checks_and_exits(self) -> LoopSettings:
        if CRITERIA_CHECK in self.quality_checks:
            raise ValueError(f"quality_checks.{CRITERIA_CHECK}: it is the llm reviewers' judgement of the change "
                             "against the task, not a mapping of finding categories; remove the key")
        if EXIT_ON_GO not in self.exit_conditions:
            raise ValueError(f"exit_conditions must hold {EXIT_ON_GO!r}: the loop ends on GO, and "
                             f"{EXIT_ON_NO_WARNING!r} narrows it")
        return self

    @property
    def no_warning(self) -> bool:
        """A GO needs a gate that decided pass (``review.warnings == 0``)."""
        return EXIT_ON_NO_WARNING in self.exit_conditions

    @property
    def criteria_required(self) -> bool:
        """A GO needs an llm reviewer that judged the task's criteria met
        (``review.acceptance_criteria_met == true``)."""
        return EXIT_ON_CRITERIA_MET in self.exit_conditions


__all__ = ["CRITERIA_CHECK", "EXIT_ON_CRITERIA_MET", "EXIT_ON_GO", "EXIT_ON_NO_WARNING", "GATE", "MANUAL",
           "NOT_JUDGED", "SKIP", "ExitCondition", "LoopPhases", "LoopSettings", "Mode", "PhaseName", "PhaseSettings",
           "StageApprovers", "StageName", "named_agents", "role_problem"]
