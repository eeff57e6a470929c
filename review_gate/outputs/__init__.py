"""Output formats, one module each, each with ``render(report: ReviewReport) -> str``.

The registry maps a ``--format`` name to its module, imported only when that format is asked
for (``--version`` and ``--help`` stay fast). A new format is one module and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from review_gate.models import ReviewReport

FORMATS: dict[str, str] = {
    "text": "text",
    "json": "json_report",
    "sarif": "sarif",
    "markdown": "markdown",
    "github": "github",
    "gitlab": "gitlab",
    "rdjsonl": "rdjsonl",
    "meta": "meta",
    "agent": "agent",
}


def renderer(name: str) -> Callable[[ReviewReport], str]:
    module = import_module(f"review_gate.outputs.{FORMATS[name]}")
    render: Callable[[ReviewReport], str] = module.render
    return render


__all__ = ["FORMATS", "renderer"]
