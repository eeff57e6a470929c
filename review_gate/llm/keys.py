"""Whether an llm agent's key is there: read from its environment variable, never from config.
Apart from the client, so that asking it (does this run talk to a model at all?) imports no
provider, governor or HTTP machinery."""

from __future__ import annotations

import os

from review_gate.models import LlmAgent


def missing_key(spec: LlmAgent) -> str | None:
    """Why the agent cannot run at all: its key variable is not set."""
    if spec.api_key_env and not os.environ.get(spec.api_key_env):
        return f"{spec.api_key_env} is not set"
    return None
