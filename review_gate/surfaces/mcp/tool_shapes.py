"""The shapes of the MCP server's tools: their arguments' types with their bounds and descriptions
(every size is bounded in the input schema), and the models each tool returns. The SDK reads them
from the tools' signatures in ``server.py`` to publish each tool's input and output schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from review_gate.models import Finding, Gap
from review_gate.models.host import HostTask
from review_gate.pipeline.arguments import MAX_PATH_BYTES, MAX_REF_CHARS

MAX_FINDINGS = 200  # findings returned as data; the report in `format` counts the rest
MAX_FILES = 500
MAX_INTENT = 64 * 1024  # characters; review_gate.change.intent bounds its UTF-8 bytes the same
MAX_PATHS = 1000  # paths one explain call takes (api.MAX_EXPLAIN_PATHS)
MAX_PATH = MAX_PATH_BYTES
MAX_REF = MAX_REF_CHARS
MAX_DIFF_CHARS = 64_000_000  # the text of a diff a call passes (a diff file may be larger: run the CLI)
MAX_TEXT = 2000  # a reason, a task id
MAX_ADDED = 50  # agents one review call adds

ReportFormat = Literal["agent", "json", "markdown", "sarif", "text", "github", "gitlab", "rdjsonl", "meta"]
FailOn = Literal["pass_with_warnings", "needs_fixes", "fail", "never"]

Cwd = Annotated[str | None, Field(max_length=MAX_PATH, description=(
    "A directory inside the repository the server reviews (default: the repository it started in); another "
    "repository is refused unless the server was started with --allow-other-repo."))]
Config = Annotated[str | None, Field(max_length=MAX_PATH, description=(
    "The config directory the server was started with (default); another is refused unless it was started with "
    "--allow-other-config."))]
Base = Annotated[str | None, Field(max_length=MAX_REF, description="Compare against the merge-base with this ref "
                                                                   "(default: the default branch).")]
Head = Annotated[str | None, Field(max_length=MAX_REF, description="Review the commits up to this ref instead of "
                                                                   "the working tree.")]
Staged = Annotated[bool, Field(description="Review the staged changes against HEAD.")]
DiffText = Annotated[str | None, Field(max_length=MAX_DIFF_CHARS, description=(
    "The text of a unified diff to review instead of the repository (takes no base, head or staged)."))]
Offline = Annotated[bool, Field(description="Run only the agents that need no network (no LLM reviewers).")]
Intent = Annotated[str | None, Field(max_length=MAX_INTENT, description=(
    "What the change is for (the task and its acceptance criteria, or the pull request's title and description; at "
    "most 64 KB): every LLM reviewer gets it as data and judges the change against it (criteria_met)."))]


class Output(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AddedAgent(Output):
    agent: str = Field(max_length=MAX_PATH, description="A registry agent id, or ID:GLOB to send it only the "
                                                        "changed files GLOB (a gitignore-style glob) selects.")
    reason: str = Field(min_length=1, max_length=MAX_TEXT, description=(
        "Why the change needs this agent; logged as an agent_addition gap, with the policy that would make it "
        "permanent."))


class ReviewResult(Output):
    verdict: Literal["PASS", "FAIL"] = Field(description="PASS exactly when the gate lets the change through.")
    decision: str = Field(description="fail, incomplete, needs_fixes, pass_with_warnings or pass.")
    exit_code: int = Field(description="What `review-gate` would exit with: 0 pass, 1 fail, 3 incomplete.")
    summary: str = Field(description="REVIEW: <verdict> | issues=<n> (critical=<n>) | missing_inputs=<n>")
    findings: list[Finding] = Field(description=f"The counting findings, most severe first (at most {MAX_FINDINGS}).")
    findings_left_out: int = Field(description="Counting findings not listed in `findings`.")
    unreviewed: list[str] = Field(description="Changed files no completed reviewer covered.")
    report: str = Field(description="The report in the requested format.")


class PlannedFile(Output):
    path: str
    status: str = Field(description="added, modified, deleted, renamed, copied or binary.")
    added: int
    removed: int
    domains: list[str]


class PlannedAgent(Output):
    agent: str
    files: list[str] = Field(description="The agent's scope.")
    policies: list[str] = Field(description="The policies that chose it.")
    priority: int


class PlanResult(Output):
    source: str = Field(description="What was read: the working tree against a base, a range, a diff.")
    risk_score: int
    risk_level: str
    pr_type: str
    files: list[PlannedFile] = Field(description=f"The changed files (at most {MAX_FILES}).")
    files_left_out: int
    agents: list[PlannedAgent] = Field(description="The agents that would run, highest priority first.")
    gaps: list[Gap] = Field(description="What the configuration misses (files no policy covers, ...).")


class PolicyHit(Output):
    policy: str
    trigger: str
    priority: int
    fires: str = Field(description='"yes", or the condition on the whole change it waits for.')
    dispatch: list[str]


class Explained(Output):
    path: str
    domains: list[str]
    policies: list[PolicyHit]
    agents: list[str] = Field(description="The agents a change of this path alone dispatches.")


class LoopStatus(Output):
    sessions: list[dict[str, Any]] = Field(description="Each session as `review-gate loop status --format json` "
                                                       "prints it: phase, stage, iteration, what a person must do.")
    handoffs_waiting: list[dict[str, str]] = Field(description="Hand-off items waiting for a person (task, file).")


class AcceptResult(Output):
    fingerprint: str = Field(description="The finding's whole fingerprint.")
    acceptance: int = Field(description="The acceptance's id, for `review-gate accepted --revoke ID`.")
    expires: str | None = Field(description="The last day it applies (YYYY-MM-DD), or null.")


class HostTasks(Output):
    """A host review started: the tasks its sub-agents answer, or, when nothing had to be asked,
    the decided review."""

    run_id: str
    tasks: list[HostTask] = Field(description="Each task: one reviewer's request (messages, answer_schema, files). "
                                              "Run each with a sub-agent and pass its JSON answer to host_answer.")
    ran: list[str] = Field(description="Agents that needed no model and ran already.")
    not_run: list[str] = Field(description="Agents that did not run, each with why.")
    how: str = Field(description="What to do with the tasks.")
    decided: ReviewResult | None = Field(description="Set when nothing had to be asked: the review, decided.")


class HostAnswerResult(Output):
    run_id: str
    task: str
    findings: int = Field(description="Findings the answer holds.")
    unanswered: list[str] = Field(description="The run's tasks still waiting for an answer.")
    decided: ReviewResult | None = Field(description="Set once the last task is answered: the review, decided.")
