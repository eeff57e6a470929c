"""Stages 5 and 6 output: what each agent did, and the merged report with its decision."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from review_gate.models.base import Frozen, UntrustedText, VersionOne
from review_gate.models.classification import PRClassification
from review_gate.models.config_values import Decision, FilterMode, OnFailure, Severity
from review_gate.models.facts import UnreadKind
from review_gate.models.findings import Finding
from review_gate.models.manifest import Gap, ManifestEntry
from review_gate.models.usage import (
    CACHE_WRITE_TOKENS_IN,
    CACHED_TOKENS_IN,
    REASONING_TOKENS,
    UNPRICED_TOKENS,
    Usage,
)

AgentStatus = Literal["completed", "failed", "timed_out", "cached", "skipped"]
ReviewedBy = Literal["host sub-agent"]
HOST_REVIEWER: ReviewedBy = "host sub-agent"

MAX_NOTES = 20
NOTE_CHARS = 200


def summary_line(verdict: str, total: int, critical: int, missing_inputs: int) -> str:
    """The one line every run prints (DESIGN §7), for people and for agents that grep; a
    @@@REVIEW_META block reads back as the same line.

    >>> summary_line("PASS", 3, 0, 0)
    'REVIEW: PASS | issues=3 (critical=0) | missing_inputs=0'
    """
    return f"REVIEW: {verdict} | issues={total} (critical={critical}) | missing_inputs={missing_inputs}"


def bounded_notes(notes: list[str]) -> list[str]:
    """At most MAX_NOTES notes of at most NOTE_CHARS characters; the last one counts what was left out."""
    cut = [n if len(n) <= NOTE_CHARS else n[:NOTE_CHARS - 1] + "…" for n in notes]
    if len(cut) <= MAX_NOTES:
        return cut
    return [*cut[:MAX_NOTES - 1], f"… and {len(cut) - MAX_NOTES + 1} more notes"]


ToolArgument = UntrustedText | int | float | bool | None | list[UntrustedText]


class ToolCall(Frozen):
    """One call an llm agent's model made to a repository tool, as the agent answered it."""

    tool: UntrustedText = Field(description="The tool the model asked for (read_file, grep, list_files).")
    arguments: dict[str, ToolArgument] = Field(
        default_factory=dict, description="The arguments it gave, strings and lists cut to a bounded size.")
    bytes: int = Field(default=0, ge=0, description="Bytes of the answer sent back to the model.")
    refused: bool = Field(default=False, description="True when the answer was an error instead of content.")
    reason: UntrustedText | None = Field(
        default=None, description="Why it was refused (outside the repository, a private path, too large...).")


class DroppedFinding(Frozen):
    """A finding an agent's model reported about a file outside the scope of every reviewer of
    its request: not counted, shown with its severity."""

    severity: Severity
    file: UntrustedText
    message: UntrustedText = Field(description="The finding's message, cut to 200 characters.")


AbsenceMetric = Literal["agents_failed", "agents_skipped"]


class Absent(Frozen):
    """An agent the change was routed to that did not review all of it, and why."""

    agent: str
    status: AgentStatus
    reason: UntrustedText = Field(description="Why: its error, the files it left unreviewed, or the critical "
                                              "finding it dropped.")
    counted: AbsenceMetric = Field(description="The gate metric it counts in: agents_failed (it was run and "
                                               "failed) or agents_skipped (it did not run, or fails open).")
    required: bool = Field(description="A required agent: it counts in missing_inputs too.")
    fails_open: bool = Field(default=False, description="Its on_failure is fail_open: a failure counts as a skip.")


