"""Seed 001's decision log: one JSON line per review decision, appended and fsynced to
``.review-gate/review-logs/<task>.jsonl``, never rewritten. The log is observability, not
state (the session's events in the run state are): a write that fails is a warning.
``review_log`` reads it back as seed 001's object for a task (``loop log --format json``).

    >>> checks([{"severity": "major", "category": "injection"}], {"security_review_passed": ["injection"],
    ...                                                            "test_coverage_adequate": ["testing"]})
    {'security_review_passed': False, 'test_coverage_adequate': True}
    >>> quality_checks({"findings": [], "criteria": {"met": None}}, {"test_coverage_adequate": ["testing"]})
    {'acceptance_criteria_met': 'not judged', 'test_coverage_adequate': True}
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from review_gate.models import SEVERITY_RANK
from review_gate.models.loop import CRITERIA_CHECK, NOT_JUDGED

BLOCKING = SEVERITY_RANK["major"]  # a check fails on a counted finding this severe or worse


def checks(findings: list[dict[str, Any]], mapping: dict[str, list[str]]) -> dict[str, bool]:
    """Each quality check: false when a major-or-worse finding falls in one of its categories ('*': any)."""
    severe = {str(f.get("category")) for f in findings if SEVERITY_RANK.get(str(f.get("severity")), 99) <= BLOCKING}
    return {name: not (("*" in categories and severe) or severe & set(categories))
            for name, categories in mapping.items()}


def quality_checks(record: dict[str, Any], mapping: dict[str, list[str]]) -> dict[str, bool | str]:
    """A review's quality checks: acceptance_criteria_met, the llm reviewers' judgement of the
    change against the task (``criteria`` of its findings record; "not judged" when none judged
    it), then each check of ``mapping`` from the findings' categories."""
    met = (record.get("criteria") or {}).get("met")
    criteria: bool | str = met if isinstance(met, bool) else NOT_JUDGED
    return {CRITERIA_CHECK: criteria, **checks(record.get("findings") or [], mapping)}


def append(path: Path, record: dict[str, Any]) -> str | None:
    """Append ``record`` as one line and sync it; the reason on failure (the caller warns)."""
    line = (json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Without blocking: a FIFO planted at the log's path fails the open (no reader) or the
        # type check, never waits for a reader.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0),
                     0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return f"cannot append to the decision log {path}: it is not a regular file"
            os.set_blocking(fd, True)
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"cannot append to the decision log {path}: {exc.strerror or exc}"
    return None


OVERLAY = "agentic_review"
ITERATION_FIELDS = ("iteration", "decision", "feedback", "timestamp", "quality_checks", "decided_by",
                    "review_decision", "run_id", "summary", "approver")


def read(path: Path) -> list[dict[str, Any]]:
    """The records of a decision log, oldest first; a line that is not a JSON object (a write
    torn by a crash) is skipped, as a reader of an append-only log must."""
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return []
    records = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def review_log(task: str, records: list[dict[str, Any]], session_id: str | None) -> dict[str, Any]:
    """Seed 001's review log of ``task`` from its decision records: those of session
    ``session_id`` (a task started again with --restart appends to the same file), each
    iteration's decision, feedback, time stamp and quality checks, and the final decision with
    when it was made (None while the session has none: still iterating, or cancelled)."""
    mine = [r for r in records if r.get("task_id") == task and r.get("session_id") == session_id]
    final = next((r for r in reversed(mine) if r.get("final")), None)
    coders = [str(r["coder_agent"]) for r in mine if r.get("coder_agent")]
    return {
        "task_id": task, "overlay": OVERLAY, "session_id": session_id,
        "reviewer_agent": str(mine[-1].get("reviewer_agent")) if mine else None,
        "coder_agent": coders[-1] if coders else None,
        "iterations": [{k: r[k] for k in ITERATION_FIELDS if k in r} for r in mine],
        "final_decision": final.get("decision") if final else None,
        "completed_at": final.get("timestamp") if final else None,
        "handoff": bool(final and final.get("handoff")),
    }
