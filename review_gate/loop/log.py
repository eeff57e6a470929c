"""Seed 001's decision log: one JSON line per review decision, appended and fsynced to
``.review-gate/review-logs/<task>.jsonl``, never rewritten. The log is observability, not
state (the session's events in the run state are): a write that fails is a warning.

    >>> checks([{"severity": "major", "category": "injection"}], {"security_review_passed": ["injection"],
    ...                                                            "test_coverage_adequate": ["testing"]})
    {'security_review_passed': False, 'test_coverage_adequate': True}
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from review_gate.models import SEVERITY_RANK

BLOCKING = SEVERITY_RANK["major"]  # a check fails on a counted finding this severe or worse


def checks(findings: list[dict[str, Any]], mapping: dict[str, list[str]]) -> dict[str, bool]:
    """Each quality check: false when a major-or-worse finding falls in one of its categories ('*': any)."""
    severe = {str(f.get("category")) for f in findings if SEVERITY_RANK.get(str(f.get("severity")), 99) <= BLOCKING}
    return {name: not (("*" in categories and severe) or severe & set(categories))
            for name, categories in mapping.items()}


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
