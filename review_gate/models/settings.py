"""review-gate.json (DESIGN §4): the gate's conditions, the prices of models, and the settings of a
run (state, limits, concurrency, packing, private paths, the loop's)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from review_gate.models.agent_config import DEFAULT_PRIVATE_PATHS
from review_gate.models.base import Frozen
from review_gate.models.config_values import (
    MAX_CONCURRENCY,
    ConfigFile,
    Decision,
    FailOn,
    FilterMode,
    Id,
    InlineWaivers,
    Metric,
    Packing,
    SubmodulePolicy,
    UnreadPolicy,
)
from review_gate.models.loop import LoopSettings

HostReviews = Literal["outside_ci", "everywhere", "never"]


class GateCondition(Frozen):
    metric: Metric
    op: Literal[">", ">=", "<", "<=", "==", "!="]
    value: float
    decision: Decision


def default_conditions() -> list[GateCondition]:
    """The gate's conditions when review-gate.json names none. Made when asked: a model built at
    import would build its validator at every start, and pydantic's plugin loader with it."""
    return [GateCondition(metric=metric, op=">", value=0, decision=decision) for metric, decision in (
        ("critical", "fail"), ("missing_inputs", "incomplete"), ("agents_failed", "incomplete"),
        ("major", "needs_fixes"), ("warning", "pass_with_warnings"), ("agents_skipped", "pass_with_warnings"),
        ("waived_inline", "pass_with_warnings"))]


class Gate(Frozen):
    conditions: list[GateCondition] = Field(
        default_factory=default_conditions,
        description="Evaluated in order, first match wins; no match means pass.",
    )
    fail_on: FailOn = Field(
        default="needs_fixes", description="The least severe decision that exits 1."
    )


class Price(Frozen):
    input_per_mtok: float = Field(ge=0, description="USD per million input tokens.")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens (reasoning tokens included).")
    cached_input_per_mtok: float | None = Field(
        default=None, ge=0,
        description="USD per million input tokens read from the provider's prompt cache; null prices them as input.",
    )
    cache_write_per_mtok: float | None = Field(
        default=None, ge=0,
        description="USD per million input tokens written to the provider's prompt cache; null prices them as input.",
    )
    batch_input_per_mtok: float | None = Field(
        default=None, ge=0,
        description="USD per million input tokens sent through the provider's batch API; null: half of "
                    "input_per_mtok (both providers' batch discount).",
    )
    batch_output_per_mtok: float | None = Field(
        default=None, ge=0,
        description="USD per million output tokens of the provider's batch API; null: half of output_per_mtok.",
    )
    as_of: str | None = Field(
        default=None, pattern=r"^\d{4}-\d{2}-\d{2}$",
        description="The date the price was read from its source (YYYY-MM-DD): prices change, a dated one can be "
                    "checked.")
    source: str | None = Field(default=None, max_length=500, description="Where the price was published.")

    BATCH_DISCOUNT: ClassVar[float] = 0.5  # what OpenAI's and Anthropic's batch APIs charge of the interactive price

    def batch(self) -> Price:
        """The price of a batch request: the batch columns, the cache rates scaled as input is.

        >>> Price(input_per_mtok=2, output_per_mtok=8).batch().input_per_mtok
        1.0
        """
        batch_in = self.input_per_mtok * self.BATCH_DISCOUNT if self.batch_input_per_mtok is None \
            else self.batch_input_per_mtok
        batch_out = self.output_per_mtok * self.BATCH_DISCOUNT if self.batch_output_per_mtok is None \
            else self.batch_output_per_mtok
        ratio = batch_in / self.input_per_mtok if self.input_per_mtok else self.BATCH_DISCOUNT

        def scaled(rate: float | None) -> float | None:
            return None if rate is None else rate * ratio

        return Price(input_per_mtok=batch_in, output_per_mtok=batch_out,
                     cached_input_per_mtok=scaled(self.cached_input_per_mtok),
                     cache_write_per_mtok=scaled(self.cache_write_per_mtok))


