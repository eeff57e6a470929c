"""review-gate: an async multi-agent code review pipeline with a severity gate."""

from __future__ import annotations

__version__ = "0.3.0"

__all__ = ["__version__"]
