"""Anthropic Messages API. With ``structured_output`` json_schema (the default) the findings
schema is a tool the model must call; with json_object or none the model answers in text, the
schema spelled out in the system message. A temperature goes out only when the agent sets one:
Anthropic's current models take only their default."""

from __future__ import annotations

from typing import Any

from review_gate.llm.providers.common import Reply, Unusable, as_int, system_text
from review_gate.llm.schema import TOOL_NAME, findings_schema
from review_gate.models import LlmAgent

API_VERSION = "2023-06-01"
CUT_OFF = ("max_tokens", "model_context_window_exceeded")


def request(spec: LlmAgent, key: str | None, system: str, user: str, *, schema: dict[str, Any] | None = None,
            name: str = TOOL_NAME) -> tuple[str, dict[str, str], dict[str, Any]]:
    """``schema`` and ``name``: another tool than report_findings (the gap detector's)."""
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
    return f"{spec.url}/v1/messages", headers, body


def reply(data: dict[str, Any], raw: str, *, name: str = TOOL_NAME) -> Reply:
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    blocks = [b for b in data.get("content") or [] if isinstance(b, dict)]
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
    if answer is None or (isinstance(answer, str) and not answer.strip()):
        raise Unusable("the answer is empty", result)
    return result

