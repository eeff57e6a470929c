"""Reading the providers' rate-limit headers (``review_gate.llm.limits``): durations, time stamps,
Retry-After, and values that cannot be read left out rather than trusted."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from email.utils import format_datetime

import pytest

from review_gate.llm.limits import (
    Reading,
    parse_duration,
    parse_timestamp,
    precision,
    read_limits,
    retry_after,
    seconds_until,
)

# ---------------------------------------------------------------------------------------------
# Reading the headers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [
    ("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5s", 0.5), ("1.5m", 90.0),
    ("100us", 1e-4), ("100µs", 1e-4), ("250ns", 2.5e-7), ("2d", 172800.0), ("59m59.999s", 3599.999),
    ("2", 2.0), ("0", 0.0), ("2.25", 2.25), (" 7s ", 7.0), (".5s", 0.5), ("0s", 0.0),
    ("", None), ("  ", None), ("abc", None), ("-1s", None), ("-3", None), ("1x", None), ("s", None),
    ("1s garbage", None), ("1 s", None), ("1s1", None), ("inf", None), ("nan", None), ("1e400", None),
    ("m1s", None), ("1..5s", None),
])
def test_durations(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


@pytest.mark.parametrize(("text", "unix"), [
    ("2024-05-01T12:00:03Z", 1714564803.0),
    ("2024-05-01T12:00:03.250Z", 1714564803.25),
    ("2024-05-01t12:00:03z", 1714564803.0),
    ("2024-05-01T14:00:03+02:00", 1714564803.0),
    ("2024-05-01T11:30:03.5-00:30", 1714564803.5),
    ("2024-05-01 12:00:03", 1714564803.0),
    ("2024-13-01T12:00:03Z", None), ("2024-05-01", None), ("yesterday", None), ("", None),
])
def test_rfc3339_timestamps(text: str, unix: float | None) -> None:
    assert parse_timestamp(text) == (pytest.approx(unix) if unix is not None else None)


@pytest.mark.parametrize(("text", "seconds"), [
    ("1.5s", 1.5), ("6m0s", 360.0), ("30", 30.0),
    ("2024-05-01T12:00:13Z", 10.0),  # Anthropic: a timestamp
    ("1714564813", 10.0),  # a Unix time
    ("2024-05-01T11:00:00Z", 0.0),  # already past
    ("soon", None),
])
def test_resets_are_seconds_from_now(text: str, seconds: float | None) -> None:
    wall = 1714564803.0
    assert seconds_until(text, wall) == (pytest.approx(seconds) if seconds is not None else None)


def test_retry_after_in_all_its_forms() -> None:
    wall = time.time()
    assert retry_after({"Retry-After": "4"}, wall) == 4.0
    assert retry_after({"retry-after": "-1"}, wall) is None
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}, wall) == pytest.approx(1.5)
    assert retry_after({"retry-after": "3"}, wall) == 3.0
    date = format_datetime(datetime.fromtimestamp(wall + 20, timezone.utc), usegmt=True)
    assert retry_after({"retry-after": date}, wall) == pytest.approx(20, abs=1)
    assert retry_after({"retry-after": "whenever"}, wall) is None
    assert retry_after({}, wall) is None


def test_openai_headers() -> None:
    headers = {"X-RateLimit-Limit-Requests": "60", "x-ratelimit-remaining-requests": "59",
               "x-ratelimit-reset-requests": "1s", "x-ratelimit-limit-tokens": "150000",
               "x-ratelimit-remaining-tokens": "149984", "x-ratelimit-reset-tokens": "6m0s"}
    assert sorted(read_limits(headers, 0.0), key=lambda r: r.dimension) == [
        Reading("requests", 59, 60, 1.0, 0.001), Reading("tokens", 149984, 150000, 360.0, 0.001)]


def test_anthropic_headers() -> None:
    wall = 1714564803.0
    headers = {"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49",
               "anthropic-ratelimit-requests-reset": "2024-05-01T12:00:04Z",
               "anthropic-ratelimit-tokens-remaining": "38000",
               "anthropic-ratelimit-tokens-reset": "2024-05-01T12:00:10.5Z",
               "anthropic-ratelimit-input-tokens-limit": "40000", "anthropic-ratelimit-input-tokens-remaining": "39000",
               "anthropic-ratelimit-input-tokens-reset": "2024-05-01T12:00:05Z",
               "anthropic-ratelimit-output-tokens-limit": "8000", "anthropic-ratelimit-output-tokens-remaining": "0",
               "anthropic-ratelimit-output-tokens-reset": "2024-05-01T12:00:33Z"}
    assert sorted(read_limits(headers, wall), key=lambda r: r.dimension) == [
        Reading("input_tokens", 39000, 40000, 2.0, 1.0), Reading("output_tokens", 0, 8000, 30.0, 1.0),
        Reading("requests", 49, 50, 1.0, 1.0), Reading("tokens", 38000, None, 7.5, 0.1)]  # stamps: to the second


@pytest.mark.parametrize("remaining", ["many", "-5", "-1", "1.5", "nan", "inf", "", "1e400"])
def test_a_remaining_count_that_cannot_be_read_is_left_out_not_taken_as_zero(remaining: str) -> None:
    # Issue 20: a remaining of -1 was read as 0 (max(0, -1)) and trusted: every request waited.
    headers = {"x-ratelimit-remaining-requests": remaining, "x-ratelimit-reset-requests": "1s",
               "anthropic-ratelimit-requests-limit": "9"}
    assert read_limits(headers, 0.0) == []


def test_a_reset_or_a_limit_that_cannot_be_read_is_unknown() -> None:
    headers = {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "soon",
               "x-ratelimit-limit-tokens": "lots", "x-ratelimit-remaining-requests": "5",
               "x-ratelimit-limit-requests": "3"}  # remaining over its limit: the limit is not known
    assert sorted(read_limits(headers, 0.0), key=lambda r: r.dimension) == [
        Reading("requests", 5, None, None), Reading("tokens", 0, None, None)]


@pytest.mark.parametrize(("text", "slack"), [
    ("6m0s", 0.001), ("20ms", 0.001), ("1.5s", 0.001), ("2", 1.0), ("2.25", 0.01), ("1714564813", 1.0),
    ("2024-05-01T12:00:03Z", 1.0), ("2024-05-01T12:00:03.25Z", 0.01), ("2024-05-01T12:00:03.123456Z", 1e-6),
])
def test_a_reset_is_known_to_its_last_digit(text: str, slack: float) -> None:
    assert precision(text) == pytest.approx(slack)


def test_a_server_clock_behind_ours_makes_its_time_stamps_later() -> None:
    wall = 1714564803.0
    behind = format_datetime(datetime.fromtimestamp(wall - 5, timezone.utc), usegmt=True)
    headers = {"date": behind, "anthropic-ratelimit-requests-remaining": "0",
               "anthropic-ratelimit-requests-reset": "2024-05-01T12:00:04.000Z"}
    [reading] = read_limits(headers, wall)
    assert reading.reset_in == pytest.approx(1.0)
    assert reading.slack == pytest.approx(0.001 + 4.0)  # 5 s behind, less the Date header's second
    same = {**headers, "date": format_datetime(datetime.fromtimestamp(wall, timezone.utc), usegmt=True)}
    assert read_limits(same, wall)[0].slack == pytest.approx(0.001)
    durations = {"date": behind, "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"}
    assert read_limits(durations, wall)[0].slack == pytest.approx(0.001)  # a duration is on no clock


def test_a_budget_reported_twice_keeps_the_tighter_word() -> None:
    headers = {"x-ratelimit-remaining-requests": "5", "anthropic-ratelimit-requests-remaining": "2"}
    assert read_limits(headers, 0.0) == [Reading("requests", 2, None, None)]


