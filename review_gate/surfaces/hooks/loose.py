"""The fail-closed reading of a shell line, for what cannot be read as bash reads it: words in
the text, in order, whatever their quoting. Linear in the text.
"""

from __future__ import annotations

import re

from review_gate.surfaces.hooks.programs import Gated

_LOOSE_GIT = re.compile(r"\b(?:git|hub)\b")
_LOOSE_GATED = re.compile(r"\b(commit|push|pull-request)\b")
_LOOSE_GH = re.compile(r"\b(?:gh|glab)\b")
_LOOSE_PR = re.compile(r"\b(?:pr|mr)\s+(?:create|new|merge)\b")
_LOOSE_RG = re.compile(r"\breview[-_]gate\b")
_LOOSE_WAIVE = re.compile(r"\b(?:accept|baseline|init|approve|reject)\b|--ap(?:p|pl|ply)?\b")
_LOOSE_GATES: dict[str, Gated] = {"commit": "commit", "push": "push", "pull-request": "pr"}

def loose(text: str) -> set[Gated]:
    """The fail-closed reading: a ``git``/``hub`` word and, anywhere after it, ``commit``,
    ``push`` or ``pull-request``; ``gh``/``glab`` and, after it, ``pr create`` (``new``,
    ``merge``, ``mr create``...). Linear in the text."""
    found: set[Gated] = set()
    git = _LOOSE_GIT.search(text)
    if git is not None:
        found |= {_LOOSE_GATES[m.group(1)] for m in _LOOSE_GATED.finditer(text, git.end())}
    gh = _LOOSE_GH.search(text)
    if gh is not None and _LOOSE_PR.search(text, gh.end()):
        found.add("pr")
    rg = _LOOSE_RG.search(text)
    if rg is not None and _LOOSE_WAIVE.search(text, rg.end()):
        found.add("waive")
    return found