class AgentResult(Frozen):
    id: str
    kind: str
    status: AgentStatus
    required: bool = True
    on_failure: OnFailure = Field(
        default="fail_closed",
        description="fail_open: this optional agent's failure counts in agents_skipped, not agents_failed.")
    attempts: int = Field(ge=0)
    duration_s: float = Field(ge=0)
    files: list[str]
    error: UntrustedText | None = None
    disabled: bool = Field(
        default=False,
        description="Turned off, not skipped: the trusted configuration switches it off (enabled: false) or the "
                    "person ran --offline and it needs the network (its error says which). Listed, never counted "
                    "as an agent that did not review (agents_skipped, did_not_review), unless no other agent "
                    "reviewed a file only it was routed to.")
    tokens_in: int = Field(default=0, description="Input tokens, those of failed attempts included.")
    tokens_out: int = Field(default=0, description="Output tokens, those of failed attempts included.")
    cost_usd: float = 0.0
    cached_tokens_in: int = Field(default=0, ge=0, description=CACHED_TOKENS_IN)
    cache_write_tokens_in: int = Field(default=0, ge=0, description=CACHE_WRITE_TOKENS_IN)
    reasoning_tokens: int = Field(default=0, ge=0, description=REASONING_TOKENS)
    unpriced_tokens: int = Field(default=0, ge=0, description=UNPRICED_TOKENS)
    unreviewed: list[str] = Field(
        default_factory=list,
        description="Files of its scope the agent could not review (an llm agent's hunk over its token budget).",
    )
    out_of_scope: int = Field(default=0, ge=0, description="Findings dropped because their file was not in its scope.")
    out_of_scope_findings: list[DroppedFinding] = Field(
        default_factory=list, max_length=20,
        description="Those findings (at most 20), with their severity: about a file no reviewer of the request had "
                    "in scope. A critical one among them means the agent's review is incomplete.")
    dropped_findings: int = Field(
        default=0, ge=0,
        description="Findings of the answer dropped because they lacked a severity or a message (or had an "
                    "unknown severity); the rest of the answer stands.",
    )
    notes: list[UntrustedText] = Field(
        default_factory=list, max_length=MAX_NOTES,
        description="What was corrected in the agent's answer (a field out of range clamped, a wrong-typed "
                    "optional field dropped, a finding dropped), at most 20 short lines.",
    )
    tool_calls: list[ToolCall] = Field(
        default_factory=list,
        description="What an llm agent with tools asked to read and what it was answered, in order.",
    )
    criteria_met: bool | None = Field(
        default=None,
        description="Given the change's intent (--intent; a loop's task), an llm agent's judgement whether the "
                    "change does what it says: true, false, or null when it was not asked or could not tell.",
    )
    criteria_note: UntrustedText | None = Field(default=None, description="Why, in the agent's words (bounded).")
    reviewed_by: ReviewedBy | None = Field(
        default=None,
        description="Who answered an llm agent's requests when not its provider: `host sub-agent`, a self-review "
                    "by the reviewed coding agent's own host (review-gate --llm host). Its findings add to the "
                    "others'; it never lowers them.")
    findings: list[Finding] = Field(default_factory=list, exclude=True)
    raw: str | None = Field(
        default=None, exclude=True, repr=False,
        description="The agent's raw answer (a command's stdout, capped); written to replay bundles only.",
    )
    prompts: list[dict[str, str]] = Field(
        default_factory=list, exclude=True, repr=False,
        description="What an llm agent sent (system and user message a request); written to replay bundles only.",
    )

    @property
    def usage(self) -> Usage:
        return Usage(tokens_in=self.tokens_in, tokens_out=self.tokens_out, cost_usd=self.cost_usd,
                     cached_tokens_in=self.cached_tokens_in, cache_write_tokens_in=self.cache_write_tokens_in,
                     reasoning_tokens=self.reasoning_tokens, unpriced_tokens=self.unpriced_tokens)

    @property
    def broken(self) -> bool:
        """It ran and produced nothing usable."""
        return self.status in ("failed", "timed_out")

    @property
    def missing_input(self) -> bool:
        """A required agent that broke, could not run (skipped), left files of its scope
        unreviewed or dropped a critical finding: the review lacks its input, so the gate fails
        closed."""
        return self.required and self.absence is not None

    @property
    def dropped_critical(self) -> DroppedFinding | None:
        return next((d for d in self.out_of_scope_findings if d.severity == "critical"), None)

    @property
    def absence(self) -> Absent | None:
        """How it did not review all it was given (None: it did): skipped (it did not run),
        failed or timed out, left files unreviewed, or dropped a critical finding. A failure of
        an agent that fails open counts as a skip. An agent the team switched off is no reviewer
        that broke: not an absence."""
        if self.disabled:
            return None
        if self.status == "skipped":
            return self._absent("agents_skipped", self.error or "it did not run")
        if self.broken:
            reason = self.error or self.status.replace("_", " ")
        elif self.unreviewed:
            shown = ", ".join(self.unreviewed[:3]) + (f" and {len(self.unreviewed) - 3} more"
                                                     if len(self.unreviewed) > 3 else "")
            reason = f"left {len(self.unreviewed)} file(s) unreviewed: {shown}"
        elif (dropped := self.dropped_critical) is not None:
            reason = (f"dropped a critical finding about {dropped.file}, a file outside the scope of every "
                      f"reviewer of its request: {dropped.message}")
        else:
            return None
        fails_open = self.on_failure == "fail_open" and not self.required
        return self._absent("agents_skipped" if fails_open else "agents_failed", reason, fails_open)

    def _absent(self, counted: AbsenceMetric, reason: str, fails_open: bool = False) -> Absent:
        return Absent(agent=self.id, status=self.status, reason=reason, counted=counted, required=self.required,
                      fails_open=fails_open)

    @property
    def left_unreviewed(self) -> list[str]:
        """Files of its scope a required agent did not review: all of them when it broke or did
        not run, else those it said it could not review."""
        if not self.required or self.disabled:
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
    agents_failed: int = Field(
        default=0, ge=0, description="Agents that were run (key present, not --offline) and failed, timed out, left "
                                     "files unreviewed or dropped a critical finding; not those that fail open.")
    agents_skipped: int = Field(
        default=0, ge=0, description="Agents the change was routed to that should have run and did not (no "
                                     "key, the run budget, no turn before the deadline), and those that fail "
                                     "open and failed; not those turned off (enabled: false, --offline).")
    waived_inline: int = Field(default=0, description="Findings waived by inline waivers the change adds.")
    risk_score: int = 0


