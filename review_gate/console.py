"""All terminal output goes through here: the rich consoles, and the escaping of untrusted text."""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console

# C0 and C1 controls but tab, line and paragraph separators, bidi overrides and isolates, and
# lone surrogates (half a pair, as JSON's \udc80 gives), which no UTF-8 stream can write
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def sanitize(text: str) -> str:
    """Make text from diffs and agents safe for one line of a terminal: control characters
    (ANSI escapes, carriage returns, line breaks that could forge a line, bidi overrides) and
    lone surrogates become visible escapes instead of acting (or failing to be written)."""
    return _CONTROL.sub(_escape, text)


_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def json_safe(text: str) -> str:
    """JSON text with the characters a terminal or an editor acts on (C1 controls such as CSI,
    line separators, bidi overrides; lone surrogates) written as ``\\uXXXX`` escapes, which
    JSON's own escaping leaves raw. Lossless: outside strings JSON has none of them."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def is_interactive(stream: TextIO) -> bool:
    """A human at a terminal: a TTY, not CI, and TERM is not dumb."""
    if os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def make_console(stream: TextIO, *, interactive: bool | None = None, width: int | None = None) -> Console:
    live = is_interactive(stream) if interactive is None else interactive
    return _console_class()(file=stream, force_terminal=live, no_color=not live or bool(os.environ.get("NO_COLOR")),
                            highlight=False, emoji=False, markup=False, soft_wrap=not live,
                            width=width if width else (None if live else 200))


@lru_cache(maxsize=1)
def _console_class() -> type[Console]:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich would raise SystemExit(1) here; the CLI handles a closed pipe in one place
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")

    return _Console


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
    _line(sys.stdout, stdout, _lines(text))


def err(text: str = "") -> None:
    _line(sys.stderr, stderr, _lines(text))


def _lines(text: str) -> str:
    """Every line sanitized, the line breaks kept: whatever a caller forgot to escape (a path, a
    server's error, an argument echoed back) cannot reach the terminal as a control sequence.
    sanitize is idempotent, so text escaped already stays as it is."""
    return "\n".join(sanitize(line) for line in text.split("\n"))


def _line(stream: TextIO, rich_console: Callable[[], Console], text: str) -> None:
    # Off a terminal rich would print the text unchanged; writing it directly keeps rich out of
    # start-up for CI and machine-readable runs.
    if is_interactive(stream):
        rich_console().print(text, markup=False, highlight=False)
    else:
        stream.write(text + "\n")
        stream.flush()
