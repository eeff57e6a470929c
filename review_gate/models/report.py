"""Stages 5 and 6 output: what each agent did, and the merged report with its decision."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from review_gate.models.base import Frozen, UntrustedText
from review_gate.models.classification import PRClassification
from review_gate.models.config import Decision, FilterMode, Severity
from review_gate.models.findings import Finding
from review_gate.models.manifest import Gap, ManifestEntry

AgentStatus = Literal["completed", "failed", "timed_out", "cached", "skipped"]


class AgentResult(Frozen):
    id: str
    kind: str
    status: AgentStatus
    required: bool = True
    attempts: int = Field(ge=0)
    duration_s: float = Field(ge=0)
    files: list[str]
    error: UntrustedText | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    unreviewed: list[str] = Field(
        default_factory=list,
        description="Files of its scope the agent could not review (an llm agent's hunk over its token budget).",
    )
    out_of_scope: int = Field(default=0, ge=0, description="Findings dropped because their file was not in its scope.")
    findings: list[Finding] = Field(default_factory=list, exclude=True)
    raw: str | None = Field(
        default=None, exclude=True, repr=False,
        description="The agent's raw answer (a command's stdout, capped); written to replay bundles only.",
    )

    @property
    def broken(self) -> bool:
        """It ran and produced nothing usable."""
        return self.status in ("failed", "timed_out")

    @property
    def missing_input(self) -> bool:
        """A required agent that broke, could not run (skipped), or left files of its scope
        unreviewed: the review lacks its input, so the gate fails closed."""
        return self.required and (self.broken or self.status == "skipped" or bool(self.unreviewed))

    @property
    def left_unreviewed(self) -> list[str]:
        """Files of its scope a required agent did not review: all of them when it broke or did
        not run, else those it said it could not review."""
        if not self.required:
            return []
        return list(self.files) if self.broken or self.status == "skipped" else list(self.unreviewed)


class Metrics(Frozen):
    critical: int = 0
    major: int = 0
    warning: int = 0
    info: int = 0
    total: int = 0
    missing_inputs: int = 0
    unreviewed_files: int = 0
    risk_score: int = 0


class Usage(Frozen):
    """Model tokens and their cost, summed over the run's agents."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


class Coverage(Frozen):
    files_changed: int
    files_reviewed: int
    unreviewed: list[str] = Field(description="Changed files no completed agent covered.")
    findings_filtered: int = Field(
        description="Findings dropped by the filter mode because they are off the changed lines."
    )
    filter_mode: FilterMode
    nothing_to_review: bool = Field(description="True when the diff changed no file.")


class RuleInfo(Frozen):
    """A rule that fired, carried in the report so every output format can describe it."""

    id: str
    name: str
    agent: str
    severity: Severity
    category: str
    description: str
    detection: str
    recommendation: str


class ReviewReport(Frozen):
    schema_version: Literal[1] = 1
    tool_version: str
    run_id: str
    decision: Decision
    exit_code: int
    metrics: Metrics
    findings: list[Finding]
    waived: list[Finding] = Field(
        default_factory=list, description="Findings accepted or baselined: reported, not counted."
    )
    rules: list[RuleInfo] = Field(default_factory=list, description="The configured rules that fired.")
    agents: list[AgentResult]
    classification: PRClassification
    manifest: list[ManifestEntry]
    gaps: list[Gap]
    coverage: Coverage
    usage: Usage = Field(default_factory=Usage)
    source: str
