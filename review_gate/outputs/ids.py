"""Short finding ids: a prefix of the fingerprint, short enough to type, long enough to be unique.

``review-gate accept ID`` takes one (or the whole fingerprint) and resolves it against the
fingerprints recorded runs reported.
"""

from __future__ import annotations

from collections.abc import Iterable

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
