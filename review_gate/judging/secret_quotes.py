"""Secrets kept out of the other findings' words.

A secret rule's finding shows only the first characters of the key it found (``redact``). A
finding of another rule, or another agent, on the same line quotes that line whole (a TODO beside
the key, a long-line warning, an llm reviewer citing the code): it put the key the secret finding
hides into the report, the terminal, the CI log and the pull request comment. Every finding's
message and fix is searched with every redacting rule of the configuration, whether it fired in
the run or not (a key on a comment line is no finding of the secret rules, which read a comment
as documentation, yet a TODO finding on that line quotes it whole), and what it matches is masked
the same way. Pure: findings and rules in, findings out.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from review_gate.models import Finding, Rule
from review_gate.text.regex import compile_pattern, pattern_set

SHOWN = 4  # characters of a secret left visible, as the secret finding shows it
MASK = "…(redacted)"


def masked(findings: Sequence[Finding], rules: Sequence[Rule]) -> list[Finding]:
    """``findings`` with every match of the redacting ``rules`` masked in their words."""
    if not findings:  # the patterns are compiled only for words to search (8 ms)
        return []
    patterns = redacting(rules)
    if not patterns.compiled:
        return list(findings)
    out = []
    for finding in findings:
        message = mask_text(finding.message, patterns)
        fix = mask_text(finding.recommendation, patterns) if finding.recommendation is not None else None
        if message == finding.message and fix == finding.recommendation:
            out.append(finding)
        else:
            out.append(finding.model_copy(update={"message": message, "recommendation": fix}))
    return out


@dataclass(frozen=True)
class Redacting:
    """The redacting rules' patterns, and one RE2 set of them all: a text none of them occurs in
    (nearly every finding's) is read once, not once a rule."""

    sources: tuple[str, ...]
    compiled: tuple[Any, ...]
    anywhere: Any


def redacting(rules: Sequence[Rule]) -> Redacting:
    """The patterns of the rules whose matches are secrets (``redact``)."""
    return of_patterns(r.pattern for r in rules if r.redact and r.pattern)


def of_patterns(sources: Iterable[str]) -> Redacting:
    """``Redacting`` over these RE2 patterns (compiled once a run)."""
    return _made(tuple(dict.fromkeys(sources)))


@functools.lru_cache(maxsize=16)
def _made(sources: tuple[str, ...]) -> Redacting:
    compiled = tuple(compile_pattern(p) for p in sources)
    return Redacting(sources, compiled, pattern_set(list(sources)) if sources else None)


def mask_text(text: str, patterns: Redacting) -> str:
    """``text`` with every match of ``patterns`` (``redacting``) shown by its first characters only.

    >>> from review_gate.models import Rule
    >>> rule = Rule(id="k", name="k", severity="critical", agent="a", category="secrets", description="d",
    ...             detection="d", recommendation="r", pattern="sk_live_[0-9a-zA-Z]{24}", redact=True)
    >>> mask_text("# TODO rotate sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", redacting([rule]))
    '# TODO rotate sk_l…(redacted)'
    """
    if not patterns.compiled:
        return text
    data = text.encode("utf-8")
    found = patterns.anywhere.Match(data)
    if not found:
        return text
    return _mask(data, [patterns.compiled[i] for i in sorted(found)])


def _mask(data: bytes, patterns: Sequence[Any]) -> str:
    for pattern in patterns:
        spans = [(m.start(), m.end()) for m in pattern.finditer(data)]
        for start, end in reversed(spans):
            secret = data[start:end].strip()
            if MASK.encode() in secret or len(secret) <= SHOWN:
                continue  # already the secret finding's own shortened form
            at = data.index(secret, start)
            data = data[:at] + secret[:SHOWN] + MASK.encode() + data[at + len(secret):]
    return data.decode("utf-8", "replace")
