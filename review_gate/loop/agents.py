"""Registry agents in the loop: coders that make a phase's response, approvers that judge content.

A coder is a ``command`` agent: it reads the prompt on stdin, and for generate and revise edits
the working tree; its stdout is the response (the plan, or a summary of what it changed). An
``llm`` agent may write the plan (text only: it cannot edit files). Its environment carries
``REVIEW_GATE_LOOP_TASK``, ``REVIEW_GATE_LOOP_PHASE``, ``REVIEW_GATE_LOOP_ITERATION`` and
``REVIEW_GATE_LOOP_PROMPT_FILE``.

An approver is called once per attempt (seed 002) with ``{"phase", "stage", "files", "context"}``:
a ``command`` agent gets that JSON on stdin and prints ``{"approved": true|false, "feedback":
"..."}``; an ``llm`` agent gets it as its user message and answers in that shape. ``files`` maps
a path to its content, or to null for a changed file of the working tree a command approver
(which runs in the repository) reads itself.

Any fault (cannot start, non-zero exit, deadline, unusable answer) is an AgentFault; the engine
stops the session with it as the reason, never crashes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from review_gate.agents import command
from review_gate.change.input_files import regular_head
from review_gate.errors import AgentFault
from review_gate.models import CommandAgent, LlmAgent, ReviewConfig

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["plan"],
    "properties": {"plan": {"type": "string", "description": "The plan, as Markdown."}},
}
APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["approved", "feedback"],
    "properties": {"approved": {"type": "boolean"},
                   "feedback": {"type": "string", "description": "Why; what to change when not approved."}},
}
APPROVER_GUIDE = ("You approve or reject one piece of work in a coder/reviewer loop. The user message is JSON: "
                  "the phase and stage, the files (path -> content) and the context. Answer approved true or "
                  "false, with feedback; when you reject, say exactly what must change.")
PLANNER_GUIDE = "Write the plan the user message asks for, as Markdown, in the field 'plan'."
FILE_CAP = 64 * 1024  # characters of one file an llm approver is shown
FILES_CAP = 256 * 1024


@dataclass(frozen=True)
class Approval:
    approved: bool
    feedback: str


def timeout_of(agent: CommandAgent | LlmAgent, config: ReviewConfig) -> float:
    return agent.timeout_s or config.settings.timeout_s


async def make(config: ReviewConfig, agent: CommandAgent | LlmAgent, prompt: str, *, root: Path,
               env: dict[str, str], mark: str | None = None) -> str:
    """The agent's response to ``prompt``."""
    if isinstance(agent, LlmAgent):
        answer = await _ask_llm(config, agent, PLANNER_GUIDE, prompt, PLAN_SCHEMA, "plan")
        plan = answer.get("plan")
        if not isinstance(plan, str) or not plan.strip():
            raise AgentFault("the answer has no plan text")
        return plan
    out = await _run_command(config, agent, prompt.encode("utf-8"), root=root, env=env, mark=mark)
    return out.decode("utf-8", "replace")


async def judge(config: ReviewConfig, agent: CommandAgent | LlmAgent, request: dict[str, Any], *,
                root: Path) -> Approval:
    """One evaluation: approved or rejected, with feedback."""
    if isinstance(agent, LlmAgent):
        shown = {**request, "files": _with_contents(request["files"], root)}
        answer = await _ask_llm(config, agent, APPROVER_GUIDE, json.dumps(shown, ensure_ascii=False, indent=1),
                                APPROVAL_SCHEMA, "approval")
    else:
        out = await _run_command(config, agent, json.dumps(request, ensure_ascii=False).encode("utf-8"),
                                 root=root, env=dict(os.environ))
        answer = _json_object(out.decode("utf-8", "replace"))
    return read_approval(answer)


def read_approval(answer: Any) -> Approval:
    """``{"approved": bool, "feedback": str}``; a rejection without feedback says so."""
    if not isinstance(answer, dict) or not isinstance(answer.get("approved"), bool):
        raise AgentFault('the answer is not {"approved": true|false, "feedback": "..."}')
    feedback = answer.get("feedback")
    text = feedback.strip() if isinstance(feedback, str) else ""
    if not answer["approved"] and not text:
        text = "(the approver gave no feedback)"
    return Approval(answer["approved"], text)


def _json_object(text: str) -> Any:
    from review_gate.llm.answer import UnusableAnswer, extract_json

    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return extract_json(text)
    except UnusableAnswer as exc:
        raise AgentFault(f"the approver's output is not JSON: {exc}") from None


async def _run_command(config: ReviewConfig, agent: CommandAgent, stdin: bytes, *, root: Path,
                       env: dict[str, str], mark: str | None = None) -> bytes:
    cwd = str(root) if agent.cwd == "repo" or config.directory is None else config.directory
    limit = timeout_of(agent, config)
    argv = list(agent.command)
    try:
        with anyio.fail_after(limit):
            out, err, code = await command.run_program(argv, stdin, cwd=cwd, env=env, limit=agent.max_output_bytes,
                                                       mark=mark)
    except TimeoutError:
        raise AgentFault(f"{argv[0]} did not finish within {limit:g} s (timeout_s of agent {agent.id!r})") from None
    if code != 0:
        reason = f"killed by signal {-code}" if code < 0 else f"exited {code}"
        raise AgentFault(f"{argv[0]} {reason}{command.stderr_tail(err)}")
    return out


async def _ask_llm(config: ReviewConfig, agent: LlmAgent, guide: str, user: str, schema: dict[str, Any],
                   name: str) -> dict[str, Any]:
    from review_gate.config.locations import find_config_file
    from review_gate.llm import client
    from review_gate.llm.answer import UnusableAnswer, extract_json

    def read(answer: str | dict[str, Any]) -> dict[str, Any]:
        value = answer if isinstance(answer, dict) else extract_json(answer)
        if not isinstance(value, dict):
            raise UnusableAnswer("the answer is not a JSON object")
        return value

    path = find_config_file(agent.instructions, config.directory)
    system = (path.read_text(encoding="utf-8").strip() + "\n\n" if path is not None else "") + guide
    key = client.api_key(agent)
    limit = timeout_of(agent, config)
    try:
        with anyio.fail_after(limit):
            async with client.new_client() as http:
                asked = await client.ask(http, agent, key, system, user, config.settings.prices, read,
                                         schema=schema, name=name)
    except TimeoutError:
        raise AgentFault(f"no answer within {limit:g} s (timeout_s of agent {agent.id!r})") from None
    except AgentFault as exc:
        raise AgentFault(client.scrub(str(exc), key)) from None
    return asked.answer


def _with_contents(files: dict[str, str | None], root: Path) -> dict[str, str | None]:
    """Files an llm approver cannot read itself, filled in (each and all capped)."""
    out: dict[str, str | None] = {}
    budget = FILES_CAP
    for path, content in files.items():
        if content is None:
            # a regular file only (a FIFO is never opened), and no more of it than is shown
            data = regular_head(root / path, FILE_CAP * 4)
            content = data.decode("utf-8", "replace") if data is not None else None  # deleted, or not a file
        if content is not None:
            content = content[:min(FILE_CAP, max(budget, 0))]
            budget -= len(content)
        out[path] = content
    return out
