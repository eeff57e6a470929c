"""A hunk's lines held compactly: one text for all of them, not one object per line.

A 50 MB diff has more than a million lines. Held as one object and one string each they cost
about five times the diff; held as one string per hunk (its lines joined by newlines) and one
byte per line they cost about what the diff does. ``Lines`` and ``RemovedLines`` are read-only
sequences of ``Line`` and ``Removed`` that make each line when it is read, so every reader of
``hunk.lines`` reads them as before; a model's JSON is the same list of objects as before.

>>> block = Lines.of([Line(3, "a = 1", True), Line(4, "b = 2", False)])
>>> [(ln.number, ln.text, ln.added) for ln in block]
[(3, 'a = 1', True), (4, 'b = 2', False)]
>>> block[-1].text, len(block)
('b = 2', 2)
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, overload

from pydantic import Field, PlainSerializer, PlainValidator, WithJsonSchema

_RUNS = re.compile(b"\x01+")  # consecutive added lines, in a block's flags


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


class _Block:
    """Lines joined by newlines in ``_text``, with the offsets of their starts made on first use."""

    __slots__ = ("_count", "_starts", "_text")

    def __init__(self, text: str, count: int) -> None:
        self._text = text
        self._count = count
        self._starts: array[int] | None = None

    def __len__(self) -> int:
        return self._count

    def _texts(self) -> list[str]:
        return self._text.split("\n") if self._count else []

    def _text_at(self, index: int) -> str:
        if self._starts is None:
            starts, at = array("q"), 0
            for text in self._texts():
                starts.append(at)
                at += len(text) + 1
            starts.append(at)
            self._starts = starts
        return self._text[self._starts[index]:self._starts[index + 1] - 1]

    def _index(self, index: int) -> int:
        at = index + self._count if index < 0 else index
        if not 0 <= at < self._count:
            raise IndexError("line index out of range")
        return at


class Lines(_Block, Sequence[Line]):
    """A hunk's new-side lines: ``text`` (joined by newlines), one flag byte each (1: added),
    numbered from ``first`` (or by ``numbers``, when they do not follow each other)."""

    __slots__ = ("_added", "_first", "_numbers")

    def __init__(self, text: str, added: bytes, first: int, numbers: Sequence[int] | None = None) -> None:
        super().__init__(text, len(added))
        self._added = added
        self._first = first
        self._numbers = numbers

    @classmethod
    def of(cls, lines: Iterable[Line]) -> Lines:
        lines = list(lines)
        texts = [ln.text for ln in lines]
        _no_newline(texts)
        numbers = [ln.number for ln in lines]
        first = numbers[0] if numbers else 1
        follow = numbers == list(range(first, first + len(numbers)))
        return cls("\n".join(texts), bytes(ln.added for ln in lines), first, None if follow else array("q", numbers))

    def _number(self, index: int) -> int:
        return self._numbers[index] if self._numbers is not None else self._first + index

    def __iter__(self) -> Iterator[Line]:
        numbers = self._numbers if self._numbers is not None else range(self._first, self._first + self._count)
        return map(Line, numbers, self._texts(), map(bool, self._added))

    @overload
    def __getitem__(self, index: int) -> Line: ...
    @overload
    def __getitem__(self, index: slice) -> list[Line]: ...
    def __getitem__(self, index: int | slice) -> Line | list[Line]:
        if isinstance(index, slice):
            return list(self)[index]
        at = self._index(index)
        return Line(self._number(at), self._text_at(at), bool(self._added[at]))

    def number_at(self, index: int) -> int:
        """The new line number of line ``index``, without making the line."""
        return self._number(self._index(index))

    def added_numbers(self) -> Iterator[int]:
        """The new line numbers of the added lines, without making the lines."""
        for run in _RUNS.finditer(self._added):
            yield from (self._number(i) for i in range(*run.span()))

    def text_of(self, number: int) -> str | None:
        """The text of new line ``number``, None when this hunk does not show it."""
        if self._numbers is None:
            at = number - self._first
            return self._text_at(at) if 0 <= at < self._count else None
        for at, known in enumerate(self._numbers):
            if known == number:
                return self._text_at(at)
        return None

    def added_runs(self) -> Iterator[tuple[int, str]]:
        """(first line number, text) of each stretch of consecutive added lines, their texts
        joined by newlines: what the pattern rules read, without a Line made for each line."""
        if not self._count:
            return
        if self._numbers is None and not self._added.count(0):
            yield self._first, self._text  # every line added: the block is the one run
            return
        texts = self._texts()
        for run in _RUNS.finditer(self._added):
            start, end = run.span()
            if self._numbers is None:
                yield self._first + start, "\n".join(texts[start:end])
            else:  # numbers given one by one (a hand-made hunk): a run a line
                yield from ((self._numbers[i], texts[i]) for i in range(start, end))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Lines):
            return (self._text, self._added) == (other._text, other._added) and list(self) == list(other)
        return isinstance(other, (list, tuple)) and list(self) == list(other)

    def __hash__(self) -> int:
        return hash((self._text, self._added, self._first))

    def __repr__(self) -> str:
        return f"Lines({list(self)!r})"


class RemovedLines(_Block, Sequence[Removed]):
    """A hunk's removed lines: ``text`` (joined by newlines), their old numbers and positions."""

    __slots__ = ("_before", "_numbers")

    def __init__(self, text: str, numbers: Sequence[int], before: Sequence[int]) -> None:
        super().__init__(text, len(numbers))
        self._numbers = numbers
        self._before = before

    @classmethod
    def of(cls, lines: Iterable[Removed]) -> RemovedLines:
        lines = list(lines)
        texts = [ln.text for ln in lines]
        _no_newline(texts)
        return cls("\n".join(texts), array("q", [ln.number for ln in lines]), array("q", [ln.before for ln in lines]))

    def __iter__(self) -> Iterator[Removed]:
        return map(Removed, self._numbers, self._texts(), self._before)

    @overload
    def __getitem__(self, index: int) -> Removed: ...
    @overload
    def __getitem__(self, index: slice) -> list[Removed]: ...
    def __getitem__(self, index: int | slice) -> Removed | list[Removed]:
        if isinstance(index, slice):
            return list(self)[index]
        at = self._index(index)
        return Removed(self._numbers[at], self._text_at(at), self._before[at])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RemovedLines, list, tuple)):
            return list(self) == list(other)
        return False

    def __hash__(self) -> int:
        return hash(self._text)

    def __repr__(self) -> str:
        return f"RemovedLines({list(self)!r})"


EMPTY_REMOVED = RemovedLines("", (), ())


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
