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


@lru_cache(maxsize=1024)
def _one_regex(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """The globs' own regular expressions (pathspec's, stdlib ``re``) as one alternation, when none
    is negated (``!``): then a path is selected when any selects it, exactly as git reads them,
    and one match of an already compiled expression answers, not pathspec's per-call machinery
    (which every rule of every pattern agent asked about every file). None for a list with a
    negation, whose order matters: pathspec decides those.

    >>> bool(_one_regex(("*.py", "**/migrations/**")).match("app/migrations/0001.sql"))
    True
    """
    expressions = []
    for pattern in _compile(patterns).patterns:
        regex = getattr(pattern, "regex", None)
        if getattr(pattern, "include", None) is not True or not isinstance(regex, re.Pattern):
            return None
        # the directory group pathspec names in each expression is for negations' order: unnamed here
        expressions.append(f"(?:{regex.pattern.replace('(?P<ps_d>', '(?:')})")
    return re.compile("|".join(expressions))


@lru_cache(maxsize=1 << 16)
def _matches(patterns: tuple[str, ...], path: str) -> bool:
    """Whether ``patterns`` select ``path``, asked once: many rules share their globs (``*.py``), and
    every rule of every pattern agent asks about every file of its scope."""
    return bool(_compile(patterns).match_file(path))


def check_glob(pattern: str) -> None:
    """Raise GlobError when ``pattern`` is not a usable gitignore-style glob."""
    _compile((pattern,))


_SUFFIX = re.compile(r"\*(\.[A-Za-z0-9_.+-]+)")  # *.py: any path component that ends so


@lru_cache(maxsize=1024)
def _suffixes(patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """``(".py", ".pyw")`` for globs that are all ``*.EXT`` (most rules' ``paths``), None otherwise."""
    found = [_SUFFIX.fullmatch(p) for p in patterns]
    return tuple(m.group(1) for m in found if m) if all(found) else None


class Globs:
    """A list of globs; ``match`` is true for a path any of them selects (``!`` negates)."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        self._suffixes = _suffixes(self.patterns) if self.patterns else None
        if self.patterns and self._suffixes is None:  # *.EXT lists are valid as written: no pathspec to build
            _compile(self.patterns)

    def match(self, path: str) -> bool:
        if not self.patterns:
            return False
        suffixes = self._suffixes
        if suffixes is not None:  # *.EXT matches a file or a directory on the way: any component
            return path.endswith(suffixes) or ("/" in path and any(
                part.endswith(suffixes) for part in path.split("/")[:-1]))
        quick = _one_regex(self.patterns)
        return bool(quick.match(path)) if quick is not None else _matches(self.patterns, path)

    def select(self, paths: Iterable[str]) -> list[str]:
        return [p for p in paths if self.match(p)]
