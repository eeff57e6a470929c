"""Advancing a loop session, one committed transition at a time (seed 002's engine).

``advance`` runs while the session has automatic work: at ``work`` it makes the stage's content
(renders a prompt template, calls the coder, or runs the gate for review.response); at
``judge`` its approver decides (``skip`` approves, an agent is asked once, ``manual`` stops and
waits for a person). Each result is committed before the next step starts, so a process killed
anywhere resumes from the last commit (``loop start TASK`` again). The steps themselves are
``steps.py``'s; the person's commands (``approve``, ``reject``, ``retry``, ``cancel``) are here, and
continue the session the same way.

An agent's fault stops the session in ``error`` with the reason, at a point ``retry`` (or, for
content already made, ``approve``) resumes from. Nothing here prints: progress and warnings go
to the ``Reporter`` the caller passes.
"""

from __future__ import annotations

import shutil

from review_gate.errors import UsageError
from review_gate.loop import hil, pin
from review_gate.loop import store as sessions
from review_gate.loop.files import Files, no_file, read_text, sha256, write_text
from review_gate.loop.model import WAITING, Session, StartPhase
from review_gate.loop.steps import Steps
from review_gate.loop.store import Event
from review_gate.loop.verdict import MetaVerdict, update_review
from review_gate.models.loop import MANUAL, LoopSettings
from review_gate.state.times import utc_now


def new_session_id() -> str:
    """Unique per session, sortable by start: the decision log tells two sessions of a task apart."""
    import uuid

    return utc_now().replace(":", "").replace("-", "") + "-" + uuid.uuid4().hex[:8]


def exit_code(session: Session) -> int:
    """0 complete (or cancelled), 4 waiting for a person, 3 stopped by an error (or interrupted)."""
    if session.phase in ("complete", "cancelled"):
        return 0
    if session.step == "human":
        return 4
    return 3