def absences(agents: list[AgentResult]) -> list[Absent]:
    """The agents that did not review all they were given, in order, with why."""
    return [absent for agent in agents if (absent := agent.absence) is not None]


def absence_counts(agents: list[AgentResult]) -> dict[AbsenceMetric, int]:
    """agents_failed and agents_skipped, for the metrics."""
    found = absences(agents)
    return {"agents_failed": sum(1 for a in found if a.counted == "agents_failed"),
            "agents_skipped": sum(1 for a in found if a.counted == "agents_skipped")}


class NotInspected(Frozen):
    """A changed file whose new content no agent was shown (docs/security.md, "Fail closed")."""

    path: UntrustedText
    kind: UnreadKind
    reason: UntrustedText = Field(description="What no agent was shown, and why.")
    fix: UntrustedText = Field(default="", description="How to have it reviewed, or the review-gate.json "
                                                       "setting that decides whether it counts.")
    counted: bool = Field(
        description="True when it counts against the gate: a missing input, and listed as unreviewed. A binary "
                    "file does not unless review-gate.json's binary_files is incomplete; a submodule does unless "
                    "submodules is list; unreadable content always does.")


class Coverage(Frozen):
    files_changed: int
    files_reviewed: int = Field(description="Changed files every required agent reviewed and whose content they "
                                            "were shown.")
    unreviewed: list[str] = Field(description="Changed files no completed agent covered, that a required agent "
                                              "did not review, or whose unread content counts against the gate.")
    not_inspected: list[NotInspected] = Field(
        default_factory=list,
        description="Changed files whose new content no agent was shown: binary files, submodules, and content "
                    "that could not be read.")
    findings_filtered: int = Field(
        description="Findings dropped by the filter mode because they are off the changed lines."
    )
    filter_mode: FilterMode
    nothing_to_review: bool = Field(description="True when no changed file was left to review.")
    files_left_out: int = Field(
        default=0, ge=0,
        description="Changed files left out of the review as review-gate's own: its configuration, baseline, "
                    "run state, loop files and the reports it wrote. Their changes are listed as gaps.")

    def left_out_note(self, nothing: str) -> str | None:
        """The line a report gives about what it did not review: ``nothing`` (the format's own
        words) when the change touched no file, how many of the gate's own files were left out
        when there were any, else None. "Nothing to review" alone would hide those files."""
        if not self.files_left_out:
            return nothing if self.nothing_to_review else None
        count = (f"{self.files_left_out} of review-gate's own files left out of the review (its configuration, "
                 "baseline, run state, loop files or reports it wrote; a change to the first four is a gap)")
        if self.nothing_to_review:
            return f"Nothing to review: the change touches only review-gate's own files; {count}."
        return count[0].upper() + count[1:] + "."


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


