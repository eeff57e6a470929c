"""What a server's rate-limit headers say, read without trusting what cannot be read.

OpenAI sends ``x-ratelimit-limit-``, ``-remaining-`` and ``-reset-`` ``requests`` and ``tokens``,
resets as Go durations ("1s", "6m0s", "20ms"); Anthropic sends ``anthropic-ratelimit-requests-``,
``-tokens-``, ``-input-tokens-`` and ``-output-tokens-`` ``limit``, ``remaining`` and ``reset``,
resets as RFC 3339 times. A 429 asks for a pause with ``retry-after-ms`` or ``Retry-After``
(seconds or an HTTP date). A value that cannot be read (a reset of "soon", a remaining of -1, a
limit of "many") is left out, never guessed at: the governor then waits for a word it can read.

A reset is known only to its last digit, and an absolute time only on the server's clock: each
reading carries the ``slack`` to add so that the budget is never taken as full too early.

    >>> read_limits({"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "1.5s"}, 0.0)
    [Reading(dimension='requests', remaining=3, limit=None, reset_in=1.5, slack=0.001)]
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

DIMENSIONS = ("requests", "tokens", "input_tokens", "output_tokens")
EPOCH_FROM = 1e9  # a bare number this large is a Unix time, not a number of seconds
DURATION_SLACK_S = 0.001  # a Go duration is printed whole; a server may have rounded it to the millisecond
DATE_PRECISION_S = 1.0  # an HTTP Date header is to the second

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
          "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)")
_NUMBER = re.compile(r"\d+(?:\.(\d*))?|\.(\d+)")
_RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-]\d\d:?\d\d)?")


def parse_duration(text: str) -> float | None:
    """Seconds in a Go-style duration ("1s", "6m0s", "20ms", "1h2m3.5s") or a bare number of
    seconds ("2", "0.5"); None for anything else, a negative value included."""
    text = text.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pos, seconds = 0, 0.0
        for match in _PART.finditer(text):
            if match.start() != pos:
                return None
            seconds += float(match.group(1)) * _UNITS[match.group(2)]
            pos = match.end()
        if pos != len(text):
            return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def parse_timestamp(text: str) -> float | None:
    """The Unix time of an RFC 3339 timestamp ("2024-05-01T12:00:03Z", with an optional
    fraction and offset), None when it is not one."""
    match = _RFC3339.fullmatch(text.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    zone = match.group(8) or "Z"
    offset = timedelta(0)
    if zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    try:
        when = datetime(year, month, day, hour, minute, second, tzinfo=timezone(offset))
    except ValueError:
        return None
    return when.timestamp() + float(match.group(7) or 0)


def seconds_until(text: str, wall: float) -> float | None:
    """Seconds from ``wall`` (Unix time) until a reset given as a duration, a number of
    seconds, a Unix time or an RFC 3339 timestamp; None when it cannot be read."""
    seconds = parse_duration(text)
    if seconds is not None:
        return max(0.0, seconds - wall) if seconds >= EPOCH_FROM else seconds
    at = parse_timestamp(text)
    return None if at is None else max(0.0, at - wall)


def precision(text: str) -> float:
    """How late a reset written as ``text`` may really be: a Go duration to the millisecond a
    server may have rounded it to; a number or a time stamp to its last digit (a whole second
    when it has no fraction).

    >>> precision("6m0s"), precision("2024-05-01T12:00:03Z"), precision("2.25")
    (0.001, 1.0, 0.01)
    """
    text = text.strip()
    stamp = _RFC3339.fullmatch(text)
    if stamp is not None:
        fraction = stamp.group(7)
        return 10.0 ** -(len(fraction) - 1) if fraction and len(fraction) > 1 else 1.0
    number = _NUMBER.fullmatch(text)
    if number is not None:
        decimals = number.group(1) or number.group(2)
        return 10.0 ** -len(decimals) if decimals else 1.0
    return DURATION_SLACK_S


def retry_after(headers: Mapping[str, str], wall: float) -> float | None:
    """Seconds a 429 (or a 503) asks to wait: retry-after-ms, or Retry-After in seconds or as
    an HTTP date. Header names are matched case-insensitively."""
    lower = {k.lower(): v for k, v in headers.items()}
    millis = parse_duration(lower.get("retry-after-ms", ""))
    if millis is not None:
        return millis / 1000
    value = lower.get("retry-after", "")
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - wall)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


@dataclass(frozen=True)
class Reading:
    """What one answer says of one budget."""

    dimension: str  # one of DIMENSIONS
    remaining: int
    limit: int | None
    reset_in: float | None  # seconds until the budget is full again
    slack: float = 0.0  # how much later than reset_in it may really be full again


def _count(value: str | None) -> int | None:
    """A count as a server writes it; None for anything that is not a whole number >= 0."""
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if not math.isfinite(number) or number < 0 or number != int(number):
        return None
    return int(number)


def clock_skew(headers: Mapping[str, str], wall: float) -> float:
    """Seconds our clock is ahead of the server's, by its Date header (0 when it is not, or
    cannot be told): a reset the server gives as a time stamp comes that much later than our
    clock says."""
    value = headers.get("date")
    if not value:
        return 0.0
    try:
        server = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return 0.0
    return max(0.0, wall - server - DATE_PRECISION_S)


def read_limits(headers: Mapping[str, str], wall: float) -> list[Reading]:
    """The budgets an answer's headers report, OpenAI's and Anthropic's; the tighter one when a
    budget is reported twice. Header names are matched case-insensitively; a remaining count
    that cannot be read drops the budget, a limit or reset that cannot be read is unknown."""
    lower = {k.lower(): v for k, v in headers.items()}
    skew = clock_skew(lower, wall)
    names = [(d, f"x-ratelimit-{{}}-{d}") for d in ("requests", "tokens")]
    names += [(d, f"anthropic-ratelimit-{d.replace('_', '-')}-{{}}") for d in DIMENSIONS]
    found: dict[str, Reading] = {}
    for dimension, pattern in names:
        remaining = _count(lower.get(pattern.format("remaining")))
        if remaining is None:
            continue
        limit = _count(lower.get(pattern.format("limit")))
        if limit is not None and remaining > limit:
            limit = None  # the two disagree: the limit is not known
        reset = lower.get(pattern.format("reset"))
        reset_in = seconds_until(reset, wall) if reset else None
        slack = 0.0
        if reset and reset_in is not None:
            relative = parse_duration(reset)
            absolute = relative is None or relative >= EPOCH_FROM  # a time on the server's clock
            slack = precision(reset) + (skew if absolute else 0.0)
        reading = Reading(dimension, remaining, limit, reset_in, slack)
        if dimension not in found or reading.remaining < found[dimension].remaining:
            found[dimension] = reading
    return list(found.values())
