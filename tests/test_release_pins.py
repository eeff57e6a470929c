"""What the docs tell a user to install or pin exists: this repository publishes no release
tags and no PyPI package yet, so no snippet pins a tag of it, and installing from PyPI is said to
work once review-gate is published there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "action.yml", *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "docs").rglob("*.yml"))]
TAG_PIN = re.compile(r"(?:review-gate/review-gate@|^\s*rev:\s*)v\d+\.\d+\.\d+", re.MULTILINE)
FROM_PYPI = re.compile(r"pip install ['\"]?review-gate(?:\[[a-z,]+\])?['\"]?(?!\s*@)(?:\s|$|`|\))")


def test_no_snippet_pins_a_release_tag_this_repository_does_not_have() -> None:
    found = [f"{p.relative_to(ROOT)}: {m.group(0).strip()}" for p in DOCS
             for m in TAG_PIN.finditer(p.read_text(encoding="utf-8"))]
    assert not found


def test_installing_from_pypi_is_said_to_wait_for_the_release() -> None:
    """A line that installs review-gate by its bare name says it works once published."""
    bare = []
    for path in DOCS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FROM_PYPI.search(line) and "published" not in line:
                bare.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not bare
