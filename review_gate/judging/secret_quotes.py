"""Secrets kept out of the other findings' words.

A secret rule's finding shows only the first characters of the key it found (``redact``). A
finding of another rule, or another agent, on the same line quotes that line whole (a TODO beside
the key, a long-line warning, an llm reviewer citing the code): it put the key the secret finding
hides into the report, the terminal, the CI log and the pull request comment. Every finding's
message and fix is searched with each secret rule that fired in the run, and what it matches is
masked the same way. Pure: findings and rules in, findings out.
"""

from __future__ import annotations

from collections.abc import Sequence

from review_gate.models import Finding, Rule
from review_gate.text.regex import compile_pattern

SHOWN = 4  # characters of a secret left visible, as the secret finding shows it
MASK = "…(redacted)"


def masked(findings: Sequence[Finding], rules: Sequence[Rule]) -> list[Finding]:
    """``findings`` with every match of the redacting rules that fired masked in their words."""
    fired = {f.rule_id for f in findings}
    patterns = [compile_pattern(r.pattern) for r in rules if r.redact and r.pattern and r.id in fired]
    if not patterns:
        return list(findings)
    out = []
    for finding in findings:
        message = _mask(finding.message, patterns)
        fix = _mask(finding.recommendation, patterns) if finding.recommendation is not None else None
        if message == finding.message and fix == finding.recommendation:
            out.append(finding)
        else:
            out.append(finding.model_copy(update={"message": message, "recommendation": fix}))
    return out


def _mask(text: str, patterns: Sequence[object]) -> str:
    data = text.encode("utf-8")
    for pattern in patterns:
        spans = [(m.start(), m.end()) for m in pattern.finditer(data)]  # type: ignore[attr-defined]
        for start, end in reversed(spans):
            secret = data[start:end].strip()
            if MASK.encode() in secret or len(secret) <= SHOWN:
                continue  # already the secret finding's own shortened form
            at = data.index(secret, start)
            data = data[:at] + secret[:SHOWN] + MASK.encode() + data[at + len(secret):]
    return data.decode("utf-8", "replace")
