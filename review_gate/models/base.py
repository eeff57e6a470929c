from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Base of every boundary model: immutable, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
