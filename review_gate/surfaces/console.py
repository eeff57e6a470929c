"""All terminal output goes through here: the rich consoles. Every line written is escaped
(``review_gate.text.escape``), so untrusted text a caller forgot to escape cannot act on the terminal."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, TextIO

from review_gate.text.escape import sanitize

if TYPE_CHECKING:
    from rich.console import Console


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


__all__ = ["err", "is_interactive", "make_console", "out", "reset", "sanitize", "stderr", "stdout"]
