"""What both providers share: the reply, the system message, reading a bounded answer, HTTP
error mapping (a refused parameter named with the config key that controls it)."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from review_gate.errors import AgentFault, TransientAgentFault
from review_gate.llm.limits import retry_after
from review_gate.llm.schema import format_note

if TYPE_CHECKING:
    import httpx

    from review_gate.models import LlmAgent

TRANSIENT_STATUS = {408, 409, 425, 429, 529}
ERROR_TEXT = 300
MAX_ANSWER_BYTES = 10_000_000  # a model's answer is a few kilobytes; more is a broken or hostile server


class Unusable(Exception):
    """The server answered, but not with something we can use (cut off, no content)."""

    def __init__(self, message: str, reply: Reply) -> None:
        super().__init__(message)
        self.reply = reply


@dataclass(frozen=True)
class ToolDef:
    """A tool the model may call: its name, what it does, and the JSON Schema of its arguments
    (every property required, optional ones nullable, as OpenAI's strict mode wants)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolUse:
    """A call the model asked for; ``arguments`` decoded, or the text that is not a JSON object."""

    id: str
    name: str
    arguments: dict[str, Any] | str


@dataclass(frozen=True)
class ToolResult:
    """What a call is answered: the text sent back, and whether it is an error."""

    id: str
    content: str
    error: bool = False


@dataclass
class Dialog:
    """A conversation with tools, beyond the first question: each turn is the model's message
    (as the provider wants it sent back) and the results of its calls. ``final``: the tool
    budget is spent and the model must answer now; ``note``: text sent after the last results
    (why the answer is wanted now, or why the last one could not be used)."""

    tools: list[ToolDef]
    turns: list[tuple[dict[str, Any], list[ToolResult]]] = field(default_factory=list)
    final: bool = False
    note: str | None = None


@dataclass
class Reply:
    answer: str | dict[str, Any] | None  # text to parse, or a tool call's decoded input
    tokens_in: int
    tokens_out: int
    model: str | None
    structured: bool  # the answer came through the structured channel (schema or tool call)
    raw: str
    cached_in: int = 0  # of tokens_in, read from the provider's prompt cache
    cache_write_in: int = 0  # of tokens_in, written to the provider's prompt cache
    reasoning_out: int = 0  # of tokens_out, spent on hidden reasoning
    calls: list[ToolUse] = field(default_factory=list)  # the tools the model asked for instead of answering
    turn: dict[str, Any] | None = None  # its message, to send back with the calls' results
    attempts: int = 1  # times the request was sent (a transient fault retried)


def call_id(value: Any, index: int) -> str:
    """A call's id as the model gave it (it is echoed back with the result), else one of ours."""
    return value if isinstance(value, str) and value else f"call_{index}"


def system_text(spec: LlmAgent, system: str, schema: dict[str, Any]) -> str:
    """The system message as sent: with the answer's schema spelled out when the server does not enforce it."""
    return system if spec.answer_format == "json_schema" else f"{system}\n\n{format_note(schema)}"


async def read_bounded(response: httpx.Response, provider: str, limit: int = MAX_ANSWER_BYTES) -> httpx.Response:
    """The streamed ``response`` read whole, refusing a body (decoded) over ``limit`` bytes.

    httpx reads a body whole into memory, however big; this stops at the limit and returns a
    response built from what was read, for ``check_status`` and ``decode``.
    """
    import httpx

    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise AgentFault(f"{provider} API answer larger than {limit} bytes ({declared} declared)")
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body.extend(chunk)
        if len(body) > limit:
            raise AgentFault(f"{provider} API answer larger than {limit} bytes")
    # The body is decoded already: the rebuilt response must not decode it a second time.
    headers = [(k, v) for k, v in response.headers.multi_items()
               if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
    return httpx.Response(response.status_code, headers=headers, content=bytes(body),
                          request=response.request, extensions=response.extensions)


def error_detail(response: httpx.Response) -> tuple[str, str | None, str | None]:
    """The provider's own error message, and the parameter and code it names (OpenAI and Anthropic
    both nest them under "error"; OpenAI names a refused parameter in ``error.param``)."""
    try:
        data = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    message = param = code = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            message = error.get("message") or error.get("type")
            param = error.get("param") if isinstance(error.get("param"), str) else None
            code = error.get("code") if isinstance(error.get("code"), str) else None
        elif isinstance(error, str):
            message = error
        message = message or data.get("message")
    if not message:
        message = response.text.strip() or response.reason_phrase
    message = " ".join(str(message).split())
    return message[:ERROR_TEXT] + ("…" if len(message) > ERROR_TEXT else ""), param, code


def error_message(response: httpx.Response) -> str:
    return error_detail(response)[0]


# The request parameters a server may refuse, and so the ones a hint can name. Anthropic and
# most OpenAI-compatible servers give no ``param``: the first of these the message names counts.
KNOWN_PARAMS = ("max_tokens", "max_completion_tokens", "temperature", "reasoning_effort", "response_format",
                "tool_choice", "tools")
_MENTIONED = re.compile(r"\b(" + "|".join(KNOWN_PARAMS) + r")\b")
_REFUSED = re.compile(r"\b(unsupported|not supported|does not support|unknown|unrecognized|not permitted)\b",
                      re.IGNORECASE)  # the parameter itself is refused, not its value's size


def param_hint(spec: LlmAgent, param: str | None, code: str | None, message: str) -> str | None:
    """How to stop the server refusing ``param``: the config key of the agent that controls it."""
    if param is None or param.split(".")[0] not in KNOWN_PARAMS:
        found = _MENTIONED.search(message)
        param = found.group(1) if found else None
    if param is None:
        return None
    param = param.split(".")[0]
    unsupported = code in ("unsupported_parameter", "unsupported_value") or bool(_REFUSED.search(message))
    on = f"on agent {spec.id!r} in review-agents.json"
    if param in ("max_tokens", "max_completion_tokens") and (not unsupported or spec.provider != "openai"):
        return f'check "max_output_tokens" {on}'
    if param == "max_tokens":
        return f'set "reasoning": true {on} (this model takes max_completion_tokens and no temperature)'
    if param == "max_completion_tokens":
        return f'set "reasoning": false {on} (this server takes max_tokens)'
    if param == "temperature":
        if spec.provider == "openai" and not spec.is_reasoning:
            return (f'set "reasoning": true {on} (this model takes only its default temperature), '
                    'or remove "temperature"')
        return f'remove "temperature" {on}'
    if param == "reasoning_effort":
        return f'remove "reasoning_effort" {on}, or choose a value this model takes'
    if param == "response_format" and spec.answer_format == "json_schema":
        return f'set "structured_output": "json_object" {on}, or "none" when the server has no JSON mode'
    return f'set "structured_output": "none" {on} (a prompted JSON answer, no {param})'


def check_status(response: httpx.Response, provider: str, spec: LlmAgent | None = None) -> None:
    status = response.status_code
    if status < 400:
        return
    message, param, code = error_detail(response)
    text = f"{provider} API returned HTTP {status}: {message}"
    if status in TRANSIENT_STATUS or status >= 500:
        raise TransientAgentFault(text, retry_after=retry_after(response.headers, time.time()), status=status)
    hint = param_hint(spec, param, code, message) if spec is not None and status in (400, 422) else None
    raise AgentFault(f"{text} Fix: {hint}." if hint else text)


def decode(response: httpx.Response, provider: str) -> dict[str, Any]:
    try:
        data = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        preview = response.text.strip()[:60].replace("\n", " ")
        raise TransientAgentFault(f"{provider} API answered with something that is not JSON: {preview!r}") from exc
    if not isinstance(data, dict):
        raise TransientAgentFault(f"{provider} API answered with JSON that is not an object")
    return data


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
