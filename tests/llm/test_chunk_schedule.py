"""A lens review's chunks (``review_gate.llm.chunk_schedule``): made one at a time, each chunk's
request is on its way while the next is made (issue 33: the 800-file change's 37 chunks took
0.6 s to render, and the probe's requests waited for all of them, a round trip later than
needed). No assertion reads a clock: what had started when the next chunk was made."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import anyio
import anyio.lowlevel
import pytest

from review_gate.errors import AgentFault
from review_gate.llm.chunk_schedule import schedule
from review_gate.models import Usage

WAIT_S = 30.0  # a safety net only: the tests never wait this long


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Answer:
    user: str
    usage: Usage = field(default_factory=Usage)


@pytest.mark.anyio
async def test_a_chunks_request_goes_out_before_the_next_chunk_is_made() -> None:
    started: list[str] = []
    seen: list[list[str]] = []

    def users() -> Iterator[str]:
        for user in ("a", "b", "c"):
            seen.append(list(started))  # what had gone out when this chunk was made
            yield user

    async def review_one(user: str) -> Answer:
        started.append(user)
        await anyio.lowlevel.checkpoint()
        return Answer(user)

    with anyio.fail_after(WAIT_S):
        results, lost = await schedule(users(), None, review_one)
    assert seen == [[], ["a"], ["a", "b"]]
    assert [r.user for r in results if r is not None] == ["a", "b", "c"] and lost == {}


@pytest.mark.anyio
async def test_a_permanent_fault_stops_the_making_of_chunks() -> None:
    made: list[int] = []

    def users() -> Iterator[str]:
        for index in range(50):
            made.append(index)
            yield f"u{index}"

    async def review_one(user: str) -> Answer:
        if user == "u0":
            raise AgentFault("a refused key")
        await anyio.sleep_forever()
        raise AssertionError("not reached")

    with anyio.fail_after(WAIT_S), pytest.raises(AgentFault):
        await schedule(users(), None, review_one)
    assert len(made) <= 2  # the first request's fault stopped the rest from being made
