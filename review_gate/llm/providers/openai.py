"""OpenAI-compatible chat completions (OpenAI, llama.cpp's llama-server, vLLM, Ollama...)."""

from __future__ import annotations

import json
from typing import Any

from review_gate.llm.providers.common import Reply, Unusable, as_int, decode
from review_gate.llm.schema import findings_schema
from review_gate.models import LlmAgent

NAME = "openai"


def request(spec: LlmAgent, key: str | None, system: str, user: str, *, schema: dict[str, Any] | None = None,
            name: str = "review_findings") -> tuple[str, dict[str, str], dict[str, Any]]:
    """``schema`` and ``name``: another answer schema than the findings one (the gap detector's)."""
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    body = {
        "model": spec.model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "temperature": spec.temperature,
        "max_tokens": spec.max_output_tokens,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": name, "strict": True, "schema": schema or findings_schema()},
        },
    }
    return f"{spec.url}/chat/completions", headers, body


def reply(data: dict[str, Any], raw: str, *, name: str = "") -> Reply:
    usage = _object(data.get("usage"))
    choices = data.get("choices")
    choice = _object(choices[0] if isinstance(choices, list) and choices else None)
    message = _object(choice.get("message"))
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    result = Reply(answer=text or None,
                   tokens_in=as_int(usage.get("prompt_tokens")), tokens_out=as_int(usage.get("completion_tokens")),
                   model=data.get("model") if isinstance(data.get("model"), str) else None,
                   structured=False, raw=raw)
    if choice.get("finish_reason") == "length":
        raise Unusable("the answer was cut off at max_output_tokens (finish_reason length)", result)
    if message.get("refusal"):
        raise Unusable(f"the model refused: {str(message['refusal'])[:200]}", result)
    if not text.strip():
        raise Unusable("the answer is empty", result)
    try:
        result.structured = isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        result.structured = False
    return result


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


__all__ = ["NAME", "decode", "reply", "request"]
