"""What a rule does where its match lives (review-rules.json): path classes, placeholders, contexts.

A pattern matches a line; whether the match is a problem depends on where the line lives (a
test, a generated file), on what it holds (a placeholder password) and on what surrounds it (a
library's own ``verify is False`` branch, a version bump of an action already pinned). These
models say, per rule, what happens there: the finding is skipped, or takes a lower severity.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from review_gate.models.base import Frozen

SECRETS = "secrets"
"""The rule category of credentials: scanned in the gate's own committed files, and given no path-class default."""
PathClass = Literal["test", "fixture", "example", "docs", "generated", "vendored", "minified"]
PATH_CLASSES: tuple[PathClass, ...] = get_args(PathClass)
Action = Literal["skip", "keep", "critical", "major", "warning", "info"]
"""What a finding becomes: dropped (skip), unchanged (keep), or the severity named (never above the rule's)."""

ContextKind = Literal["branch", "block", "created", "replaces", "adds", "same_owner", "line", "statement"]

_TEST = ["**/tests/**", "**/test/**", "**/__tests__/**", "**/spec/**", "**/specs/**", "**/src/test/**",
         "**/e2e/**", "**/unittests/**", "test_*.py", "*_test.py", "tests.py", "conftest.py", "*_test.go", "*.test.*",
         "*.spec.*", "*_test.yaml", "*_test.yml",
         "*_spec.rb", "*_test.rb", "*Test.java", "*Tests.java", "*Test.kt", "*Tests.kt", "*Tests.cs",
         "*Test.cs", "*Tests.swift", "*Test.php", "*_test.cc", "*_test.cpp", "*_unittest.cc"]
_FIXTURE = ["**/fixtures/**", "**/fixture/**", "**/__fixtures__/**", "**/testdata/**", "**/test-data/**",
            "**/test_data/**", "**/__snapshots__/**", "**/tests/**/certs/**", "**/test/**/certs/**",
            "**/tests/**/keys/**", "**/test/**/keys/**", "**/tests/**/data/**", "**/test/**/data/**"]
_EXAMPLE = ["**/examples/**", "**/example/**", "**/_examples/**", "**/samples/**", "**/sample/**",
            "**/demo/**", "**/demos/**", "*.example", "*.sample", "*.example.*"]
# a migration is never documentation, even in a Django app named docs
_DOCS = ["**/docs/**", "**/doc/**", "*.md", "*.markdown", "*.rst", "*.adoc", "!**/migrations/**"]
_GENERATED = ["*.pb.go", "*_pb2.py", "*_pb2_grpc.py", "*.pb.cc", "*.pb.h", "*.generated.*", "*.g.dart",
              "*.designer.cs", "**/generated/**", "**/__generated__/**"]
_VENDORED = ["**/vendor/**", "**/vendors/**", "**/third_party/**", "**/third-party/**", "**/thirdparty/**",
             "**/node_modules/**", "**/bower_components/**"]
_MINIFIED = ["*.min.js", "*.min.mjs", "*.min.cjs", "*.min.css", "*-min.js", "*.bundle.js", "*.bundle.mjs",
             "**/dist/**/*.js", "**/dist/**/*.mjs", "**/dist/**/*.cjs", "**/dist/**/*.css"]


def _skipped() -> dict[PathClass, Action]:
    return {"generated": "skip", "vendored": "skip", "minified": "skip"}


