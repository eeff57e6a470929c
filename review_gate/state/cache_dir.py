"""Where review-gate keeps files of its own outside any repository: the user's cache directory."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/review-gate``, else ``~/.cache/review-gate`` (a relative XDG_CACHE_HOME
    is ignored, as the XDG spec says)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "review-gate"
