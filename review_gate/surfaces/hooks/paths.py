"""Whether a word on a shell line, or an edit tool's file, names a protected path.

A shell finds a file through more than its literal name, and each way is followed here:

- the directory a ``cd`` earlier on the line went to (the caller passes it as ``base``);
- a symbolic link: the path is compared as written and with its links resolved (``cfg ->
  .review-gate``, then ``cfg/review-rules.json``);
- a glob or a brace list (``.revie*``, ``.review-gat?``, ``.review-{gate,x}``): it names a
  protected path when its components could match that path's, a leading dot matched only by a
  dot as a shell matches it (``rm -rf *`` leaves ``.review-gate`` alone);
- ``find ROOTS... -delete`` (or ``-exec`` of a program that writes): the protected files under
  its roots are compared with its name and path tests (``find . -name review-rules.json
  -delete``), all of them when it only ANDs them; in an expression with ``-o`` or parentheses a
  test that cannot be compared (``-regex``, a negation) matches anything.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

_GLOB = re.compile(r"[*?]|\[.*\]")
_BRACES = re.compile(r"\{[^{}]*\}")


def forms(path: str) -> set[str]:
    """``path`` (absolute) as written and with its symbolic links resolved."""
    return {os.path.normpath(path), os.path.realpath(path)}


def within(path: str, directories: Sequence[str]) -> bool:
    return any(path == d or path.startswith(d + os.sep) for d in directories)


def is_glob(word: str) -> bool:
    return bool(_GLOB.search(word) or _BRACES.search(word))


def glob_names(pattern: str, protected: Sequence[str], exempt: Sequence[str]) -> bool:
    """Whether the absolute glob ``pattern`` could match a protected path or a file inside one
    (not inside an exempt one). A brace list is read as ``*``."""
    parts = _BRACES.sub("*", os.path.normpath(pattern)).split(os.sep)
    for directory in protected:
        names = directory.split(os.sep)
        if len(parts) < len(names) or not all(_component(p, n) for p, n in zip(parts, names, strict=False)):
            continue
        if not any(_covers(parts, e.split(os.sep)) for e in exempt):
            return True
    return False


def _covers(parts: list[str], names: list[str]) -> bool:
    """Whether every path the pattern ``parts`` matches is inside ``names`` (an exempt path)."""
    return len(parts) > len(names) and all(p == n for p, n in zip(parts, names, strict=False))


def _component(pattern: str, name: str) -> bool:
    if name.startswith(".") and not pattern.startswith("."):
        return False  # a shell's glob matches a leading dot only by a dot
    return fnmatch.fnmatchcase(name, pattern) if is_glob(pattern) else pattern == name


def find_writes(args: Sequence[str], base: str, protected: Sequence[str], exempt: Sequence[str],
                readers: frozenset[str], walk_limit: int) -> bool:
    """Whether ``find ARGS`` (run in ``base``) may write or delete a protected file: it has an
    action that writes (``-delete``, ``-exec`` of a program not in ``readers``...) and a
    protected file under one of its roots passes its name and path tests."""
    if not _acts(args, readers):
        return False
    roots: list[str] = []
    for arg in args:
        if arg.startswith(("-", "(", "!")) or arg == ")":
            break
        roots.append(arg)
    names, paths, anything, conjunction = _tests(args[len(roots):])
    for root in roots or ["."]:
        top = os.path.normpath(os.path.join(base, os.path.expanduser(root)))
        if any(within(form, protected) and not within(form, exempt) for form in forms(top)):
            return True
        for directory in protected:
            if not within(directory, [top]) and not within(directory, [os.path.realpath(top)]):
                continue
            # the directories that hold it below the root too: `-name '.cl*' -exec rm -rf {} +` takes .claude
            inside = top if within(directory, [top]) else os.path.realpath(top)
            holders = [str(p) for p in Path(directory).parents if str(p) != inside and within(str(p), [inside])]
            entries = [*holders, *itertools.islice(_walk(directory), walk_limit + 1)]
            if len(entries) > walk_limit + len(holders):
                return True  # too many to compare: one of them may match
            for path in entries:
                if within(path, exempt):
                    continue
                if anything or (not names and not paths) or _passes(path, root, top, names, paths, conjunction):
                    return True
    return False


def _acts(args: Sequence[str], readers: frozenset[str]) -> bool:
    for index, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            program = os.path.basename(args[index + 1]) if index + 1 < len(args) else ""
            if program not in readers:
                return True
        elif arg == "-delete" or arg.startswith(("-fprint", "-fls")):
            return True
    return False


_OR = frozenset({"-o", "-or", ",", "(", ")"})
_NEGATIONS = frozenset({"!", "-not"})
_NAME_TESTS = frozenset({"-name", "-iname", "-lname", "-ilname"})
_PATH_TESTS = frozenset({"-path", "-ipath", "-wholename", "-iwholename"})
Tests = tuple[list[tuple[str, bool]], list[tuple[str, bool]], bool, bool]


def _tests(args: Sequence[str]) -> Tests:
    """find's name and path tests: (names, paths, anything, conjunction). In an expression of
    ANDs only (no ``-o``, ``,`` or parentheses), every test must pass, so a negated test or one
    that cannot be compared (``-regex``) only narrows the match and is left out
    (``-name '*.py' -not -path './.venv/*'`` is ``-name '*.py'`` as far as a protected path
    goes). Otherwise the tests are read as alternatives, and a negation or a ``-regex`` may
    match anything."""
    conjunction = not any(arg in _OR for arg in args)
    names: list[tuple[str, bool]] = []
    paths: list[tuple[str, bool]] = []
    anything = negated = False
    for index, arg in enumerate(args):
        value = args[index + 1] if index + 1 < len(args) else "*"
        if arg in _NEGATIONS:
            negated = True
            anything |= not conjunction
            continue
        if arg in _NAME_TESTS and not (conjunction and negated):
            names.append((value, arg.startswith("-i")))
        elif arg in _PATH_TESTS and not (conjunction and negated):
            paths.append((value, arg.startswith("-i")))
        elif arg in ("-regex", "-iregex"):
            anything |= not conjunction
        if arg.startswith("-"):
            negated = False  # a negation applies to the test right after it
    return names, paths, anything, conjunction


def _passes(path: str, root: str, top: str, names: list[tuple[str, bool]], paths: list[tuple[str, bool]],
            conjunction: bool) -> bool:
    """Whether ``path`` passes the tests: all of them when find ANDs them, any one otherwise."""
    shown = os.path.join(root, os.path.relpath(path, top)) if within(path, [top]) else path
    results = [_match(os.path.basename(path), pattern, fold) for pattern, fold in names]
    results += [_match(shown, pattern, fold) for pattern, fold in paths]
    return all(results) if conjunction else any(results)


def _match(text: str, pattern: str, fold: bool) -> bool:
    return fnmatch.fnmatchcase(text.lower(), pattern.lower()) if fold else fnmatch.fnmatchcase(text, pattern)


def _walk(directory: str) -> Iterator[str]:
    """``directory`` (if it exists) and what is under it."""
    if os.path.lexists(directory):
        yield directory
    for top, dirs, files in os.walk(directory):
        for name in (*dirs, *files):
            yield os.path.join(top, name)
