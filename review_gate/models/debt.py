"""Deferred debt: a finding a passing gate let through, kept across runs by fingerprint
(``state/debt.py`` records them; ``review-gate debt`` lists them and drafts their issues)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from review_gate.models.base import Frozen, UntrustedText
from review_gate.models.config_values import FilterMode, Severity

DebtStatus = Literal["open", "resolved", "waived"]


class DebtItem(Frozen):
    id: int = Field(ge=1, description="The item's number, which `review-gate debt link ID URL` takes.")
    fingerprint: str
    status: DebtStatus = Field(description="open; resolved (a later run reviewed its lines and no longer reported "
                                           "it); waived (accepted or baselined since).")
    severity: Severity
    agent: str
    rule_id: UntrustedText | None = None
    category: UntrustedText
    file: UntrustedText | None = None
    line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    message: UntrustedText
    recommendation: UntrustedText | None = None
    first_seen: str = Field(description="When a run first deferred it (UTC, ISO 8601).")
    first_run: str
    last_seen: str = Field(description="When a run last reported it.")
    last_run: str
    runs: int = Field(ge=1, description="How many recorded runs reported it.")
    base: str | None = Field(default=None, description="The base commit of the run that last reported it.")
    filter_mode: FilterMode = Field(description="The filter mode of the run that last reported it.")
    closed_at: str | None = None
    closed_run: str | None = None
    resolution: UntrustedText | None = Field(default=None, description="Why it was resolved or waived.")
    issue_url: str | None = Field(default=None, description="The issue opened for it, once linked.")
    linked_at: str | None = None
    linked_by: str | None = None
