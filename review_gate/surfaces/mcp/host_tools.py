"""The MCP server's host-review tools: the client's host answers the llm reviewers' requests with
its own sub-agents, with no provider key (``review-gate --llm host`` and ``collect`` on the
command line).

- ``host_review``: start a host review of a change → its review tasks (each one reviewer's
  request: messages, answer_schema, files);
- ``host_answer``: one sub-agent's JSON answer to one task, checked as a provider's answer is
  (schema, files in scope) and kept; the last one decides the review;
- ``host_collect``: decide now from the answers given; a task with no answer is a reviewer that
  did not run.

The repository and configuration are the ones the server fixed at start, as for ``review``. An
answer that does not validate, names a file outside its task, or comes for an unknown or
finished run is a tool error naming the task and the problem; the task stays unanswered.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import anyio.to_thread
from pydantic import Field

from review_gate import api
from review_gate.models import ReviewReport
from review_gate.models.host import MAX_ANSWER_BYTES
from review_gate.outputs.agent import MAX_CHARS
from review_gate.surfaces.mcp.tool_shapes import (
    MAX_FINDINGS,
    MAX_TEXT,
    Base,
    Config,
    Cwd,
    DiffText,
    Head,
    HostAnswerResult,
    HostTasks,
    Intent,
    ReviewResult,
    Staged,
)

HOW = ("Run every task with a sub-agent of your own (in parallel where you can): give it the task's two messages "
       "and its answer_schema; it reviews, changing nothing, and replies with one JSON object that validates against "
       "answer_schema and names only the task's files. Pass each reply to host_answer with the run_id and the task. "
       "The last answer decides the review; host_collect decides without the tasks not answered (their reviewers "
       "count as not run). A host review is a self-review: every report says `reviewed by: host sub-agent`.")
RunId = Annotated[str, Field(min_length=1, max_length=MAX_TEXT, description="The run id host_review returned.")]


def _fixed() -> Any:
    from review_gate.surfaces.mcp import server

    return server._fixed()


def _result(report: ReviewReport) -> ReviewResult:
    from review_gate.outputs import agent
    from review_gate.outputs.summary import summary_line

    return ReviewResult(verdict="PASS" if report.exit_code == 0 else "FAIL", decision=report.decision,
                        exit_code=report.exit_code, summary=summary_line(report),
                        findings=report.findings[:MAX_FINDINGS],
                        findings_left_out=max(0, len(report.findings) - MAX_FINDINGS),
                        unreviewed=report.coverage.unreviewed, report=agent.render(report, MAX_CHARS))


async def host_review(base: Base = None, head: Head = None, staged: Staged = False, diff: DiffText = None,
                      intent: Intent = None, cwd: Cwd = None, config: Config = None) -> HostTasks:
    fixed = _fixed()
    where, directory = fixed.where(cwd), fixed.config_for(config, cwd)
    request = await anyio.to_thread.run_sync(lambda: api.change(
        cwd=where, base=base, head=head, staged=staged, diff=diff.encode("utf-8") if diff is not None else None))
    started = await api.host_start_async(request=request, config=directory, fail_on=fixed.fail_on_for(None),
                                         intent=intent)
    return HostTasks(run_id=started.run_id, tasks=started.tasks, ran=started.local_agents, not_run=started.not_run,
                     how=HOW if started.tasks else "Nothing to ask: the review is decided.",
                     decided=_result(started.report) if started.report is not None else None)


async def host_answer(run_id: RunId,
                      task: Annotated[str, Field(min_length=1, max_length=64, description="The task's id.")],
                      answer: Annotated[dict[str, Any] | str, Field(description=(
                          "The sub-agent's answer: the JSON object (or its text) that validates against the task's "
                          "answer_schema."))],
                      cwd: Cwd = None, config: Config = None) -> HostAnswerResult:
    fixed = _fixed()
    where, directory = fixed.where(cwd), fixed.config_for(config, cwd)
    text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
    if len(text) > MAX_ANSWER_BYTES:
        from review_gate.errors import AnswerError

        raise AnswerError(f"task {task} of run {run_id}: the answer is over {MAX_ANSWER_BYTES >> 20} MB; the answer "
                          "was refused, the task stays unanswered", fix="answer with the findings JSON alone")
    taken = await anyio.to_thread.run_sync(lambda: api.host_answer(run_id, task, text, cwd=where, config=directory))
    decided = None
    if not taken.unanswered:
        collected = await api.host_collect_async(taken.run_id, cwd=where, config=directory)
        decided = _result(collected.report)
    return HostAnswerResult(run_id=taken.run_id, task=taken.task, findings=taken.findings,
                            unanswered=taken.unanswered, decided=decided)


async def host_collect(run_id: RunId, cwd: Cwd = None, config: Config = None) -> ReviewResult:
    fixed = _fixed()
    where, directory = fixed.where(cwd), fixed.config_for(config, cwd)
    collected = await api.host_collect_async(run_id, cwd=where, config=directory)
    return _result(collected.report)


def add(server: Any, wrap: Any) -> None:
    """The host tools on ``server``, each wrapped by ``wrap`` (user errors as tool errors)."""
    server.add_tool(wrap(host_review), description=(
        "Start a review whose LLM reviewers your own sub-agents answer (no provider key needed): returns the review "
        "tasks, one per reviewer request. " + HOW))
    server.add_tool(wrap(host_answer), description=(
        "Hand back one sub-agent's JSON answer to one task of a host review. It is checked against the task's "
        "answer_schema and files (refused otherwise, the task staying unanswered); the last answer decides the "
        "review and returns it."))
    server.add_tool(wrap(host_collect), description=(
        "Decide a host review now from the answers given; a task with no answer is a reviewer that did not run "
        "(never a pass)."))
