"""gitignore-style globs (pathspec), compiled once per pattern list."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec


class GlobError(ValueError):
    pass


_SPECIAL = re.compile(r"([*?\[\]\\!# ])")


def literal_glob(path: str) -> str:
    r"""A glob that matches exactly the repository-relative ``path``, whatever it holds.

    >>> literal_glob("state/db[1].sqlite")
    '/state/db\\[1\\].sqlite'
    """
    return "/" + _SPECIAL.sub(r"\\\1", path)


@lru_cache(maxsize=1024)
def _compile(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    import pathspec

    for pattern in patterns:
        if not pattern.strip() or pattern.lstrip().startswith("#"):
            raise GlobError(f"{pattern!r} matches nothing (empty or a comment)")
    try:
        return pathspec.GitIgnoreSpec.from_lines(patterns)
    except re.error as exc:  # a bracket range such as [z-a]; its position is in the translated regex
        raise GlobError(exc.msg) from exc
    except ValueError as exc:
        raise GlobError(str(exc)) from exc


@lru_cache(maxsize=1 << 16)
def _matches(patterns: tuple[str, ...], path: str) -> bool:
    """Whether ``patterns`` select ``path``, asked once: many rules share their globs (``*.py``), and
    every rule of every pattern agent asks about every file of its scope."""
    return bool(_compile(patterns).match_file(path))


def check_glob(pattern: str) -> None:
    """Raise GlobError when ``pattern`` is not a usable gitignore-style glob."""
    _compile((pattern,))


class Globs:
    """A list of globs; ``match`` is true for a path any of them selects (``!`` negates)."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        self._spec = _compile(self.patterns) if self.patterns else None

    def match(self, path: str) -> bool:
        return self._spec is not None and _matches(self.patterns, path)

    def select(self, paths: Iterable[str]) -> list[str]:
        return [p for p in paths if self.match(p)]
