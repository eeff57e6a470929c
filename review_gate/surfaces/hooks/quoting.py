"""How bash decodes the text of a word: a backslash outside quotes, in double quotes (and in a
here-document that expands), in backticks before their command line is read, and ``$'...'``.

The grammar says where each part of a word starts and ends; these say what it means. Bytes
in, text out (a line is parsed as UTF-8 bytes; a lone surrogate survives the round trip).

    >>> word(b"g\\\\it"), double_quoted(b'say \\\\"hi\\\\" \\\\n'), ansi_c("\\\\x70ush")
    ('git', 'say "hi" \\\\n', 'push')
"""

from __future__ import annotations

import re

_WORD_ESCAPE = re.compile(rb"\\(\n|.)", re.S)  # outside quotes: a backslash quotes the next character
_QUOTED_ESCAPE = re.compile(rb"\\([$`\"\\\n])")  # in double quotes, only these (a newline: a line joined)
_BACKTICK_ESCAPE = re.compile(rb"\\([$`\\])")  # in backticks
_ANSI_ESCAPE = re.compile(r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))",
                          re.S)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def _escaped(match: re.Match[bytes]) -> bytes:
    return b"" if match.group(1) == b"\n" else match.group(1)


def word(data: bytes) -> str:
    """An unquoted word's text: ``\\X`` is ``X``; a backslash before a newline joins lines."""
    return text(_WORD_ESCAPE.sub(_escaped, data))


def double_quoted(data: bytes) -> str:
    """Text between double quotes (``"..."``): only ``\\$``, ``\\```, ``\\"``, ``\\\\`` and a
    backslash before a newline are escapes; any other backslash stays."""
    return text(_QUOTED_ESCAPE.sub(_escaped, data))


def backticks(data: bytes) -> str:
    """The command line of a backtick substitution as bash reads it: ``\\```, ``\\$`` and
    ``\\\\`` undone first (```echo \\`git push\\```` runs ``git push``)."""
    return text(_BACKTICK_ESCAPE.sub(rb"\1", data))


def ansi_c(body: str) -> str:
    """The text of a ``$'...'`` word (``body``: between the quotes) as bash decodes it
    (``\\x70``, ``\\160``, ``\\u0070``, ``\\n``...)."""
    def one(match: re.Match[str]) -> str:
        hexadecimal, short, long, octal, control, other = match.groups()
        number = hexadecimal or short or long
        if number:
            return chr(min(int(number, 16), 0x10FFFF))
        if octal:
            return chr(int(octal, 8) & 0xFF)
        if control is not None:
            return chr(ord(control) & 0x1F)
        return _ANSI_SIMPLE.get(other, "\\" + other)

    return _ANSI_ESCAPE.sub(one, body)


def single_quoted(value: str) -> str:
    """``value`` in single quotes, as a shell would read it back."""
    return "'" + value.replace("'", "'\\''") + "'"
