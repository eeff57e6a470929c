"""The one judging step that leaves findings out of the count (DESIGN §3). Pure.

Rules and agents report everything they find; the ways a finding is not counted are decided
elsewhere (``refine`` pairs old lines and applies path classes, ``waivers`` reads inline comments,
the baseline and the acceptances name fingerprints), each as a ``Waiver``: what kind of thing pays
for the finding and why. Here alone they are applied: every finding a waiver names is moved to
the report's ``waived`` list with that kind and reason, and none is dropped without one.

>>> from review_gate.models import Finding
>>> f = Finding(fingerprint="a" * 32, agent="p", severity="major", category="c", file="x.py", line=1, message="m")
>>> counted, waived = judge([f], {f.fingerprint: Waiver(kind="baseline", reason="baselined")})
>>> counted, [(w.waived_kind, w.waived) for w in waived]
([], [('baseline', 'baselined')])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from review_gate.models.findings import Finding, Waiver

Waivers = Mapping[str, Waiver]
"""Fingerprint -> what leaves that finding out of the count."""


def judge(findings: Sequence[Finding], waivers: Waivers,
          waived: Iterable[Finding] = ()) -> tuple[list[Finding], list[Finding]]:
    """(the findings that count, those left out): ``findings`` less those a waiver names, which are
    listed with its kind and reason; ``waived``, already left out with theirs (an inline comment's,
    which ``waivers.apply`` reads with the finding's line), are listed as they are. A finding left
    out with no kind is a bug of the caller, never a silent drop."""
    counted = [f for f in findings if f.fingerprint not in waivers]
    out = [f.left_out(waivers[f.fingerprint]) for f in findings if f.fingerprint in waivers]
    for finding in waived:
        if finding.waived_kind is None or finding.waived is None:
            raise ValueError(f"finding {finding.fingerprint} left out with no kind or reason")
        out.append(finding)
    return counted, out
