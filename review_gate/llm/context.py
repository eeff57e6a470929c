"""What a reviewer sees around a hunk: the function or class that encloses it.

A hunk shows three lines either side of a change; the reviewer often needs the signature it
sits in (the decorator that checks a permission, the parameter that is user input). For a file
in a language we can parse (tree-sitter grammars, `text/grammars.py`), each hunk is widened with
unchanged lines of the new content: the enclosing function or class whole when it is short,
else its header (signature) and the lines nearest the hunk, plus the first line of each outer
function or class; at most MAX_LINES lines and MAX_CHARS characters a hunk. Chunking decides
whether they fit the budget (``llm.chunking``).

The new content is never taken from a path on trust (``review_gate.change.blobs``): it is the blob
whose id the diff carries, from git's objects or the working tree, at most MAX_BYTES. The
hunk's own lines must also read the same in it. Anything else, a bare diff without a
repository or a missing grammar, and the hunk is shown as the diff has it; so is a file the
parser gives up on (PARSE_SECONDS a file, WIDEN_SECONDS a call: a grammar's scanner can be
quadratic on hostile input). Those are seconds of this thread's CPU, not of the wall clock: a
busy machine shows the model the same lines a quiet one does (a 1 MB file parses in 0.04 s of
CPU, which a machine at load 10 stretches past half a second of wall time); tests pass their
own clock. The content's id is part of the pair's freshness key
(``state.freshness.input_sha``), so the widened lines change the key only when the content does.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from review_gate.change.blobs import new_contents
from review_gate.models import FileChange, Hunk, Line
from review_gate.text.grammars import PARSE_SECONDS, language, parse
from review_gate.text.grammars import parser as _parser

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

MAX_BYTES = 1_000_000  # new content larger than this is not read
MAX_LINES = 40  # unchanged lines shown around one hunk
MAX_CHARS = 4_000  # ... and their characters
HEADER_LINES = 6  # rows of a long signature shown
OUTER_HEADERS = 3  # enclosing functions or classes outside the nearest one whose first line is shown
WIDEN_SECONDS = 2.0  # ... and all files of one call: the rest are shown as the diff has them

_JS = frozenset({"function_declaration", "generator_function_declaration", "function_expression", "function",
                 "generator_function", "arrow_function", "method_definition", "class_declaration", "class"})
_TS = _JS | {"abstract_class_declaration", "interface_declaration", "enum_declaration", "internal_module", "module"}

# language -> node types that enclose code worth showing: functions, methods, classes
ENCLOSING: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "class_definition"}),
    "javascript": _JS,
    "typescript": _TS,
    "tsx": _TS,
    "go": frozenset({"function_declaration", "method_declaration", "func_literal", "type_declaration"}),
    "rust": frozenset({"function_item", "closure_expression", "impl_item", "trait_item", "struct_item",
                       "enum_item", "mod_item"}),
    "java": frozenset({"method_declaration", "constructor_declaration", "lambda_expression", "class_declaration",
                       "interface_declaration", "enum_declaration", "record_declaration"}),
}

# node types that wrap a definition with lines that belong to its header (Python's decorators)
WRAPPERS = frozenset({"decorated_definition"})


@dataclass(frozen=True)
class Around:
    """Unchanged lines of the new file shown around one hunk, before and after its own lines."""

    before: tuple[Line, ...]
    after: tuple[Line, ...]


Widening = Mapping[tuple[str, int], Around]  # (path, hunk index) -> lines around it
Clock = Callable[[], float]  # seconds, of any origin; only differences are read


def widen(files: Sequence[FileChange], repo_root: str | None,
          clock: Clock = time.thread_time) -> dict[tuple[str, int], Around]:
    """The lines around each hunk of ``files`` that can be widened; none without a repository.
    ``clock`` measures the PARSE_SECONDS and WIDEN_SECONDS budgets (this thread's CPU time)."""
    if repo_root is None:
        return {}
    root = Path(repo_root)
    wanted = [f for f in files if _widenable(f)]
    todo = [f for f in wanted if _CACHE.get(_key(root, f)) is None]
    ends = clock() + WIDEN_SECONDS
    for change, data in new_contents(root, todo, MAX_BYTES):
        now = clock()
        found = _file_arounds(change, data, min(now + PARSE_SECONDS, ends), clock) if now < ends else None
        _CACHE.put(_key(root, change), found or [None] * len(change.hunks))
    out: dict[tuple[str, int], Around] = {}
    for change in wanted:
        for index, around in enumerate(_CACHE.get(_key(root, change)) or ()):
            if around is not None:
                out[(change.path, index)] = around
    return out


def _widenable(change: FileChange) -> bool:
    lang = language(change.path)
    return (lang is not None and bool(change.hunks) and change.content_sha is not None and not change.binary
            and change.status != "deleted" and _parser(lang) is not None)


def _key(root: Path, change: FileChange) -> tuple[str, str, str, str]:
    section = hashlib.blake2b(change.patch.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return str(root), change.path, change.content_sha or "", section


class _Lru:
    """What widening found per (root, content id, diff section): build() runs once per agent and
    per attempt, and the same files are in several agents' scopes."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[tuple[str, str, str, str], list[Around | None]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, str, str]) -> list[Around | None] | None:
        with self._lock:
            found = self._data.get(key)
            if found is not None:
                self._data.move_to_end(key)
            return found

    def put(self, key: tuple[str, str, str, str], value: list[Around | None]) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


_CACHE = _Lru(2048)


def forget() -> None:
    """Drop what widening remembered. Nothing needs it to stay right (a result depends only on
    content its id names); tests use it to widen the same change again after changing the files."""
    _CACHE.clear()


# --------------------------------------------------------------------------------------------
# The enclosing function or class
# --------------------------------------------------------------------------------------------


class _Source:
    """The new content as rows, split on LF as git and tree-sitter both count them. Positions
    are taken from nodes as byte offsets, never as points: fewer binding objects, fewer bugs."""

    def __init__(self, data: bytes) -> None:
        self.rows = data.split(b"\n")
        self.starts = list(itertools.accumulate((len(r) + 1 for r in self.rows[:-1]), initial=0))

    def text(self, row: int) -> str:
        raw = self.rows[row]
        return (raw[:-1] if raw.endswith(b"\r") else raw).decode("utf-8", "replace")

    def indent(self, row: int) -> int:
        raw = self.rows[row]
        return len(raw) - len(raw.lstrip(b" \t"))

    def row_of(self, at: int) -> int:
        return bisect.bisect_right(self.starts, at) - 1

    def first_row(self, node: Node) -> int:
        """Where ``node`` starts, with the decorators that wrap it."""
        parent = node.parent
        return self.row_of(parent.start_byte if parent is not None and parent.type in WRAPPERS else node.start_byte)

    def last_row(self, node: Node) -> int:
        return self.row_of(max(node.start_byte, node.end_byte - 1))

    def agrees(self, hunk: Hunk) -> bool:
        """The hunk's new-side lines read the same here: this content is the one the hunk made."""
        return all(0 < line.number <= len(self.rows) and self.text(line.number - 1) == line.text
                   for line in hunk.lines)


def _parse(grammar: Parser, data: bytes, deadline: float, clock: Clock) -> Tree | None:
    """The syntax tree, None when parsing passes ``deadline`` by ``clock`` (some grammars'
    scanners are quadratic on long runs of comment lines: a hostile file must not hold the run)."""
    return parse(grammar, data, deadline, clock)


def _file_arounds(change: FileChange, data: bytes | None, deadline: float,
                  clock: Clock) -> list[Around | None] | None:
    lang = language(change.path)
    parser = _parser(lang) if lang else None
    if data is None or parser is None or lang is None:
        return None
    source = _Source(data)
    tree = _parse(parser, data, deadline, clock)
    if tree is None:
        return None
    spans = [(h.lines[0].number - 1, h.lines[-1].number - 1) if h.lines else None for h in change.hunks]
    taken = _Spans(s for s in spans if s is not None)
    shown: set[int] = set()
    out: list[Around | None] = []
    for hunk, span in zip(change.hunks, spans, strict=True):
        if span is None or not source.agrees(hunk):
            out.append(None)
            continue
        rows = _rows(tree, source, hunk, span, ENCLOSING[lang], taken, shown)
        out.append(_around(source, rows, span) if rows else None)
    return out


def _anchor(hunk: Hunk) -> int:
    """The row of the hunk's first change: its first added line, else where its first removed line was."""
    for line in hunk.lines:
        if line.added:
            return line.number - 1
    if hunk.removed_lines:
        at = min(hunk.removed_lines[0].before, len(hunk.lines) - 1)
        return hunk.lines[at].number - 1
    return hunk.lines[0].number - 1


def _chain(tree: Tree, source: _Source, row: int, types: frozenset[str]) -> list[Node]:
    """The enclosing nodes of ``row``, innermost first."""
    at = source.starts[row] + source.indent(row)
    node: Node | None = tree.root_node.descendant_for_byte_range(at, at)
    chain: list[Node] = []
    while node is not None:
        if node.type in types:
            chain.append(node)
        node = node.parent
    return chain


def _header_rows(node: Node, source: _Source) -> list[int]:
    """The rows of ``node``'s header: its decorators, and its signature up to where its body
    begins (the line of a ``{`` that follows the signature included); HEADER_LINES of each at most."""
    start, top, body = source.first_row(node), source.row_of(node.start_byte), node.child_by_field_name("body")
    last = top
    if body is not None and source.row_of(body.start_byte) > top:
        row = source.row_of(body.start_byte)
        last = row if body.start_byte - source.starts[row] > source.indent(row) else row - 1
    return [*range(start, min(top, start + HEADER_LINES)), *range(top, min(last, top + HEADER_LINES - 1) + 1)]


def _rows(tree: Tree, source: _Source, hunk: Hunk, span: tuple[int, int], types: frozenset[str],
          taken: _Spans, shown: set[int]) -> list[int]:
    """The rows to show around ``span``: see the module docstring."""
    first, last = span
    chain = [n for n in _chain(tree, source, _anchor(hunk), types)
             if source.first_row(n) < first or source.last_row(n) > last]  # one inside the hunk adds nothing
    if not chain:
        return []
    node = chain[0]
    start, end = source.first_row(node), source.last_row(node)
    header = [r for r in _header_rows(node, source) if r < first]
    header += [r for r in (source.row_of(n.start_byte) for n in chain[1:1 + OUTER_HEADERS]) if r < first]
    before, after = max(0, first - start), max(0, end - last)
    if before + after > MAX_LINES:
        room = max(0, MAX_LINES - len(header))
        before = min(before, max(room // 2, room - after))
        after = min(after, room - before)
    near = [r for r in (*range(first - before, first), *range(last + 1, last + 1 + after))
            if r not in shown and not taken.holds(r)]
    rows = sorted({*(r for r in header if not taken.holds(r)), *near})
    if sum(len(source.rows[r]) + 8 for r in rows) > MAX_CHARS:
        rows = sorted({r for r in header if not taken.holds(r)})
        if sum(len(source.rows[r]) + 8 for r in rows) > MAX_CHARS:
            return []
    shown.update(rows)
    return rows


class _Spans:
    """The rows a file's hunks show themselves, sorted: the widening of one hunk never shows a
    line of another as unchanged (it may be an added one)."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self._starts = [a for a, _ in ordered]
        self._reach = list(itertools.accumulate((b for _, b in ordered), max))  # spans of merged sections overlap

    def holds(self, row: int) -> bool:
        at = bisect.bisect_right(self._starts, row) - 1
        return at >= 0 and self._reach[at] >= row


def _around(source: _Source, rows: list[int], span: tuple[int, int]) -> Around:
    lines = [Line(row + 1, source.text(row), False) for row in rows]
    return Around(before=tuple(ln for ln in lines if ln.number - 1 < span[0]),
                  after=tuple(ln for ln in lines if ln.number - 1 > span[1]))
