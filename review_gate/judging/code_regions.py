"""Which parts of a file are words about code, not code: comments and docstrings, read with the
language's grammar (tree-sitter, ``text.grammars``). Pure, over the file's text.

A code rule (``eval(``, ``verify=False``, ``shell=True``) that fires inside a comment, a
docstring or a doctest quotes a pattern; Bandit and Semgrep, reading syntax trees, would not
flag it. ``read`` parses a file's new content once (lazily: tree-sitter and the grammar are
imported when a file first needs one; bounded: at most MAX_BYTES, and the parse gives up at its
deadline), and ``Code.words`` says whether a place on one of git's lines lies in a comment or a
docstring. It never hides code on a guess, so a place is code:

- in a language without a grammar here, in a file too large, or whose parse ran out of time;
- on a line the language splits where git does not (``# note\\rexec(x)``: Python reads a
  comment, then a statement; tree-sitter reads one comment), and on a line a match continues to
  that is not wholly inside the same comment;
- where the parse has an error or a missing token on the comment's lines or the line either
  side of them (a misparse that starts a string or a comment early must not hide what follows);
- in a string statement that runs code (an f-string's ``{...}``) or a string that is an
  expression's part, not a statement of its own (only Python's bare string statements are
  docstrings).

>>> code = read("app.py", "x = eval(a)  # eval(b)\\n# eval(c)\\n")
>>> code.words(1, 5), code.words(1, 16), code.words(2)
(False, True, True)
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from review_gate.models.facts import FileChange
from review_gate.models.line_ends import hides_lines, line_breaks
from review_gate.text import grammars
from review_gate.text.literals import in_string, script_path

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

MAX_BYTES = 1_000_000  # a file larger than this is read as code
WORDS_SECONDS = 2.0  # parsing for one judging: the files past it are read as code
# The rule categories whose patterns describe code (a call, a setting, a statement): their matches
# in a comment or a docstring quote the pattern. Not secrets (a key in a comment is still
# committed), to-do notes (they live in comments), conflict markers and hidden characters (they
# break or hide the file wherever they are), nor a category this list does not know.
CODE_CATEGORIES = frozenset({
    "injection", "transport-security", "cryptography", "authentication", "access-control", "configuration",
    "permissions", "filesystem", "reliability", "debug-leftover", "error-handling", "type-safety", "testing",
    "data-loss", "locking", "compatibility", "deserialization", "ssrf", "xss", "path-traversal", "redos",
    "denial-of-service", "resource-exhaustion", "supply-chain",
})
COMMENTS = frozenset({"comment", "line_comment", "block_comment", "html_comment"})
# suffix -> language: those of the grammars, and shell scripts (bash's grammar)
LANGUAGES: dict[str, str] = {**grammars.LANGUAGES, ".sh": "bash", ".bash": "bash"}


def language(path: str) -> str | None:
    return LANGUAGES.get(PurePosixPath(path).suffix.lower())


def read(path: str, text: str, deadline: float | None = None) -> Code | None:
    """``text`` (the new content of ``path``) parsed, or None when it cannot be: no grammar for
    its language, larger than MAX_BYTES, or a parse past ``deadline`` (``time.thread_time``:
    this thread's CPU, so a busy machine does not change the answer; at most
    ``grammars.PARSE_SECONDS`` from now in any case). A script whose name says nothing is named
    by its interpreter (``text.literals.script_path``)."""
    lang = language(path)
    if lang is None:
        return None
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > MAX_BYTES:
        return None
    grammar = grammars.parser(lang)
    if grammar is None:
        return None
    ends = time.thread_time() + grammars.PARSE_SECONDS
    tree = grammars.parse(grammar, data, ends if deadline is None else min(ends, deadline))
    return Code(lang, data, tree, line_breaks(path)) if tree is not None else None


class Code:
    """One file's syntax tree, asked where its words about code are."""

    def __init__(self, lang: str, data: bytes, tree: Tree, breaks: str) -> None:
        self.lang = lang
        self.data = data
        self.tree = tree
        self.rows = data.split(b"\n")  # git's lines, as bytes
        self.starts = list(itertools.accumulate((len(r) + 1 for r in self.rows[:-1]), initial=0))
        self._breaks = breaks  # where the language ends a line besides a newline (``models.lines``)

    def words(self, line: int, column: int | None = None, end_line: int | None = None) -> bool:
        """Whether the place at ``line`` (1-based), character ``column`` (1-based; None: the
        line's first non-blank character), and every line after it through ``end_line``, lie in
        one comment or docstring the parse is sure of."""
        last = max(line, end_line or line)
        if last > len(self.rows) or any(self._hides(n) for n in range(line, last + 1)):
            return False
        node = self._node(line, column, docstrings=True)
        if node is None:
            return False
        for number in range(line + 1, last + 1):  # a match that goes on: each of its lines wholly inside
            low, high = self._content(number)
            if low < high and not node.start_byte <= low < high <= node.end_byte:
                return False
        return not self._errors_near(node)

    def comment(self, line: int, column: int, text: str | None = None) -> bool:
        """Whether character ``column`` (1-based) of ``line`` lies in a comment (not a docstring or
        a string) the parse is sure of; ``text``: the line as the caller read it, which must be
        the line here (else the caller's content is not this one: no comment)."""
        if text is not None and not (1 <= line <= len(self.rows) and self.line(line) == text.rstrip("\r")):
            return False
        node = self._node(line, column, docstrings=False)
        return node is not None and not self._hides(line) and not self._errors_near(node)

    def line(self, number: int) -> str:
        return self.rows[number - 1].decode("utf-8", "surrogatepass").rstrip("\r")

    def _node(self, line: int, column: int | None, *, docstrings: bool) -> Node | None:
        """The comment (or docstring) that character ``column`` of ``line`` lies in."""
        if not 1 <= line <= len(self.rows):
            return None
        text = self.rows[line - 1].decode("utf-8", "surrogatepass")
        at = len(text) - len(text.lstrip()) if column is None else column - 1
        if not 0 <= at < len(text.rstrip("\r")):
            return None
        return self._words_at(self.starts[line - 1] + len(text[:at].encode("utf-8", "surrogatepass")), docstrings)

    def _hides(self, line: int) -> bool:
        """Git's line holds a line end of the language inside it (a trailing CR ends it, no more)."""
        row = self.rows[line - 1].decode("utf-8", "surrogatepass").rstrip("\r")
        return any(char in row for char in self._breaks)

    def _content(self, line: int) -> tuple[int, int]:
        """The bytes of ``line``'s non-blank content."""
        row = self.rows[line - 1]
        low = self.starts[line - 1] + len(row) - len(row.lstrip())
        return low, self.starts[line - 1] + len(row.rstrip())

    def _words_at(self, at: int, docstrings: bool) -> Node | None:
        """The comment (or docstring statement) byte ``at`` lies in, or None."""
        node: Node | None = self.tree.root_node.descendant_for_byte_range(at, at + 1)
        while node is not None:
            if node.type in COMMENTS:
                return node
            if self.lang == "python" and node.type == "expression_statement":
                return node if docstrings and _docstring(node) else None
            if node.type in ("block", "module", "function_definition", "class_definition"):
                return None
            node = node.parent
        return None

    def _errors_near(self, node: Node) -> bool:
        """Whether an error or a missing token touches ``node``'s lines or the line either side."""
        if not self.tree.root_node.has_error:
            return False
        first = max(0, self._row(node.start_byte) - 1)
        last = min(len(self.rows) - 1, self._row(max(node.start_byte, node.end_byte - 1)) + 1)
        low = self.starts[first]
        high = self.starts[last] + len(self.rows[last])
        stack = [self.tree.root_node]
        while stack:
            current = stack.pop()
            if current.end_byte < low or current.start_byte > high or not current.has_error:
                continue
            if current.type == "ERROR" or current.is_missing:
                return True
            stack.extend(current.children)
        return False

    def _row(self, at: int) -> int:
        return bisect.bisect_right(self.starts, at) - 1


