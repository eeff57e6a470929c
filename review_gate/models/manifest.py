"""Stages 3 and 4 output: which agents run on which files, and what the config missed."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field

from review_gate.models.base import Frozen


class ManifestEntry(Frozen):
    agent: str
    files: list[str] = Field(description="The agent's scope, sorted.")
    policies: list[str] = Field(description="Ids of the policies that dispatched it.")
    priority: int = Field(ge=0, le=100)


class AgentManifest(Frozen):
    entries: list[ManifestEntry] = Field(description="Highest priority first.")


class Gap(Frozen):
    kind: Literal["unclassified_file", "domain_without_policy", "unknown_agent", "uncovered_file", "config_changed",
                  "baseline_changed", "state_changed", "llm_addition", "gap_detector_failed"] = Field(
        description="config_changed / baseline_changed / state_changed: the change edits the gate's own "
                    "configuration, baseline or run state (never reviewed as code; a changed baseline or "
                    "state is not trusted); llm_addition: the LLM gap detector added an agent (or files to "
                    "one); gap_detector_failed: it ran and failed, and the manifest stayed as it was.")
    subject: str = Field(description="The file, domain or agent id concerned.")
    reason: str
    suggestion: str = Field(description="A config change that would close the gap.")


def config_snippet(obj: object) -> str:
    """Config a gap suggests, as it is quoted in a suggestion: compact JSON on one line."""
    return json.dumps(obj, separators=(", ", ": "))
