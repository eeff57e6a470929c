"""The review phase's AI: the gate itself, called through ``review_gate.api`` like any other
caller (all six stages on the current working tree, fresh review pairs reused from the run
state). Its report becomes the review response in the ``meta`` format, and what the revise
prompt and the decision log need (the findings) is kept beside it as JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from review_gate import api
from review_gate.change.intent import clip
from review_gate.loop.files import Files, read_text, write_text
from review_gate.loop.model import Session, Verdict
from review_gate.models import FailOn, ReviewReport
from review_gate.models.config import INTENT_UNMET
from review_gate.models.report import summary_line
from review_gate.outputs import renderer

FINDING_FIELDS = ("severity", "category", "file", "line", "end_line", "message", "recommendation", "rule_id",
                  "agent", "fingerprint")


def gate_fail_on(session: Session) -> FailOn | None:
    """The ``--fail-on`` of the session's reviews: with the exit condition ``review.warnings ==
    0``, a GO needs a gate that decided pass, so a warning already fails (``pass_with_warnings``)."""
    if session.settings.no_warning:
        return "pass_with_warnings"
    fail_on: FailOn | None = session.fail_on  # type: ignore[assignment]  # checked at loop start
    return fail_on


async def run_gate(root: Path, session: Session, *, cache: bool, own_runs: Sequence[str] = (),
                   intent: str | None = None) -> ReviewReport:
    """The gate on the working tree, against the session's pinned base commit itself (a session
    of an older schema has none: against ``--base`` or the default branch, as it was). Only the
    pairs of the session's own reviews (``own_runs``) are reused: a run its coder made, with a
    look-alike configuration or another environment, never stands in for one of them. Inline
    waivers the working tree adds to that base waive nothing here: the coder cannot waive its own
    findings (a person's waiver counts once it is on the base).
    ``intent``: what the llm reviewers are told the change is for (``loop.intent``)."""
    fail_on = gate_fail_on(session)
    told = clip(intent) if intent else None
    if session.base_commit is None:
        report = await api.review_async(cwd=root, base=session.base, config=session.config_dir, fail_on=fail_on,
                                        cache=cache, accepted_before=session.created_at, intent=told,
                                        reuse_only=own_runs, added_waivers=False)
    else:
        request = api.change(cwd=root, base=session.base_commit).model_copy(update={"exact_base": True})
        report = await api.review_async(request=request, config=session.config_dir, fail_on=fail_on, cache=cache,
                                        accepted_before=session.created_at, intent=told, reuse_only=own_runs,
                                        added_waivers=False)
    return held_to_criteria(report, session.settings.criteria_required)


def held_to_criteria(report: ReviewReport, required: bool = False) -> ReviewReport:
    """The report with a FAIL verdict (exit code 1) when the gate passed a change an llm reviewer
    judged not to meet the task's criteria (an intent-unmet finding that counts, of whatever
    severity the configuration gives it) or, ``required`` (the exit condition
    ``review.acceptance_criteria_met == true``), that no reviewer judged met: seed 001's GO
    means every criterion is met. The decision and the findings stay as the gate gave them."""
    if report.exit_code != 0:
        return report
    unmet = any(f.rule_id == INTENT_UNMET for f in report.findings)
    if unmet or (required and criteria(report)["met"] is not True):
        return report.model_copy(update={"exit_code": 1})
    return report


def config_changed(files: Files, session: Session, names: list[str], error: str | None) -> Path:
    """The review of a session whose configuration is not the one pinned at its start: FAIL
    (never GO, whatever the code), with one critical finding that tells the coder to restore it."""
    where = ", ".join(names) if names else "its content"
    what = f"it no longer loads ({error})" if error else f"changed: {where}"
    directory = session.config_dir or "the built-in configuration (a .review-gate/ directory appeared)"
    message = (f"the review configuration ({directory}) is not the one this loop session started with: {what}. "
               "The configuration is the trusted side of the loop: it is never changed to pass a review")
    fix = ("restore the configuration exactly as it was (e.g. git checkout -- <the files named>, or undo your "
           "edit) and fix the code instead; a person who means to change it cancels this session and starts a "
           "new one")
    finding = {"severity": "critical", "category": "config", "file": names[0] if names else None, "line": None,
               "end_line": None, "message": message, "recommendation": fix, "rule_id": "loop-config-pinned",
               "agent": "review-gate", "fingerprint": None}
    record = {"run_id": None, "decision": "fail", "verdict": "FAIL", "exit_code": 1,
              "summary": summary_line("FAIL", 1, 1, 0), "findings": [finding]}
    write_text(files, files.findings(session.iteration), json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    response = files.content(session.iteration, "review", "response")
    body = f"# review-gate: NO_GO, the configuration changed\n\n**critical** {message}.\n\nFix: {fix}.\n"
    write_text(files, response, "@@@REVIEW_META\nverdict: FAIL\nissues_total: 1\nissues_critical: 1\n"
                                "missing_inputs: 0\n@@@\n" + body)
    return response


def why_incomplete(report: ReviewReport) -> str:
    broken = [f"{a.id}: {a.error or a.status}" for a in report.agents if a.missing_input]
    broken += [f"{u.reason} (fix: {u.fix})" for u in report.coverage.not_inspected if u.counted]
    return (f"the review was incomplete twice (decision incomplete, run {report.run_id}): "
            + ("; ".join(broken) if broken else f"{report.metrics.unreviewed_files} file(s) unreviewed"))


def save(files: Files, session: Session, report: ReviewReport) -> Path:
    """Write the review response (meta format) and its findings; the response's path."""
    record = {
        "run_id": report.run_id, "decision": report.decision, "verdict": report.verdict,
        "exit_code": report.exit_code,
        "summary": summary_line(report.verdict, report.metrics.total, report.metrics.critical,
                                report.metrics.missing_inputs),
        "findings": [{k: getattr(f, k) for k in FINDING_FIELDS} for f in report.findings],
        "criteria": criteria(report),
    }
    write_text(files, files.findings(session.iteration), json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    response = files.content(session.iteration, "review", "response")
    write_text(files, response, renderer("meta")(report))
    return response


def criteria(report: ReviewReport) -> dict[str, Any]:
    """The llm reviewers' judgement of the change against the task: false when one found it not
    met, true when those that judged found it met, None when none judged (no llm reviewer ran,
    none was given the task, or every one was reused from the cache); who judged, and why."""
    judged = [a for a in report.agents if a.status == "completed" and a.criteria_met is not None]
    met = None if not judged else all(a.criteria_met for a in judged)
    return {"met": met, "by": [a.id for a in judged],
            "notes": [f"{a.id}: {a.criteria_note}" for a in judged if a.criteria_note]}


def verdict_of_gate(record: dict[str, Any]) -> Verdict | None:
    """The verdict the gate itself gave (its findings record), before any person's edit or override."""
    verdicts: dict[str, Verdict] = {"PASS": "GO", "FAIL": "NO_GO"}
    return verdicts.get(str(record.get("verdict")))


def findings_of(files: Files, iteration: int) -> dict[str, Any]:
    """The findings record the review of ``iteration`` left (empty when there is none)."""
    text = read_text(files.findings(iteration))
    try:
        record = json.loads(text) if text else {}
    except json.JSONDecodeError:
        record = {}
    return record if isinstance(record, dict) else {}
