"""The one finding format every agent produces (DESIGN §2)."""

from __future__ import annotations

from pydantic import Field

from review_gate.models.base import Frozen, UntrustedText
from review_gate.models.config import Severity

PREEXISTING = "pre-existing"
"""How the reason of a finding that is not new starts (``waived``)."""


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
        default=None, description="Why this finding does not count: accepted by a person, baselined, or "
                                  "pre-existing (its rule fires on the same line before the change).")

    @property
    def preexisting(self) -> bool:
        """Listed because its rule fired on the same line before the change: old, not waived by anyone."""
        return (self.waived or "").startswith(PREEXISTING)


class RawFinding(Frozen):
    """A finding as an agent emits it, before the engine gives it an agent and a fingerprint."""

    severity: Severity
    message: UntrustedText
    rule_id: UntrustedText | None = None
    category: UntrustedText | None = None
    file: UntrustedText | None = None
    line: int | None = None
    end_line: int | None = None
    recommendation: UntrustedText | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)
