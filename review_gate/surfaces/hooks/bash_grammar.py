"""tree-sitter's bash grammar: the parser (loaded on first use, so that the hook starts fast;
bounded by a deadline) and the line as bash reads it before it splits words.
"""

from __future__ import annotations

import bisect
import re
import threading
import time
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Point

PARSE_S = 1.0  # a line longer to parse than this is not read (tree-sitter parses 64 KB in milliseconds)


def parse(text: str) -> tuple[bytes, Node] | None:
    """The UTF-8 bytes of the shell line ``text`` as bash reads them (continued lines joined)
    and their syntax tree; None when there is no grammar or the parse ran out of time."""
    source = text.encode("utf-8", "surrogatepass")
    tree = _parse(source)
    if tree is not None and b"\\\n" in source:
        joined = _join_lines(source, tree)
        if joined != source:
            source, tree = joined, _parse(joined)
    return (source, tree) if tree is not None else None


_CONTINUED = re.compile(rb"(?<!\\)((?:\\\\)*)\\\n")  # an odd run of backslashes before a newline
_LITERAL = frozenset({"raw_string", "ansi_c_string", "comment", "heredoc_body"})  # where a `\` newline stays


def _join_lines(source: bytes, root: Node) -> bytes:
    """``source`` with each backslash-newline outside single quotes, comments and here-document
    bodies taken out, as bash takes them out before it splits words: ``git pu\\`` then ``sh`` on
    the next line is ``git push`` (the grammar reads the two halves as two words)."""
    kept: list[tuple[int, int]] = []  # none holds another: the walk stops at each
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _LITERAL:
            kept.append((node.start_byte, node.end_byte))
        else:
            stack.extend(node.children)
    kept.sort()
    starts = [start for start, _ in kept]

    def join(match: re.Match[bytes]) -> bytes:
        at = match.end() - 2
        index = bisect.bisect_right(starts, at) - 1
        return match.group(0) if index >= 0 and at < kept[index][1] else match.group(1)

    return _CONTINUED.sub(join, source)


_PARSING = threading.Lock()


@cache
def _parser() -> Parser | None:
    """tree-sitter with the bash grammar, imported on first use: the hook's start-up stays fast."""
    try:
        import tree_sitter
        import tree_sitter_bash

        return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    except (ImportError, AttributeError, ValueError, TypeError):
        return None


def _parse(source: bytes) -> Node | None:
    parser = _parser()
    if parser is None:
        return None
    deadline = time.monotonic() + PARSE_S

    def chunk(at: int, _point: Point) -> bytes:
        return source[at:at + 65536]

    def stop(_at: int, _error: bool) -> bool:
        return time.monotonic() > deadline

    with _PARSING:  # a parser is not thread-safe
        try:
            tree = parser.parse(chunk, progress_callback=stop)
        except ValueError:  # stopped
            return None
    return tree.root_node if tree is not None else None
