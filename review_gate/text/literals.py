"""Whether a place on a line of code lies inside a string literal the line opens. Pure.

A waiver is a comment: ``s = "# review-gate: ignore[sec-x] fine"; get(u, verify=False)`` holds the
words of one inside a string, where the language sees data, not a comment. Read only for the
languages whose quotes say unambiguously where a string starts and ends on one line (not YAML,
whose plain words may hold an apostrophe, nor Rust, whose lifetimes are written ``'a``); a line
that continues a string opened above it is not known here, and reads as code.

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


def in_string(line: str, at: int, path: str) -> bool:
    """Whether ``line[at]`` is inside a string literal that starts earlier on the line, in the
    language of ``path``; False where the language is not known, and where a comment starts first."""
    syntax = SYNTAX.get(PurePosixPath(path).suffix.lower())
    if syntax is None:
        return False
    quotes, openers = syntax
    quote: str | None = None
    index = 0
    while index < min(at, len(line)):
        char = line[index]
        if quote is None:
            if line.startswith(openers, index):
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
