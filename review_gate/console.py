"""All terminal output goes through here: the rich consoles, and the escaping of untrusted text."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def sanitize(text: str) -> str:
    """Make text from diffs and agents safe for one line of a terminal: control characters
    (ANSI escapes, carriage returns, line breaks that could forge a line, bidi overrides) become
    visible escapes instead of acting."""
    return _CONTROL.sub(_escape, text)


def is_interactive(stream: TextIO) -> bool:
    """A human at a terminal: a TTY, not CI, and TERM is not dumb."""
    if os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def make_console(stream: TextIO, *, interactive: bool | None = None, width: int | None = None) -> Console:
    from rich.console import Console

    live = is_interactive(stream) if interactive is None else interactive
    return Console(file=stream, force_terminal=live, no_color=not live or bool(os.environ.get("NO_COLOR")),
                   highlight=False, emoji=False, markup=False, soft_wrap=not live,
                   width=width if width else (None if live else 200))


@lru_cache(maxsize=1)
def stdout() -> Console:
    return make_console(sys.stdout)


@lru_cache(maxsize=1)
def stderr() -> Console:
    return make_console(sys.stderr)


def reset() -> None:
    """Forget the cached consoles (tests swap sys.stdout between CLI calls)."""
    stdout.cache_clear()
    stderr.cache_clear()


def out(text: str = "") -> None:
    _line(sys.stdout, stdout, text)


def err(text: str = "") -> None:
    _line(sys.stderr, stderr, text)


def _line(stream: TextIO, rich_console: Callable[[], Console], text: str) -> None:
    # Off a terminal rich would print the text unchanged; writing it directly keeps rich out of
    # start-up for CI and machine-readable runs.
    if is_interactive(stream):
        rich_console().print(text, markup=False, highlight=False)
    else:
        stream.write(text + "\n")
        stream.flush()
