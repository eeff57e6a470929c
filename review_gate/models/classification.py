"""Stage 2 output: which domains each file is in, how risky the change is, what kind it is."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from review_gate.models.base import Frozen
from review_gate.models.config_values import PrType

RiskLevel = Literal["low", "medium", "high", "critical"]


class FileDomains(Frozen):
    path: str
    domains: list[str]
    names: list[str] = Field(
        default_factory=list, exclude=True, repr=False,
        description="Other names globs match the file by (a script a domain claims by its #! line, with that "
                    "domain's extensions: models.config.script_names), for policies' `paths`; not reported.")


class PRClassification(Frozen):
    files: list[FileDomains]
    domains: list[str] = Field(description="Every domain touched, sorted.")
    unclassified: list[str] = Field(description="Changed files that match no domain.")
    risk_score: int = Field(ge=0, le=100)
    risk_level: RiskLevel
    pr_type: PrType
