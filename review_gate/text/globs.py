"""gitignore-style globs (pathspec's reading), compiled once per pattern list."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pathspec


class GlobError(ValueError):
    pass


_SPECIAL = re.compile(r"([*?\[\]\\!# ])")
_ANY_NAME_CHARACTER = "[^/]"  # what pathspec writes for * and ?: the only class RE2 is given


def literal_glob(path: str) -> str:
    r"""A glob that matches exactly the repository-relative ``path``, whatever it holds.

    >>> literal_glob("state/db[1].sqlite")
    '/state/db\\[1\\].sqlite'
    """
    return "/" + _SPECIAL.sub(r"\\\1", path)


def _readable(pattern: str) -> None:
    if not pattern.strip() or pattern.lstrip().startswith("#"):
        raise GlobError(f"{pattern!r} matches nothing (empty or a comment)")


@lru_cache(maxsize=1024)
def _compile(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    import pathspec

    for pattern in patterns:
        _readable(pattern)
    try:
        return pathspec.GitIgnoreSpec.from_lines(patterns)
    except re.error as exc:  # a bracket range such as [z-a]; its position is in the translated regex
        raise GlobError(exc.msg) from exc
    except ValueError as exc:
        raise GlobError(str(exc)) from exc


# glob -> pathspec's regular expression for it, and whether it selects: translated in Python, some
# 20 ms for the built-in configuration's, so a checked configuration's snapshot keeps them
# (``translations``, ``learn``), as it keeps what else its checks computed
_TRANSLATED: dict[str, tuple[str, bool]] = {}
TRANSLATIONS_KEPT = 8192  # a process that reads many configurations keeps no more


def _expression(pattern: str) -> tuple[str, bool]:
    """pathspec's own regular expression for one glob, not compiled, and whether it selects (a
    ``!`` one deselects)."""
    known = _TRANSLATED.get(pattern)
    if known is not None:
        return known
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    _readable(pattern)
    try:
        source, include = GitIgnoreSpecPattern.pattern_to_regex(pattern)
    except ValueError as exc:
        raise GlobError(str(exc)) from exc
    if source is None or include is None:
        raise GlobError(f"{pattern!r} matches nothing")
    if len(_TRANSLATED) < TRANSLATIONS_KEPT:
        _TRANSLATED[pattern] = (source, include)
    return source, include



def translations() -> dict[str, tuple[str, bool]]:
    """The globs this process has translated, each with pathspec's expression for it."""
    return dict(_TRANSLATED)


def learn(known: dict[str, tuple[str, bool]]) -> None:
    """Take ``known`` translations (from ``translations`` in a process running this same code and
    pathspec) instead of translating those globs again."""
    room = TRANSLATIONS_KEPT - len(_TRANSLATED)
    _TRANSLATED.update(list(known.items())[:max(room, 0)])


@lru_cache(maxsize=1024)
def _alternation(patterns: tuple[str, ...]) -> str | None:
    """The globs' own regular expressions (pathspec's) as one alternation, when none is negated
    (``!``): then a path is selected when any selects it, exactly as git reads them, and one match
    answers, not pathspec's per-call machinery (every rule of every pattern agent asks about every
    file). None for a list with a negation, whose order matters: pathspec decides those."""
    expressions = []
    for pattern in patterns:
        source, include = _expression(pattern)
        if not include:
            return None
        # the directory group pathspec names in each expression is for negations' order: unnamed here
        expressions.append(f"(?:{source.replace('(?P<ps_d>', '(?:')})")
    return "|".join(expressions)


def _re2_options() -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    # git's * and ** cross a newline in a name as any other character: "a\nb/x.py" is a .py file
    options.dot_nl = True
    return options


def _for_re2(alternation: str) -> bool:
    """Whether RE2 reads ``alternation`` as stdlib ``re`` does: its only character class is the
    one pathspec writes for ``*`` and ``?``. A glob that names its own class (``[abc]``) keeps
    ``re``, whose reading of brackets is the one pathspec writes for."""
    return alternation.count("[") == alternation.count(_ANY_NAME_CHARACTER)


@lru_cache(maxsize=1024)
def _one_regex(patterns: tuple[str, ...]) -> Any | None:
    """``_alternation`` compiled; None for a list with a negation.

    With RE2 where it reads the expression as ``re`` does: stdlib ``re`` parses in Python, and
    compiling the built-in configuration's lists took a tenth of a second.

    >>> bool(_one_regex(("*.py", "**/migrations/**")).match("app/migrations/0001.sql"))
    True
    """
    joined = _alternation(patterns)
    if joined is None:
        return None
    if _for_re2(joined):
        import re2

        try:
            return re2.compile(joined, _re2_options())
        except re2.error:
            pass  # stdlib re below says what is wrong in its own words, or reads it
    try:
        return re.compile(joined, re.DOTALL)
    except re.error as exc:  # a bracket range such as [z-a]
        raise GlobError(exc.msg) from exc


