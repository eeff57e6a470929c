"""Dimension verdicts -> findings: seed 004's severity mapping for agents that audit dimensions. Pure.

An agent that judges a change along named dimensions (seed 004's design-auditor: 15 UI and
accessibility dimensions) answers one verdict per dimension, each ``pass``, ``warn`` or
``fail``, with where and why. Its ``dimensions`` mapping (``models.DimensionMapping``) turns
them into findings: by default a failed dimension is a ``major`` finding, a warning a
``warning`` one, a pass none; and when 3 or more distinct dimensions fail, the most severe
finding (the first reported among equals) is raised to ``critical``. Command agents
(``output: "dimensions"``) and llm agents (``dimensions`` set) share this one mapping.

    >>> from review_gate.models import DimensionMapping
    >>> verdicts = read({"dimensions": [
    ...     {"dimension": "contrast", "verdict": "Fail", "message": "grey on grey"},
    ...     {"dimension": "focus", "verdict": "Warn", "message": "outline removed"},
    ...     {"dimension": "layout", "verdict": "Pass", "message": None}]}, [])
    >>> [(f.severity, f.category) for f in findings(verdicts, DimensionMapping())]
    [('major', 'contrast'), ('warning', 'focus')]
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from pydantic import Field, ValidationError, field_validator

from review_gate.models import SEVERITY_RANK, DimensionMapping, DimensionVerdict, RawFinding
from review_gate.models.base import Frozen, UntrustedText

MAX_NAME = 100


class MalformedVerdicts(ValueError):
    """The answer is not dimension verdicts; the message says what is wrong and where."""


class Verdict(Frozen):
    """One dimension judged: its verdict, and where and why."""

    dimension: str = Field(min_length=1, max_length=MAX_NAME)
    verdict: DimensionVerdict
    message: UntrustedText | None = None
    file: UntrustedText | None = None
    line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    recommendation: UntrustedText | None = None
    rule_id: UntrustedText | None = Field(default=None, max_length=MAX_NAME)

    @field_validator("verdict", mode="before")
    @classmethod
    def _any_case(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value  # Pass, WARN, fail


def items(data: Any) -> list[Any]:
    """The verdict list of an answer: ``{"dimensions": [...]}`` or a bare list."""
    found = data.get("dimensions") if isinstance(data, dict) else data
    if not isinstance(found, list):
        raise MalformedVerdicts('expected {"dimensions": [...]}: a list of verdicts, each with dimension, '
                                "verdict (pass, warn or fail) and message")
    return found


def read(data: Any, names: Sequence[str]) -> list[Verdict]:
    """Every verdict of ``data``, strictly: the first malformed one raises MalformedVerdicts (a
    command agent's output is a program's, and a broken program must not pass for a clean one).
    ``names``: the dimensions the agent judges (empty: any)."""
    verdicts = []
    for index, item in enumerate(items(data)):
        if not isinstance(item, dict):
            raise MalformedVerdicts(f"verdict {index} is not a JSON object")
        try:
            verdict = Verdict.model_validate(item)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "verdict"
            raise MalformedVerdicts(f"verdict {index}: {field}: {err['msg']}") from exc
        verdicts.append(checked(verdict, names, f"verdict {index}"))
    return verdicts


def checked(verdict: Verdict, names: Sequence[str], where: str) -> Verdict:
    """``verdict`` with its dimension spelled as ``names`` spell it; MalformedVerdicts when it
    names another dimension, or fails or warns without saying why."""
    if names:
        known = {name.lower(): name for name in names}
        name = known.get(verdict.dimension.strip().lower())
        if name is None:
            raise MalformedVerdicts(f"{where}: unknown dimension {verdict.dimension[:MAX_NAME]!r}; expected one of: "
                                    + ", ".join(names))
        verdict = verdict.model_copy(update={"dimension": name})
    if verdict.verdict != "pass" and not (verdict.message or "").strip():
        raise MalformedVerdicts(f"{where}: a {verdict.verdict} verdict needs a message saying what is wrong")
    return verdict


def failed(verdicts: Sequence[Verdict]) -> list[str]:
    """The distinct dimensions that failed, in the order first reported."""
    return list(dict.fromkeys(v.dimension for v in verdicts if v.verdict == "fail"))


def mapped(verdicts: Sequence[Verdict], mapping: DimensionMapping) -> list[RawFinding]:
    """One finding a verdict whose severity the mapping gives (none for a pass, by default)."""
    out = []
    for v in verdicts:
        severity = mapping.severity.of(v.verdict)
        if severity is None:
            continue
        message = (v.message or "").strip() or f"dimension {v.dimension}: {v.verdict}"
        out.append(RawFinding(severity=severity, message=message, category=v.dimension, file=v.file, line=v.line,
                              end_line=v.end_line, recommendation=v.recommendation, rule_id=v.rule_id))
    return out


def escalate(found: Sequence[RawFinding], failed_dimensions: Collection[str],
             mapping: DimensionMapping) -> list[RawFinding]:
    """Raise the most severe finding (the first reported among equals) to ``escalate.to`` when at
    least ``escalate.failed_at_least`` distinct dimensions failed; never lower one. The reason
    goes before its recommendation: the message (which a fingerprint may hash) stays as it was."""
    rule = mapping.escalate
    out = list(found)
    if rule is None or len(failed_dimensions) < rule.failed_at_least or not out:
        return out
    worst = min(range(len(out)), key=lambda i: SEVERITY_RANK[out[i].severity])
    finding = out[worst]
    if SEVERITY_RANK[finding.severity] <= SEVERITY_RANK[rule.to]:
        return out
    why = (f"Raised from {finding.severity} to {rule.to}: {len(failed_dimensions)} dimensions failed "
           f"({', '.join(failed_dimensions)}).")
    out[worst] = finding.model_copy(update={
        "severity": rule.to,
        "recommendation": why + (f" {finding.recommendation}" if finding.recommendation else "")})
    return out


def findings(verdicts: Sequence[Verdict], mapping: DimensionMapping) -> list[RawFinding]:
    """The findings of one whole answer: mapped, then escalated."""
    return escalate(mapped(verdicts, mapping), failed(verdicts), mapping)


__all__ = ["MalformedVerdicts", "Verdict", "checked", "escalate", "failed", "findings", "items", "mapped", "read"]
