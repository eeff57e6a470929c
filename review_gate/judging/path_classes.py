"""Where a changed file lives: test, fixture, example, docs, generated, vendored or minified. Pure.

A file is in a class when one of the class's globs (``review-rules.json``'s ``path_classes``)
selects it; when the trusted side's ``.gitattributes`` marks it ``linguist-generated`` or
``linguist-vendored`` (GitHub's own markers); when its first lines say it is generated (Go's
"Code generated ... DO NOT EDIT.", Facebook's ``@generated``, "THIS FILE IS GENERATED"); or,
for minified, when a line of a JavaScript or CSS file (``minified_by_line``) is longer than
``minified_line`` characters: a long line in a script does not hide its other lines. The header and
the long line count only from the base side (lines the change keeps or removes): a change that adds
a header or a long line to a file does not switch off the review of its own lines, as it cannot mark
its own file in ``.gitattributes``. A file may be in several classes (a test certificate is a test
and a fixture).

A file the change adds (``claimed``) cannot take a class by its name alone: a new
``app/generated/h.py`` holding ``eval(request.args["x"])`` is code until the trusted side says
otherwise. Its class counts when the base's ``.gitattributes`` gives it; when the directory
whose glob gives it (``app/generated`` for ``**/generated/**``) already holds files in the base;
for a class that says what a file is for (test, fixture, example, docs), when the file's own name
gives it (``test_views.py``, ``README.md``) or it lies under a top-level directory of those
classes (``tests/``, ``docs/``, ``e2e/``: never a package's own ``app/spec/``); for generated,
when its first lines carry a generator's header (``GENERATED_HEADER``); for minified, on its
lines longer than ``minified_line`` only (a minified line, not the short lines beside it).

>>> from review_gate.models.rule_context import PathClasses
>>> sorted(Classifier(PathClasses(), None).classes("tests/certs/server.key"))
['fixture', 'test']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from review_gate.models.facts import FileChange
from review_gate.models.rule_context import PATH_CLASSES, PathClass, PathClasses
from review_gate.text.globs import GlobError, Globs, selections

HEAD_LINES = 10  # a generated file says so in its first lines
MOVES = ("renamed", "copied")
GENERATED_HEADER = re.compile(
    r"(?i)\bcode generated\b.*\bdo not edit\b|@generated\b|\bthis (?:\w+ )?\w*(?:file|code|script) (?:is|was) "
    r"(?:auto(?:matically)?[- ]?)?generated\b|\bauto(?:matically)?[- ]?generated\b.*\bdo not (?:edit|modify)\b|"
    r"\bgenerated (?:by|from|via)\b.*\bdo not (?:edit|modify)\b")
_ATTRIBUTES: dict[str, PathClass] = {"linguist-generated": "generated", "linguist-vendored": "vendored"}
NAMED_BY_FILE: frozenset[PathClass] = frozenset({"test", "fixture", "example", "docs"})
"""The classes a new file's own name may give it: ``test_views.py`` is a test by what it is called.
A name such as ``h_pb2.py`` or ``h.min.js`` costs nothing to choose and says nothing of the content."""


@dataclass(frozen=True)
class _Attribute:
    globs: Globs
    values: dict[PathClass, bool]  # class -> set (true) or unset (false)


def attributes(text: str) -> list[_Attribute]:
    """The ``linguist-generated`` / ``linguist-vendored`` lines of a ``.gitattributes`` text, in order
    (a later line wins, as in git). Lines git would ignore, or whose pattern does not compile, are left out.

    >>> [a.values for a in attributes("dist/** linguist-generated\\nvendor/** -linguist-vendored")]
    [{'generated': True}, {'vendored': False}]
    """
    found = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#") or words[0].startswith("!"):
            continue
        values: dict[PathClass, bool] = {}
        for word in words[1:]:
            name, _, value = word.lstrip("-!").partition("=")
            if name in _ATTRIBUTES:
                on = not word.startswith(("-", "!")) and value.lower() not in ("false", "0", "no")
                values[_ATTRIBUTES[name]] = on
        if not values:
            continue
        try:
            found.append(_Attribute(Globs([words[0]]), values))
        except GlobError:
            continue
    return found


def generated_header(head: str) -> bool:
    """Whether the first HEAD_LINES lines of a file say it is generated.

    >>> generated_header('#\\n# NOTE: THIS DOCKERFILE IS GENERATED VIA "apply-templates.sh"\\n')
    True
    """
    return any(GENERATED_HEADER.search(line) for line in head.splitlines()[:HEAD_LINES])


class Classifier:
    """The classes of a path, by the settings' globs and the trusted side's ``.gitattributes`` text."""

    def __init__(self, settings: PathClasses, gitattributes: str | None) -> None:
        self.settings = settings
        self._globs = {name: Globs(settings.globs(name)) for name in PATH_CLASSES if settings.globs(name)}
        self._attributes = attributes(gitattributes) if gitattributes else []
        self._by_line = Globs(settings.minified_by_line)
        self._named: dict[str, frozenset[PathClass]] = {}  # what globs and attributes say of each path

    def classes(self, path: str, head: str | None = None, base: Iterable[str] = ()) -> frozenset[PathClass]:
        """``path``'s classes; ``head``: its first lines as they stood before the change, when known;
        ``base``: its lines that stood before the change (kept or removed by it), never the added ones."""
        found = set(self._by_name(path))
        if head is not None and generated_header(head):
            found.add("generated")
        if self._by_line.match(path) and any(len(line) > self.settings.minified_line for line in base):
            found.add("minified")
        return frozenset(found)

    def roots(self, path: str) -> dict[PathClass, str | None]:
        """For each class ``path``'s name gives it: the shortest directory whose glob selects it
        (``""`` when the file's own name does), or None when the trusted ``.gitattributes`` does.

        >>> from review_gate.models.rule_context import PathClasses
        >>> Classifier(PathClasses(), None).roots("app/spec/views.py")
        {'test': 'app/spec'}
        >>> Classifier(PathClasses(), "src/** linguist-vendored").roots("src/h_pb2.py")
        {'generated': '', 'vendored': None}
        """
        found: dict[PathClass, str | None] = {}
        parts = path.split("/")
        for name in sorted(self._by_name(path)):
            globs = self._globs.get(name)
            if globs is None or not globs.match(path):
                found[name] = None  # the attributes alone
                continue
            for depth in range(len(parts)):
                directory = "/".join(parts[:depth])
                if globs.match(f"{directory}/{parts[-1]}" if directory else parts[-1]):
                    found[name] = directory
                    break
            else:
                found[name] = "/".join(parts[:-1])
        for attribute in self._attributes:  # an attribute that sets a class the globs give too: the base says so
            if attribute.globs.match(path):
                for name, on in attribute.values.items():
                    if on and name in found:
                        found[name] = None
        return found

    def claimed(self, path: str, head: str | None, base_directories: AbstractSet[str]) -> tuple[
            frozenset[PathClass], bool]:
        """The classes of ``path``, a file the change adds, that count: those the trusted side gives
        it (module docstring); ``head``: its first lines as the change writes them. And whether it is
        minified on its long lines only (its name says minified and nothing else does).

        >>> from review_gate.models.rule_context import PathClasses
        >>> c = Classifier(PathClasses(), None)
        >>> c.claimed("app/generated/h.py", "import os", set()), c.claimed("tests/test_x.py", None, set())
        ((frozenset(), False), (frozenset({'test'}), False))
        >>> c.claimed("app/h_pb2.py", "# Generated by the protocol buffer compiler.  DO NOT EDIT!", set())
        (frozenset({'generated'}), False)
        """
        counted: set[PathClass] = set()
        by_line = False
        roots = self.roots(path)
        top = path.split("/", 1)[0]
        # under a top-level tests/, docs/, e2e/ or examples/ tree: by convention what it says, never a package
        conventional = any(name in NAMED_BY_FILE and root == top for name, root in roots.items())
        for name, root in roots.items():
            trusted = root is None or (root in base_directories if root else name in NAMED_BY_FILE) or (
                conventional and name in NAMED_BY_FILE)
            if trusted or (name == "generated" and head is not None and generated_header(head)):
                counted.add(name)
            elif name == "minified":
                by_line = True
        return frozenset(counted), by_line

    def know(self, paths: Sequence[str]) -> None:
        """Learn what the globs say of many paths at once (``selections``: one pass of every
        path, not one glob match a class and path): every path of a change is asked about."""
        paths = [p for p in dict.fromkeys(paths) if p not in self._named]
        if not paths:
            return
        names = list(self._globs)
        picked = selections([self._globs[name].patterns for name in names], paths)
        for i, path in enumerate(paths):
            self._named[path] = self._attributed(path, {name for name, chosen in zip(names, picked, strict=True)
                                                       if i in chosen})

    def _by_name(self, path: str) -> frozenset[PathClass]:
        named = self._named.get(path)
        if named is None:
            found = {name for name, globs in self._globs.items() if globs.match(path)}
            named = self._named[path] = self._attributed(path, found)
        return named

    def _attributed(self, path: str, found: set[PathClass]) -> frozenset[PathClass]:
        for attribute in self._attributes:
            if attribute.globs.match(path):
                for name, on in attribute.values.items():
                    (found.add if on else found.discard)(name)
        return frozenset(found)


def moved_across(classifier: Classifier, change: FileChange, base_directories: AbstractSet[str]) -> bool:
    """Whether the renamed or copied ``change`` stands in other classes than where it came from,
    its new path taking only the classes it may claim (a header or a long line it holds is read
    by ``refine``, which skips what they mark)."""
    assert change.old_path is not None
    before = classifier.classes(change.old_path)
    return before != classifier.classes(change.path) or before != classifier.claimed(
        change.path, None, base_directories)[0]
