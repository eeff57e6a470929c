"""What a shell line may write into a file, as texts an inline waiver is looked for in. Read,
never run.

A waiver need not be on the line as written: bash joins adjacent quoted pieces into one word
(``"# revie""w-gate: ignore[x]"``), decodes ``$'...'`` and escapes; sed and perl write the
replacement of a substitution with its escapes undone (``s/x/x \\/\\/ eslint-disable-line/``
writes ``x // eslint-disable-line``); printf joins its arguments. So the texts are the line as
written and, for each simple command (in substitutions and here-documents' lines too), its words
as bash makes them, joined by spaces and joined without, each word with its backslashes undone,
and the replacement of each word that reads as a sed or perl substitution.

    >>> any("review-gate: ignore[x]" in t for t in texts('echo "# revie""w-gate: ignore[x] y" >> f.py'))
    True
    >>> "loads(blob)  # nosec" in texts("sed -i 's/loads(blob)/loads(blob)  # nosec/' f.py")
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from review_gate.surfaces.hooks import script, syntax

MAX_TEXTS = 2000  # words looked at, at most: past them, the line as written (a line that long is rare)

_ESCAPE = re.compile(r"\\(.)", re.S)
# s, then a delimiter that is neither a word character nor a blank: sed's and perl's substitution
_SUBSTITUTION = re.compile(r"(?:^|[;{\s])s([^\w\s\\])")


def texts(command: str) -> list[str]:
    """The texts ``command`` may write (see the module): the line first."""
    found = [command, _unescaped(command)]
    parsed = syntax.read(command)
    if parsed is None:
        return found
    for words in _words(parsed.items):
        found += [" ".join(words), "".join(words)]
        for word in words:
            found += [_unescaped(word), *substitutions(word)]
        if len(found) > MAX_TEXTS:
            break
    return list(dict.fromkeys(found))


def substitutions(word: str) -> list[str]:
    """The replacements of the sed or perl substitutions in ``word``, escapes undone.

    >>> substitutions(r"s/a()/a() \\/\\/ eslint-disable-line/g")
    ['a() // eslint-disable-line']
    >>> substitutions("s|x|x # nosec B501|")
    ['x # nosec B501']
    """
    out = []
    for match in _SUBSTITUTION.finditer(word):
        delimiter = match.group(1)
        parts = _split(word[match.end():], delimiter)
        if len(parts) >= 2:
            out.append(_unescaped(parts[1]))
    return out


def _split(text: str, delimiter: str) -> list[str]:
    """``text`` cut at each ``delimiter`` no backslash escapes."""
    parts, current, index = [], [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            current.append(text[index:index + 2])
            index += 2
            continue
        if char == delimiter:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return parts


def _unescaped(text: str) -> str:
    return _ESCAPE.sub(r"\1", text)


def _words(items: Sequence[script.Item]) -> Iterator[tuple[str, ...]]:
    """The words of every simple command in ``items``, nested lines and function bodies too."""
    for item in items:
        if isinstance(item, script.Command):
            yield item.words
        elif isinstance(item, script.Scope):
            yield from _words(item.items)
        elif isinstance(item, script.Function):
            yield from _words(item.body)
