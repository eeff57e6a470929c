"""How long the agent report may be (``--max-chars``): its own module, so that a command that
only checks the flag (the agent hooks) does not load the report's models."""

from __future__ import annotations

MAX_CHARS = 8_000
MIN_CHARS = 1_000  # below this not even the verdict and what was not checked fit