class Loop(Steps):
    """A loop session's engine: starting a session, its automatic steps, and a person's commands."""

    # -- starting ---------------------------------------------------------------------------

    def create(self, task: str, *, start: StartPhase, task_prompt: str, settings: LoopSettings, base: str | None,
               fail_on: str | None, base_commit: str | None = None, replace: bool = False) -> Session:
        """A new session at ``init``; with ``replace``, a finished one of the same task is replaced,
        its files kept aside (any other existing session is refused)."""
        Files(self.root, task).check()
        old = sessions.load(self.store, task)
        if old is not None and not (replace and old.finished):
            raise UsageError(f"loop session {task!r} exists already ({old.phase})",
                             fix=f"see `review-gate loop status {task}`")
        folder = Files(self.root, task).session_dir
        if folder.exists():  # an earlier session's files (or files of a run state since deleted)
            stamp = (old.created_at if old is not None else utc_now()).replace(":", "").replace("-", "")
            aside = folder.with_name(f"{task}~{stamp}")
            shutil.move(str(folder), str(aside))
            shown = Files(self.root, task).shown(aside)
            self.reporter.info(f"the files of the earlier session {task} are now in {shown}")
        values = {"task": task, "phase": "init", "stage": None, "step": "work", "waiting": None, "iteration": 1,
                  "start_phase": start, "task_prompt": task_prompt, "settings_json": settings.model_dump_json(),
                  "config_dir": self.config.directory, "base": base, "fail_on": fail_on,
                  "session_id": new_session_id(), "base_commit": base_commit,
                  "config_pin": pin.config_pin(self.config.directory, self.root)}
        return sessions.create(self.store, values, [Event("started", detail={"from": start, "mode": settings.mode,
                                                                             "session_id": values["session_id"]})],
                               replace=replace)

    # -- a person's commands ----------------------------------------------------------------

    async def approve(self, s: Session, *, verdict: MetaVerdict | None = None, replace: bool = False,
                      feedback: str | None = None) -> Session:
        if s.finished:
            raise UsageError(f"loop session {s.task} is {s.phase}; there is nothing to approve")
        if s.phase == "error":
            if s.resume_phase is None or s.waiting != "judge":
                raise UsageError(f"nothing to approve: the session stopped with an error while making "
                                 f"{s.resume_phase}.{s.resume_stage}: {s.reason}",
                                 fix=f"review-gate loop retry {s.task} --feedback TEXT, or loop cancel {s.task}")
            s = self._commit(s, {"phase": s.resume_phase, "stage": s.resume_stage, "step": "human",
                                 "waiting": "approval", "reason": None, "resume_phase": None, "resume_stage": None},
                             [Event("resumed", MANUAL, phase=s.resume_phase, stage=s.resume_stage)])
        self._waiting(s, "approve")
        at_review = s.where == "review.response"
        if (verdict or replace) and not at_review:
            raise UsageError(f"--complete, --revise and --replace apply to the review's verdict; the session is at "
                             f"{s.where}", fix="approve without them")
        was_handoff = s.waiting == "handoff"
        path = self.content(s)
        if s.waiting == "response":
            if sha256(path) is None:
                raise no_file(path, self.files(s).shown(path),
                              "write the response there, then run `review-gate loop approve` again", yet=True)
            if s.settings.phases.get(s.work_phase).approver_for(s.stage) != MANUAL:  # type: ignore[arg-type]
                s = self._commit(s, {"step": "judge", "waiting": None}, [self._made(s, path, MANUAL)])
                return await self.advance(s)
        as_left = sha256(path)  # what a person may have edited, before approve writes the feedback in
        if at_review and (verdict or feedback or replace):
            text = read_text(path)
            if text is None:
                raise no_file(path, self.files(s).shown(path), "retry the review")
            updated = update_review(text, feedback, verdict, replace)
            if updated != text:
                write_text(self.files(s), path, updated)
        s = self._accept(s, MANUAL, feedback, verdict, as_left=as_left)
        if was_handoff:
            hil.resolve(self.files(s), "approved" + (" --complete" if verdict == "PASS" else " --revise" if verdict
                                                      else ""))
        return await self.advance(s)

    def reject(self, s: Session, feedback: str) -> Session:
        self._waiting(s, "reject")
        if s.waiting not in ("approval", "meta", "handoff"):
            raise UsageError(f"nothing to reject at {s.where}: the session waits for {WAITING[str(s.waiting)]}",
                             fix=f"review-gate loop retry {s.task} --feedback TEXT, or loop cancel {s.task}")
        path = self.content(s)
        self.reporter.info(f"{s.task}: {s.where} rejected; `loop retry` makes it again, `loop cancel` ends it")
        return self._commit(s, {"waiting": "rejected", "feedback": feedback},
                            [Event("rejected", MANUAL, self.files(s).shown(path), sha256(path), feedback)])

    async def retry(self, s: Session, feedback: str) -> Session:
        if s.phase == "error" and s.resume_phase is not None:
            s = self._commit(s, {"phase": s.resume_phase, "stage": s.resume_stage, "step": "work", "waiting": None,
                                 "reason": None, "resume_phase": None, "resume_stage": None, "feedback": feedback},
                             [Event("retry", MANUAL, feedback=feedback, phase=s.resume_phase, stage=s.resume_stage)])
            return await self.advance(s)
        self._waiting(s, "retry")
        if s.waiting == "response":
            raise UsageError(f"{s.where} is written by a person (its ai is manual): there is nothing to call again",
                             fix=f"edit {self.files(s).shown(self.content(s))}, then run loop approve {s.task}")
        if s.waiting == "handoff":
            hil.resolve(self.files(s), "retried")
        s = self._commit(s, {"step": "work", "waiting": None, "feedback": feedback},
                         [Event("retry", MANUAL, feedback=feedback)])
        return await self.advance(s)

    def cancel(self, s: Session) -> Session:
        if s.finished:
            raise UsageError(f"loop session {s.task} is {s.phase} already")
        hil.resolve(self.files(s), "cancelled")
        return self._commit(s, {"phase": "cancelled", "stage": None, "step": "done", "waiting": None,
                                "reason": "cancelled by a person"}, [Event("cancelled", MANUAL)])

    def _waiting(self, s: Session, command: str) -> None:
        """Refuse a person's command when the session is not waiting for a person."""
        if s.step == "human":
            return
        if s.phase == "error":
            raise UsageError(f"loop session {s.task} stopped with an error: {s.reason}",
                             fix=f"review-gate loop retry {s.task} --feedback TEXT, or loop cancel {s.task}")
        if s.finished:
            raise UsageError(f"loop session {s.task} is {s.phase}; there is nothing to {command}")
        raise UsageError(f"nothing to {command}: loop session {s.task} was interrupted at {s.where} (no person "
                         "was being waited for)", fix=f"resume it with `review-gate loop start {s.task}`")