class ShardInfo(Frozen):
    """One share of a sharded run (``--shard K/N``) and the identity of the whole it belongs to:
    ``review-gate merge`` combines the N reports of one change and one configuration only."""

    index: int = Field(ge=1, description="K of --shard K/N.")
    count: int = Field(ge=1, description="N of --shard K/N.")
    change_sha: str = Field(description="SHA of the whole change as planned (every file's path and diff), "
                                        "the same in every shard of it.")
    config_sha: str = Field(description="SHA of the configuration the run used.")
    files: list[str] = Field(description="The files of this shard's share.")
    sizes: dict[str, int] = Field(
        default_factory=dict, description="How the assignment was computed: every file of the whole change as "
                                          "planned, with the bytes the balance weighs it by. `merge` computes the "
                                          "shares again from these and N and checks each shard against its own.")


class ReviewReport(Frozen):
    schema_version: VersionOne = 1
    tool_version: str
    run_id: str
    decision: Decision
    exit_code: int
    metrics: Metrics
    findings: list[Finding]
    waived: list[Finding] = Field(
        default_factory=list, description="Findings accepted, baselined or pre-existing: reported, not counted."
    )
    rules: list[RuleInfo] = Field(default_factory=list, description="The configured rules that fired.")
    agents: list[AgentResult]
    did_not_review: list[Absent] = Field(
        default_factory=list,
        description="The agents the change was routed to that did not review all of it (skipped, failed, timed "
                    "out, files left unreviewed, a critical finding dropped), each with why and the gate metric it "
                    "counts in.")
    classification: PRClassification
    manifest: list[ManifestEntry]
    gaps: list[Gap]
    coverage: Coverage
    usage: Usage = Field(default_factory=Usage)
    source: str
    shard: ShardInfo | None = Field(
        default=None, description="Set on the report of one shard of a sharded run (--shard K/N).")

    @property
    def waived_in_change(self) -> list[Finding]:
        """The findings an inline comment the change adds waives: what a person reviewing the
        change must see (counted in ``metrics.waived_inline``)."""
        return [f for f in self.waived if f.inline_waiver is not None and f.inline_waiver.added]

    @property
    def waived_by_people(self) -> list[Finding]:
        """The findings a person accepted (for themselves or the team) or a committed baseline
        lists: waived from outside the change, not by a comment in it, not merely old, and not
        skipped where its rule does not apply (its path class, a context, once in its file)."""
        return [f for f in self.waived if f.inline_waiver is None and not f.preexisting
                and f.waived_kind not in ("path_class", "context", "once_per_file")]

    @property
    def verdict(self) -> str:
        """Seed 000's verdict: PASS exactly when the run exits 0, else FAIL."""
        return "PASS" if self.exit_code == 0 else "FAIL"
