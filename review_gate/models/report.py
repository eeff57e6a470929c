"""Stages 5 and 6 output: what each agent did, and the merged report with its decision."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from review_gate.models.base import Frozen, UntrustedText, VersionOne
from review_gate.models.classification import PRClassification
from review_gate.models.config import Decision, FilterMode, Severity
from review_gate.models.facts import UnreadKind
from review_gate.models.findings import Finding
from review_gate.models.manifest import Gap, ManifestEntry

AgentStatus = Literal["completed", "failed", "timed_out", "cached", "skipped"]

CACHED_TOKENS_IN = "Input tokens read from the provider's prompt cache (part of tokens_in)."
CACHE_WRITE_TOKENS_IN = "Input tokens written to the provider's prompt cache (part of tokens_in)."
REASONING_TOKENS = "Output tokens the model spent on hidden reasoning (part of tokens_out)."
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


class AgentResult(Frozen):
    id: str
    kind: str
    status: AgentStatus
    required: bool = True
    attempts: int = Field(ge=0)
    duration_s: float = Field(ge=0)
    files: list[str]
    error: UntrustedText | None = None
    tokens_in: int = Field(default=0, description="Input tokens, those of failed attempts included.")
    tokens_out: int = Field(default=0, description="Output tokens, those of failed attempts included.")
    cost_usd: float = 0.0
    cached_tokens_in: int = Field(default=0, ge=0, description=CACHED_TOKENS_IN)
    cache_write_tokens_in: int = Field(default=0, ge=0, description=CACHE_WRITE_TOKENS_IN)
    reasoning_tokens: int = Field(default=0, ge=0, description=REASONING_TOKENS)
    unreviewed: list[str] = Field(
        default_factory=list,
        description="Files of its scope the agent could not review (an llm agent's hunk over its token budget).",
    )
    out_of_scope: int = Field(default=0, ge=0, description="Findings dropped because their file was not in its scope.")
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
                     reasoning_tokens=self.reasoning_tokens)

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
    """Model tokens and their cost: of one agent, or summed over the run's agents."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    cached_tokens_in: int = Field(default=0, ge=0, description=CACHED_TOKENS_IN)
    cache_write_tokens_in: int = Field(default=0, ge=0, description=CACHE_WRITE_TOKENS_IN)
    reasoning_tokens: int = Field(default=0, ge=0, description=REASONING_TOKENS)

    def __add__(self, other: Usage) -> Usage:
        return Usage(tokens_in=self.tokens_in + other.tokens_in, tokens_out=self.tokens_out + other.tokens_out,
                     cost_usd=self.cost_usd + other.cost_usd,
                     cached_tokens_in=self.cached_tokens_in + other.cached_tokens_in,
                     cache_write_tokens_in=self.cache_write_tokens_in + other.cache_write_tokens_in,
                     reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens)

    def rounded(self) -> Usage:
        """Its cost to the micro-dollar, as reports show it (sums are kept exact until then)."""
        return self.model_copy(update={"cost_usd": round(self.cost_usd, 6)})

    def split(self, parts: int) -> list[Usage]:
        """``parts`` shares that add up to it exactly (a request several agents shared): tokens as
        evenly as whole numbers allow, the first shares taking the remainder; cost in proportion.

        >>> [u.tokens_in for u in Usage(tokens_in=10).split(3)]
        [4, 3, 3]
        """
        counted = ("tokens_in", "tokens_out", "cached_tokens_in", "cache_write_tokens_in", "reasoning_tokens")
        values = self.model_dump()
        return [Usage(cost_usd=self.cost_usd / parts,
                      **{name: values[name] // parts + (1 if index < values[name] % parts else 0) for name in counted})
                for index in range(parts)]


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
    classification: PRClassification
    manifest: list[ManifestEntry]
    gaps: list[Gap]
    coverage: Coverage
    usage: Usage = Field(default_factory=Usage)
    source: str
    shard: ShardInfo | None = Field(
        default=None, description="Set on the report of one shard of a sharded run (--shard K/N).")

    @property
    def verdict(self) -> str:
        """Seed 000's verdict: PASS exactly when the run exits 0, else FAIL."""
        return "PASS" if self.exit_code == 0 else "FAIL"
