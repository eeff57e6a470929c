"""Advancing a loop session, one committed transition at a time (seed 002's engine).

``advance`` runs while the session has automatic work: at ``work`` it makes the stage's content
(renders a prompt template, calls the coder, or runs the gate for review.response); at
``judge`` its approver decides (``skip`` approves, an agent is asked once, ``manual`` stops and
waits for a person). Each result is committed before the next step starts, so a process killed
anywhere resumes from the last commit (``loop start TASK`` again). The person's commands
(``approve``, ``reject``, ``retry``, ``cancel``) are methods here too, and continue the session
the same way.

An agent's fault stops the session in ``error`` with the reason, at a point ``retry`` (or, for
content already made, ``approve``) resumes from. Nothing here prints: progress and warnings go
to the ``Reporter`` the caller passes.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from review_gate.agents import strays
from review_gate.errors import AgentFault, InputError, MetaError, UsageError
from review_gate.judging.review_meta import parse_meta
from review_gate.loop import agents, hil, log, pin, prompts, templates
from review_gate.loop import store as sessions
from review_gate.loop.files import Files, no_file, read_text, sha256, write_text
from review_gate.loop.intent import review_intent
from review_gate.loop.model import WAITING, Session, StartPhase, Verdict, after_approval
from review_gate.loop.review import (
    config_changed,
    findings_of,
    gate_fail_on,
    run_gate,
    save,
    verdict_of_gate,
    why_incomplete,
)
from review_gate.loop.store import Event
from review_gate.loop.tree import changed_paths, tree_hash
from review_gate.loop.verdict import MetaVerdict, update_review, verdict_of
from review_gate.models import CommandAgent, LlmAgent, ReviewConfig
from review_gate.models.loop import CRITERIA_CHECK, GATE, MANUAL, SKIP, LoopSettings
from review_gate.models.report import summary_line
from review_gate.state.store import Store
from review_gate.state.times import utc_now

OUTPUT_CAP = 20_000  # characters of an earlier output an approver is shown


class Reporter(Protocol):
    def info(self, text: str) -> None: ...

    def warn(self, text: str) -> None: ...


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


@dataclass
class Loop:
    store: Store
    root: Path
    config: ReviewConfig
    reporter: Reporter
    standards: str | None = None

    def files(self, session: Session) -> Files:
        return Files(self.root, session.task)

    def content(self, session: Session, stage: str | None = None) -> Path:
        return self.files(session).content(session.iteration, session.phase, stage or str(session.stage))

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

    # -- the automatic part -----------------------------------------------------------------

    async def advance(self, session: Session) -> Session:
        while session.step in ("work", "judge"):
            try:
                session = await (self._work(session) if session.step == "work" else self._judge(session))
            except AgentFault as fault:
                session = self._fail(session, str(fault))
        return session

    async def _work(self, s: Session) -> Session:
        if s.phase == "init":
            self.reporter.info(f"{s.task}: starting at {s.start_phase}")
            return self._commit(s, {"phase": s.start_phase, "stage": "prompt", "step": "work"},
                                [Event("entered", phase=s.start_phase, stage="prompt")])
        if s.stage == "prompt":
            return self._make_prompt(s)
        if s.phase == "review":
            return await self._review(s)
        ai = s.settings.phases.ai(s.work_phase)
        if ai == MANUAL:
            self.reporter.info(f"{s.task}: {s.where}: waiting for you to write "
                               f"{self.files(s).shown(self.content(s))}")
            return self._commit(s, {"step": "human", "waiting": "response"})
        return await self._make_response(s, ai)

    def _make_prompt(self, s: Session) -> Session:
        text = templates.render(templates.load(s.work_phase, s.config_dir), self._values(s))
        path = self.content(s)
        write_text(self.files(s), path, text)
        return self._commit(s, {"step": "judge"}, [self._made(s, path, "template")])

    async def _make_response(self, s: Session, ai: str) -> Session:
        files = self.files(s)
        prompt = read_text(self.content(s, "prompt")) or ""
        if s.carry:
            prompt = prompt.rstrip("\n") + "\n\n" + prompts.section("Feedback from the approver", s.carry) + "\n"
        path = self.content(s)
        if s.feedback is not None:  # seed 002's retry prompt
            rejected = read_text(path) or "(no output)"
            prompt = templates.render(templates.load("retry", s.config_dir), {
                "task_id": s.task, "iteration": str(s.iteration), "phase": s.work_phase, "prompt": prompt,
                "rejected": rejected, "feedback": s.feedback})
            write_text(files, path.with_name(f"{s.phase}.retry-{s.attempt}.prompt.md"), prompt)
        agent = self._agent(ai, "coder")
        self.reporter.info(f"{s.task}: {s.where}: {ai} is working (iteration {s.iteration})")
        env = {"REVIEW_GATE_LOOP_TASK": s.task, "REVIEW_GATE_LOOP_PHASE": s.work_phase,
               "REVIEW_GATE_LOOP_ITERATION": str(s.iteration),
               "REVIEW_GATE_LOOP_PROMPT_FILE": str(self.content(s, "prompt"))}
        # The coder's mark is committed before it starts: if this process is killed, whatever
        # the coder left running is found by it and killed when the session is taken up again.
        mark = strays.new_mark()
        s = self._commit(s, {"coder_mark": mark})
        text = await agents.make(self.config, agent, prompt, root=self.root, env={**os.environ, **env}, mark=mark)
        write_text(files, path, text if text.strip() else "(the coder printed nothing)\n")
        return self._commit(s, {"step": "judge", "coder_mark": None}, [self._made(s, path, ai)])

    async def _review(self, s: Session) -> Session:
        moved = self._config_moved(s)
        if moved is not None:
            return moved
        self.reporter.info(f"{s.task}: review (iteration {s.iteration}): running the gate")
        intent = review_intent(read_text(self.content(s, "prompt")), s.task_prompt, self.decisions(s.task))
        report = await run_gate(self.root, s, cache=s.feedback is None and s.attempt == 0, own_runs=self._runs(s),
                                intent=intent)
        # Checked again once the gate ran: a configuration swapped in while it ran and left there
        # would otherwise have judged this review unseen.
        moved = self._config_moved(s)
        if moved is not None:
            return moved
        if report.decision == "incomplete":
            if s.incomplete == 0:
                self.reporter.warn(f"{s.task}: the review was incomplete (run {report.run_id}); reviewing once more")
                return self._commit(s, {"incomplete": 1}, [Event("incomplete", detail={"run_id": report.run_id})])
            return self._fail(s, why_incomplete(report))
        path = save(self.files(s), s, report)
        # The verdict is recorded as the gate decided it, in memory: an automatic GO is decided
        # from this record, never from the file read back (which another process can rewrite).
        made = Event("made", GATE, self.files(s).shown(path), sha256(path),
                     detail={"run_id": report.run_id, "decision": report.decision, "verdict": report.verdict,
                             "summary": summary_line(report.verdict, report.metrics.total, report.metrics.critical,
                                                     report.metrics.missing_inputs)})
        return self._commit(s, {"step": "judge", "run_id": report.run_id, "incomplete": 0}, [made])

    def _config_moved(self, s: Session) -> Session | None:
        """The NO_GO review of a session whose configuration is not the pinned one; None when it is."""
        if s.config_pin is None:
            return None
        now = pin.config_pin(s.config_dir, self.root)
        names = pin.changed(s.config_pin, now)
        if names is None:
            return None
        self.reporter.warn(f"{s.task}: review (iteration {s.iteration}): the configuration is not the one "
                           f"the session started with ({', '.join(names) or 'its content'}): NO_GO")
        path = config_changed(self.files(s), s, names, pin.config_error(now))
        made = Event("made", GATE, self.files(s).shown(path), sha256(path),
                     detail={"run_id": None, "decision": "fail", "config_changed": names, "verdict": "FAIL",
                             "summary": summary_line("FAIL", 1, 1, 0)})
        return self._commit(s, {"step": "judge", "run_id": None, "incomplete": 0}, [made])

    def _runs(self, s: Session) -> list[str]:
        """The runs of this session's own reviews: the only ones whose pairs it reuses."""
        return sorted({str(e.detail["run_id"]) for e in sessions.events(self.store, s.task)
                       if e.kind in ("made", "incomplete") and e.at >= s.created_at and e.detail
                       and e.detail.get("run_id")})

    async def _judge(self, s: Session) -> Session:
        approver = s.settings.phases.get(s.work_phase).approver_for(s.stage)  # type: ignore[arg-type]
        if approver == SKIP:
            return self._automatic_accept(s, SKIP, None)
        if approver == MANUAL:
            self.reporter.info(f"{s.task}: {s.where}: waiting for your approval of "
                               f"{self.files(s).shown(self.content(s))}")
            return self._commit(s, {"step": "human", "waiting": "approval"})
        agent = self._agent(approver, "approver")
        decision = await agents.judge(self.config, agent, self._request(s), root=self.root)
        if decision.approved:
            return self._automatic_accept(s, approver, decision.feedback or None)
        return self._rejected(s, approver, decision.feedback)

    def _automatic_accept(self, s: Session, actor: str, feedback: str | None) -> Session:
        try:
            return self._accept(s, actor, feedback)
        except MetaError as exc:  # the review file was changed under us: a person must fix it
            self._commit(s, {"step": "human", "waiting": "meta"}, [Event("malformed", actor, feedback=exc.message)])
            raise

    def _rejected(self, s: Session, approver: str, feedback: str) -> Session:
        path = self.content(s)
        event = Event("rejected", approver, self.files(s).shown(path), sha256(path), feedback)
        self.reporter.warn(f"{s.task}: {s.where} rejected by {approver}: {feedback}")
        if s.stage == "prompt":  # a template would give the same prompt again
            return self._fail(s, f"approver {approver} rejected the {s.phase} prompt: {feedback}", [event])
        limit = s.settings.phases.get(s.work_phase).max_retries
        if s.attempt >= limit:
            return self._fail(s, f"approver {approver} rejected {s.where} {s.attempt + 1} time(s) "
                                 f"(max_retries {limit}); last feedback: {feedback}", [event])
        manual = s.work_phase != "review" and s.settings.phases.ai(s.work_phase) == MANUAL
        step = {"step": "human", "waiting": "response"} if manual else {"step": "work"}
        return self._commit(s, {**step, "attempt": s.attempt + 1, "feedback": feedback}, [event])

    # -- approving and deciding -------------------------------------------------------------

    def _accept(self, s: Session, actor: str, feedback: str | None, override: MetaVerdict | None = None) -> Session:
        path = self.content(s)
        digest = sha256(path)  # at this moment: a person's edit counts
        if digest is None:
            raise no_file(path, self.files(s).shown(path), "write it, then run `review-gate loop approve` again")
        event = Event("approved", actor, self.files(s).shown(path), digest, feedback)
        if (s.phase, s.stage) == ("review", "response"):
            return self._decide(s, path, event, feedback, override)
        phase, stage = after_approval(s.work_phase, s.stage)  # type: ignore[arg-type]
        self.reporter.info(f"{s.task}: {s.where} approved ({actor})")
        return self._commit(s, {"phase": phase, "stage": stage, "step": "work", "waiting": None, "attempt": 0,
                                "feedback": None, "carry": feedback}, [event])

    def _decide(self, s: Session, path: Path, event: Event, feedback: str | None,
                override: MetaVerdict | None) -> Session:
        gate = self._written_by_gate(s, path)
        edited = gate is not None and gate.sha256 != event.sha256
        shown = self.files(s).shown(path)
        recorded = gate.detail.get("verdict") if gate is not None and gate.detail else None
        verdict: Verdict
        if event.actor != MANUAL and recorded in ("PASS", "FAIL") and gate is not None and gate.detail:
            # An automatic approval decides from what the gate decided, never from the file read
            # back: a process left running could have rewritten it (FAIL to PASS) in between.
            verdict = "GO" if recorded == "PASS" else "NO_GO"
            summary = str(gate.detail.get("summary", ""))
            if edited:
                self.reporter.warn(f"{s.task}: {shown} was changed after the gate wrote it, and no person approved "
                                   f"the change: the gate's verdict ({recorded}) decides")
        else:
            meta = parse_meta(read_text(path) or "")  # MetaError: nothing advances
            verdict, summary = verdict_of(meta), meta.summary_line()
            if edited:  # the override stays possible, visibly
                self.reporter.warn(f"{s.task}: {shown} differs from what the gate wrote (verdict {recorded or '?'}): "
                                   f"taken as edited by a person, verdict {meta.verdict}")
        overridden = override is not None or (recorded in ("PASS", "FAIL") and verdict != (
            "GO" if recorded == "PASS" else "NO_GO"))
        settings = s.settings
        earlier = self.decisions(s.task)
        handoff = verdict == "NO_GO" and override is None and s.iteration >= settings.max_iterations
        findings = findings_of(self.files(s), s.iteration)
        # The gate's own verdict, as it wrote the review: a verdict that differs from it (approve
        # --complete or --revise, or the review file edited) is a person's, and the record says so.
        reviewed = verdict_of_gate(findings)
        person = reviewed != verdict if reviewed is not None else overridden
        checks = log.quality_checks(findings, settings.quality_checks)
        record = {
            "task_id": s.task, "session_id": s.session_id, "coder_agent": self._coder_of(s), "reviewer_agent": GATE,
            "approver": event.actor, "iteration": s.iteration, "decision": verdict,
            "decided_by": "person" if person else GATE, "review_decision": reviewed,
            "feedback": prompts.feedback_text(findings, feedback, verdict, person=person, reviewed=reviewed,
                                              criteria=checks[CRITERIA_CHECK]),
            "quality_checks": checks,
            "timestamp": utc_now(), "run_id": s.run_id, "summary": summary,
            "overridden": overridden, "final": verdict == "GO" or handoff,
            # the review file as approved is not what the gate wrote: a person's edit (manual
            # approval), or a change nobody approved (automatic: the gate's verdict decided)
            "edited": edited,
        }
        events = [Event(event.kind, event.actor, event.file, event.sha256, event.feedback,
                        detail={"verdict": verdict, "override": override, "edited": edited}),
                  Event("decision", detail=record)]
        if verdict == "GO":
            changes: dict[str, Any] = {"phase": "complete", "stage": None, "step": "done", "waiting": None,
                                       "verdict": verdict, "tree_hash": tree_hash(self.root), "feedback": None,
                                       "carry": feedback, "attempt": 0}
        elif handoff:
            record["handoff"] = True
            where = hil.write(self.files(s), s, [*earlier, record], path)
            events.append(Event("handoff", file=self.files(s).shown(where)))
            changes = {"step": "human", "waiting": "handoff", "verdict": verdict, "feedback": None}
        else:
            changes = {"phase": "revise", "stage": "prompt", "step": "work", "waiting": None, "verdict": verdict,
                       "iteration": s.iteration + 1, "carry": feedback, "feedback": None, "attempt": 0}
        s = self._commit(s, changes, events)
        self._log(s, record)
        what = "complete" if verdict == "GO" else ("hand-off to a person" if handoff else "revise")
        self.reporter.info(f"{s.task}: {summary} -> {verdict} (iteration {record['iteration']} of "
                           f"{settings.max_iterations}): {what}")
        return s

    def _written_by_gate(self, s: Session, path: Path) -> sessions.EventRow | None:
        """The event of the gate writing ``path`` in this iteration (its digest, its verdict)."""
        shown = self.files(s).shown(path)
        made = [e for e in sessions.events(self.store, s.task, "made")
                if e.file == shown and e.actor == GATE and e.iteration == s.iteration and e.at >= s.created_at]
        return made[-1] if made else None

    def _coder_of(self, s: Session) -> str:
        if s.iteration > 1:
            return s.settings.phases.ai("revise")
        return s.settings.phases.ai("generate") if s.start_phase != "review" else "external"

    def _log(self, s: Session, record: dict[str, Any]) -> None:
        files = self.files(s)
        try:
            files.prepare(files.log)
            problem = log.append(files.log, record)
        except InputError as exc:
            problem = exc.message
        if problem:
            self.reporter.warn(f"{s.task}: {problem}; the decision is kept in the run state (`loop log {s.task}`)")

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
        if at_review and (verdict or feedback or replace):
            text = read_text(path)
            if text is None:
                raise no_file(path, self.files(s).shown(path), "retry the review")
            updated = update_review(text, feedback, verdict, replace)
            if updated != text:
                write_text(self.files(s), path, updated)
        s = self._accept(s, MANUAL, feedback, verdict)
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

    # -- helpers ----------------------------------------------------------------------------

    def _commit(self, s: Session, changes: dict[str, Any], events: list[Event] | None = None) -> Session:
        return sessions.commit(self.store, s, changes, events or [])

    def _fail(self, s: Session, reason: str, events: list[Event] | None = None) -> Session:
        self.reporter.warn(f"{s.task}: stopped at {s.where}: {reason}")
        return self._commit(s, {"phase": "error", "stage": None, "step": "done", "waiting": s.step,
                                "reason": reason, "resume_phase": s.phase, "resume_stage": s.stage},
                            [*(events or []), Event("error", feedback=reason)])

    def _made(self, s: Session, path: Path, actor: str) -> Event:
        return Event("made", actor, self.files(s).shown(path), sha256(path))

    def _agent(self, agent_id: str, role: str) -> CommandAgent | LlmAgent:
        agent = self.config.agent(agent_id)
        if not isinstance(agent, (CommandAgent, LlmAgent)) or not agent.enabled:
            raise AgentFault(f"{role} {agent_id!r} is not a usable agent of review-agents.json any more")
        return agent

    def decisions(self, task: str) -> list[dict[str, Any]]:
        return sessions.decisions(self.store, task)

    def _values(self, s: Session) -> dict[str, str]:
        files = self.files(s)
        phase = s.work_phase
        plan = read_text(files.content(1, "plan", "response")) if phase in ("generate", "revise") else None
        findings = ""
        earlier = self.decisions(s.task)
        if phase == "revise":
            review_file = files.content(s.iteration - 1, "review", "response")
            findings = prompts.findings_section(findings_of(files, s.iteration - 1), files.shown(review_file))
            findings = "\n\n".join(p for p in (findings, self._edited_review(s, review_file)) if p)
            earlier = [d for d in earlier if int(d.get("iteration", 0)) < s.iteration - 1]
        feedback = "\n\n".join(f for f in (s.carry, s.feedback) if f)
        return {
            "task_id": s.task, "iteration": str(s.iteration), "task": s.task_prompt.strip() or prompts.NO_TASK,
            "standards": prompts.section("Standards of this project", self.standards),
            "plan": prompts.section("The plan", plan), "feedback": prompts.section("Feedback", feedback),
            "findings": findings, "history": prompts.history_section(earlier),
            "base": (s.base or "the merge-base with the default branch")
            + (f" (commit {s.base_commit[:12]}, pinned when the session started)" if s.base_commit else ""),
            "fail_on": gate_fail_on(s) or self.config.settings.gate.fail_on,
        }

    def _edited_review(self, s: Session, review_file: Path) -> str:
        """The review as a person approved it, when they edited it after the gate wrote it."""
        shown = self.files(s).shown(review_file)
        made = [e.sha256 for e in sessions.events(self.store, s.task, "made") if e.file == shown]
        approved = [e for e in sessions.events(self.store, s.task, "approved") if e.file == shown]
        # A person's edit only: an automatic approval of a file changed behind the gate's back
        # was decided by the gate's own verdict, and what was written there is nobody's review.
        if not made or not approved or made[-1] == approved[-1].sha256 or approved[-1].actor != MANUAL:
            return ""
        try:
            body = parse_meta(read_text(review_file) or "").body
        except MetaError:
            return ""
        return prompts.section("The review, as edited by a person", body)

    def _request(self, s: Session) -> dict[str, Any]:
        """What an approver gets: the content, the changed files of a code stage, the context."""
        files = self.files(s)
        path = self.content(s)
        shown: dict[str, str | None] = {files.shown(path): read_text(path)}
        if s.stage == "response" and s.phase in ("generate", "revise"):
            for changed in changed_paths(self.root):
                shown.setdefault(changed, None)
        outputs = {}
        earlier = max(1, s.iteration - 1)
        for label, candidate in (("plan.response", files.content(1, "plan", "response")),
                                 (f"review.response of iteration {earlier}",
                                  files.content(earlier, "review", "response"))):
            text = read_text(candidate) if candidate != path else None
            if text:
                outputs[label] = text[:OUTPUT_CAP]
        context = {"session": s.task, "task_id": s.task, "task": s.task_prompt, "iteration": s.iteration,
                   "mode": s.settings.mode, "attempt": s.attempt, "outputs": outputs,
                   "history": [d.get("feedback") for d in self.decisions(s.task) if d.get("decision") == "NO_GO"]}
        return {"phase": s.phase, "stage": s.stage, "files": shown, "context": context}