class SettingsFile(ConfigFile):
    """review-gate.json: the gate (its conditions and threshold) and how a run goes."""

    gate: Gate = Field(default_factory=Gate)
    filter_mode: FilterMode = "added"
    concurrency: int = Field(default=8, ge=1, le=MAX_CONCURRENCY)
    timeout_s: float = Field(default=120, gt=0, le=3600)
    state_path: str = Field(
        default=".review-gate/state.db", min_length=1, pattern=r"^[^\x00]*$",
        description="The run-state database; relative paths are from the repository root.",
    )
    state_max_age_days: int = Field(
        default=30, ge=1, le=3650, description="Runs older than this are dropped from the run state after each run.")
    state_max_mb: int = Field(
        default=256, ge=1, le=100_000,
        description="After each run the oldest runs are dropped until the run state holds at most this much data.")
    packing: Packing = Field(
        default="agent_packed",
        description="agent_packed (the default): llm agents that share provider, model and endpoint review each "
                    "chunk together in one request, each keeping its own findings, status and tokens (a share of "
                    "each request); per_agent: every llm agent sends the change in its own requests.",
    )
    gap_detector: Id | None = Field(
        default=None, description="Registry id of an agent that may add agents (LLM gap detection)."
    )
    prices: dict[str, Price] = Field(
        default_factory=dict, description="Model name -> price per million tokens, for cost reporting."
    )
    max_cost_usd: float | None = Field(
        default=None, ge=0, description="Run budget: no llm agent starts once it could exceed this cost. Every "
                                        "enabled llm agent's model then needs a price in prices (config validate "
                                        "refuses one without: its cost could not be bounded).")
    max_tokens: int | None = Field(
        default=None, ge=0, description="Run budget: no llm agent starts once it could exceed these tokens."
    )
    binary_files: UnreadPolicy = Field(
        default="list",
        description="A changed file that is binary by content (an image, an archive, a keystore) is read by no "
                    "agent. list: it is listed in the coverage as not inspected and does not count against the "
                    "gate; incomplete: it counts as a missing input, so the decision is incomplete.",
    )
    submodules: SubmodulePolicy = Field(
        default="warn",
        description="A submodule a change moves is reviewed through its own commits when both are present on "
                    "this machine. One whose commits are not (or that the change adds): warn: listed, with a "
                    "warning saying how to make them present; list: listed in the coverage only; incomplete: it "
                    "counts as a missing input (fail closed).",
    )
    inline_waivers: InlineWaivers = Field(
        default="honour",
        description="Inline waivers (`review-gate: ignore[RULE] reason` and the peers' suppressions such as "
                    "`# noqa: S501`) in the change's files. honour: the finding is waived and listed as waived; "
                    "report: it is listed with its waiver and still counts; off: such comments are not read.",
    )
    private_paths: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PRIVATE_PATHS),
        description="gitignore-style globs of files an llm agent's tools never read, search or list (the run "
                    "state is never shown either). Setting it replaces the default list.",
    )
    constitution: str | None = Field(
        default=None, min_length=1,
        description="Markdown file (relative to the config directory) whose 'Standards' section "
                    "every llm agent gets in its prompt.",
    )
    host_reviews: HostReviews = Field(
        default="outside_ci",
        description="Reviews by the coding agent's host (its sub-agents answer the llm agents' requests: "
                    "`run --llm host`, the MCP server's host tools, the Claude Code Stop hook when no key is set) "
                    "are self-reviews by the reviewed agent's own host. outside_ci (the default): they count "
                    "locally and in hooks; in CI (the CI variable set, or --ci) the llm agents count as skipped "
                    "instead. everywhere: they count in CI too. never: no host review is offered; an llm agent "
                    "without its key is skipped.",
    )
    loop: LoopSettings = Field(
        default_factory=LoopSettings,
        description="The coder/reviewer loop (review-gate loop): mode, max_iterations, and per phase its ai, "
                    "approver and max_retries.",
    )
