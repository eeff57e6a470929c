"""A hunk's lines read from the diff text itself: no second copy of every line.

A 50 MB diff has more than a million lines. Held as one object and one string each they cost
about five times the diff, on top of the diff's own text (``FileChange.patch``). So a hunk keeps
only where its body is in that text (``source[start:end]``: its lines with their ``+``/``-``/
`` `` tags, as the diff wrote them), and ``Lines`` and ``RemovedLines`` are read-only sequences of
``Line`` and ``Removed`` made from it each time they are read. Every reader of ``hunk.lines``
reads them as before, and a model's JSON is the same list of objects as before.

>>> block = Lines.of([Line(3, "a = 1", True), Line(4, "b = 2", False)])
>>> [(ln.number, ln.text, ln.added) for ln in block]
[(3, 'a = 1', True), (4, 'b = 2', False)]
>>> block[-1].text, len(block)
('b = 2', 2)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, overload

from pydantic import Field, PlainSerializer, PlainValidator, WithJsonSchema

_RUNS = re.compile(b"\x01+")  # consecutive added lines, in a hunk's flags
_OLD = frozenset(("-", "\\"))  # tags of body lines that are not on the new side
_NEAR = 32  # a line this close to a hunk's start is found row by row, not by splitting the whole body


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a hunk on the new side: added (``+``) or context (`` ``)."""

    number: Annotated[int, Field(ge=1, description="Line number in the new file.")]
    text: str
    added: bool


@dataclass(frozen=True, slots=True)
class Removed:
    """One line a hunk removes (``-``), kept because a deleted check is often the bug.

    ``before``: where it stood, as the index in ``Hunk.lines`` of the new-side line it came
    before (``len(lines)`` when it came after them all). Kept apart from ``lines`` so everyone
    who reads ``lines`` as the new file's lines still does.
    """

    number: Annotated[int, Field(ge=0, description="Line number in the old file.")]
    text: str
    before: Annotated[int, Field(ge=0)]


def _no_newline(texts: Sequence[str]) -> None:
    for text in texts:
        if "\n" in text:
            raise ValueError(f"a line's text holds no newline: {text[:40]!r}")


class _Body:
    """A hunk's body in ``source[start:end]``, up to and with its last line's newline. ``raw``: its
    lines may end with a carriage return or hold undecodable bytes (surrogate escapes), which each
    line's text drops or replaces."""

    __slots__ = ("_end", "_raw", "_source", "_start")

    def __init__(self, source: str, start: int, end: int, raw: bool) -> None:
        self._source = source
        self._start = start
        self._end = end
        self._raw = raw

    def _rows(self) -> list[str]:
        # the body ends with its last line's newline: "\n" alone is one empty line
        return self._source[self._start:self._end - 1].split("\n") if self._end > self._start else []

    def _texts(self, rows: list[str]) -> list[str]:
        texts = [row[1:] for row in rows]
        if self._raw:
            texts = [_clean(t) for t in texts]
        return texts


def _clean(text: str) -> str:
    """A line as a reviewer reads it: its line ending's carriage return dropped, undecodable bytes
    (kept as surrogate escapes in the diff's text) replaced."""
    text = text.removesuffix("\r")
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace") if not text.isascii() else text


