"""The release a user is told to pin (the Action's tag, pre-commit's rev) is this one."""

from __future__ import annotations

import re
from pathlib import Path

from review_gate import __version__

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"(?:review-gate/review-gate@|rev:\s*)v(\d+\.\d+\.\d+)")


def test_every_documented_pin_names_this_release() -> None:
    pins = {}
    for path in [ROOT / "README.md", ROOT / "action.yml", *sorted((ROOT / "docs").rglob("*.md")),
                 *sorted((ROOT / "docs").rglob("*.yml"))]:
        for match in PIN.finditer(path.read_text(encoding="utf-8")):
            pins[f"{path.relative_to(ROOT)}:{match.group(0)}"] = match.group(1)
    assert pins, "no pinned release found in the docs"
    assert {where: v for where, v in pins.items() if v != __version__} == {}
