"""OpenAI-compatible chat completions (OpenAI, llama.cpp's llama-server, vLLM, Ollama...).

The request takes the shape the agent's model accepts: a reasoning model (o-series, gpt-5
family) gets ``max_completion_tokens``, no temperature and an optional ``reasoning_effort``;
``structured_output`` picks a strict ``json_schema``, the older ``json_object`` mode or no
``response_format`` at all (the schema then goes in the system message).
"""

from __future__ import annotations

import json
from typing import Any

from review_gate.llm.providers.common import (
    Dialog,
    Reply,
    ToolUse,
    Unusable,
    as_int,
    call_id,
    decode,
    system_text,
)
from review_gate.llm.schema import findings_schema
from review_gate.models import LlmAgent


def request(spec: LlmAgent, key: str | None, system: str, user: str, *, schema: dict[str, Any] | None = None,
            name: str = "review_findings", dialog: Dialog | None = None) -> tuple[str, dict[str, str], dict[str, Any]]:
    """``schema`` and ``name``: another answer schema than the findings one (the gap detector's).
    ``dialog``: a conversation with tools (function tools, the model's ``tool_calls`` sent back
    with a ``role: tool`` message each); without one the request is the plain question."""
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    schema = schema or findings_schema()
    body: dict[str, Any] = {
        "model": spec.model,
        "messages": [{"role": "system", "content": system_text(spec, system, schema)},
                     {"role": "user", "content": user}],
    }
    if spec.is_reasoning:
        body["max_completion_tokens"] = spec.max_output_tokens
        if spec.reasoning_effort is not None:
            body["reasoning_effort"] = spec.reasoning_effort
    else:
        body["max_tokens"] = spec.max_output_tokens
        body["temperature"] = spec.temperature if spec.temperature is not None else 0
    if spec.answer_format == "json_schema":
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": name, "strict": True, "schema": schema}}
    elif spec.answer_format == "json_object":
        body["response_format"] = {"type": "json_object"}
    if dialog is not None:
        _converse(body, dialog)
    return f"{spec.url}/chat/completions", headers, body


def _converse(body: dict[str, Any], dialog: Dialog) -> None:
    """The tools, every turn so far with its results, and the note after them; once the budget
    is spent, ``tool_choice: none`` (the tools stay listed, as the turns that called them do)."""
    messages = body["messages"]
    for turn, results in dialog.turns:
        messages.append(turn)
        messages.extend({"role": "tool", "tool_call_id": r.id, "content": r.content} for r in results)
    if dialog.note:
        messages.append({"role": "user", "content": dialog.note})
    body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                       "parameters": t.parameters, "strict": True}}
                     for t in dialog.tools]
    body["tool_choice"] = "none" if dialog.final else "auto"


def reply(data: dict[str, Any], raw: str, *, name: str = "", tools: bool = False) -> Reply:
    """The answer; with ``tools``, the calls the model asked for instead (``tool_calls``)."""
    usage = _object(data.get("usage"))
    choices = data.get("choices")
    choice = _object(choices[0] if isinstance(choices, list) and choices else None)
    message = _object(choice.get("message"))
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    prompt_details = _object(usage.get("prompt_tokens_details"))
    completion_details = _object(usage.get("completion_tokens_details"))
    result = Reply(answer=text or None,
                   tokens_in=as_int(usage.get("prompt_tokens")), tokens_out=as_int(usage.get("completion_tokens")),
                   model=data.get("model") if isinstance(data.get("model"), str) else None,
                   structured=False, raw=raw,
                   cached_in=as_int(prompt_details.get("cached_tokens")),
                   cache_write_in=as_int(prompt_details.get("cache_write_tokens")),
                   reasoning_out=as_int(completion_details.get("reasoning_tokens")))
    finish = choice.get("finish_reason")
    if finish == "length":
        spent = f", {result.reasoning_out} of its tokens on reasoning" if result.reasoning_out else ""
        raise Unusable(f"the answer was cut off at max_output_tokens (finish_reason length{spent})", result)
    if finish == "content_filter":  # what is left of the answer is not the review: never a clean one
        raise Unusable("the answer was withheld by the provider's content filter (finish_reason content_filter)",
                       result)
    if message.get("refusal"):
        raise Unusable(f"the model refused: {str(message['refusal'])[:200]}", result)
    if tools and _calls(message, result):
        return result
    if not text.strip():
        raise Unusable("the answer is empty", result)
    try:
        result.structured = isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        result.structured = False
    return result


def _calls(message: dict[str, Any], result: Reply) -> bool:
    """Read the message's tool calls into ``result`` (and the message to send back); False when
    it has none."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return False
    sent = []
    for index, call in enumerate(calls):
        call = _object(call)
        function = _object(call.get("function"))
        name = str(function["name"]) if isinstance(function.get("name"), str) else ""
        text = str(function["arguments"]) if isinstance(function.get("arguments"), str) else ""
        try:
            decoded: Any = json.loads(text)
        except json.JSONDecodeError:
            decoded = None
        use = ToolUse(call_id(call.get("id"), index), name, decoded if isinstance(decoded, dict) else text)
        result.calls.append(use)
        sent.append({"id": use.id, "type": "function", "function": {"name": name, "arguments": text}})
    content = message.get("content")
    result.turn = {"role": "assistant", "content": content if isinstance(content, str) else None, "tool_calls": sent}
    result.answer = None  # the text beside the calls is the model thinking aloud, not its answer
    return True


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


__all__ = ["decode", "reply", "request"]
