"""tree-sitter's grammars: which language a file is, its parser (imported on first use), and a
parse bounded by a deadline.

A grammar is a compiled wheel (abi3, nothing fetched at run time); tree-sitter and each grammar
are imported only when a file first needs one, so a command that parses nothing never loads them
(``tests/cli/test_start_up.py``). A grammar's scanner can be quadratic on hostile input (long
runs of comment lines), so every parse stops at its deadline and gives nothing: the caller then
reads the file as if it had no grammar. Read by the llm reviewers' context (``llm/context.py``)
and by the judging of comments (``text/code_regions.py``).
"""

from __future__ import annotations

import importlib
import re
import threading
import time
from collections.abc import Callable
from functools import cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Parser, Point, Tree

PARSE_SECONDS = 0.5  # parsing one file longer than this gives up on it

# file suffix -> language
LANGUAGES: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java",
}

# language -> (grammar module, its function returning the language)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "bash": ("tree_sitter_bash", "language"),
}

_PARSING = threading.Lock()
_BINDING = (0, 26, 1)  # the first tree-sitter whose parse(..., progress_callback=) does not crash


def language(path: str) -> str | None:
    """The language of ``path`` by its suffix, among those with a grammar here."""
    return LANGUAGES.get(PurePosixPath(path).suffix.lower())


@cache
def parser(lang: str) -> Parser | None:
    """A parser for ``lang``, None when tree-sitter (recent enough) or the grammar is not
    installed or does not load."""
    from importlib import metadata  # with email's parser: 10 ms a start that parses nothing would pay

    module_name, function = GRAMMARS[lang]
    try:
        import tree_sitter

        if _version("tree-sitter") < _BINDING:
            return None
        grammar = importlib.import_module(module_name)
        return tree_sitter.Parser(tree_sitter.Language(getattr(grammar, function)()))
    except (ImportError, AttributeError, ValueError, TypeError, metadata.PackageNotFoundError):
        return None


def _version(package: str) -> tuple[int, ...]:
    from importlib import metadata

    return tuple(int(part) for part in re.findall(r"\d+", metadata.version(package))[:3])


def parse(grammar: Parser, data: bytes, deadline: float, clock: Callable[[], float] = time.thread_time) -> Tree | None:
    """The syntax tree of ``data``, None when parsing passes ``deadline`` by ``clock`` (this
    thread's CPU time unless told: a busy machine does not change what a parse gives)."""
    def read(at: int, _point: Point) -> bytes:
        return data[at:at + 65536]

    def stop(_at: int, _error: bool) -> bool:
        return clock() > deadline

    with _PARSING:  # a parser is not thread-safe, and callers run in worker threads
        try:
            return grammar.parse(read, progress_callback=stop)
        except ValueError:  # cancelled by stop()
            return None
