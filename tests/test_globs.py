"""Globs answer as git reads them, whichever way they are matched: one alternation of their own
expressions when none is negated (every rule of every pattern agent asks about every file, and
pathspec's per-call cost was most of the offline review), pathspec itself otherwise."""

from __future__ import annotations

import pytest

from review_gate.text.globs import Globs, _compile, _one_regex

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
