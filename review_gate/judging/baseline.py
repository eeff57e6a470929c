"""The committed baseline: findings that already exist and must not fail new work.

``review-gate baseline`` writes ``.review-gate/baseline.json``; every ``run`` loads it and
passes the fingerprints of its unexpired entries to aggregation as waivers (reason
``baselined``), so those findings are reported under ``waived`` and do not count. An entry's
``expires`` is the last day it applies (as for an acceptance); its finding counts again the day after.

The file is meant to be committed: entries are sorted and the JSON is written the same way
every time, so a regenerated baseline diffs cleanly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import ValidationError

from review_gate.config.load import read_json
from review_gate.config.messages import pointer
from review_gate.errors import BaselineError, ConfigProblem, ReviewGateError, UsageError
from review_gate.models import Finding, Severity, Waiver
from review_gate.models.base import Frozen

T = TypeVar("T")
FILE_NAME = "baseline.json"
REASON = "baselined"
_FIX = "regenerate it with `review-gate baseline`, or fix the entry by hand"


class BaselineEntry(Frozen):
    fingerprint: str
    rule_id: str | None
    agent: str
    severity: Severity
    file: str | None
    line: int | None
    message: str
    expires: date | None = None

    def expired(self, today: date) -> bool:
        """``expires`` is the last day the entry applies; its finding counts again the day after.

        >>> entry = BaselineEntry(fingerprint="f", rule_id=None, agent="a", severity="info", file=None,
        ...                       line=None, message="m", expires=date(2030, 1, 31))
        >>> entry.expired(date(2030, 1, 31)), entry.expired(date(2030, 2, 1))
        (False, True)
        """
        return self.expires is not None and today > self.expires


class Baseline(Frozen):
    version: Literal[1] = 1
    created: datetime
    tool_version: str
    findings: list[BaselineEntry]

    def waivers(self, today: date | None = None) -> dict[str, Waiver]:
        """Fingerprint -> ``baselined`` for every entry that has not expired."""
        day = today or date.today()
        return {e.fingerprint: Waiver(kind="baseline", reason=REASON) for e in self.findings if not e.expired(day)}


def _sort_key(entry: BaselineEntry) -> tuple[str, int, str, str, str]:
    return (entry.file or "", entry.line or 0, entry.rule_id or "", entry.agent, entry.fingerprint)


def from_findings(findings: Iterable[Finding], tool_version: str, expires: date | None = None,
                  created: datetime | None = None) -> Baseline:
    entries = {f.fingerprint: BaselineEntry(
        fingerprint=f.fingerprint, rule_id=f.rule_id, agent=f.agent, severity=f.severity, file=f.file,
        line=f.line, message=f.message, expires=expires) for f in findings}
    return Baseline(created=(created or datetime.now(timezone.utc)).replace(microsecond=0),
                    tool_version=tool_version, findings=sorted(entries.values(), key=_sort_key))


def render(baseline: Baseline) -> str:
    """The exact text written: sorted entries, two-space indent, a final newline."""
    data = baseline.model_dump(mode="json")
    data["findings"] = [e.model_dump(mode="json") for e in sorted(baseline.findings, key=_sort_key)]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def save(baseline: Baseline, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(baseline), encoding="utf-8", newline="\n")
    except OSError as exc:
        raise ReviewGateError(f"cannot write the baseline {path}: {exc.strerror}",
                              fix="choose a writable path with --output FILE") from exc


def load(path: Path) -> Baseline:
    """Read and check a baseline file; a problem is a BaselineError (exit 2) naming the file."""
    return parse(read_json(path, str(path), error=BaselineError), str(path))


def parse(data: object, display: str) -> Baseline:
    try:
        return Baseline.model_validate(data)
    except ValidationError as exc:
        problems = [ConfigProblem(display, pointer(e["loc"]), e["msg"], _FIX) for e in exc.errors()]
        raise BaselineError(problems) from exc


def candidates(explicit: str | None, disabled: bool, config_dir: str | None, repo_root: Path | None) -> list[Path]:
    """Where a run looks for its baseline, in order: ``--baseline FILE``, else baseline.json in the
    config directory in use, else ``.review-gate/baseline.json`` at the repository root; nothing
    with ``--no-baseline``."""
    if disabled:
        if explicit is not None:
            raise UsageError("--baseline and --no-baseline contradict each other", fix="give one of them")
        return []
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise UsageError(f"--baseline {explicit}: {'a directory' if path.is_dir() else 'no such file'}",
                             fix="write one with `review-gate baseline --output FILE`")
        # Checked now, as named: the run may never read it (nothing to review, or a file inside
        # the repository that is read as the base commit has it), and a broken file named on
        # the command line must not pass silently.
        load(path)
        return [path]
    found = [Path(config_dir) / FILE_NAME] if config_dir is not None else []
    if repo_root is not None:
        found.append(repo_root / ".review-gate" / FILE_NAME)
    return found


def read_trusted(paths: list[Path], base: str | None, in_repo: Callable[[Path], str | None],
                 show: Callable[[str, str], bytes | None]) -> Baseline | None:
    """The first baseline found among ``paths``, read where the change cannot have touched it.

    A file inside the repository is read as the base commit has it (``show(base, path)``), so
    a baseline the reviewed change adds or edits never waives that change's findings; without
    a base commit (a diff file) such a file is not used at all. A file outside the repository
    (a trusted config directory, ``--baseline`` elsewhere) is read as it is.
    """
    return trusted(paths, base, in_repo, show, parse)


def trusted(paths: list[Path], base: str | None, in_repo: Callable[[Path], str | None],
            show: Callable[[str, str], bytes | None], parsed: Callable[[object, str], T]) -> T | None:
    """``read_trusted`` for any committed file the gate reads from the trusted side (the shared
    acceptances too): ``parsed(data, display)`` builds it from its JSON."""
    for path in paths:
        relative = in_repo(path)
        if relative is None:
            if path.is_file():
                return parsed(read_json(path, str(path), error=BaselineError), str(path))
            continue
        data = show(base, relative) if base is not None else None
        if data is not None:
            display = f"{relative} (at {base[:12]})" if base else relative
            return parsed(json_from_bytes(data, display), display)
    return None


def json_from_bytes(data: bytes, display: str) -> object:
    import tempfile

    # read_json reads files; the base side's copy goes through the same checks and messages.
    with tempfile.TemporaryDirectory(prefix="review-gate-") as tmp:
        copy = Path(tmp) / FILE_NAME
        copy.write_bytes(data)
        return read_json(copy, display, error=BaselineError)