class Lines(_Body, Sequence[Line]):
    """A hunk's new-side lines: the body's lines tagged ``+`` or `` `` (or empty), ``count`` of
    them, numbered from ``first`` (or by ``numbers``, when they do not follow each other)."""

    __slots__ = ("_count", "_every", "_first", "_numbers")

    def __init__(self, source: str, start: int, end: int, first: int, count: int, raw: bool = False,
                 numbers: Sequence[int] | None = None) -> None:
        super().__init__(source, start, end, raw)
        self._first = first
        self._count = count
        self._numbers = numbers
        self._every: bool | None = None  # every line added: counted once, when first asked

    @classmethod
    def of(cls, lines: Iterable[Line]) -> Lines:
        lines = list(lines)
        texts = [ln.text for ln in lines]
        _no_newline(texts)
        numbers = [ln.number for ln in lines]
        first = numbers[0] if numbers else 1
        follow = numbers == list(range(first, first + len(numbers)))
        source = "".join(("+" if ln.added else " ") + ln.text + "\n" for ln in lines)
        return cls(source, 0, len(source), first, len(lines), numbers=None if follow else tuple(numbers))

    def texts_and_flags(self) -> tuple[list[str], bytes]:
        """The new-side lines' texts, and a flag byte each (1: added), with no ``Line`` made for
        each: made anew each time, never kept."""
        rows = [row for row in self._rows() if row[:1] not in _OLD]
        return self._texts(rows), bytes([row[:1] == "+" for row in rows])

    def texts(self) -> list[str]:
        """The new-side lines' texts alone, with no ``Line`` made for each (the lines findings are on)."""
        if self._numbers is None and not self._raw and self._all_added():  # a new file: split in C
            return self._source[self._start + 1:self._end - 1].split("\n+") if self._count else []
        return self._texts([row for row in self._rows() if row[:1] not in _OLD])

    def __len__(self) -> int:
        return self._count

    def _number(self, index: int) -> int:
        return self._numbers[index] if self._numbers is not None else self._first + index

    def _index(self, index: int) -> int:
        at = index + self._count if index < 0 else index
        if not 0 <= at < self._count:
            raise IndexError("line index out of range")
        return at

    def __iter__(self) -> Iterator[Line]:
        texts, added = self.texts_and_flags()
        numbers = self._numbers if self._numbers is not None else range(self._first, self._first + len(texts))
        return map(Line, numbers, texts, map(bool, added))

    @overload
    def __getitem__(self, index: int) -> Line: ...
    @overload
    def __getitem__(self, index: slice) -> list[Line]: ...
    def __getitem__(self, index: int | slice) -> Line | list[Line]:
        if isinstance(index, slice):
            return list(self)[index]
        at = self._index(index)
        if at < _NEAR:
            row = self._row(at)
            return Line(self._number(at), self._texts([row])[0], row[:1] == "+")
        texts, added = self.texts_and_flags()
        return Line(self._number(at), texts[at], bool(added[at]))

    def _row(self, index: int) -> str:
        """New-side row ``index`` of the body, found without splitting all of it (``lines[0]``:
        a script's ``#!`` line at the top of a new file of thousands of lines)."""
        source, at, seen = self._source, self._start, -1
        while at < self._end:
            stop = source.find("\n", at, self._end)
            stop = self._end if stop < 0 else stop
            if source[at:at + 1] not in _OLD:
                seen += 1
                if seen == index:
                    return source[at:stop]
            at = stop + 1
        raise IndexError("line index out of range")

    def number_at(self, index: int) -> int:
        """The new line number of line ``index``, without reading the line."""
        return self._number(self._index(index))

    def added_numbers(self) -> Iterator[int]:
        """The new line numbers of the added lines."""
        for numbers in self.added_ranges():
            yield from numbers

    def added_ranges(self) -> list[range]:
        """The new line numbers of the added lines, a range for each stretch of them: a set or a
        dict of them is made in C (``set().update(range)``), not a number at a time."""
        if self._numbers is None and self._all_added():
            return [range(self._first, self._first + self._count)] if self._count else []
        rows = self._rows()
        flags = bytes([row[:1] == "+" for row in rows if row[:1] not in _OLD])
        out = []
        for run in _RUNS.finditer(flags):
            start, end = run.span()
            if self._numbers is None:
                out.append(range(self._first + start, self._first + end))
            else:
                out.extend(range(self._numbers[i], self._numbers[i] + 1) for i in range(start, end))
        return out

    def _all_added(self) -> bool:
        """Every line of the body is an added one (a new file), told by counting, not splitting."""
        if self._every is None:
            source, start, end = self._source, self._start, self._end
            self._every = source[start:start + 1] == "+" and \
                source.count("\n+", start, end) == source.count("\n", start, end) - 1
        return self._every

    def index_of(self, number: int) -> int | None:
        """The index of new line ``number`` among the lines, None when this hunk does not show it."""
        if self._numbers is None:
            at = number - self._first
        else:
            at = next((i for i, known in enumerate(self._numbers) if known == number), -1)
        return at if 0 <= at < self._count else None

    def text_of(self, number: int) -> str | None:
        """The text of new line ``number``, None when this hunk does not show it."""
        at = self.index_of(number)
        return None if at is None else self[at].text

    def added_runs(self) -> Iterator[tuple[int, str]]:
        """(first line number, text) of each stretch of consecutive added lines, their texts
        joined by newlines: what the pattern rules read, without a Line made for each line."""
        if not self._count:
            return
        if self._numbers is None and not self._raw and self._all_added():
            # every line added (a new file): the text is the body without its tags, in one C call
            yield self._first, self._source[self._start + 1:self._end - 1].replace("\n+", "\n")
            return
        texts, added = self.texts_and_flags()
        for run in _RUNS.finditer(added):
            start, end = run.span()
            if self._numbers is None:
                yield self._first + start, "\n".join(texts[start:end])
            else:  # numbers given one by one (a hand-made hunk): a run a line
                yield from ((self._numbers[i], texts[i]) for i in range(start, end))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (Lines, list, tuple)) and list(self) == list(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Lines({list(self)!r})"


class RemovedLines(_Body, Sequence[Removed]):
    """A hunk's removed lines: the body's lines tagged ``-``, numbered in the old file from
    ``old_first``, each placed before the new-side line it preceded."""

    __slots__ = ("_given", "_old_first")

    def __init__(self, source: str, start: int, end: int, old_first: int, raw: bool = False,
                 given: Sequence[Removed] | None = None) -> None:
        super().__init__(source, start, end, raw)
        self._old_first = old_first
        self._given = given

    @classmethod
    def of(cls, lines: Iterable[Removed]) -> RemovedLines:
        lines = tuple(lines)
        _no_newline([ln.text for ln in lines])
        return cls("", 0, 0, 0, given=lines)

    def _all(self) -> list[Removed]:
        if self._given is not None:
            return list(self._given)
        rows = self._rows()
        texts = self._texts(rows)
        out: list[Removed] = []
        old, new = self._old_first, 0
        for row, text in zip(rows, texts, strict=True):
            tag = row[:1]
            if tag == "-":
                out.append(Removed(old, text, new))
                old += 1
            elif tag == "+":
                new += 1
            elif tag != "\\":
                old += 1
                new += 1
        return out

    def texts(self) -> list[str]:
        """The removed lines' texts alone, with no ``Removed`` made for each (a reader of every
        removed line of a change of hundreds of files)."""
        if self._given is not None:
            return [r.text for r in self._given]
        return self._texts([row for row in self._rows() if row[:1] == "-"])

    def __len__(self) -> int:
        return len(self._all()) if self._given is None else len(self._given)

    def __iter__(self) -> Iterator[Removed]:
        return iter(self._all())

    @overload
    def __getitem__(self, index: int) -> Removed: ...
    @overload
    def __getitem__(self, index: slice) -> list[Removed]: ...
    def __getitem__(self, index: int | slice) -> Removed | list[Removed]:
        return self._all()[index]

    def __bool__(self) -> bool:
        if self._given is not None:
            return bool(self._given)
        # a removed line starts the body or follows a newline in it: found without splitting the body
        return self._end > self._start and (self._source.startswith("-", self._start)
                                             or self._source.find("\n-", self._start, self._end) >= 0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (RemovedLines, list, tuple)) and list(self) == list(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"RemovedLines({list(self)!r})"


EMPTY_REMOVED = RemovedLines.of(())


def _validated(value: object, kind: type[Line] | type[Removed]) -> list[Any]:
    """Each item of a list as ``kind``, checked as the dataclass's fields say (a bundle's JSON)."""
    from pydantic import TypeAdapter

    if not isinstance(value, (list, tuple)):
        raise ValueError(f"a list of {kind.__name__.lower()}s is expected")
    return TypeAdapter(list[kind]).validate_python(list(value))  # type: ignore[valid-type]


def _lines(value: object) -> Lines:
    return value if isinstance(value, Lines) else Lines.of(_validated(value, Line))


def _removed(value: object) -> RemovedLines:
    return value if isinstance(value, RemovedLines) else RemovedLines.of(_validated(value, Removed))


def _line_schema(fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "object", "properties": fields, "required": list(fields),
                                       "additionalProperties": False}}


LinesField = Annotated[
    Lines, PlainValidator(_lines),
    PlainSerializer(lambda block: [{"number": ln.number, "text": ln.text, "added": ln.added} for ln in block]),
    WithJsonSchema(_line_schema({"number": {"type": "integer", "minimum": 1}, "text": {"type": "string"},
                                 "added": {"type": "boolean"}})),
]
RemovedField = Annotated[
    RemovedLines, PlainValidator(_removed),
    PlainSerializer(lambda block: [{"number": ln.number, "text": ln.text, "before": ln.before} for ln in block]),
    WithJsonSchema(_line_schema({"number": {"type": "integer", "minimum": 0}, "text": {"type": "string"},
                                 "before": {"type": "integer", "minimum": 0}})),
]

__all__ = ["EMPTY_REMOVED", "Line", "Lines", "LinesField", "Removed", "RemovedField", "RemovedLines"]