def _no_path(path: str) -> bool:
    return False


@lru_cache(maxsize=1024)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether ``patterns`` select a path: the cheapest test that answers as pathspec would."""
    if not patterns:
        return _no_path
    suffixes = _suffixes(patterns)
    if suffixes is not None:  # *.EXT matches a file or a directory on the way: any component
        def ends(path: str) -> bool:
            return path.endswith(suffixes) or ("/" in path and any(
                part.endswith(suffixes) for part in path.split("/")[:-1]))
        return ends
    quick = _one_regex(patterns)
    if quick is not None:
        match = quick.match
        return lambda path: match(path) is not None
    spec = _compile(patterns)
    return lambda path: bool(spec.match_file(path))


def check_glob(pattern: str) -> None:
    """Raise GlobError when ``pattern`` is not a usable gitignore-style glob."""
    _matcher((pattern,))


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
        self._match = _matcher(self.patterns)  # raises GlobError for a list that is not valid

    def match(self, path: str) -> bool:
        return self._match(path)

    def select(self, paths: Iterable[str]) -> list[str]:
        return [p for p in paths if self._match(p)]


def selections(lists: Sequence[Sequence[str]], paths: Sequence[str]) -> list[set[int]]:
    """For each glob list, the indices of the ``paths`` it selects: what ``Globs(l).select`` says,
    asked at once (a pattern agent's rules and the domains ask about every file of the change).
    A list's ``*.EXT`` globs are looked up by the endings of each path's components (one dict for
    every list), its other selecting globs go into one RE2 set, so each path is matched once for
    all of them; a list with a negation is then asked itself about the paths those select (a
    negation only ever takes a path back). A list RE2 cannot read as ``re`` does is asked path by
    path."""
    import re2

    out: list[set[int]] = [set() for _ in lists]
    by_ending: dict[str, list[int]] = {}  # ".py" -> the lists whose *.EXT globs name it
    together = re2.Set.MatchSet(_re2_options())
    in_set: list[int] = []  # the set's entry -> the list it stands for
    narrowing: dict[int, Callable[[str], bool]] = {}  # list -> its own test, for a list with a negation
    for index, patterns in enumerate(lists):
        key = tuple(patterns)
        entry = _entry(key) if key else None
        if entry is None:
            match = _matcher(key)
            out[index].update(i for i, path in enumerate(paths) if match(path))
            continue
        suffixes, expression, narrows = entry
        for suffix in suffixes:
            by_ending.setdefault(suffix, []).append(index)
        if expression is not None:
            together.Add(expression)
            in_set.append(index)
        if narrows:
            narrowing[index] = _matcher(key)
    if in_set:
        together.Compile()
    if by_ending:  # each ending's paths once, then given to every list that names it at once
        having: dict[str, list[int]] = {}
        for i, path in enumerate(paths):
            for ending in _endings(path):
                if ending in by_ending:
                    having.setdefault(ending, []).append(i)
        for ending, found in having.items():
            for index in by_ending[ending]:
                out[index].update(found)
    if in_set:
        for i, path in enumerate(paths):
            for found_in in together.Match(path) or ():
                out[in_set[found_in]].add(i)
    for index, match in narrowing.items():
        out[index] = {i for i in out[index] if match(paths[i])}
    return out


def _endings(path: str) -> Iterator[str]:
    """What each component of ``path`` ends in from each of its dots: ``*.EXT`` selects the path
    when ``.EXT`` is one of them (``a.tar.gz``: ``.tar.gz`` and ``.gz``)."""
    for part in path.split("/"):
        dot = part.find(".")
        while dot >= 0:
            yield part[dot:]
            dot = part.find(".", dot + 1)


@lru_cache(maxsize=1024)
def _entry(patterns: tuple[str, ...]) -> tuple[tuple[str, ...], str | None, bool] | None:
    """A list as ``selections`` asks it: the suffixes of its selecting ``*.EXT`` globs, the
    alternation of its other selecting globs, and whether it holds a negation; None for a list
    whose alternation RE2 cannot read as ``re`` does."""
    _matcher(patterns)  # raises GlobError as Globs would
    selecting = [p for p in patterns if not p.startswith("!")]
    found = [_SUFFIX.fullmatch(p) for p in selecting]
    others = tuple(p for p, m in zip(selecting, found, strict=True) if m is None)
    expression = _alternation(others) if others else None
    if expression is not None and not _for_re2(expression):
        return None
    return tuple(m.group(1) for m in found if m), expression, len(selecting) < len(patterns)
