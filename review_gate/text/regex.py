"""User-supplied regular expressions, compiled with RE2 so matching is linear on any input.

A rule's pattern is matched on each added line, while the pattern agent scans the added lines of
a scope joined into one text. So every pattern is compiled as a line pattern: multi-line mode
(``^``/``$`` at each line), with ``\\A``/``\\z`` read as the start/end of a line too; the text a
rule is matched on never shows through.
"""

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


def line_pattern(pattern: str) -> str:
    """``pattern`` with its anchors bound to lines: ``(?m)``, and ``\\A``/``\\z`` as ``^``/``$``.

    Only escapes that RE2 reads as anchors change: not an escaped backslash, not text quoted by
    ``\\Q...\\E``, not a character class (where RE2 rejects them, and still does).

    >>> line_pattern(r"\\Aimport pdb\\z")
    '(?m)^import pdb$'
    """
    if "\\A" not in pattern and "\\z" not in pattern:
        return "(?m)" + pattern  # no anchor to rebind: the walk below would copy every character
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            escape = pattern[i + 1]
            if escape == "Q" and not in_class:
                end = pattern.find("\\E", i + 2)
                stop = n if end < 0 else end + 2
                out.append(pattern[i:stop])
                i = stop
                continue
            out.append({"A": "^", "z": "$"}.get(escape, pattern[i:i + 2]) if not in_class
                       else pattern[i:i + 2])
            i += 2
            continue
        if not in_class and char == "[":
            # A leading ^ and then a leading ] belong to the class; neither closes it.
            stop = i + 1
            stop += pattern.startswith("^", stop)
            stop += pattern.startswith("]", stop)
            out.append(pattern[i:stop])
            i, in_class = stop, True
            continue
        if in_class and pattern.startswith("[:", i) and (end := pattern.find(":]", i + 2)) >= 0:
            out.append(pattern[i:end + 2])  # [:alpha:] inside a class: its ] closes nothing
            i = end + 2
            continue
        in_class = in_class and char != "]"
        out.append(char)
        i += 1
    return "(?m)" + "".join(out)


def _reason(exc: Exception) -> str:
    reason = exc.args[0] if exc.args else str(exc)
    return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> Any:
    """Compile an RE2 line pattern for bytes input; raise PatternError with RE2's reason."""
    import re2

    try:
        return re2.compile(line_pattern(pattern).encode("utf-8"), _options())
    except re2.error as exc:
        try:  # RE2's reason may quote the pattern: quote the one the user wrote when it fails too
            re2.compile(pattern.encode("utf-8"), _options())
        except re2.error as original:
            raise PatternError(_reason(original)) from exc
        raise PatternError(_reason(exc)) from exc


def pattern_set(patterns: list[str]) -> Any:
    """An RE2 set: one linear scan tells which of ``patterns`` occur anywhere in a text."""
    import re2

    regex_set = re2.Set.SearchSet(_options())
    for pattern in patterns:
        regex_set.Add(line_pattern(pattern).encode("utf-8"))
    regex_set.Compile()
    return regex_set
