"""sed's and perl's in-place substitutions (``sed -i 's/X//' app.py``, ``perl -pi -e 's/a/b/g'
f``), read and applied to a text as the program would, never run: so what a substitution makes of
the text around it (``nosXec`` -> ``nosec``) can be compared with the file as it is.

Translated to Python's ``re``: sed's basic and extended expressions (``\\(\\)``, ``\\{m,n\\}``,
``\\+``, ``[[:alpha:]]``, ``&`` and ``\\1`` in the replacement; flags ``g``, ``i``, ``N``) and
perl's plain ``s///`` (``$1``, ``$&``; flags ``g``, ``i``, ``m``, ``s``, ``x``). Anything else in
the script (another command, ``y///``, ``\\U``, an interpolated variable, ``/e``) makes it one
that cannot be computed: ``script`` says so and the caller fails closed near a waiver. sed's
``a``, ``i`` and ``c`` add their text to every line the address could name.

    >>> subs, known = script("sed", "s/nosXec/nosec/")
    >>> known, applied("x  # nosXec B501\\n", subs)
    (True, 'x  # nosec B501\\n')
    >>> applied("a(b) a(c)", script("sed", r"s/a(\\([a-z]\\))/\\1!/g")[0])
    'b! c!'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from review_gate.surfaces.hooks import escapes

_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
            "space": r"\s", "blank": r" \t", "punct": r"!-/:-@\[-`{-~", "xdigit": "0-9A-Fa-f", "word": r"\w"}
_ADDRESS = re.compile(r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\]|\\.)*/I?|\\(.)(?:(?!\1).|\\.)*\1)")
_SIMPLE_COMMANDS = set("dlnpPz=")  # commands that leave each line's text as it is (N, G... join lines: not computed)


@dataclass(frozen=True)
class Substitution:
    pattern: re.Pattern[str]
    replace: Callable[[re.Match[str]], str]
    every: bool  # g
    nth: int  # sed's N: the Nth match only (with g, from the Nth on)


def script(program: str, text: str, *, extended: bool = False) -> tuple[list[Substitution], bool]:
    """The substitutions of a sed or perl script, and whether that is all it does (every one of
    them translated, nothing else in it)."""
    reader = _perl if program == "perl" else _sed
    try:
        return reader(text, extended)
    except (ValueError, re.error, IndexError):
        return [], False


def applied(text: str, substitutions: list[Substitution]) -> str | None:
    """``text`` after the substitutions, line by line as sed and ``perl -p`` read it; None when
    one cannot be applied (its replacement names a group its pattern does not have)."""
    lines = text.split("\n")
    try:
        for sub in substitutions:
            lines = [_one(line, sub) for line in lines]
    except (IndexError, re.error):
        return None
    return "\n".join(lines)


def _one(line: str, sub: Substitution) -> str:
    seen = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal seen
        seen += 1
        return sub.replace(match) if seen >= sub.nth else match.group(0)

    if sub.nth > 1:
        return sub.pattern.sub(replace, line, count=0 if sub.every else sub.nth)
    return sub.pattern.sub(sub.replace, line, count=0 if sub.every else 1)


# ---------------------------------------------------------------------------------------- sed


def _sed(text: str, extended: bool) -> tuple[list[Substitution], bool]:
    subs: list[Substitution] = []
    pos, known = 0, True
    while pos < len(text):
        char = text[pos]
        if char in " \t\n;{}!":
            pos += 1
            continue
        if char == "#":
            pos = _line_end(text, pos)
            continue
        address = _ADDRESS.match(text, pos)
        if address and address.end() > pos:  # an address only narrows which lines change
            pos = address.end()
            if text[pos:pos + 1] == ",":
                second = _ADDRESS.match(text, pos + 1) or re.compile(r"[+~]\d+").match(text, pos + 1)
                pos = second.end() if second else pos + 1
            continue
        if char == "s":
            pos, sub = _sed_substitution(text, pos + 1, extended)
            if sub is None:
                known = False
            else:
                subs.append(sub)
            continue
        if char in _SIMPLE_COMMANDS:
            pos += 1
            continue
        if char in "bTt:":
            pos = _end_of_label(text, pos + 1)
            continue
        if char in "aic":
            pos, sub = _sed_text(text, pos + 1, char)
            subs.append(sub)
            continue
        return subs, False  # y, r, w, e... : what it writes is not computed
    return subs, known


def _sed_text(text: str, pos: int, command: str) -> tuple[int, Substitution]:
    """sed's ``a TEXT``, ``i TEXT``, ``c TEXT`` (GNU's one-line form, or ``a\\`` and lines that
    end in a backslash) as a substitution on every line (its address is not followed: a line
    more gets the text, which a waiver check only errs by): after it, before it, in its place."""
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    if text.startswith("\\\n", pos):
        pos += 2
    out: list[str] = []
    while pos < len(text) and text[pos] != "\n":
        if text[pos] == "\\" and pos + 1 < len(text):
            match = escapes.REPLACEMENT_ESCAPE.match(text, pos)
            decoded = escapes.replacement_escape(match) if match else None
            out.append(decoded if match and decoded is not None else text[pos + 1])
            pos = match.end() if match and decoded is not None else pos + 2
            continue
        out.append(text[pos])
        pos += 1
    added = "".join(out)
    if command == "c":
        return pos, Substitution(re.compile(r"\A.*\Z", re.S), lambda _m: added, False, 1)
    where, joined = (r"\Z", lambda _m: "\n" + added) if command == "a" else (r"\A", lambda _m: added + "\n")
    return pos, Substitution(re.compile(where), joined, False, 1)


def _sed_substitution(text: str, pos: int, extended: bool) -> tuple[int, Substitution | None]:
    delimiter = text[pos]
    if delimiter in "\\\n" or delimiter.isspace():
        raise ValueError("no delimiter")
    pattern, pos = _part(text, pos + 1, delimiter)
    replacement, pos = _part(text, pos, delimiter)
    flags = re.compile(r"[gpiImMe0-9w]*").match(text, pos)
    given = flags.group(0) if flags else ""
    pos += len(given)
    if "e" in given or "w" in given:  # runs the pattern space as a command; writes another file
        return pos, None
    nth = int(re.sub(r"\D", "", given) or "1")
    compiled = re.compile(_bre(pattern, delimiter, extended), re.I if re.search("[iI]", given) else 0)
    replace = _replacement(replacement, sed=True)
    return pos, (Substitution(compiled, replace, "g" in given, nth) if replace else None)


def _part(text: str, pos: int, delimiter: str, opening: str | None = None) -> tuple[str, int]:
    """From ``pos`` to the unescaped ``delimiter`` (a bracket expression holds it freely in sed;
    read simply), escapes kept, and the position after it. With ``opening`` (perl's bracketed
    parts), the ``delimiter`` that closes it: the one at depth 0 (``s{a{2}}{b}``)."""
    out, depth = [], 0
    while pos < len(text):
        char = text[pos]
        if char == "\\" and pos + 1 < len(text):
            out.append(text[pos:pos + 2])
            pos += 2
            continue
        if char == delimiter and depth == 0:
            return "".join(out), pos + 1
        if opening is not None:
            depth += (char == opening) - (char == delimiter)
        out.append(char)
        pos += 1
    raise ValueError("unterminated")


def split(text: str, delimiter: str) -> list[str]:
    """``text`` cut at each ``delimiter`` no backslash escapes, escapes kept.

    >>> split(r"a/b\\/c/", "/")
    ['a', 'b\\\\/c', '']
    """
    parts: list[str] = []
    pos = 0
    while True:
        try:
            part, pos = _part(text, pos, delimiter)
        except ValueError:
            return [*parts, text[pos:]]
        parts.append(part)


def _bre(pattern: str, delimiter: str, extended: bool) -> str:
    out, pos = [], 0
    specials = "(){}+?|"
    while pos < len(pattern):
        char = pattern[pos]
        if char == "\\" and pos + 1 < len(pattern):
            nxt = pattern[pos + 1]
            pos += 2
            if nxt == delimiter:
                out.append(re.escape(nxt))
            elif nxt in specials:
                out.append(re.escape(nxt) if extended else nxt)
            elif nxt in "<>":
                out.append(r"\b")
            elif nxt in "nt" or nxt in "wWsSbB123456789":
                out.append("\\" + nxt)
            elif nxt.isalnum():
                raise ValueError(f"unknown escape \\{nxt}")
            else:
                out.append(re.escape(nxt))
            continue
        if char == "[":
            end, bracket = _bracket(pattern, pos)
            out.append(bracket)
            pos = end
            continue
        out.append(char if extended or char not in specials else re.escape(char))
        pos += 1
    return "".join(out)


def _bracket(pattern: str, pos: int) -> tuple[int, str]:
    """A POSIX bracket expression from ``pos`` (its ``[``) as Python's, and where it ends."""
    out, index = ["["], pos + 1
    if pattern[index:index + 1] == "^":
        out.append("^")
        index += 1
    if pattern[index:index + 1] == "]":
        out.append(r"\]")
        index += 1
    while index < len(pattern):
        char = pattern[index]
        if char == "]":
            return index + 1, "".join(out) + "]"
        if pattern.startswith("[:", index):
            end = pattern.index(":]", index)
            out.append(_CLASSES[pattern[index + 2:end]])
            index = end + 2
            continue
        out.append("\\" + char if char in "\\[" else char)
        index += 1
    raise ValueError("unterminated bracket")


def _replacement(text: str, sed: bool) -> Callable[[re.Match[str]], str] | None:
    """sed's (``sed``) or perl's replacement text as a function of the match: ``\\1`` (sed's
    ``&``, perl's ``$1``, ``${1}``, ``$&``) the groups, escapes decoded; None for what is not
    computed (case conversion, a variable perl interpolates)."""
    parts: list[str | int] = []
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char == "\\" and pos + 1 < len(text):
            match = escapes.REPLACEMENT_ESCAPE.match(text, pos)
            if match and not (sed and match.group(5)) and (decoded := escapes.replacement_escape(match)) is not None:
                parts.append(decoded)  # \o043, \x23, \N{U+23}: a character, "#"
                pos = match.end()
                continue
            nxt = text[pos + 1]
            pos += 2
            if nxt.isdigit():
                parts.append(int(nxt))
            elif nxt in ("LUluE" if sed else "LUluEQ"):
                return None  # case conversion: not computed
            else:
                parts.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            continue
        if not sed and char in "$@":
            group = re.compile(r"\$(?:\{(\d+)\}|(\d+)|(&))").match(text, pos)
            if group is None:
                return None  # a variable perl interpolates
            parts.append(0 if group.group(3) else int(group.group(1) or group.group(2)))
            pos = group.end()
            continue
        parts.append(0 if sed and char == "&" else char)
        pos += 1
    return _joined(parts)


def _joined(parts: list[str | int]) -> Callable[[re.Match[str]], str]:
    return lambda m: "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _end_of_label(text: str, pos: int) -> int:
    match = re.compile(r"[^;\n}]*").match(text, pos)
    return match.end() if match else pos


# --------------------------------------------------------------------------------------- perl


def _perl(text: str, _extended: bool) -> tuple[list[Substitution], bool]:
    subs: list[Substitution] = []
    pos = 0
    while pos < len(text):
        if text[pos] in " \t\n;":
            pos += 1
            continue
        if text[pos] != "s" or pos + 1 >= len(text) or text[pos + 1].isalnum() or text[pos + 1].isspace():
            return subs, False  # other perl code: what it does is not computed
        pattern, pos = _perl_part(text, pos + 1)
        if text[pos - 1] in _CLOSING:  # s{...}{...}: the replacement has delimiters of its own
            while pos < len(text) and text[pos].isspace():
                pos += 1
            replacement, pos = _perl_part(text, pos)
        else:
            replacement, pos = _part(text, pos, text[pos - 1])
        flags = re.compile(r"[a-z]*").match(text, pos)
        given = flags.group(0) if flags else ""
        pos += len(given)
        if set(given) - set("gimsx") or _INTERPOLATED.search(pattern):
            return subs, False  # /e, /r...; an interpolated variable
        replace = _replacement(replacement, sed=False)
        if replace is None:
            return subs, False
        mode = (re.I if "i" in given else 0) | (re.M if "m" in given else 0) | (re.S if "s" in given else 0) | \
            (re.X if "x" in given else 0)
        python = pattern.replace(r"\z", r"\Z").replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("(?P<!", "(?<!")
        subs.append(Substitution(re.compile(python, mode), replace, "g" in given, 1))
    return subs, True


_PAIRS = {"{": "}", "[": "]", "(": ")", "<": ">"}
_CLOSING = frozenset(_PAIRS.values())
_INTERPOLATED = re.compile(r"(?<!\\)(?:\\\\)*[$@](?![)|]|$)")  # a sigil no backslash escapes: a variable


def _perl_part(text: str, pos: int) -> tuple[str, int]:
    """The part of ``s`` that starts with the delimiter at ``pos``, and the position after it: a
    bracket holds what is up to its balanced closing one (``s{a{2}}{b}``), escapes kept."""
    opening = text[pos]
    closing = _PAIRS.get(opening)
    return _part(text, pos + 1, opening) if closing is None else _part(text, pos + 1, closing, opening)
