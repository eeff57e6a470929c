r"""Escaping untrusted text (diffs, agents' answers, servers' errors, config values). Pure.

Every sink that shows such text uses these: the terminal (``console``), the output formats,
the config error messages. It sits below all of them and imports nothing of ours, so a format
can escape what it writes without reaching for the terminal.

    >>> sanitize("ok\x1b[2J\rforged")
    'ok\\x1b[2J\\rforged'
    >>> json_safe('"\u2028"')
    '"\\u2028"'
"""

from __future__ import annotations

import re

# C0 and C1 controls but tab, line and paragraph separators, bidi overrides and isolates, and
# lone surrogates (half a pair, as JSON's \udc80 gives), which no UTF-8 stream can write
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r"}
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def sanitize(text: str) -> str:
    """Make text from diffs and agents safe for one line of a terminal: control characters
    (ANSI escapes, carriage returns, line breaks that could forge a line, bidi overrides) and
    lone surrogates become visible escapes instead of acting (or failing to be written).
    Idempotent: escaped text stays as it is."""
    return _CONTROL.sub(_escape, text)


def json_safe(text: str) -> str:
    """JSON text with the characters a terminal or an editor acts on (C1 controls such as CSI,
    line separators, bidi overrides; lone surrogates) written as ``\\uXXXX`` escapes, which
    JSON's own escaping leaves raw. Lossless: outside strings JSON has none of them."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


__all__ = ["json_safe", "sanitize"]
