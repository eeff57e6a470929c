"""The one finding format every agent produces (DESIGN §2)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from review_gate.models.base import Frozen, UntrustedText
from review_gate.models.config import Severity

TEXT_LIMIT = 4000  # characters of an agent's message or recommendation kept: it may quote a whole minified line


def _bounded(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT - 1] + "…"


BoundedText = Annotated[UntrustedText, AfterValidator(_bounded)]
"""An agent's text, cut to TEXT_LIMIT characters: a report holds thousands of findings."""


class Finding(Frozen):
    fingerprint: str
    agent: str
    rule_id: str | None = None
    severity: Severity
    category: str
    file: str | None
    line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    message: str
    recommendation: str | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)
    also_reported_by: list[str] = Field(
        default_factory=list, description="Other agents that reported the same problem."
    )
    waived: str | None = Field(
        default=None, description="Why this finding does not count: accepted by a person, or baselined."
    )


class RawFinding(Frozen):
    """A finding as an agent emits it, before the engine gives it an agent and a fingerprint."""

    severity: Severity
    message: BoundedText
    rule_id: UntrustedText | None = None
    category: UntrustedText | None = None
    file: UntrustedText | None = None
    line: int | None = None
    end_line: int | None = None
    recommendation: BoundedText | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)
