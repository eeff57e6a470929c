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


_PLAIN = re.compile(r"[^/!\\\[\]#\s][^/\\\[\]\s]*")  # no slash, negation, escape, class, comment or space


@lru_cache(maxsize=1024)
def _component_regex(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regular expression for globs that name a path component (``*.py``, ``Dockerfile.*``,
    ``.env``): none has a slash, so each may match any component, and a directory it matches
    holds what it selects, exactly as git reads them. None when a glob is anything else
    (pathspec decides those).

    >>> bool(_component_regex(("*.py", "Dockerfile.*")).search("src/Dockerfile.dev/x"))
    True
    """
    if not all(_PLAIN.fullmatch(p) for p in patterns):
        return None
    names = "|".join(re.escape(p).replace(r"\*", "[^/]*").replace(r"\?", "[^/]") for p in patterns)
    return re.compile(f"(?:^|/)(?:{names})(?:/|$)")


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
        if self._spec is None:
            return False
        quick = _component_regex(self.patterns)
        return bool(quick.search(path)) if quick is not None else _matches(self.patterns, path)

    def select(self, paths: Iterable[str]) -> list[str]:
        return [p for p in paths if self.match(p)]
