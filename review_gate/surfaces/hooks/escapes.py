"""What ``printf`` and ``echo -e`` write, from their words: their backslash escapes decoded and
printf's format applied to its arguments. Read simply, for finding a waiver in what a line
writes (``printf 'x  # n\\157sec B%d' 501``), never to reproduce every corner of either.

    >>> printf(["x()  # n\\\\157sec B%d\\\\n", "501"])
    'x()  # nosec B501\\n'
    >>> echo_e(["x()  # n\\\\x6fsec"])
    'x()  # nosec'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b", "E": "\x1b",
           "\\": "\\", '"': '"', "'": "'", "?": "?"}
# printf's format: \NNN octal; echo -e's: \0NNN (both read here: zsh's echo takes \NNN as well)
_ESCAPE = re.compile(r"\\(0[0-7]{0,3}|[0-7]{1,3}|x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|.)", re.S)
_SPEC = re.compile(r"%([-+ #0']*)(\*|\d+)?(?:\.(\*|\d*))?([diouxXeEfFgGaAcsbq%])")
MAX_ROUNDS = 64  # times a format is reused for its remaining arguments, at most


def decoded(text: str) -> str:
    """``text`` with its backslash escapes decoded as printf's format and ``echo -e`` do."""
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        try:
            if code[0] in "01234567":
                return chr(int(code, 8) & 0xFF) if code != "0" else "\0"
            if code[0] in "xuU" and len(code) > 1:
                return chr(int(code[1:], 16))
        except (ValueError, OverflowError):
            return match.group(0)
        return _SIMPLE.get(code, match.group(0))
    return _ESCAPE.sub(one, text)


def echo_e(args: Sequence[str]) -> str:
    """What ``echo -e ARGS`` writes (its options left out)."""
    words = list(args)
    while words and re.fullmatch(r"-[neE]+", words[0]):
        words.pop(0)
    return decoded(" ".join(words)).split("\\c")[0]


def printf(args: Sequence[str]) -> str:
    """What ``printf FORMAT ARGS`` writes: the format's escapes decoded, each conversion given
    the next argument (``%b`` decoded too), the format reused while arguments remain."""
    words = list(args)
    if words[:1] == ["-v"]:
        words = words[2:]
    if words[:1] == ["--"]:
        words = words[1:]
    if not words:
        return ""
    form, rest = decoded(words[0]), words[1:]
    out: list[str] = []
    for _ in range(MAX_ROUNDS):
        text, used = _once(form, rest)
        out.append(text)
        rest = rest[used:]
        if not rest or not used:
            break
    return "".join(out)


def _once(form: str, values: Sequence[str]) -> tuple[str, int]:
    """The format applied once, and how many of ``values`` it took."""
    used = 0

    def convert(match: re.Match[str]) -> str:
        nonlocal used
        if match.group(4) == "%":
            return "%"
        value = values[used] if used < len(values) else ""
        used += 1
        return _converted(match, value)

    return _SPEC.sub(convert, form), used


def _converted(match: re.Match[str], value: str) -> str:
    flags, width, precision, kind = match.group(1), match.group(2), match.group(3), match.group(4)
    if kind == "b":
        return decoded(value)
    if kind in "sq":
        return value
    if kind == "c":
        return value[:1]
    spec = "%" + flags.replace("'", "") + (width if width and width != "*" else "") + \
        (f".{precision}" if precision not in (None, "*") else "") + ("d" if kind in "iu" else kind)
    try:
        number: float = float(value) if kind in "eEfFgGaA" else int(value or "0", 0)
        return spec % number
    except (ValueError, TypeError, OverflowError):
        return value


# GNU sed's \oNNN \dNNN \xHH \cX and perl's \xHH \x{H...} \0NN \N{U+H...} \N{NAME} \e: escapes a
# substitution's replacement writes as a character (``\o043`` is ``#``)
REPLACEMENT_ESCAPE = re.compile(r"\\(?:o([0-7]{1,3})|d(\d{1,3})|x\{([0-9A-Fa-f]{1,8})\}|x([0-9A-Fa-f]{1,2})"
                                r"|0([0-7]{1,3})|N\{U\+([0-9A-Fa-f]{1,8})\}|N\{([^{}]{1,80})\}|c(.)|([aefnrt]))", re.S)
_CONTROL = {"a": "\a", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def replacement_escape(match: re.Match[str]) -> str | None:
    """The character a ``REPLACEMENT_ESCAPE`` match writes; None for one that names no character."""
    octal, decimal, braced, hexa, perl_octal, code, name, control, letter = match.groups()
    try:
        if octal or perl_octal:
            return chr(int(octal or perl_octal, 8) & 0xFF)
        if decimal:
            return chr(int(decimal) & 0xFF)
        if braced or hexa or code:
            return chr(int(braced or hexa or code, 16))
        if name:
            return unicodedata.lookup(name)
        if control:
            return chr(ord(control.upper()) ^ 0x40)
    except (ValueError, KeyError, OverflowError):
        return None
    return _CONTROL.get(letter)


def replacement(text: str) -> str:
    """A replacement's text with its character escapes decoded and other backslashes undone."""
    out: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos] == "\\" and pos + 1 < len(text):
            match = REPLACEMENT_ESCAPE.match(text, pos)
            char = replacement_escape(match) if match else None
            out.append(char if char is not None else text[pos + 1])
            pos = match.end() if match and char is not None else pos + 2
            continue
        out.append(text[pos])
        pos += 1
    return "".join(out)
