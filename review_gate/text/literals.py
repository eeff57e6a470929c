"""Whether a place on a line of code lies inside a string literal the line opens. Pure.

A waiver is a comment: ``s = "# review-gate: ignore[sec-x] fine"; get(u, verify=False)`` holds the
words of one inside a string, where the language sees data, not a comment. This is the lexical
reading, for the lines the grammar (``judging.code_regions``) cannot judge: the languages whose
quotes say where a string starts and ends on one line are read with their comment openers; any
other file (YAML, a Dockerfile, a script in a language not listed) conservatively: a quote
(``"``, ``'``, a backtick) still open before the place makes it a string's, even an apostrophe
in prose, so a string's contents are never taken for a comment. A line that continues a string
opened above it is not known here (the grammar's reading is).

>>> in_string('s = "# not a comment"  # a comment', 5, "app.py"), in_string('x = 1  # "quoted"', 7, "app.py")
(True, False)
"""

from __future__ import annotations

from pathlib import PurePosixPath

_HASH = ('"\'', ("#",))
_SLASHES = ('"\'', ("//", "/*"))
_TEMPLATES = ('"\'`', ("//", "/*"))
# suffix -> (the characters that open and close a string, what opens a comment)
SYNTAX: dict[str, tuple[str, tuple[str, ...]]] = {
    **dict.fromkeys((".py", ".pyw", ".rb", ".sh", ".bash"), _HASH),
    **dict.fromkeys((".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".java", ".kt", ".kts", ".swift", ".scala"), _SLASHES),
    **dict.fromkeys((".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".go"), _TEMPLATES),
    ".php": ('"\'', ("#", "//", "/*")),
}


_ANY = ('"\'`', ())  # a file of no language listed: every quote counts, no comment opener is known
# a script's interpreter (its #! line) -> the suffix its language has
_INTERPRETERS = (("python", ".py"), ("pypy", ".py"), ("node", ".js"), ("nodejs", ".js"), ("deno", ".ts"),
                 ("bun", ".js"), ("bash", ".sh"), ("sh", ".sh"), ("dash", ".sh"), ("zsh", ".sh"), ("ksh", ".sh"),
                 ("ruby", ".rb"), ("php", ".php"))


def script_path(path: str, interpreter: str | None) -> str:
    """``path`` as its language names it: a script whose name has no suffix this module knows and
    whose ``#!`` line names ``interpreter`` takes that language's suffix (``bin/deploy`` run by
    ``python3`` is ``bin/deploy.py``).

    >>> script_path("bin/deploy", "python3"), script_path("app.py", "bash"), script_path("bin/x", None)
    ('bin/deploy.py', 'app.py', 'bin/x')
    """
    if interpreter is None or PurePosixPath(path).suffix.lower() in SYNTAX:
        return path
    name = PurePosixPath(interpreter).name.lower()
    for prefix, suffix in _INTERPRETERS:
        if name == prefix or (name.startswith(prefix) and not name[len(prefix)].isalpha()):
            return path + suffix
    return path


def in_string(line: str, at: int, path: str) -> bool:
    """Whether ``line[at]`` is inside a string literal that starts earlier on the line, in the
    language of ``path`` (False where a comment starts first); in a file of no language listed,
    whether any quote is open before it."""
    quotes, openers = SYNTAX.get(PurePosixPath(path).suffix.lower(), _ANY)
    quote: str | None = None
    index = 0
    while index < min(at, len(line)):
        char = line[index]
        if quote is None:
            if openers and line.startswith(openers, index):
                return False  # a comment opens before it: it is in the comment
            if char in quotes:
                quote = char
        elif char == "\\":
            index += 2
            continue
        elif char == quote:
            quote = None
        index += 1
    return quote is not None
