"""Short finding ids: a prefix of the fingerprint, short enough to type, long enough to be unique.

``review-gate accept ID`` takes one (or the whole fingerprint) and resolves it against the
fingerprints recorded runs reported.
"""

from __future__ import annotations

from collections.abc import Iterable

from review_gate.models import Finding

SHORT = 6  # hex digits: one in 16 million of two findings of one report sharing it


def short_ids(fingerprints: Iterable[str]) -> dict[str, str]:
    """Fingerprint -> its shortest prefix of at least SHORT characters that no other fingerprint
    given shares."""
    unique = sorted(set(fingerprints))
    out: dict[str, str] = {}
    for index, fp in enumerate(unique):
        length = SHORT
        for neighbour in unique[max(0, index - 1):index] + unique[index + 1:index + 2]:
            length = max(length, _common(fp, neighbour) + 1)
        out[fp] = fp[:length]
    return out


def _common(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def finding_name(finding: Finding) -> str:
    """What names a finding beside its severity: its rule, or, for one without a rule (an llm
    reviewer's), the agent that reported it and its category (``security-reviewer/bug``). Untrusted:
    escape it for the sink."""
    return finding.rule_id or f"{finding.agent}/{finding.category}"


def sentence(text: str) -> str:
    """``text`` ended with a period unless it ends in punctuation already (``.``, ``…``, ``?``, ``)``...)."""
    return text if not text or text[-1] in ".!?…:;,)]\"'`" else text + "."


def waived_kinds(waived: Iterable[Finding]) -> list[tuple[int, str]]:
    """How many waived findings of each kind, by what it is: baselined, accepted (by a person or
    the team), pre-existing (the rule fired on the line before the change), waived inline, or
    skipped where the rule does not apply (its path class or a context)."""
    counts = {"baselined": 0, "accepted": 0, "pre-existing": 0, "waived inline": 0, "skipped by path class": 0,
              "skipped by a rule context": 0, "counted once in their file": 0}
    for finding in waived:
        kind = ("waived inline" if finding.inline_waiver is not None else "pre-existing" if finding.preexisting
                else "baselined" if finding.waived_kind == "baseline" or finding.waived == "baselined"
                else "skipped by path class" if finding.waived_kind == "path_class"
                else "skipped by a rule context" if finding.waived_kind == "context"
                else "counted once in their file" if finding.waived_kind == "once_per_file"
                else "accepted")
        counts[kind] += 1
    return [(n, kind) for kind, n in counts.items() if n]
