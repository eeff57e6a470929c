"""Anthropic Messages API, with the findings schema as a tool the model must call."""

from __future__ import annotations

import json
from typing import Any

from review_gate.llm.providers.common import Reply, Unusable, as_int
from review_gate.llm.schema import TOOL_NAME, findings_schema
from review_gate.models import LlmAgent

NAME = "anthropic"
API_VERSION = "2023-06-01"


def request(spec: LlmAgent, key: str | None, system: str, user: str, *, schema: dict[str, Any] | None = None,
            name: str = TOOL_NAME) -> tuple[str, dict[str, str], dict[str, Any]]:
    """``schema`` and ``name``: another tool than report_findings (the gap detector's)."""
    headers = {"content-type": "application/json", "anthropic-version": API_VERSION}
    if key:
        headers["x-api-key"] = key
    body = {
        "model": spec.model,
        "max_tokens": spec.max_output_tokens,
        "temperature": spec.temperature,
        "system": system,
        "messages": [{"role": "user", "content": user}],
        "tools": [{
            "name": name,
            "description": "Report the findings of this review (an empty list when there are none)."
                           if schema is None else "Report your answer.",
            "input_schema": schema or findings_schema(),
        }],
        "tool_choice": {"type": "tool", "name": name},
    }
    return f"{spec.url}/v1/messages", headers, body


def reply(data: dict[str, Any], raw: str, *, name: str = TOOL_NAME) -> Reply:
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    blocks = [b for b in data.get("content") or [] if isinstance(b, dict)]
    tool = next((b for b in blocks if b.get("type") == "tool_use" and b.get("name") == name), None)
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    answer: str | dict[str, Any] | None = text or None
    if tool is not None and isinstance(tool.get("input"), dict):
        answer = tool["input"]
    result = Reply(answer=answer, tokens_in=as_int(usage.get("input_tokens")),
                   tokens_out=as_int(usage.get("output_tokens")),
                   model=data.get("model") if isinstance(data.get("model"), str) else None,
                   structured=tool is not None, raw=raw)
    if data.get("stop_reason") == "max_tokens":
        raise Unusable("the answer was cut off at max_output_tokens (stop_reason max_tokens)", result)
    if answer is None or (isinstance(answer, str) and not answer.strip()):
        raise Unusable("the answer is empty", result)
    return result


def raw_text(answer: str | dict[str, Any] | None) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer)
