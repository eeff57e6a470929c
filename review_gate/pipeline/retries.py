"""An agent's attempts: retried while it raises a transient fault, within its deadline (which the
caller's ``fail_after`` holds), waiting what the fault asked for or a jittered backoff."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from review_gate.errors import TransientAgentFault

T = TypeVar("T")


def first_wait(fault: TransientAgentFault) -> float:
    """How long to wait after a first attempt failed: what the fault asked for (Retry-After), else
    0.5 s with up to 0.5 s of jitter (the first step of the backoff ``attempts`` continues)."""
    if fault.retry_after is not None:
        return max(0.0, fault.retry_after)
    return 0.5 + random.uniform(0, 0.5)


async def attempts(run: Callable[[], Awaitable[T]], retries: int, retrying: Callable[[], None]) -> T:
    """``run``, again up to ``retries`` times while it raises a transient fault, waiting what the
    fault asked for (Retry-After) or a jittered exponential backoff (0.5 s doubling to 10 s).
    tenacity runs the retries; it is imported only when a first attempt failed: a review whose
    agents answer at once (every small offline review) never loads it."""
    try:
        return await run()
    except TransientAgentFault as fault:
        if retries < 1:
            raise
        first = fault
    from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
    from tenacity.wait import wait_exponential, wait_random

    backoff = wait_exponential(multiplier=1, max=10) + wait_random(0, 0.5)  # the steps after the first

    def wait(state: RetryCallState) -> float:
        fault = state.outcome.exception() if state.outcome else None
        if isinstance(fault, TransientAgentFault) and fault.retry_after is not None:
            return max(0.0, fault.retry_after)
        return float(backoff(state))

    retrying()
    await anyio.sleep(first_wait(first))
    async for attempt in AsyncRetrying(stop=stop_after_attempt(retries), retry=retry_if_exception_type(
            TransientAgentFault), wait=wait, sleep=anyio.sleep, reraise=True, before_sleep=lambda _: retrying()):
        with attempt:
            return await run()
    raise AssertionError("tenacity ends with a result or the last fault")  # pragma: no cover


__all__ = ["attempts", "first_wait"]
