"""What both providers share: the reply, reading a bounded answer, HTTP error mapping and
Retry-After parsing."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from review_gate.errors import AgentFault, TransientAgentFault

if TYPE_CHECKING:
    import httpx

TRANSIENT_STATUS = {408, 409, 425, 429, 529}
ERROR_TEXT = 300
MAX_ANSWER_BYTES = 10_000_000  # a model's answer is a few kilobytes; more is a broken or hostile server


class Unusable(Exception):
    """The server answered, but not with something we can use (cut off, no content)."""

    def __init__(self, message: str, reply: Reply) -> None:
        super().__init__(message)
        self.reply = reply


@dataclass
class Reply:
    answer: str | dict[str, Any] | None  # text to parse, or a tool call's decoded input
    tokens_in: int
    tokens_out: int
    model: str | None
    structured: bool  # the answer came through the structured channel (schema or tool call)
    raw: str


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


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asked us to wait: retry-after-ms, or Retry-After in seconds or as a date."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_message(response: httpx.Response) -> str:
    """The provider's own error message (OpenAI and Anthropic both nest it under "error")."""
    try:
        data = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    message = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            message = error.get("message") or error.get("type")
        elif isinstance(error, str):
            message = error
        message = message or data.get("message")
    if not message:
        message = response.text.strip() or response.reason_phrase
    message = " ".join(str(message).split())
    return message[:ERROR_TEXT] + ("…" if len(message) > ERROR_TEXT else "")


def check_status(response: httpx.Response, provider: str) -> None:
    status = response.status_code
    if status < 400:
        return
    text = f"{provider} API returned HTTP {status}: {error_message(response)}"
    if status in TRANSIENT_STATUS or status >= 500:
        raise TransientAgentFault(text, retry_after=retry_after(response.headers))
    raise AgentFault(text)


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
