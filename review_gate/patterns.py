"""User-supplied regular expressions, compiled with RE2 so matching is linear on any input."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


class PatternError(ValueError):
    pass


def _options() -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 otherwise writes its own copy of every error to stderr
    options.max_mem = 64 << 20
    return options


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> Any:
    """Compile an RE2 pattern for bytes input; raise PatternError with RE2's reason."""
    import re2

    try:
        return re2.compile(pattern.encode("utf-8"), _options())
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternError(str(reason)) from exc


def pattern_set(patterns: list[str]) -> Any:
    """An RE2 set: one linear scan tells which of ``patterns`` occur anywhere in a text."""
    import re2

    regex_set = re2.Set.SearchSet(_options())
    for pattern in patterns:
        regex_set.Add(pattern.encode("utf-8"))
    regex_set.Compile()
    return regex_set
