"""Phases, stages and transitions of a loop session (seed 002), as data and pure functions.

    init -> plan.prompt -> plan.response -> generate.prompt -> generate.response
         -> review.prompt -> review.response -> complete             (GO)
                                             -> revise.prompt -> revise.response -> review.prompt  (NO_GO)

Within a stage a session is at one ``step``: ``work`` (the content is to be made: a prompt
rendered, an agent or the gate called), ``judge`` (the content is there; its approver decides),
``human`` (a person must act; ``waiting`` says what for) or ``done`` (init, complete, error,
cancelled). Each step change is one committed transition.

    >>> after_approval("plan", "prompt"), after_approval("revise", "response")
    (('plan', 'response'), ('review', 'prompt'))
    >>> after_approval("review", "response", "GO"), after_approval("review", "response", "NO_GO")
    (('complete', None), ('revise', 'prompt'))
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal, get_args

from review_gate.models.loop import LoopSettings, PhaseName, StageName

Phase = Literal["init", "plan", "generate", "review", "revise", "complete", "error", "cancelled"]
Step = Literal["work", "judge", "human", "done"]
Verdict = Literal["GO", "NO_GO"]
StartPhase = Literal["plan", "generate", "review"]

PHASES: tuple[Phase, ...] = get_args(Phase)
WORK_PHASES: tuple[PhaseName, ...] = get_args(PhaseName)
STAGES: tuple[StageName, ...] = get_args(StageName)
STARTS: tuple[StartPhase, ...] = get_args(StartPhase)
FINISHED: tuple[Phase, ...] = ("complete", "cancelled")  # a new session may replace these

# What a person is waited for, when step is "human".
WAITING = {
    "approval": "your approval",
    "response": "you to write the response file",
    "rejected": "a decision after a rejection: retry, approve or cancel",
    "meta": "a valid @@@REVIEW_META block in the review file",
    "handoff": "a person: the hand-off after max_iterations NO_GO verdicts",
}


def after_approval(phase: PhaseName, stage: StageName,
                   verdict: Verdict | None = None) -> tuple[Phase, StageName | None]:
    """Where an approved ``phase.stage`` leads; review.response needs the verdict."""
    if stage == "prompt":
        return phase, "response"
    if phase == "plan":
        return "generate", "prompt"
    if phase in ("generate", "revise"):
        return "review", "prompt"
    if verdict is None:
        raise ValueError("review.response leads by its verdict")
    return ("complete", None) if verdict == "GO" else ("revise", "prompt")


def phases_from(start: StartPhase) -> tuple[PhaseName, ...]:
    """The phases a session that starts at ``start`` may pass through."""
    return WORK_PHASES[WORK_PHASES.index(start):] if start != "review" else ("review", "revise")


def content_name(phase: str, stage: str) -> str:
    """The file of a stage's content inside its iteration folder: ``plan.prompt.md``."""
    return f"{phase}.{stage}.md"


@dataclass(frozen=True)
class Session:
    """One row of ``loop_sessions``: where a task's loop stands."""

    task: str
    phase: Phase
    stage: StageName | None
    step: Step
    waiting: str | None
    iteration: int
    attempt: int
    incomplete: int
    feedback: str | None  # for remaking the current content (a rejection, a retry)
    carry: str | None  # given when the last content was approved, for the next prompt
    start_phase: StartPhase
    task_prompt: str
    settings_json: str
    config_dir: str | None
    base: str | None
    fail_on: str | None
    verdict: Verdict | None
    run_id: str | None
    tree_hash: str | None
    reason: str | None
    resume_phase: PhaseName | None
    resume_stage: StageName | None
    owner_pid: int | None
    owner_start: str | None
    created_at: str
    updated_at: str
    session_id: str | None = None  # NULL for a session of schema 8
    config_pin: str | None = None  # JSON: the configuration's digest and its files' (loop/pin.py)
    base_commit: str | None = None  # the commit (or empty tree) every review of the session compares with
    coder_mark: str | None = None  # the mark in the environment of the coder last started
    _settings: list[LoopSettings] = field(default_factory=list, compare=False, repr=False)

    @property
    def settings(self) -> LoopSettings:
        if not self._settings:
            self._settings.append(LoopSettings.model_validate(json.loads(self.settings_json)))
        return self._settings[0]

    @property
    def work_phase(self) -> PhaseName:
        """The phase of a session inside one (not init, complete, error, cancelled)."""
        assert self.phase in WORK_PHASES, self.phase
        return self.phase

    @property
    def where(self) -> str:
        """``review.response``, or the bare phase when it has no stage."""
        return f"{self.phase}.{self.stage}" if self.stage else self.phase

    @property
    def finished(self) -> bool:
        return self.phase in FINISHED


COLUMNS = tuple(name for name in Session.__dataclass_fields__ if not name.startswith("_"))
