"""The values the five configuration files share: severities and decisions (the severity order is
owned here), modes, ids, and the base model of a config file."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import ConfigDict, Field

from review_gate.models.base import Frozen, VersionOne

Severity = Literal["critical", "major", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
"""Most severe first: the order reports list findings in and the gate counts them."""
SEVERITY_RANK: dict[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES)}
BLOCKING: tuple[Severity, ...] = SEVERITIES[:2]
"""critical and major: what the built-in gate fails on (needs_fixes or worse), and so what asks
more before it is waived (a peer's bare suppression, a pre-existing match on part of a line)."""
Decision = Literal["fail", "incomplete", "needs_fixes", "pass_with_warnings", "pass"]
FilterMode = Literal["added", "diff_context", "file", "nofilter"]
Packing = Literal["per_agent", "agent_packed"]
UnreadPolicy = Literal["list", "incomplete"]
SubmodulePolicy = Literal["warn", "list", "incomplete"]
FailOn = Literal["pass_with_warnings", "needs_fixes", "fail", "never"]
PrType = Literal["feature", "fix", "refactor", "docs", "test", "config", "deps", "mixed"]
Metric = Literal[Severity, "total", "missing_inputs", "unreviewed_files", "agents_failed", "agents_skipped",
                 "waived_inline", "risk_score"]
InlineWaivers = Literal["honour", "report", "off"]
OnFailure = Literal["fail_closed", "fail_open"]

Id = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
Interpreter = Annotated[str, Field(min_length=1, max_length=60, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")]
Text = Annotated[str, Field(min_length=1)]


MAX_CONCURRENCY = 256  # agents at once, in review-gate.json and on the command line


class ConfigFile(Frozen):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    schema_: str | None = Field(default=None, alias="$schema")
    version: VersionOne = 1
