"""Globs answer as git reads them, whichever way they are matched: one alternation of their own
expressions when none is negated (every rule of every pattern agent asks about every file, and
pathspec's per-call cost was most of the offline review), pathspec itself otherwise."""

from __future__ import annotations

import json
from collections.abc import Iterable

import pytest

from review_gate.config.locations import builtin_dir
from review_gate.text.globs import GlobError, Globs, _compile, _one_regex, selections

PATHS = ["a.tar.gz", "b.gz", "x.tar.gz/in.txt",
         "a.py", "src/a.py", "x.py/y.txt", "a.pyw", ".py", "py", "app/migrations/0001_init.py",
         "migrations/x.sql", "db/migrate/1.rb", "k8s/deploy.yaml", "x/k8s/deploy.yaml", ".github/workflows/ci.yml",
         "deep/.github/workflows/ci.yml", "Dockerfile", "src/Dockerfile.dev", "Dockerfiles", "a.dockerfile",
         "requirements-dev.txt", "req/requirements.txt", ".env", ".env.local", "x.env", "docs/guide.md",
         "docs", "a/docs/b.md", "notes.xyz", "weird name [1].py", "café/ünïcode.py"]
LISTS = [("*.py", "*.pyw"), ("Dockerfile", "Dockerfile.*", "*.dockerfile"), ("**/migrations/**", "*.sql"),
         (".github/workflows/**",), ("k8s/**", "kubernetes/**"), ("docs/",), ("requirements*.txt",),
         ("/docs/guide.md",), ("**/*.md",), ("*.py", "!src/*"), ("docs/**", "!docs/guide.md"), ("*.env",),
         ("*.tar.gz", "*.txt")]


@pytest.mark.parametrize("patterns", LISTS)
def test_globs_select_what_pathspec_selects(patterns: tuple[str, ...]) -> None:
    spec = _compile(patterns)
    globs = Globs(patterns)
    assert [p for p in PATHS if globs.match(p)] == [p for p in PATHS if spec.match_file(p)]


def test_only_lists_without_a_negation_take_the_one_expression() -> None:
    assert _one_regex(("*.py", "**/migrations/**")) is not None
    assert _one_regex(("*.py", "!src/*")) is None


def _builtin_glob_lists() -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []

    def walk(value: object, key: str | None = None) -> None:
        if isinstance(value, dict):
            for name, item in value.items():
                walk(item, name)
        elif isinstance(value, list):
            if key in ("paths", "exclude_paths") and value and all(isinstance(v, str) for v in value):
                found.append(tuple(value))
            for item in value:
                walk(item, key)

    for file in sorted(builtin_dir("config").glob("*.json")):
        walk(json.loads(file.read_text(encoding="utf-8")))
    return found


def _paths_for(patterns: Iterable[str]) -> list[str]:
    """Paths each glob is written for, and near misses: its stars filled, at the root and deeper."""
    out = list(PATHS)
    for pattern in patterns:
        body = pattern.lstrip("!/")
        for fill in ("x", "a/b", ""):
            path = body.replace("**", fill).replace("*", fill.replace("/", "")).replace("?", "q").strip("/")
            out += [path, f"deep/{path}", f"{path}/inner.txt", f"{path}x", path.upper()]
    return [p for p in dict.fromkeys(out) if p]


def test_every_builtin_glob_list_selects_what_pathspec_selects() -> None:
    lists = _builtin_glob_lists()
    assert len(lists) > 100
    paths = _paths_for(p for patterns in lists for p in patterns)
    for patterns in lists:
        spec = _compile(patterns)
        globs = Globs(patterns)
        assert [p for p in paths if globs.match(p)] == [p for p in paths if spec.match_file(p)], patterns


@pytest.mark.parametrize("glob", ["src/[ab]*.py", "[!x]y/**", "a\\[1\\].py", "weird name [1].py", "*.tar.gz",
                                  "a?c/**", "docs/", "**/x/**/y", "[a-c]/**/*.md"])
def test_globs_with_their_own_brackets_and_escapes_select_what_pathspec_selects(glob: str) -> None:
    paths = [*_paths_for([glob]), "src/a1.py", "src/c1.py", "ay/z", "xy/z", "a[1].py", "abc/d", "b/q/r.md"]
    assert [p for p in paths if Globs([glob]).match(p)] == [p for p in paths if _compile((glob,)).match_file(p)]


def test_all_lists_asked_at_once_select_what_each_selects_alone() -> None:
    # selections puts every list into one RE2 set: *.EXT lists as the components they end, a list
    # with a negation as its selecting globs, then asked of pathspec for the paths those select
    lists = [*LISTS, *_builtin_glob_lists(), ("*.py", "!*.py"), ("!docs/**",), ("src/[ab]*.py",), ("x\nname.py",),
             ("*.md", "!docs/", "docs/keep.md")]
    paths = [*_paths_for(p for patterns in lists for p in patterns), "dir\nwith/a.py", "docs/keep.md", "docs/x.md"]
    together = selections(lists, paths)
    for patterns, picked in zip(lists, together, strict=True):
        assert sorted(picked) == [i for i, path in enumerate(paths) if Globs(patterns).match(path)], patterns


def test_a_list_that_is_no_glob_is_refused_when_asked_with_others() -> None:
    with pytest.raises(GlobError):
        selections([("*.py",), ("[z-a]",)], ["a.py"])


@pytest.mark.parametrize("patterns", [("*.py",), ("*.py", "Dockerfile"), ("src/**",), ("**/x.py",)])
def test_a_name_with_a_newline_is_selected_as_git_selects_it(patterns: tuple[str, ...]) -> None:
    # git's * and ** cross a newline like any character; a list of *.py alone always did, a list
    # mixing *.py with another glob did not, so a rule for both skipped "src/a\nb/x.py"
    assert Globs(patterns).match("src/a\nb/x.py")
    assert selections([patterns], ["src/a\nb/x.py"]) == [{0}]
