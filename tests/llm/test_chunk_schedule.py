"""A lens review's chunks (``review_gate.llm.chunk_schedule``): made one at a time, each chunk's
request is on its way while the next is made (issue 33: the 800-file change's 37 chunks took
0.6 s to render, and the probe's requests waited for all of them, a round trip later than
needed). No assertion reads a clock: what had started when the next chunk was made."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import anyio
import pytest

from review_gate.errors import AgentFault
from review_gate.llm.chunk_schedule import schedule
from review_gate.models import Usage

WAIT_S = 30.0  # a safety net only: the test never waits this long unless the schedule is wrong


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Answer:
    user: str
    usage: Usage = field(default_factory=Usage)


@pytest.mark.anyio
async def test_a_chunks_request_goes_out_while_the_next_chunk_is_made() -> None:
    started: dict[str, threading.Event] = {u: threading.Event() for u in ("a", "b", "c")}
    seen: list[bool] = []
    planned: list[int] = []

    def users() -> Iterator[str]:
        for user, before in (("a", None), ("b", "a"), ("c", "b")):
            if before is not None:  # made only once the request before it has gone out
                seen.append(started[before].wait(WAIT_S))
            yield user

    async def review_one(user: str) -> Answer:
        started[user].set()
        await anyio.sleep(0)
        return Answer(user)

    with anyio.fail_after(2 * WAIT_S):
        results, lost = await schedule(users(), None, review_one, planned=lambda: planned.append(len(seen)))
    assert seen == [True, True]
    assert [r.user for r in results if r is not None] == ["a", "b", "c"] and lost == {}
    assert planned == [2]  # told once, after the last chunk was made


@pytest.mark.anyio
async def test_a_permanent_fault_stops_the_making_of_chunks() -> None:
    made: list[int] = []
    failed = threading.Event()

    def users() -> Iterator[str]:
        for index in range(50):
            made.append(index)
            if index == 2:
                failed.wait(WAIT_S)  # the first request's fault is in before the third chunk is out
            yield f"u{index}"

    async def review_one(user: str) -> Answer:
        if user == "u0":
            failed.set()
            raise AgentFault("a refused key")
        await anyio.sleep_forever()
        raise AssertionError("not reached")

    with anyio.fail_after(2 * WAIT_S), pytest.raises(AgentFault):
        await schedule(users(), None, review_one)
    assert len(made) < 50  # the rest were never made