class Comments:
    """Whether a place on a line of the change lies in a real comment: what a waiver must be in
    (``judging.waivers``). With the grammar, over the file's whole new content (``texts``, read by
    the runner; for a new file, its hunk, which is all of it): the place is in a comment node the
    parse is sure of, on a line that reads the same there. Without one (a language with no grammar
    here, a content not known or not parsed), the lexical reading of ``text.literals``, which never
    takes a string's contents for a comment. Never on a line the language splits where git does
    not (``# review-gate: ignore[x] y\\rexec(z)``). A script is read in its interpreter's language.
    """

    def __init__(self, files: Sequence[FileChange], texts: Mapping[str, str] | None = None) -> None:
        self._files = {f.path: f for f in files}
        self._texts = texts or {}
        self._code: dict[str, Code | None] = {}
        self._deadline: float | None = None

    def holds(self, path: str, number: int, text: str, at: int) -> bool:
        """Whether character ``at`` (0-based) of line ``number`` of ``path``, which reads ``text``,
        is inside a comment."""
        change = self._files.get(path)
        named = script_path(path, change.interpreter if change is not None else None)
        if hides_lines(text, named):
            return False
        code = self._parsed(path, named, change)
        if code is not None:
            return code.comment(number, at + 1, text)
        return not in_string(text, at, named)

    def _parsed(self, path: str, named: str, change: FileChange | None) -> Code | None:
        if path not in self._code:
            text = self._texts.get(path)
            if text is None and change is not None and change.status == "added" and len(change.hunks) == 1:
                lines = change.hunks[0].lines
                if lines.number_at(0) == 1 and lines.number_at(len(lines) - 1) == len(lines):
                    text = "\n".join(lines.texts()) + "\n"  # a new file's one hunk is all of it
            if self._deadline is None:
                self._deadline = time.thread_time() + WORDS_SECONDS
            self._code[path] = read(named, text, self._deadline) if text is not None else None
        return self._code[path]


def _docstring(statement: Node) -> bool:
    """A Python statement that is a string and nothing else, with nothing it runs (no f-string
    field): a docstring, or a string used as a block comment. Its doctests are words too."""
    if statement.named_child_count != 1:
        return False
    value = statement.named_children[0]
    if value.type not in ("string", "concatenated_string"):
        return False
    stack = [value]
    while stack:
        current = stack.pop()
        if current.type == "interpolation" or current.type == "ERROR" or current.is_missing:
            return False
        stack.extend(current.children)
    return True


__all__ = ["CODE_CATEGORIES", "Code", "Comments", "read"]