class PathClasses(Frozen):
    """Which files are tests, fixtures, examples, docs, generated, vendored or minified, and what every
    rule does in them unless it says otherwise. Each list replaces its default when given."""

    test: list[str] = Field(default_factory=lambda: list(_TEST), description="gitignore-style globs of test code.")
    fixture: list[str] = Field(
        default_factory=lambda: list(_FIXTURE),
        description="Globs of test data: fixtures, test vectors, test certificates and keys.")
    example: list[str] = Field(default_factory=lambda: list(_EXAMPLE),
                               description="Globs of examples, samples and demos.")
    docs: list[str] = Field(default_factory=lambda: list(_DOCS), description="Globs of documentation.")
    generated: list[str] = Field(
        default_factory=lambda: list(_GENERATED),
        description="Globs of generated files; a file is generated too when the trusted side's .gitattributes "
                    "marks it linguist-generated, or when its first lines say it is generated (\"Code "
                    "generated ... DO NOT EDIT\", \"@generated\", \"THIS FILE IS GENERATED\") before the change: "
                    "a header the change adds marks nothing.")
    vendored: list[str] = Field(
        default_factory=lambda: list(_VENDORED),
        description="Globs of vendored third-party code; linguist-vendored in the trusted side's .gitattributes too.")
    minified: list[str] = Field(
        default_factory=lambda: list(_MINIFIED),
        description="Globs of minified or bundled files; a file `minified_by_line` selects is minified too when "
                    "one of its lines that stood before the change (kept or removed by it, not added) is longer than "
                    "`minified_line`.")
    minified_line: int = Field(
        default=1000, ge=200, le=1_000_000,
        description="Characters from which a line that stood before the change marks its file minified (a "
                    "bundle, a minified asset), in the files `minified_by_line` selects.")
    minified_by_line: list[str] = Field(
        default_factory=lambda: ["*.js", "*.mjs", "*.cjs", "*.css"],
        description="Globs of the files a long line marks minified: only what is minified in practice, so a "
                    "long line does not hide a script's other lines.")
    default: dict[PathClass, Action] = Field(
        default_factory=_skipped,
        description="What a rule that does not say otherwise does in each class. Rules of category "
                    "`secrets` take no default: a credential is one wherever it is committed.")

    def globs(self, name: PathClass) -> list[str]:
        globs: list[str] = getattr(self, name)
        return globs


class Placeholders(Frozen):
    """When a secret rule's match holds a placeholder, not a secret (gitleaks' allow lists are the model):
    a reserved example host, a dictionary or sample word (also once base64- or percent-decoded), a
    template, too few characters or too little entropy, or a comment line."""

    value: str | None = Field(
        default=None,
        description="RE2 pattern whose first group is the secret value, searched in the matched text; every "
                    "match counts (a Kubernetes Secret's values). Default: the matched text itself.")
    host: str | None = Field(
        default=None,
        description="RE2 pattern whose first group is the host the secret is for: a reserved example host "
                    "(example.com, .test, .invalid, .localhost: RFC 2606, 6761) makes the match a placeholder.")
    lines_after: int = Field(
        default=0, ge=0, le=100,
        description="Lines after the match searched for values too (a Kubernetes Secret's other entries); with "
                    "it, `value` is searched in the match and those lines instead of in the match alone.")
    min_length: int = Field(default=6, ge=0, le=200,
                            description="Letters and digits a value needs at least to be a secret.")
    min_entropy: float | None = Field(
        default=None, ge=0, le=8,
        description="Shannon entropy (bits a character) under which a value is a sample, not a secret.")
    comments: bool = Field(default=True, description="A match on a comment line is documentation, not a secret.")


class RuleContext(Frozen):
    """A context that changes what a rule's finding is.

    - ``branch``: the flagged line sits inside an ``if``/``elif``/``else`` block whose condition matches
      ``pattern`` (a library's own opt-out: ``elif verify is False:``), found by indentation above it;
    - ``block``: a line that opens a block around the flagged line (by indentation: a ``def``, a
      ``class``, any statement) matches ``pattern`` (``def down`` around a migration's rollback);
    - ``created``: ``pattern``'s first group names a table that a line the change adds creates
      (``create_table``, ``CREATE TABLE``, ``CreateModel``: a table with no data yet);
    - ``replaces``: a line the same hunk removes has the same key (``pattern``'s first group) as the
      flagged line: a version bump, not a new use;
    - ``adds``: no removed line of the hunk has that key: a new line, not a changed one;
    - ``same_owner``: ``pattern``'s first group names the repository's own owner (its origin's
      organisation);
    - ``line``: the flagged line matches ``pattern`` (documented uses, listed);
    - ``statement``: the statement that starts on the flagged line, up to where its brackets close
      (at most 20 lines), matches ``pattern`` (``print(`` whose ``file=`` is on a later line).
    """

    when: ContextKind
    pattern: str = Field(min_length=1, description="RE2 pattern; see `when` for what it is matched on.")
    only: str | None = Field(
        default=None, description="RE2 pattern the flagged line must match as well for this context to apply.")
    action: Action = Field(description="What the finding becomes there: skip, or a lower severity.")
    reason: str = Field(min_length=1, max_length=200, description="Why, in the finding's message.")
