"""What a shell line holds, as the judgement of ``hooks.shell`` reads it: its simple commands
(their words and the files their redirections write), the scopes a ``cd`` stays in, its
functions, its comments and what the grammar could not read. Made by ``hooks.syntax``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias

UNKNOWN = "$__substituted__"  # a word no line holds: not literal, so read as each program it could be
HERE = "\x00here\x00"  # $PWD, ${PWD}, $(pwd), `pwd`: where the line is when the word is read
TOP = "\x00top\x00"  # $(git rev-parse --show-toplevel): the top of the repository the line is in


@dataclass(frozen=True)
class Command:
    words: tuple[str, ...]
    writes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scope:
    items: tuple[Item, ...]
    text: str  # its command line, as ``Script.text`` is the line's
    nested: bool = False  # a substitution's command line: one level deeper (hooks.shell.MAX_DEPTH)
    bodies: tuple[str, ...] = ()  # a substitution's here-document bodies, as written
    piped: bool = False  # a pipeline: its items are its elements' scopes, after which a cd may or may not last


@dataclass(frozen=True)
class Function:
    name: str
    body: tuple[Item, ...]


@dataclass(frozen=True)
class Comment:
    text: str  # with its ``#``


@dataclass(frozen=True)
class Unread:
    text: str


Item: TypeAlias = Command | Scope | Function | Comment | Unread


@dataclass(frozen=True)
class Script:
    items: tuple[Item, ...]
    text: str
    bodies: tuple[str, ...]  # here-document bodies, as written (not those of its substitutions: Scope.bodies)
    broken: bool  # the grammar reported an ERROR or a MISSING node: the line is not read as bash reads it
    substitutions: int  # command lines nested in words, at any depth



def commands(items: tuple[Item, ...]) -> Iterator[Command]:
    """The simple commands of a line itself (``items``): in subshells, lists and function
    bodies too, not in the command lines of its substitutions (each a line of its own)."""
    for item in items:
        if isinstance(item, Command):
            yield item
        elif isinstance(item, Function) or (isinstance(item, Scope) and not item.nested):
            yield from commands(item.items if isinstance(item, Scope) else item.body)
