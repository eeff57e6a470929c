"""How many requests an endpoint gets at once (``review_gate.llm.concurrency``): small until the
headers tell the budgets, open then; without headers opened by a probe answered side by side, or
set to the slots of a server that queued the probe (then a request a round trip); halved on a
push back; a learned or explicit cap kept."""

from __future__ import annotations

import pytest

from review_gate.llm.concurrency import CEILING, SLOTS, START, Flow
from review_gate.llm.governor import Governor, Limits, Need

NEED = Need(100, 50)
ROOM = {"x-ratelimit-remaining-requests": "900", "x-ratelimit-reset-requests": "1s",
        "x-ratelimit-remaining-tokens": "900000", "x-ratelimit-reset-tokens": "1s"}


def test_it_starts_small_and_opens_once_the_headers_tell_the_budgets() -> None:
    flow = Flow(START, CEILING, explicit=False)
    assert flow.limit == START == SLOTS + 1 == 5
    flow.answered(1.0, index=1, headers=False)
    assert flow.limit == START  # an answer without budgets: the next request takes its place
    flow.answered(1.0, index=2, headers=True)
    assert flow.limit == CEILING == 64


def test_an_endpoint_without_headers_opens_once_its_first_requests_come_back_calm() -> None:
    flow = Flow(START, CEILING, explicit=False)
    for index in range(1, START):  # the probe: each answer lets the next request take its place
        flow.answered(2.0, index, headers=False, sent=START, at_once=index)
    assert flow.limit == START
    flow.answered(2.1, index=START, headers=False, sent=START + 4, at_once=START)  # START side by side, calm
    assert flow.limit == CEILING


