"""A scriptable model server for tests and benchmarks: a real HTTP server on 127.0.0.1 in a
thread, speaking both OpenAI chat completions (``/v1/chat/completions``) and the Anthropic
Messages API (``/v1/messages``), recording every request (headers and JSON body).

Each request takes the next scripted ``Step`` from the queue, or ``default`` when the queue is
empty (``default`` may be a function of the request, to answer by content). A step with
``tool_calls`` is a model asking for tools in its provider's format (OpenAI ``tool_calls``,
Anthropic ``tool_use`` blocks); ``tool_results`` reads back what a request answered them.

``LlmServer(tls=context)`` serves https with the context's certificate (``trustme`` makes one).

``rate_limit`` (a ``RateLimit``, off by default) turns on the rate-limit mode: requests beyond
its limits are answered 429 before they take a step, and every answer carries the provider's
rate-limit headers. ``busy_above`` (None by default) is a server that says nothing of its
limits, as llama.cpp, vLLM and most proxies: a request that would be more than that many in
work at once is answered ``busy_status`` (429) with no header at all, and counted in ``refused``.
``slots`` (None by default) is a server that queues instead, as llama-server and Ollama do: at
most that many requests are in work at once, the others wait their turn (first come, first
served) and never get a refusal; ``most_waiting`` is the most requests it ever held beyond its
slots.

It also speaks both providers' batch APIs (``Batches``): OpenAI's files and batches endpoints
(``/v1/files``, ``/v1/batches``, ``/v1/files/{id}/content``) and Anthropic's Message Batches
(``/v1/messages/batches``, its ``results_url``). A batch ends when its status has been read
``BatchScript.polls`` times; then each request line takes a step as a live request would
(``Step.status`` >= 400 answers it with an error), unless ``BatchScript.expire`` leaves it
unanswered (the batch expired). Every call to those endpoints is in ``batch_calls``.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import socket
import ssl
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from review_gate.llm.concurrency import START


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 stalls a burst of parallel connects by a second

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (its deadline, a cancelled chunk) is no error of the server's."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


@dataclass
class Step:
    findings: list[dict[str, Any]] = field(default_factory=list)
    delay: float = 0.0  # seconds before answering (a hang is a long delay)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None  # sent verbatim instead of a built answer (malformed JSON...)
    content: str | None = None  # the model's text instead of the findings JSON
    tool_input: Any = None  # anthropic: the tool call's input instead of {"findings": ...}
    tool_name: str = "report_findings"  # anthropic: the tool the model calls
    truncated: bool = False  # finish_reason length / stop_reason max_tokens
    finish: str | None = None  # another finish_reason (openai) or stop_reason (anthropic): content_filter, refusal
    tokens: tuple[int, int] = (100, 20)
    model: str = "test-model-1"
    usage: dict[str, Any] = field(default_factory=dict)  # more usage fields: cached and reasoning token details
    error: dict[str, Any] | None = None  # with status >= 400: the "error" object (message, param, code...)
    # The model calls tools instead of answering: (tool name, arguments) each; arguments that are
    # a string go out verbatim (OpenAI's JSON text), anything else as JSON / Anthropic's input.
    tool_calls: list[tuple[str, Any]] | None = None
    drop: bool = False  # the connection is reset without an answer


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """Every message text of the request, system included."""
        system = self.body.get("system") or ""
        if isinstance(system, list):  # Anthropic system blocks
            system = "\n".join(str(block.get("text", "")) for block in system if isinstance(block, dict))
        parts = [system]
        parts += [m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
                  for m in self.body.get("messages", [])]
        return "\n".join(parts)


@dataclass
class _Window:
    start: float = 0.0
    requests: int = 0
    tokens: int = 0
    in_flight: int = 0
    first_answer: float | None = None  # when the first answer (and its headers) was sent
    log: deque[tuple[float, int]] = field(default_factory=deque)  # a rolling window: (time, cost) admitted


@dataclass
class RateLimit:
    """The rate-limit mode: per API path (one per provider, as two accounts would be), at most
    ``concurrent`` requests at once and ``requests`` (and ``tokens``: prompt characters / 4 plus
    the request's max tokens) per fixed window of ``window_s`` seconds, or, ``rolling``, over
    the last ``window_s`` seconds (a reset is then when all of it has left the window). Beyond
    that the answer is 429 with Retry-After; every answer carries the remaining / reset headers,
    OpenAI style on /chat/completions and Anthropic style on /messages."""

    concurrent: int = 5
    requests: int = 10
    window_s: float = 2.0
    tokens: int | None = None
    rolling: bool = False
    admitted: int = 0
    rejected: int = 0
    # 429s to requests that arrived after the first answer on their path was sent: on a budget the
    # headers report (the window's requests or tokens), and on the concurrency they do not report.
    # The client's first burst (``first_burst``: what it sends before it can have read any header)
    # is never late, whenever its last request arrives: the burst goes out as its chunks are made,
    # and one may reach the server after the first answer left it, before the client read it.
    rejected_late: int = 0
    busy_late: int = 0
    first_burst: int = START
    most_at_once: int = 0  # the most requests in work at once on one path
    _windows: dict[str, _Window] = field(default_factory=dict)
    _arrived: dict[str, int] = field(default_factory=dict)  # requests that reached each path, 429s included
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def admit(self, path: str, body: dict[str, Any]) -> dict[str, str] | None:
        """None when the request is admitted, else the headers of its 429."""
        answer = body.get("max_tokens") or body.get("max_completion_tokens") or 0  # as OpenAI counts a request
        cost = len(Recorded(path, {}, body).prompt) // 4 + int(answer)
        with self._lock:
            now = time.monotonic()
            window = self._window(path, now)
            self._arrived[path] = arrival = self._arrived.get(path, 0) + 1
            over_tokens = self.tokens is not None and window.tokens + cost > self.tokens
            over_budget = window.requests >= self.requests or over_tokens
            if window.in_flight >= self.concurrent or over_budget:
                self.rejected += 1
                if window.first_answer is not None and arrival > self.first_burst:
                    self.rejected_late += over_budget
                    self.busy_late += not over_budget
                wait = 1.0 if not over_budget else self._reset(window, now)
                return {"retry-after": str(max(1, math.ceil(wait))), **self._headers(path, window, now)}
            self.admitted += 1
            window.requests += 1
            window.tokens += cost
            window.log.append((now, cost))
            window.in_flight += 1
            self.most_at_once = max(self.most_at_once, window.in_flight)
            return None

    def headers(self, path: str) -> dict[str, str]:
        with self._lock:
            now = time.monotonic()
            return self._headers(path, self._window(path, now), now)

    def release(self, path: str) -> None:
        with self._lock:
            self._windows[path].in_flight -= 1

    def answered(self, path: str) -> None:
        with self._lock:
            window = self._windows[path]
            if window.first_answer is None:
                window.first_answer = time.monotonic()

    def _window(self, path: str, now: float) -> _Window:
        window = self._windows.setdefault(path, _Window(start=now))
        if self.rolling:
            while window.log and window.log[0][0] <= now - self.window_s:
                window.log.popleft()
            window.requests, window.tokens = len(window.log), sum(cost for _, cost in window.log)
        elif now >= window.start + self.window_s:
            window.start += (now - window.start) // self.window_s * self.window_s
            window.requests = window.tokens = 0
        return window

    def _reset(self, window: _Window, now: float) -> float:
        """Seconds until the window holds nothing again."""
        if self.rolling:
            return window.log[-1][0] + self.window_s - now if window.log else 0.0
        return window.start + self.window_s - now

    def _headers(self, path: str, window: _Window, now: float) -> dict[str, str]:
        reset = max(0.0, self._reset(window, now))
        budgets = [("requests", self.requests, window.requests)]
        if self.tokens is not None:
            budgets.append(("tokens", self.tokens, window.tokens))
        out: dict[str, str] = {}
        for name, limit, used in budgets:
            remaining = str(max(0, limit - used))
            if path.endswith("/messages"):
                at = datetime.now(timezone.utc).timestamp() + reset
                stamp = datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
                out |= {f"anthropic-ratelimit-{name}-limit": str(limit),
                        f"anthropic-ratelimit-{name}-remaining": remaining,
                        f"anthropic-ratelimit-{name}-reset": stamp}
            else:
                out |= {f"x-ratelimit-limit-{name}": str(limit), f"x-ratelimit-remaining-{name}": remaining,
                        f"x-ratelimit-reset-{name}": go_duration(reset)}
        return out


def go_duration(seconds: float) -> str:
    """A duration as OpenAI writes it: "6m0s", "1.5s", "20ms"."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    return (f"{int(minutes)}m" if minutes else "") + f"{rest:.3f}".rstrip("0").rstrip(".") + "s"


@dataclass
class BatchScript:
    """How the server's batches go."""

    polls: int = 0  # status reads answered in progress before a batch ends
    expire: Callable[[int, str], bool] | None = None  # (line index, custom id) left unanswered: it expired
    fail: str | None = None  # OpenAI: the batch fails validation as a whole, with this message
    results_url: str | None = None  # Anthropic: the results_url to announce instead of our own
    batch_id: str | None = None  # the id a created batch is announced with instead of its own


@dataclass
class Batch:
    id: str
    provider: str
    lines: list[dict[str, Any]]
    created_at: int
    input_file_id: str | None = None
    polls: int = 0
    status: str = "in_progress"
    output_file_id: str | None = None
    error_file_id: str | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


class Batches:
    """The batch APIs' state: uploaded files, batches, and every call made to them."""

    def __init__(self, owner: LlmServer) -> None:
        self.owner = owner
        self.script = BatchScript()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, Batch] = {}
        self.calls: list[Recorded] = []
        self._lock = threading.Lock()

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, bytes] | None:
        """The answer to a batch API call, None when ``path`` is not one."""
        found = next(((name, match.groups()) for verb, pattern, name in _BATCH_ROUTES
                      if verb == method and (match := pattern.fullmatch(path.split("?")[0]))), None)
        if found is None:
            return None
        route, ids = found
        with self._lock:
            self.calls.append(Recorded(f"{method} {path}", headers, _json_or_empty(raw)))
            status, data = getattr(self, route)(headers, raw, *ids)
        return status, data if isinstance(data, bytes) else json.dumps(data).encode()

    # OpenAI ----------------------------------------------------------------------------------

    def upload(self, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        from email.parser import BytesParser
        from email.policy import HTTP

        message = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + headers.get("content-type", "").encode() + b"\r\n\r\n" + raw)
        parts = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        data = parts["file"].get_payload(decode=True) if "file" in parts else b""
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = data
        return 200, {"id": file_id, "object": "file", "bytes": len(data), "created_at": 1_700_000_000,
                     "filename": parts["file"].get_filename() if "file" in parts else "", "purpose": "batch",
                     "status": "processed", "expires_at": None, "status_details": None}

    def create_openai(self, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        body = json.loads(raw)
        text = self.files.get(body.get("input_file_id", ""), b"").decode()
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        batch = Batch(f"batch_{len(self.batches) + 1}", "openai", lines, 1_700_000_000,
                      input_file_id=body["input_file_id"], status="validating")
        self.batches[batch.id] = batch
        return 200, {**self.openai_view(batch), "id": self.script.batch_id or batch.id}

    def read_openai(self, headers: dict[str, str], raw: bytes, batch_id: str) -> tuple[int, Any]:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, error_body("/v1/batches", 404)
        self.advance(batch)
        return 200, self.openai_view(batch)

    def cancel_openai(self, headers: dict[str, str], raw: bytes, batch_id: str) -> tuple[int, Any]:
        batch = self.batches[batch_id]
        batch.status = "cancelled"
        return 200, self.openai_view(batch)

    def content(self, headers: dict[str, str], raw: bytes, file_id: str) -> tuple[int, Any]:
        if file_id not in self.files:
            return 404, error_body("/v1/files", 404)
        return 200, self.files[file_id]

    def openai_view(self, batch: Batch) -> dict[str, Any]:
        errors = {"object": "list", "data": [{"code": "invalid_request", "message": self.script.fail, "line": 1,
                                              "param": None}]} if batch.status == "failed" else None
        return {"id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": errors,
                "input_file_id": batch.input_file_id, "completion_window": "24h", "status": batch.status,
                "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
                "created_at": batch.created_at, "in_progress_at": None, "expires_at": batch.created_at + 86400,
                "finalizing_at": None, "completed_at": None, "failed_at": None, "expired_at": None,
                "cancelling_at": None, "cancelled_at": None, "metadata": None,
                "request_counts": {"total": len(batch.lines), "completed": batch.counts.get("completed", 0),
                                   "failed": batch.counts.get("failed", 0)}}

    # Anthropic -------------------------------------------------------------------------------

    def create_anthropic(self, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        body = json.loads(raw)
        batch = Batch(f"msgbatch_{len(self.batches) + 1}", "anthropic", list(body["requests"]), 1_700_000_000)
        self.batches[batch.id] = batch
        return 200, {**self.anthropic_view(batch), "id": self.script.batch_id or batch.id}

    def read_anthropic(self, headers: dict[str, str], raw: bytes, batch_id: str) -> tuple[int, Any]:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, error_body("/v1/messages", 404)
        self.advance(batch)
        return 200, self.anthropic_view(batch)

    def cancel_anthropic(self, headers: dict[str, str], raw: bytes, batch_id: str) -> tuple[int, Any]:
        batch = self.batches[batch_id]
        batch.status = "canceling"
        return 200, self.anthropic_view(batch)

    def anthropic_results(self, headers: dict[str, str], raw: bytes, batch_id: str) -> tuple[int, Any]:
        batch = self.batches[batch_id]
        return 200, "".join(json.dumps(line) + "\n" for line in batch.results).encode()

    def anthropic_view(self, batch: Batch) -> dict[str, Any]:
        ended = batch.status == "ended"
        stamp = "2026-01-01T00:00:00Z"
        counts = {k: batch.counts.get(k, 0) for k in ("succeeded", "errored", "canceled", "expired")}
        url = self.script.results_url or f"{self.owner.url}/v1/messages/batches/{batch.id}/results"
        return {"id": batch.id, "type": "message_batch", "processing_status": batch.status,
                "request_counts": {"processing": 0 if ended else len(batch.lines), **counts},
                "created_at": stamp, "expires_at": "2026-01-02T00:00:00Z", "ended_at": stamp if ended else None,
                "cancel_initiated_at": None, "archived_at": None, "results_url": url if ended else None}

    # Both ------------------------------------------------------------------------------------

    def advance(self, batch: Batch) -> None:
        """Count a status read; once the script's polls are spent, answer every request line."""
        if batch.status not in ("validating", "in_progress"):
            return
        batch.polls += 1
        if batch.polls <= self.script.polls:
            batch.status = "in_progress"
            return
        if batch.provider == "openai" and self.script.fail is not None:
            batch.status = "failed"
            return
        outputs, errors = [], []
        expired = False
        for index, line in enumerate(batch.lines):
            custom_id = line["custom_id"]
            if self.script.expire is not None and self.script.expire(index, custom_id):
                expired = True
                errors.append(self.expired_line(batch, index, custom_id))
                continue
            path = "/v1/chat/completions" if batch.provider == "openai" else "/v1/messages"
            body = line["body"] if batch.provider == "openai" else line["params"]
            step = self.owner.next_step(Recorded(path, {}, body))
            (outputs if step.status < 400 else errors).append(self.answer_line(batch, index, custom_id, path, step))
        if batch.provider == "openai":
            batch.counts = {"completed": len(outputs), "failed": len(errors)}
            if outputs:
                batch.output_file_id = self.store(outputs)
            if errors:
                batch.error_file_id = self.store(errors)
            batch.status = "expired" if expired else "completed"
        else:
            batch.results = outputs + errors
            kinds = [line["result"]["type"] for line in batch.results]
            batch.counts = {k: kinds.count(k) for k in ("succeeded", "errored", "canceled", "expired")}
            batch.status = "ended"

    def store(self, lines: list[dict[str, Any]]) -> str:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return file_id

    def answer_line(self, batch: Batch, index: int, custom_id: str, path: str, step: Step) -> dict[str, Any]:
        if batch.provider == "anthropic":
            if step.status >= 400:
                return {"custom_id": custom_id, "result": {"type": "errored",
                                                           "error": error_body(path, step.status, step.error)}}
            return {"custom_id": custom_id, "result": {"type": "succeeded", "message": answer(path, step)}}
        body = error_body(path, step.status, step.error) if step.status >= 400 else answer(path, step)
        return {"id": f"batch_req_{index}", "custom_id": custom_id,
                "response": {"status_code": step.status, "request_id": f"req_{index}", "body": body}, "error": None}

    def expired_line(self, batch: Batch, index: int, custom_id: str) -> dict[str, Any]:
        if batch.provider == "anthropic":
            return {"custom_id": custom_id, "result": {"type": "expired"}}
        return {"id": f"batch_req_{index}", "custom_id": custom_id, "response": None,
                "error": {"code": "batch_expired",
                          "message": "This request could not be executed before the completion window expired."}}


_ID = r"([A-Za-z0-9_-]+)"
_BATCH_ROUTES = [(verb, re.compile(pattern), name) for verb, pattern, name in (
    ("POST", "/v1/files", "upload"),
    ("POST", "/v1/batches", "create_openai"),
    ("GET", f"/v1/batches/{_ID}", "read_openai"),
    ("POST", f"/v1/batches/{_ID}/cancel", "cancel_openai"),
    ("GET", f"/v1/files/{_ID}/content", "content"),
    ("POST", "/v1/messages/batches", "create_anthropic"),
    ("GET", f"/v1/messages/batches/{_ID}", "read_anthropic"),
    ("POST", f"/v1/messages/batches/{_ID}/cancel", "cancel_anthropic"),
    ("GET", f"/v1/messages/batches/{_ID}/results", "anthropic_results"),
)]


def _json_or_empty(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


class LlmServer:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.rate_limit: RateLimit | None = None
        self.requests: list[Recorded] = []
        self.queue: deque[Step] = deque()
        self.default: Step | Callable[[Recorded], Step] = Step()
        self.batches = Batches(self)
        self.in_work = 0  # model requests being answered now
        self.most_at_once = 0  # the most there ever were
        self.busy_above: int | None = None  # more requests in work at once than this are refused
        self.busy_status = 429
        self.refused = 0  # requests refused as more than busy_above at once
        self.slots: int | None = None  # at most this many in work at once; the others queue
        self.waiting = 0  # requests queued for a slot now
        self.most_waiting = 0  # the most there ever were
        self._served = 0  # the queue's tickets: the next one served, and the next one given
        self._given = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._slot_free = threading.Condition(self._lock)
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self.scheme = "http"
        if tls is not None:  # https: each connection's handshake is made as it is accepted
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
            self.scheme = "https"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{self.scheme}://{host!s}:{port}"

    def start(self) -> LlmServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()  # wakes every delayed or hanging handler
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> LlmServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def script(self, *steps: Step) -> None:
        self.queue.extend(steps)

    def next_step(self, request: Recorded) -> Step:
        with self._lock:
            self.requests.append(request)
            if self.queue:
                return self.queue.popleft()
        return self.default(request) if callable(self.default) else self.default

    def wait(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def take_place(self) -> None:
        """A place in work: at once, or, with ``slots``, when the requests queued before it have
        theirs and a slot is free. Called holding ``_lock``."""
        if self.slots is not None:
            ticket, self._given = self._given, self._given + 1
            self.waiting += 1
            # more at the server than it has slots: counted so, a request about to take a slot
            # just freed (its thread not yet woken on a loaded machine) is not counted twice
            self.most_waiting = max(self.most_waiting, self.in_work + self.waiting - self.slots)
            while (self._served != ticket or self.in_work >= self.slots) and not self._stop.is_set():
                self._slot_free.wait(0.05)
            self.waiting -= 1
            self._served += 1
            self._slot_free.notify_all()
        self.in_work += 1
        self.most_at_once = max(self.most_at_once, self.in_work)

    def leave_place(self) -> None:
        with self._lock:
            self.in_work -= 1
            self._slot_free.notify_all()


def answer(path: str, step: Step) -> dict[str, Any]:
    if step.tool_calls is not None:
        return tool_answer(path, step)
    text = step.content if step.content is not None else json.dumps({"findings": step.findings})
    if path.endswith("/messages"):
        if step.content is not None:
            content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        else:
            tool_input = step.tool_input if step.tool_input is not None else {"findings": step.findings}
            content = [{"type": "tool_use", "id": "toolu_test", "name": step.tool_name, "input": tool_input}]
        stop = "max_tokens" if step.truncated else "end_turn" if step.content is not None else "tool_use"
        stop = step.finish or stop
        return {"id": "msg_test", "type": "message", "role": "assistant", "model": step.model, "content": content,
                "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": step.tokens[0], "output_tokens": step.tokens[1], **step.usage}}
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000, "model": step.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": step.finish or ("length" if step.truncated else "stop")}],
            "usage": {"prompt_tokens": step.tokens[0], "completion_tokens": step.tokens[1],
                      "total_tokens": sum(step.tokens), **step.usage}}


def tool_answer(path: str, step: Step) -> dict[str, Any]:
    """The model asks for ``step.tool_calls`` instead of answering (ids numbered in the turn)."""
    calls = step.tool_calls or []
    if path.endswith("/messages"):
        content = [{"type": "tool_use", "id": f"toolu_{i:02d}", "name": name, "input": arguments}
                   for i, (name, arguments) in enumerate(calls)]
        return {"id": "msg_test", "type": "message", "role": "assistant", "model": step.model,
                "content": [{"type": "text", "text": "Let me look."}, *content], "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": step.tokens[0], "output_tokens": step.tokens[1], **step.usage}}
    tool_calls = [{"id": f"call_{i:02d}", "type": "function",
                   "function": {"name": name,
                                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}}
                  for i, (name, arguments) in enumerate(calls)]
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000, "model": step.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
                         "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": step.tokens[0], "completion_tokens": step.tokens[1],
                      "total_tokens": sum(step.tokens), **step.usage}}


