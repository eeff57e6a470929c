"""Stages 1-4 together: what the change is, how it is classified, who reviews it, what the config missed."""

from __future__ import annotations

from pydantic import Field

from review_gate.models.base import Frozen
from review_gate.models.classification import PRClassification
from review_gate.models.facts import PRFacts
from review_gate.models.findings import Finding
from review_gate.models.manifest import AgentManifest, Gap


class Plan(Frozen):
    facts: PRFacts
    classification: PRClassification
    manifest: AgentManifest
    gaps: list[Gap]
    left_out: int = Field(default=0, ge=0, description="Changed files left out as review-gate's own (gaps say which); "
                                                        "not those scanned by the secret rules only (secrets_only).")
    own_file_findings: list[Finding] = Field(
        default_factory=list, description="Problems in the gate's own files as the change leaves them "
                                          "(review_gate.judging.own_file_checks): findings of the gate itself.")
