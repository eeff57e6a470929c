"""Stable finding fingerprints: they survive unrelated lines moving, so baselines keep working."""

from __future__ import annotations

import hashlib
import re

_SPACE = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")


def fingerprint(agent: str, rule: str, file: str | None, anchor: str, occurrence: int) -> str:
    """Hash of who found it, what rule, where (file, not line) and the text it is about.

    ``anchor`` is the flagged line's text when known, else the message with digits removed, so
    that line numbers quoted in messages do not change the fingerprint. ``occurrence`` tells
    apart identical findings in one file: the k-th line of the file's new content with this
    anchor is occurrence k (``judging.occurrences``), else the k-th such finding of its agent.
    """
    key = "\0".join((agent, rule, file or "", anchor_key(anchor), str(occurrence)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def anchor_key(anchor: str) -> str:
    """The anchor as a fingerprint reads it: runs of whitespace as one blank, none at the ends."""
    return _SPACE.sub(" ", anchor).strip()


def message_anchor(message: str) -> str:
    return _DIGITS.sub("#", message.lower())