def tool_results(request: Recorded) -> list[tuple[str, str, bool]]:
    """(call id, content, is error) of every tool result the request sends back, in order."""
    found: list[tuple[str, str, bool]] = []
    for message in request.body.get("messages", []):
        if message.get("role") == "tool":
            content = message["content"]
            found.append((message["tool_call_id"], content, str(content).startswith("error:")))
        elif message.get("role") == "user" and isinstance(message.get("content"), list):
            found += [(b["tool_use_id"], b["content"], bool(b.get("is_error"))) for b in message["content"]
                      if b.get("type") == "tool_result"]
    return found


def error_body(path: str, status: int, error: dict[str, Any] | None = None) -> dict[str, Any]:
    if path.endswith("/messages"):
        kind = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}.get(status, "api_error")
        return {"type": "error", "error": error or {"type": kind, "message": f"test server says {status}"}}
    return {"error": error or {"message": f"test server says {status}", "type": "server_error", "code": None}}


def _handler(owner: LlmServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one answer, no delayed-ACK stall between headers and body

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.batch_call("GET", b"") or self.reply(404, json.dumps(error_body(self.path, 404)).encode(), {})

        def batch_call(self, method: str, raw: bytes) -> bool:
            """A call to the batch APIs, answered; False for any other path."""
            headers = {k.lower(): v for k, v in self.headers.items()}
            handled = owner.batches.handle(method, self.path, headers, raw)
            if handled is None:
                return False
            self.reply(*handled, {})
            return True

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            if self.batch_call("POST", raw):
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = {}
            request = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            limit = owner.rate_limit
            refused = limit.admit(self.path, body) if limit is not None else None
            with owner._lock:  # taking a place in work and refusing one are one step: no race past busy_above
                busy = refused is None and owner.busy_above is not None and owner.in_work >= owner.busy_above
                owner.refused += busy
                if refused is None and not busy:
                    owner.take_place()
            if refused is not None:
                status, payload, headers = 429, json.dumps(error_body(self.path, 429)).encode(), refused
            elif busy:
                status, payload, headers = owner.busy_status, json.dumps(error_body(self.path, 429)).encode(), {}
            else:
                step = owner.next_step(request)
                try:
                    status, payload, headers = self.answer_step(step, limit)
                finally:
                    owner.leave_place()
                    if limit is not None:  # done working: the answer is ready to go
                        limit.release(self.path)
                if step.drop:  # a connection reset: no answer at all
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
            self.reply(status, payload, headers)
            if limit is not None:
                limit.answered(self.path)

        def answer_step(self, step: Step, limit: RateLimit | None) -> tuple[int, bytes, dict[str, str]]:
            if step.delay:
                owner.wait(step.delay)
            if step.body is not None:
                payload = step.body
            elif step.status >= 400:
                payload = json.dumps(error_body(self.path, step.status, step.error)).encode()
            else:
                payload = json.dumps(answer(self.path, step)).encode()
            extra = limit.headers(self.path) if limit is not None else {}
            return step.status, payload, {**extra, **step.headers}

        def reply(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (its deadline); nothing to answer

    return Handler


class EveryNth:
    """A model behind an endpoint that answers 500 to every ``n``-th request it gets (counting
    all of them, retries included), and as ``answer`` says to the others."""

    def __init__(self, n: int, answer: Step | Callable[[Recorded], Step], status: int = 500,
                 delay: float = 0.0) -> None:
        self.n = n
        self.answer = answer
        self.status = status
        self.delay = delay
        self.seen = 0
        self.faults = 0
        self._lock = threading.Lock()

    def __call__(self, request: Recorded) -> Step:
        with self._lock:
            self.seen += 1
            if self.seen % self.n == 0:
                self.faults += 1
                return Step(status=self.status, delay=self.delay)
        return self.answer(request) if callable(self.answer) else self.answer


LENS_HEADING = re.compile(r"^# Lens (\S+)$", re.MULTILINE)
FILE_HEADER = re.compile(r"^file: (\S+) \[\w+\](?: \(renamed from [^)]*\))?(?: \(lenses: ([^)]*)\))?", re.MULTILINE)


def every_file(request: Recorded, severity: str = "warning") -> Step:
    """A reviewer that reports one finding on line 1 of every file shown to it, under every lens
    that reads the file (a packed request), tokens counted from the prompt's length: what a
    model that misses nothing would answer, to measure what packing keeps and costs."""
    system, user = _messages(request)
    packed = bool(LENS_HEADING.search(system))
    findings: dict[tuple[str, str | None], dict[str, Any]] = {}
    for match in FILE_HEADER.finditer(user):
        path, readers = match.group(1), match.group(2)
        for lens in (readers.split(", ") if packed and readers else [None]):
            finding: dict[str, Any] = {"severity": severity, "message": f"look at {path}", "file": path, "line": 1}
            if lens is not None:
                finding["agent"] = lens
            findings[(path, lens)] = finding
    return Step(findings=list(findings.values()), tokens=(len(system + user) // 4, 30 * len(findings) + 10))


def _messages(request: Recorded) -> tuple[str, str]:
    body = request.body
    system = body.get("system") or ""
    if isinstance(system, list):
        system = "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    messages = body.get("messages", [])
    if messages and messages[0].get("role") == "system":
        system, messages = str(messages[0]["content"]), messages[1:]
    return system, "\n".join(m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
                              for m in messages)
