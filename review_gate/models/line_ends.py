r"""Lines where the file's language ends them, not only where git does. Pure.

Python, JavaScript, Java, C and C#'s compilers end a line at a lone carriage return, where git
and a diff viewer see one line: ``# note\rexec(x)`` runs ``exec``. Every file is split there (a
language that does not, such as Go, loses nothing: the line holds a hidden character either way).
"""

from __future__ import annotations

import functools
import re

_SEPARATORS = "\u2028\u2029"  # line and paragraph separators: line ends in JavaScript, C# and YAML 1.1
_NEL = "\x85"  # next line: a line end in C# and YAML 1.1 (PyYAML)
_JS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte")
_BREAKS: dict[str, str] = {
    **dict.fromkeys(_JS, "\r" + _SEPARATORS),
    **dict.fromkeys((".cs", ".csx", ".yml", ".yaml"), "\r" + _SEPARATORS + _NEL),
}


def line_breaks(path: str) -> str:
    r"""The characters besides a newline that end a line in ``path``'s language: a lone carriage
    return everywhere, the Unicode separators where the language reads them as line ends.

    >>> line_breaks("app.py"), line_breaks("web/app.ts") == "\r\u2028\u2029"
    ('\r', True)
    """
    dot = path.rfind(".")
    return _BREAKS.get(path[dot:].lower(), "\r") if dot > path.rfind("/") else "\r"


def hidden_lines(text: str, breaks: str) -> list[str]:
    r"""One line of git's (or several joined by newlines) as the language reads it: split at each
    of ``breaks`` that does not end the line (a carriage return before the newline is a line
    ending, not a hidden one). Each piece keeps the character that ends it.

    >>> hidden_lines("# run the job\r    exec(code)", "\r")
    ['# run the job\r', '    exec(code)']
    >>> hidden_lines("x = 1\r\r", "\r")
    ['x = 1\r\r']
    """
    return split_hidden(text, breaks).split("\n")


def split_hidden(text: str, breaks: str) -> str:
    """``text`` with a newline after each of ``breaks`` that does not end its line (the pattern
    rules then read the hidden line as a line of its own); trailing carriage returns are left."""
    return split_hidden_at(text, breaks)[0]


def split_hidden_at(text: str, breaks: str) -> tuple[str, list[int]]:
    """``split_hidden``, with where each newline it adds is in what it returns (indices, in order)."""
    if not any(char in text for char in breaks):
        return text, []
    ends = [m.end() for m in _hidden(breaks).finditer(text)]
    if not ends:
        return text, []
    pieces, last = [], 0
    for end in ends:
        pieces.append(text[last:end])
        last = end
    pieces.append(text[last:])
    return "\n".join(pieces), [end + index for index, end in enumerate(ends)]


@functools.cache
def _hidden(breaks: str) -> re.Pattern[str]:
    r"""The characters of ``breaks`` that end a line inside one of git's: not one before the
    newline, and no carriage return of a run that ends the line (``\r\r\n``)."""
    others = breaks.replace("\r", "")
    parts = [r"\r(?!\r*(?:\n|\Z))"] if "\r" in breaks else []
    if others:
        parts.append(f"[{re.escape(others)}](?!\\n|\\Z)")
    return re.compile("|".join(parts))


def hides_lines(text: str, path: str) -> bool:
    """Whether a line of git's holds a line end of its language inside it (``hidden_lines``
    would split it): a comment on it may end where git's line goes on."""
    breaks = line_breaks(path)
    return any(char in text for char in breaks) and split_hidden(text, breaks) != text


__all__ = ["hidden_lines", "hides_lines", "line_breaks", "split_hidden", "split_hidden_at"]
