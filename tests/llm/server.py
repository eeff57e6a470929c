"""A scriptable model server for tests and benchmarks: a real HTTP server on 127.0.0.1 in a
thread, speaking both OpenAI chat completions (``/v1/chat/completions``) and the Anthropic
Messages API (``/v1/messages``), recording every request (headers and JSON body).

Each request takes the next scripted ``Step`` from the queue, or ``default`` when the queue is
empty (``default`` may be a function of the request, to answer by content).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 stalls a burst of parallel connects by a second


@dataclass
class Step:
    findings: list[dict[str, Any]] = field(default_factory=list)
    delay: float = 0.0  # seconds before answering (a hang is a long delay)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None  # sent verbatim instead of a built answer (malformed JSON...)
    content: str | None = None  # the model's text instead of the findings JSON
    tool_input: Any = None  # anthropic: the tool call's input instead of {"findings": ...}
    truncated: bool = False  # finish_reason length / stop_reason max_tokens
    tokens: tuple[int, int] = (100, 20)
    model: str = "test-model-1"
    usage: dict[str, Any] = field(default_factory=dict)  # more usage fields: cached and reasoning token details
    error: dict[str, Any] | None = None  # with status >= 400: the "error" object (message, param, code...)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """Every message text of the request, system included."""
        parts = [self.body.get("system") or ""]
        parts += [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
                  for m in self.body.get("messages", [])]
        return "\n".join(parts)


class LlmServer:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.queue: deque[Step] = deque()
        self.default: Step | Callable[[Recorded], Step] = Step()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

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


def answer(path: str, step: Step) -> dict[str, Any]:
    text = step.content if step.content is not None else json.dumps({"findings": step.findings})
    if path.endswith("/messages"):
        if step.content is not None:
            content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        else:
            tool_input = step.tool_input if step.tool_input is not None else {"findings": step.findings}
            content = [{"type": "tool_use", "id": "toolu_test", "name": "report_findings", "input": tool_input}]
        stop = "max_tokens" if step.truncated else "end_turn" if step.content is not None else "tool_use"
        return {"id": "msg_test", "type": "message", "role": "assistant", "model": step.model, "content": content,
                "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": step.tokens[0], "output_tokens": step.tokens[1], **step.usage}}
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000, "model": step.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "length" if step.truncated else "stop"}],
            "usage": {"prompt_tokens": step.tokens[0], "completion_tokens": step.tokens[1],
                      "total_tokens": sum(step.tokens), **step.usage}}


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

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = {}
            request = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            step = owner.next_step(request)
            if step.delay:
                owner.wait(step.delay)
            if step.body is not None:
                payload = step.body
            elif step.status >= 400:
                payload = json.dumps(error_body(self.path, step.status, step.error)).encode()
            else:
                payload = json.dumps(answer(self.path, step)).encode()
            try:
                self.send_response(step.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in step.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (its deadline); nothing to answer

    return Handler
