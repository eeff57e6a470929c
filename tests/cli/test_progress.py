"""Long runs show progress: per agent, requests answered of all, tokens, time and an estimate on a
terminal; off one, a status line at most every 15 s while reviews run (the clock injected: no
test waits)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from review_gate import api
from review_gate.models import AgentResult, Usage
from review_gate.surfaces.commands.progress import Progress
from tests.conftest import make_diff
from tests.llm.conftest import KEY, llm_agent, write_config
from tests.llm.server import LlmServer, Step


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_a_status_line_at_most_every_15_seconds_while_reviews_run(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A 202-request review showed 103 s of silence in a CI log."""
    clock = Clock()
    progress = Progress(live=False, quiet=True, clock=clock, status_thread=False)
    progress("build-reviewer", "queued", None)
    progress("patterns", "queued", None)
    progress("build-reviewer", "running", None)
    progress.on_request("build-reviewer", 0, 12, Usage())
    said: list[str] = []

    def at(now: float) -> None:
        clock.now = now
        progress.tick()
        said.extend(line for line in capsys.readouterr().err.splitlines() if line)

    at(110.0)
    assert said == []  # not 15 s yet
    progress.on_request("build-reviewer", 3, 12, Usage(tokens_in=40_000, tokens_out=5_100))
    at(115.0)
    assert said == ["review-gate: 0 of 2 agents done; running: build-reviewer 3/12 requests · 45.1k tokens · "
                    "15.0s · ~45s left"]
    at(125.0)
    assert len(said) == 1  # at most one line every 15 s
    done = AgentResult(id="patterns", kind="pattern", status="completed", attempts=1, duration_s=0.1, files=[])
    progress("patterns", "done", done)
    at(131.0)
    assert said[-1].startswith("review-gate: 1 of 2 agents done; running: build-reviewer 3/12 requests")
    progress("build-reviewer", "done", done.model_copy(update={"id": "build-reviewer"}))
    at(200.0)
    assert len(said) == 2  # nothing runs: no line


def test_a_terminal_row_says_requests_tokens_elapsed_and_what_is_left() -> None:
    clock = Clock()
    progress = Progress(live=False, clock=clock, status_thread=False)
    progress("llm", "running", None)
    clock.now += 98.9
    progress.on_request("llm", 101, 202, Usage(tokens_in=900_000, tokens_out=12_000))
    assert progress.doing("llm", clock.now) == "101/202 requests · 912.0k tokens · 98.9s · ~2m left"


def test_the_review_tells_its_listener_of_each_request_answered(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    heard: list[tuple[str, int, int, int]] = []

    class Listener:
        def __call__(self, agent: str, event: str, result: AgentResult | None) -> None:
            pass

        def on_request(self, agent: str, done: int, total: int, usage: Usage) -> None:
            heard.append((agent, done, total, usage.tokens_in + usage.tokens_out))

    diff = make_diff("app.py", ["x = eval(input())"]).encode()

    async def main() -> Any:
        return await api.review_async(diff=diff, config=cfg, state=False, listener=Listener())

    with LlmServer() as server:
        server.default = Step(findings=[])
        cfg = write_config(tmp_path, [llm_agent("llm", server)])
        anyio.run(main)
    assert heard == [("llm", 0, 1, 0), ("llm", 1, 1, 120)]
