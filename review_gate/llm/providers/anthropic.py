"""Anthropic Messages API. With ``structured_output`` json_schema (the default) the findings
schema is a tool the model must call; with json_object or none the model answers in text, the
schema spelled out in the system message. A temperature goes out only when the agent sets one:
Anthropic's current models take only their default."""

from __future__ import annotations

import json
from typing import Any

from review_gate.llm.providers.common import Dialog, Reply, ToolResult, ToolUse, Unusable, as_int, call_id, system_text
from review_gate.llm.schema import TOOL_NAME, findings_schema
from review_gate.models import LlmAgent

API_VERSION = "2023-06-01"
CUT_OFF = ("max_tokens", "model_context_window_exceeded")
CACHED = {"type": "ephemeral"}


def request(spec: LlmAgent, key: str | None, system: str, user: str, *, schema: dict[str, Any] | None = None,
            name: str = TOOL_NAME, dialog: Dialog | None = None) -> tuple[str, dict[str, str], dict[str, Any]]:
    """``schema`` and ``name``: another tool than report_findings (the gap detector's).
    ``dialog``: a conversation with tools (``tool_use`` blocks sent back, answered by
    ``tool_result`` blocks); without one the request is the plain question."""
    headers = {"content-type": "application/json", "anthropic-version": API_VERSION}
    if key:
        headers["x-api-key"] = key
    answer_schema = schema or findings_schema()
    body: dict[str, Any] = {
        "model": spec.model,
        "max_tokens": spec.max_output_tokens,
        # The fixed prefix (tools, then the system message) is marked for the prompt cache: every
        # request of a review repeats it, and a cached prefix costs a tenth of its input price.
        "system": [{"type": "text", "text": system_text(spec, system, answer_schema),
                    "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": user}],
    }
    if spec.temperature is not None:
        body["temperature"] = spec.temperature
    if spec.answer_format == "json_schema":
        body["tools"] = [{
            "name": name,
            "description": "Report the findings of this review (an empty list when there are none)."
                           if schema is None else "Report your answer.",
            "input_schema": answer_schema,
        }]
        body["tool_choice"] = {"type": "tool", "name": name}
    if dialog is not None:
        _converse(body, dialog, name, user)
    return f"{spec.url}/v1/messages", headers, body


def _converse(body: dict[str, Any], dialog: Dialog, name: str, user: str) -> None:
    """The reading tools before the answer's own (a fixed order: tools are the start of the cached
    prefix), every turn so far with its results, and the note after them. Until the budget is
    spent the model must call a tool (reading, or the answer's); then only the answer's (with
    json_object or none: any tool until then, none after). The tools stay listed throughout:
    a request whose turns hold tool_use blocks must define them."""
    reading = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in dialog.tools]
    answer_tool = body.get("tools", [])
    body["tools"] = reading + answer_tool
    if answer_tool:
        body["tool_choice"] = {"type": "tool", "name": name} if dialog.final else {"type": "any"}
    else:
        body["tool_choice"] = {"type": "none"} if dialog.final else {"type": "auto"}
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    for turn, results in dialog.turns:
        messages.append(turn)
        messages.append({"role": "user", "content": [_result(r) for r in results]})
    if dialog.note and dialog.turns:
        messages[-1]["content"].append({"type": "text", "text": dialog.note})
    elif dialog.note:
        messages[0]["content"] = f"{user}\n\n{dialog.note}"
    if dialog.turns:  # the conversation so far is the next round's prefix: cache it too
        messages[-1]["content"][-1]["cache_control"] = CACHED
    body["messages"] = messages


def _result(result: ToolResult) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": result.id, "content": result.content}
    return {**block, "is_error": True} if result.error else block


def reply(data: dict[str, Any], raw: str, *, name: str = TOOL_NAME, tools: bool = False) -> Reply:
    """The answer; with ``tools``, the calls of other tools the model asked for instead."""
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    content = data.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    tool = next((b for b in blocks if b.get("type") == "tool_use" and b.get("name") == name), None)
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    answer: str | dict[str, Any] | None = text or None
    if tool is not None and isinstance(tool.get("input"), dict):
        answer = tool["input"]
    # input_tokens counts only what was neither read from nor written to the cache.
    cached, written = as_int(usage.get("cache_read_input_tokens")), as_int(usage.get("cache_creation_input_tokens"))
    details = usage.get("output_tokens_details")
    thinking = as_int(details.get("thinking_tokens")) if isinstance(details, dict) else 0
    result = Reply(answer=answer, tokens_in=as_int(usage.get("input_tokens")) + cached + written,
                   tokens_out=as_int(usage.get("output_tokens")),
                   model=data.get("model") if isinstance(data.get("model"), str) else None,
                   structured=tool is not None, raw=raw, cached_in=cached, cache_write_in=written,
                   reasoning_out=thinking)
    stop = data.get("stop_reason")
    if stop in CUT_OFF:
        limit = "max_output_tokens" if stop == "max_tokens" else "the model's context window"
        raise Unusable(f"the answer was cut off at {limit} (stop_reason {stop})", result)
    if stop == "refusal":
        raise Unusable("the model refused (stop_reason refusal)", result)
    if tools and tool is None and _calls(blocks, result):
        return result
    if answer is None or (isinstance(answer, str) and not answer.strip()):
        raise Unusable("the answer is empty", result)
    return result



def _calls(blocks: list[dict[str, Any]], result: Reply) -> bool:
    """Read the tool_use blocks into ``result`` (and the message to send back); False when there
    are none."""
    sent: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"]:
            sent.append({"type": "text", "text": block["text"]})
        elif block.get("type") == "tool_use":
            given = block.get("input")
            name = str(block["name"]) if isinstance(block.get("name"), str) else ""
            use = ToolUse(call_id(block.get("id"), index), name,
                          given if isinstance(given, dict) else json.dumps(given))
            result.calls.append(use)
            sent.append({"type": "tool_use", "id": use.id, "name": name,
                         "input": given if isinstance(given, dict) else {}})
    if not result.calls:
        return False
    result.turn = {"role": "assistant", "content": sent}
    result.answer = None  # the text beside the calls is the model thinking aloud, not its answer
    return True