def test_calm_answers_to_requests_never_in_flight_together_do_not_open_it() -> None:
    # reviews of 2 chunks one after another at the same endpoint: many calm answers, never 5 at once
    flow = Flow(START, CEILING, explicit=False)
    for index in range(1, 20):
        at = 2.0 * (index // 2)
        flow.answered(2.0, index, headers=False, sent=index, at_once=1 + index % 2, at=at)
    assert flow.limit == START


def test_a_probe_sent_too_spread_out_to_tell_is_sent_again() -> None:
    # 4 slots, answers in 0.3 s; the probe's 5th request went out 0.2 s after the others (a
    # loaded machine): it waited 0.1 s for a slot, and its 0.4 s are within 1.5 times 0.3 s
    flow = Flow(START, CEILING, explicit=False)
    for index in range(1, SLOTS + 1):
        flow.answered(0.3, index, headers=False, sent=START + index, at_once=index, at=0.0)
    flow.answered(0.4, index=START, headers=False, sent=START + SLOTS, at_once=START, at=0.2)
    assert flow.limit == START  # in flight together for 0.1 s only: it cannot tell, and does not open
    for index in range(START + 1, START + SLOTS):  # the next batch: 3 went out at 0.3 beside the 5th
        flow.answered(0.3, index, headers=False, sent=START + SLOTS, at_once=START, at=0.3)
    flow.answered(0.6, index=START + SLOTS, headers=False, sent=START + SLOTS + 3, at_once=START, at=0.3)
    assert flow.limit == SLOTS  # the 4th of them waited for a slot: a server with 4


def test_a_server_with_four_slots_that_queues_the_fifth_gets_four() -> None:
    # llama-server's default: 4 slots, the 5th request waits for one (a round trip late)
    flow = Flow(START, CEILING, explicit=False)
    for index in range(1, SLOTS + 1):
        flow.answered(2.0, index, headers=False, sent=START + index, at_once=index)
    flow.answered(4.0, index=START, headers=False, sent=START + SLOTS, at_once=START)
    assert flow.limit == SLOTS  # what it answered side by side, not the ceiling
    for index in range(START + 1, START + SLOTS + 1):  # the requests in flight at the verdict, queued too
        flow.answered(4.0, index, headers=False, sent=START + SLOTS, at_once=START)
    assert flow.limit == SLOTS  # no second cut for them, and no opening
    for index in range(20, 20 + 2 * SLOTS):  # calm again: a request a round trip
        flow.answered(2.0, index, headers=False, sent=index, at_once=SLOTS)
    assert SLOTS < flow.limit <= SLOTS + 2


def test_a_server_that_queues_the_probe_never_opens_it() -> None:
    # one slot (llama-server -np 1): the probe's answers come back one slot-time after another
    flow = Flow(START, CEILING, explicit=False)
    for index, latency in enumerate((1.0, 2.0, 3.0, 4.0, 5.0, 6.0), start=1):
        flow.answered(latency, index, headers=False, sent=4)
    assert flow.limit <= START


def test_after_a_push_back_an_endpoint_without_headers_grows_a_request_a_round_trip() -> None:
    flow = Flow(6, CEILING, explicit=False)
    for index in range(1, 3):
        flow.answered(2.0, index, headers=False, sent=6, at_once=index)
    assert flow.limit == 6
    flow.pushed_back(index=3, sent=8)  # a 429 (or 503, 529) above what it takes
    assert flow.limit == 3
    flow.pushed_back(index=5, sent=8)  # sent before the halving: not again
    assert flow.limit == 3
    for index in range(9, 9 + 3):  # a round trip: 3 answers
        flow.answered(2.0, index, headers=False, sent=index, at_once=3)
    assert flow.window == pytest.approx(4, abs=0.1)
    for index in range(10, 200):  # never opened at once again: a request a round trip
        flow.answered(2.0, index, headers=False, sent=index)
    assert START < flow.limit < 24


def test_an_explicit_max_concurrency_bounds_an_endpoint_without_headers() -> None:
    governor = Governor("e", Limits(max_concurrency=6))
    for index in range(100):
        ticket = governor.take(NEED, float(index))
        ticket.observe({}, 200, now=index + 0.5)
        governor.release(ticket)
    assert governor.concurrency == 6
    refused = governor.take(NEED, 200.0)
    refused.observe({}, 503, now=200.5)
    assert governor.concurrency == 3


def test_latency_that_rises_without_headers_halves_the_window_once_a_round() -> None:
    flow = Flow(START, CEILING, explicit=False)
    for index in range(1, START + 1):  # the probe, side by side: open
        flow.answered(1.0, index, headers=False, sent=START, at_once=index)
    assert flow.limit == CEILING
    flow.answered(2.5, index=6, headers=False, sent=40)  # one slow answer: not twice the fastest, not calm
    assert flow.limit == CEILING
    flow.answered(4.0, index=7, headers=False, sent=40)  # queueing: now it is twice
    assert flow.limit == CEILING // 2
    flow.answered(9.0, index=8, headers=False, sent=40)  # sent before the cut: no second halving
    assert flow.limit == CEILING // 2
    for index in range(41, 41 + 32):  # calm again: a request a round trip, not one an answer
        flow.answered(1.0, index, headers=False, sent=index)
    assert CEILING // 4 <= flow.limit <= CEILING // 2 + 1


def test_a_429_halves_it_once_and_it_grows_back_a_request_a_round() -> None:
    flow = Flow(START, CEILING, explicit=False)
    flow.answered(1.0, index=1, headers=True)
    flow.pushed_back(index=10, sent=64)
    assert flow.limit == 32
    flow.pushed_back(index=20, sent=64)  # in flight when it was halved
    assert flow.limit == 32
    for index in range(65, 65 + 33):
        flow.answered(1.0, index, headers=True)
    assert flow.limit == 33
    flow.pushed_back(index=70, sent=100)
    assert flow.limit == 16


def test_a_429_with_room_in_every_budget_is_the_servers_own_cap_on_requests_at_once() -> None:
    governor = Governor("e")
    first = governor.take(NEED, 0.0)
    first.observe(ROOM, 200, now=1.0)
    governor.release(first)
    assert governor.concurrency == 64
    tickets = [governor.take(NEED, 1.0) for _ in range(7)]
    tickets[5].observe({**ROOM, "retry-after": "1"}, 429, now=1.1)  # the 6th at once was one too many
    assert governor.concurrency == 5
    for index in range(200):  # for the rest of the run
        ticket = governor.take(NEED, 3.0 + index)
        ticket.observe(ROOM, 200, now=3.5 + index)
        governor.release(ticket)
    assert governor.concurrency == 5


def test_a_429_on_a_spent_budget_halves_the_window() -> None:
    governor = Governor("e")
    first = governor.take(NEED, 0.0)
    first.observe(ROOM, 200, now=1.0)
    spent = governor.take(NEED, 1.0)
    spent.observe({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"}, 429, now=1.1)
    assert governor.concurrency == 32


def test_an_explicit_max_concurrency_starts_there_and_is_a_hard_cap() -> None:
    governor = Governor("e", Limits(max_concurrency=2))
    assert governor.concurrency == 2  # no slow start: the team knows its server
    ticket = governor.take(NEED, 0.0)
    ticket.observe(ROOM, 200, now=0.5)
    assert governor.concurrency == 2  # generous headers open nothing past it
    wide = Governor("e", Limits(max_concurrency=64))
    assert wide.concurrency == 64


def test_past_the_most_ever_answered_at_once_requests_go_out_spaced() -> None:
    # A server that takes fewer at once than its headers let on then refuses a few, not a burst
    # (before the spacing: 45 refusals in the rate-limited benchmark row, 4 after).
    governor = Governor("e")
    first = governor.take(NEED, 0.0)
    first.observe(ROOM, 200, now=1.0)
    governor.release(first)
    held = [governor.take(NEED, 1.0) for _ in range(START)]  # the start: at once
    assert governor.ramp(1.0) == 0
    held.append(governor.take(NEED, 1.0))  # one more at once: more than ever answered
    assert governor.ramp(1.0) == pytest.approx(0.005) and governor.ramp(1.006) == 0
    for ticket in held:
        ticket.observe(ROOM, 200, now=1.2)
        governor.release(ticket)
    assert governor.proven == START + 1
    for _ in range(START + 1):  # that many were answered at once: they go at once, as does the next, a while
        governor.take(NEED, 2.0)  # after the last raise
    assert governor.ramp(2.0) == 0
    governor.take(NEED, 2.0)
    assert governor.ramp(2.0) == pytest.approx(0.005)  # the one after waits
    assert Governor("e", Limits(max_concurrency=8)).ramp(0.0) == 0  # an explicit cap: no spacing


def test_a_push_back_after_the_probe_opened_it_drops_to_what_was_answered_at_once() -> None:
    # a proxy that takes 6 at once and refuses the rest, saying nothing: one refusal, not five halvings
    governor = Governor("e")
    held = [governor.take(NEED, 0.0) for _ in range(START)]
    for ticket in held:
        ticket.observe({}, 200, now=2.0)
        governor.release(ticket)
    assert governor.concurrency == CEILING  # the probe came back calm
    more = [governor.take(NEED, 2.0) for _ in range(7)]
    for ticket in more[:6]:
        ticket.observe({}, 200, now=4.0)
    more[6].observe({}, 429, now=2.1)
    assert governor.concurrency == 6  # the most answered at once, not 32
