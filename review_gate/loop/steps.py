"""The automatic part of a loop session (seed 002's engine): making a stage's content (a prompt
from its template, a coder's response, the gate's review), judging it (``skip``, an agent, or
waiting for a person), approving it and deciding a review's verdict, each result committed before
the next step starts. ``engine.Loop`` adds the commands of a person on top.

Nothing here prints: progress and warnings go to the ``Reporter`` the caller passes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from review_gate.agents import strays
from review_gate.errors import AgentFault, InputError, MetaError
from review_gate.judging.review_meta import parse_meta
from review_gate.loop import agents, hil, log, pin, prompts, templates
from review_gate.loop import store as sessions
from review_gate.loop.files import Files, no_file, read_text, sha256, write_text
from review_gate.loop.intent import review_intent
from review_gate.loop.model import Session, Verdict, after_approval
from review_gate.loop.review import config_changed, findings_of, run_gate, save, verdict_of_gate, why_incomplete
from review_gate.loop.step_inputs import approver_request, prompt_values
from review_gate.loop.store import Event
from review_gate.loop.tree import tree_hash
from review_gate.loop.verdict import MetaVerdict, verdict_of
from review_gate.models import CommandAgent, LlmAgent, ReviewConfig
from review_gate.models.loop import CRITERIA_CHECK, GATE, MANUAL, SKIP
from review_gate.models.report import summary_line
from review_gate.state.store import Store
from review_gate.state.times import utc_now


class Reporter(Protocol):
    def info(self, text: str) -> None: ...

    def warn(self, text: str) -> None: ...


@dataclass
class Steps:
    """A loop session's steps over one run state and working tree: ``Loop`` adds a person's commands."""

    store: Store
    root: Path
    config: ReviewConfig
    reporter: Reporter
    standards: str | None = None

    def files(self, session: Session) -> Files:
        return Files(self.root, session.task)

    def content(self, session: Session, stage: str | None = None) -> Path:
        return self.files(session).content(session.iteration, session.phase, stage or str(session.stage))

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

    def _accept(self, s: Session, actor: str, feedback: str | None, override: MetaVerdict | None = None,
                *, as_left: str | None = None) -> Session:
        """``as_left``: the review's digest before ``approve`` wrote the person's feedback or verdict
        into it (what an edit by hand is told from); the file's digest now when not given."""
        path = self.content(s)
        digest = sha256(path)  # at this moment: a person's edit counts
        if digest is None:
            raise no_file(path, self.files(s).shown(path), "write it, then run `review-gate loop approve` again")
        event = Event("approved", actor, self.files(s).shown(path), digest, feedback)
        if (s.phase, s.stage) == ("review", "response"):
            return self._decide(s, path, event, feedback, override, as_left or digest)
        phase, stage = after_approval(s.work_phase, s.stage)  # type: ignore[arg-type]
        self.reporter.info(f"{s.task}: {s.where} approved ({actor})")
        return self._commit(s, {"phase": phase, "stage": stage, "step": "work", "waiting": None, "attempt": 0,
                                "feedback": None, "carry": feedback}, [event])

    def _decide(self, s: Session, path: Path, event: Event, feedback: str | None,
                override: MetaVerdict | None, as_left: str) -> Session:
        gate = self._written_by_gate(s, path)
        # edited by hand: not what approve itself wrote (--feedback, --complete, --revise)
        edited = gate is not None and gate.sha256 != as_left
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
            if gate is not None and gate.detail and gate.detail.get("summary"):
                summary = str(gate.detail["summary"])  # the gate's words; the person's decision is the verdict
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
        return prompt_values(self.store, self.files(s), s, self.standards, self.config.settings.gate.fail_on)

    def _request(self, s: Session) -> dict[str, Any]:
        return approver_request(self.store, self.root, self.files(s), s, self.content(s))
