"""What a loop step is given: the values a prompt template is rendered with (the plan, the
feedback, the earlier findings, the review as a person edited it), and what an approver gets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from review_gate.errors import MetaError
from review_gate.judging.review_meta import parse_meta
from review_gate.loop import prompts
from review_gate.loop import store as sessions
from review_gate.loop.files import Files, read_text
from review_gate.loop.model import Session
from review_gate.loop.review import findings_of, gate_fail_on
from review_gate.loop.tree import changed_paths
from review_gate.models.loop import MANUAL
from review_gate.state.store import Store

OUTPUT_CAP = 20_000  # characters of an earlier output an approver is shown


def prompt_values(store: Store, files: Files, s: Session, standards: str | None, fail_on: str) -> dict[str, str]:
    """The values a prompt template is rendered with, at the session's phase."""
    phase = s.work_phase
    plan = read_text(files.content(1, "plan", "response")) if phase in ("generate", "revise") else None
    findings = ""
    earlier = sessions.decisions(store, s.task)
    if phase == "revise":
        review_file = files.content(s.iteration - 1, "review", "response")
        findings = prompts.findings_section(findings_of(files, s.iteration - 1), files.shown(review_file))
        findings = "\n\n".join(p for p in (findings, edited_review(store, files, s, review_file)) if p)
        earlier = [d for d in earlier if int(d.get("iteration", 0)) < s.iteration - 1]
    feedback = "\n\n".join(f for f in (s.carry, s.feedback) if f)
    return {
        "task_id": s.task, "iteration": str(s.iteration), "task": s.task_prompt.strip() or prompts.NO_TASK,
        "standards": prompts.section("Standards of this project", standards),
        "plan": prompts.section("The plan", plan), "feedback": prompts.section("Feedback", feedback),
        "findings": findings, "history": prompts.history_section(earlier),
        "base": (s.base or "the merge-base with the default branch")
        + (f" (commit {s.base_commit[:12]}, pinned when the session started)" if s.base_commit else ""),
        "fail_on": gate_fail_on(s) or fail_on,
    }

def edited_review(store: Store, files: Files, s: Session, review_file: Path) -> str:
    """The review as a person approved it, when they edited it after the gate wrote it."""
    shown = files.shown(review_file)
    made = [e.sha256 for e in sessions.events(store, s.task, "made") if e.file == shown]
    approved = [e for e in sessions.events(store, s.task, "approved") if e.file == shown]
    # A person's edit only: an automatic approval of a file changed behind the gate's back
    # was decided by the gate's own verdict, and what was written there is nobody's review.
    if not made or not approved or made[-1] == approved[-1].sha256 or approved[-1].actor != MANUAL:
        return ""
    try:
        body = parse_meta(read_text(review_file) or "").body
    except MetaError:
        return ""
    return prompts.section("The review, as edited by a person", body)

def approver_request(store: Store, root: Path, files: Files, s: Session, path: Path) -> dict[str, Any]:
    """What an approver gets: the content at ``path``, the changed files of a code stage, the context."""
    shown: dict[str, str | None] = {files.shown(path): read_text(path)}
    if s.stage == "response" and s.phase in ("generate", "revise"):
        for changed in changed_paths(root):
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
               "history": [d.get("feedback") for d in sessions.decisions(store, s.task)
                           if d.get("decision") == "NO_GO"]}
    return {"phase": s.phase, "stage": s.stage, "files": shown, "context": context}
