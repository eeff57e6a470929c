"""Host reviews: an llm agent's requests answered by the coding agent's host (its sub-agents)
instead of a provider. A review task is one request exactly as it would be sent (the messages
and the answer's JSON Schema); a host answer is what one sub-agent replied to it.

    >>> HostMessage(role="user", content="Review this diff").role
    'user'
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from review_gate.models.base import Frozen, UntrustedText, VersionOne
from review_gate.models.report import ReviewedBy

MAX_ANSWER_BYTES = 1 << 20  # an answer is findings JSON: a megabyte is far more than any review


class HostMessage(Frozen):
    role: Literal["system", "user"]
    content: str = Field(description="The message as a provider would get it (the diff inside is untrusted data).")


class HostTask(Frozen):
    """One review task: a request of one llm agent (or of several packed together) over some
    files of the change, for a sub-agent of the host to answer with one JSON object."""

    schema_version: VersionOne = 1
    run_id: str = Field(description="The run that waits for the answer.")
    task: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="The task's id within its run.")
    agents: list[str] = Field(min_length=1, description="The llm agents the answer speaks for.")
    files: list[str] = Field(description="The files the task shows: the only files a finding may name.")
    reviewed_by: ReviewedBy = Field(
        default="host sub-agent",
        description="Who answers it: a sub-agent of the reviewed coding agent's own host (a self-review).")
    messages: list[HostMessage] = Field(min_length=2, description="The system message, then the user message.")
    answer_schema: dict[str, Any] = Field(description="The JSON Schema the answer must validate against.")
    instructions: str = Field(description="How to answer it and hand the answer back.")
    answer_file: str = Field(description="Where `review-gate collect` reads its answer from, when it is written "
                                         "there instead of handed back with --answer.")


class HostTaskState(Frozen):
    """A task as a run's listing shows it: answered or not."""

    task: str
    agents: list[str]
    files: list[str]
    answered: bool
    path: str = Field(description="The task's JSON file.")


class HostAnswered(Frozen):
    """An answer taken: the task it answers and what is still open in its run."""

    run_id: str
    task: str
    findings: int = Field(ge=0, description="Findings the answer holds.")
    unanswered: list[str] = Field(description="The run's tasks still waiting for an answer.")
    note: UntrustedText | None = None


__all__ = ["MAX_ANSWER_BYTES", "HostAnswered", "HostMessage", "HostTask", "HostTaskState"]
