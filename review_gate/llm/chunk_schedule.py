"""A lens review's chunks sent concurrently under one deadline (the governor paces the requests):
what was answered, what was lost to transient faults, and the first permanent fault raised."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, TypeVar

import anyio
import anyio.lowlevel

from review_gate.errors import AgentFault, TransientAgentFault
from review_gate.llm.governor import NoTurn
from review_gate.models import Usage

CUTOFF_S = 0.5  # a review returns what it has this long before its deadline (at most a tenth of it)
# Turns of the event loop given to the requests started before the next chunk is made: a request
# takes several to go out (the pool, the connection, its address resolved in a worker thread, the
# write). A turn with nothing to do costs microseconds.
TURNS = 20


class _Spent(Protocol):
    @property
    def usage(self) -> Usage: ...


A = TypeVar("A", bound=_Spent)


async def schedule(users: Iterable[str], deadline: float | None, review_one: Callable[[str], Awaitable[A]],
                   ) -> tuple[list[A | None], dict[int, AgentFault]]:
    """Review every chunk concurrently (the governor paces the requests); a chunk whose turn
    comes too late, or whose request failed transiently after its retries (``lost``), stays
    None. The first permanent fault cancels the others and is raised, carrying every chunk's
    tokens. Just before ``deadline``, once a chunk is answered, the ones still in flight are
    given up (None); while none is, the deadline takes its course and the review times out.

    ``users`` may be made as they are taken (a large change's chunks are rendered one by one):
    each chunk's request is on its way before the next is made, so that the first answers,
    which tell how many more the endpoint takes at once, come back while the rest are made,
    not a round trip after. (Made in a worker thread instead, the chunks took twice as long:
    the thread and the event loop took the interpreter's lock from each other, and an explicit
    max_concurrency: 64 sent its last request 0.3 s later.) Cut short (the deadline, a
    permanent fault), ``users`` is left where it was: the results are those of the chunks
    taken."""
    results: list[A | None] = []
    lost: dict[int, AgentFault] = {}
    fatal: list[AgentFault] = []
    chunks = anyio.CancelScope()

    async def one(index: int, user: str) -> None:
        try:
            results[index] = await review_one(user)
        except NoTurn:
            pass
        except TransientAgentFault as fault:
            lost[index] = fault
        except AgentFault as fault:
            fatal.append(fault)
            chunks.cancel()

    async def cut_short(at: float) -> None:
        await anyio.sleep_until(at)
        if any(r is not None for r in results):
            chunks.cancel()

    async with anyio.create_task_group() as watch:
        if deadline is not None:
            left = deadline - anyio.current_time()
            watch.start_soon(cut_short, deadline - max(0.0, min(CUTOFF_S, left / 10)))
        with chunks:
            async with anyio.create_task_group() as group:
                for user in users:
                    results.append(None)
                    group.start_soon(one, len(results) - 1, user)
                    for _ in range(TURNS):  # its request goes out before the next chunk is made
                        await anyio.lowlevel.checkpoint()
        watch.cancel_scope.cancel()
    if fatal:
        usage = sum((c.usage for c in results if c is not None), Usage())
        usage = sum((f.spent for f in [*fatal, *lost.values()] if f.spent is not None), usage)
        fatal[0].spent = usage
        raise fatal[0]
    return results, lost


__all__ = ["CUTOFF_S", "schedule"]
