"""The files and batches endpoints of both wire formats.

OpenAI (any server with its Batch API): the request file is uploaded as JSONL
(``POST {base_url}/files``, purpose ``batch``), a batch created over it (``POST
{base_url}/batches``: endpoint ``/v1/chat/completions``, completion window 24h), its state read
(``GET {base_url}/batches/{id}``), and once it ends its output and error files downloaded
(``GET {base_url}/files/{id}/content``). Anthropic (Message Batches): the requests go in the
create call itself (``POST {base_url}/v1/messages/batches``), the state is ``GET
.../batches/{id}``, and the results are the JSONL at its ``results_url``.

What a server says is untrusted: ids that name a path are checked before they go into a URL,
a ``results_url`` must be on the endpoint's own origin (the key goes with the request), bodies
are read with a size limit, and the key is scrubbed from every message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from review_gate.errors import AgentFault, TransientAgentFault
from review_gate.llm import client
from review_gate.llm.providers import anthropic
from review_gate.llm.providers.common import MAX_ANSWER_BYTES, as_int, check_status, decode, read_bounded
from review_gate.models import LlmAgent
from review_gate.scale.batch.requests import OPENAI_ENDPOINT

if TYPE_CHECKING:
    import httpx

RESULTS_LIMIT = 512 * 1024 * 1024  # bytes of a batch's results file read at most
ATTEMPTS = 3  # of each call, when the server answers with a transient fault
_ID = re.compile(r"[A-Za-z0-9_.:-]{1,200}")
OPENAI_ENDED = ("completed", "failed", "expired", "cancelled")


class BatchFault(AgentFault):
    """A batches endpoint refused, failed or answered with something unusable."""


@dataclass
class Created:
    batch_id: str
    input_file_id: str | None
    status: str


@dataclass
class State:
    status: str  # the provider's own word
    ended: bool
    counts: dict[str, int] = field(default_factory=dict)
    output_file_id: str | None = None
    error_file_id: str | None = None
    results_url: str | None = None
    errors: list[str] = field(default_factory=list)  # why a batch failed as a whole


@dataclass
class Outcome:
    """One request's result: the provider's response body, or why there is none."""

    custom_id: str
    body: dict[str, Any] | None
    raw: str
    error: str | None = None
    expired: bool = False


def _headers(spec: LlmAgent, key: str | None) -> dict[str, str]:
    if spec.provider == "anthropic":
        return anthropic.request(spec, key, "", "")[1]
    return {"authorization": f"Bearer {key}"} if key else {}


def checked_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise BatchFault(f"the batch API answered with an unusable {what}: {str(value)[:60]!r}")
    return value


async def _call(http: httpx.AsyncClient, spec: LlmAgent, key: str | None, method: str, url: str, *,
                limit: int = MAX_ANSWER_BYTES, **kwargs: Any) -> httpx.Response:
    """One call, retried on transient faults (429, 5xx, a dropped connection) as the server asks."""
    import httpx

    for attempt in range(ATTEMPTS):
        try:
            try:
                async with http.stream(method, url, headers=_headers(spec, key), **kwargs) as streamed:
                    response = await read_bounded(streamed, spec.provider, limit)
            except httpx.TransportError as exc:
                raise TransientAgentFault(f"{spec.provider} batch API at {spec.url}: {type(exc).__name__}") from exc
            check_status(response, spec.provider)
            return response
        except TransientAgentFault as fault:
            if attempt + 1 == ATTEMPTS:
                raise BatchFault(client.scrub(str(fault), key)) from None
            await anyio.sleep(min(fault.retry_after if fault.retry_after is not None else 2.0 ** attempt, 30.0))
        except AgentFault as fault:
            raise BatchFault(client.scrub(str(fault), key)) from None
    raise AssertionError("unreachable")


async def create(http: httpx.AsyncClient, spec: LlmAgent, key: str | None, lines: list[dict[str, Any]],
                 run_id: str) -> Created:
    """Send the request file and create the batch."""
    if spec.provider == "anthropic":
        requests = [{"custom_id": line["custom_id"], "params": line["params"]} for line in lines]
        response = await _call(http, spec, key, "POST", f"{spec.url}/v1/messages/batches", json={"requests": requests})
        data = decode(response, spec.provider)
        return Created(checked_id(data.get("id"), "batch id"), None, str(data.get("processing_status", "")))
    payload = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode("utf-8")
    upload = await _call(http, spec, key, "POST", f"{spec.url}/files", data={"purpose": "batch"},
                         files={"file": (f"review-gate-{run_id}.jsonl", payload, "application/jsonl")})
    file_id = checked_id(decode(upload, spec.provider).get("id"), "file id")
    response = await _call(http, spec, key, "POST", f"{spec.url}/batches", json={
        "input_file_id": file_id, "endpoint": OPENAI_ENDPOINT, "completion_window": "24h",
        "metadata": {"review_gate_run": run_id}})
    data = decode(response, spec.provider)
    return Created(checked_id(data.get("id"), "batch id"), file_id, str(data.get("status", "")))


async def state(http: httpx.AsyncClient, spec: LlmAgent, key: str | None, batch_id: str) -> State:
    if spec.provider == "anthropic":
        data = decode(await _call(http, spec, key, "GET", f"{spec.url}/v1/messages/batches/{batch_id}"), "anthropic")
        counts = _object(data.get("request_counts"))
        status = str(data.get("processing_status", ""))
        url = data.get("results_url")
        return State(status, status == "ended", {k: as_int(v) for k, v in counts.items()},
                     results_url=url if isinstance(url, str) else None)
    data = decode(await _call(http, spec, key, "GET", f"{spec.url}/batches/{batch_id}"), "openai")
    counts = _object(data.get("request_counts"))
    listed = _object(data.get("errors")).get("data")
    listed = listed if isinstance(listed, list) else []
    status = str(data.get("status", ""))
    return State(status, status in OPENAI_ENDED, {k: as_int(v) for k, v in counts.items()},
                 output_file_id=_optional_id(data.get("output_file_id"), "output file id"),
                 error_file_id=_optional_id(data.get("error_file_id"), "error file id"),
                 errors=[client.scrub(str(e.get("message") or e.get("code") or e)[:300], key)
                         for e in listed if isinstance(e, dict)])


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _optional_id(value: Any, what: str) -> str | None:
    return None if value is None else checked_id(value, what)


async def results(http: httpx.AsyncClient, spec: LlmAgent, key: str | None, ended: State) -> list[Outcome]:
    """Every result line of an ended batch (OpenAI: its output and error files)."""
    if spec.provider == "anthropic":
        if ended.results_url is None:
            return []
        _same_origin(ended.results_url, spec.url)
        text = (await _call(http, spec, key, "GET", ended.results_url, limit=RESULTS_LIMIT)).text
        return [o for o in (_anthropic_line(line, key) for line in text.splitlines() if line.strip()) if o]
    out: list[Outcome] = []
    for file_id in (ended.output_file_id, ended.error_file_id):
        if file_id is None:
            continue
        text = (await _call(http, spec, key, "GET", f"{spec.url}/files/{file_id}/content", limit=RESULTS_LIMIT)).text
        out += [o for o in (_openai_line(line, key) for line in text.splitlines() if line.strip()) if o]
    return out


async def cancel(http: httpx.AsyncClient, spec: LlmAgent, key: str | None, batch_id: str) -> None:
    url = (f"{spec.url}/v1/messages/batches/{batch_id}/cancel" if spec.provider == "anthropic"
           else f"{spec.url}/batches/{batch_id}/cancel")
    await _call(http, spec, key, "POST", url)


def _same_origin(url: str, base: str) -> None:
    given, ours = urlsplit(url), urlsplit(base)
    if (given.scheme, given.netloc) != (ours.scheme, ours.netloc):
        raise BatchFault(f"the batch's results_url is on another host ({given.scheme}://{given.netloc[:80]}) "
                         f"than its endpoint {ours.scheme}://{ours.netloc}; the key is not sent there")


def _json_line(line: str) -> dict[str, Any] | None:
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("custom_id"), str) else None


def _error_text(error: Any, key: str | None) -> str:
    if isinstance(error, dict):
        inner = error.get("error")
        if isinstance(inner, dict):  # Anthropic nests {"type": "error", "error": {...}}
            error = inner
        text = error.get("message") or error.get("code") or error.get("type") or json.dumps(error)[:200]
    else:
        text = str(error)
    return client.scrub(" ".join(str(text).split())[:300], key)


def _openai_line(line: str, key: str | None) -> Outcome | None:
    data = _json_line(line)
    if data is None:
        return None
    custom_id = data["custom_id"]
    response = data.get("response") if isinstance(data.get("response"), dict) else None
    body = response.get("body") if response is not None else None
    if response is not None and response.get("status_code") == 200 and isinstance(body, dict):
        return Outcome(custom_id, body, json.dumps(body))
    error = data.get("error")
    expired = isinstance(error, dict) and error.get("code") == "batch_expired"
    if error is None and response is not None:
        error = body.get("error") if isinstance(body, dict) and body.get("error") else \
            f"HTTP {response.get('status_code')}"
    return Outcome(custom_id, None, line, _error_text(error or "no answer", key), expired)


def _anthropic_line(line: str, key: str | None) -> Outcome | None:
    data = _json_line(line)
    if data is None:
        return None
    result = _object(data.get("result"))
    kind = result.get("type")
    if kind == "succeeded" and isinstance(result.get("message"), dict):
        return Outcome(data["custom_id"], result["message"], json.dumps(result["message"]))
    if kind == "errored":
        return Outcome(data["custom_id"], None, line, _error_text(result.get("error"), key))
    reason = {"expired": "the batch expired before this request was processed",
              "canceled": "the batch was canceled before this request was processed"}.get(str(kind), "no answer")
    return Outcome(data["custom_id"], None, line, reason, expired=kind == "expired")
