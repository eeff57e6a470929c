"""Stages 3 and 4 output: which agents run on which files, and what the config missed."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import Field, JsonValue

from review_gate.models.base import Frozen


class ManifestEntry(Frozen):
    agent: str
    files: list[str] = Field(description="The agent's scope, sorted.")
    policies: list[str] = Field(description="Ids of the policies that dispatched it.")
    priority: int = Field(ge=0, le=100)


class AgentManifest(Frozen):
    entries: list[ManifestEntry] = Field(description="Highest priority first.")


class PatchOperation(Frozen):
    """One operation of a JSON Patch (RFC 6902). Only the operations gaps need: ``add``,
    ``remove``, ``replace`` and ``test`` (``value`` is ignored for ``remove``, as the RFC ignores
    members an operation does not define)."""

    op: Literal["add", "remove", "replace", "test"]
    path: str = Field(description="A JSON Pointer (RFC 6901) into the file.")
    value: JsonValue = None

    def as_json(self) -> dict[str, Any]:
        """The operation as RFC 6902 writes it: no ``value`` member for ``remove``."""
        out: dict[str, Any] = {"op": self.op, "path": self.path}
        if self.op != "remove":
            out["value"] = self.value
        return out


class ConfigPatch(Frozen):
    """A machine-applicable change to one config file: ``review-gate gaps --apply ID``."""

    file: str = Field(description="The config file it changes, e.g. review-domains.json.")
    operations: list[PatchOperation] = Field(min_length=1, description="A JSON Patch (RFC 6902) against that "
                                                                       "file (the built-in one when the config "
                                                                       "directory has none).")

    def as_json(self) -> list[dict[str, Any]]:
        """The JSON Patch document."""
        return [op.as_json() for op in self.operations]


GapKind = Literal["unclassified_file", "domain_without_policy", "unknown_agent", "uncovered_file", "config_changed",
                  "baseline_changed", "state_changed", "llm_addition", "agent_addition", "gap_detector_failed",
                  "nested_repository"]


class Gap(Frozen):
    kind: GapKind = Field(
        description="config_changed / baseline_changed / state_changed: the change edits the gate's own "
                    "configuration, baseline or run state (never reviewed as code; a changed baseline or "
                    "state is not trusted); llm_addition: the LLM gap detector added an agent (or files to "
                    "one); agent_addition: the caller added an agent with a reason (run --add-agent); "
                    "gap_detector_failed: it ran and failed, and the manifest stayed as it was; "
                    "nested_repository: the change adds a git repository inside this one (a nested "
                    "repository or a submodule), whose own files are not reviewed.")
    subject: str = Field(description="The file, domain or agent id concerned.")
    reason: str
    files: list[str] = Field(default_factory=list,
                             description="The changed files it is about, when there are several (config_changed): "
                                         "its reason counts them, `--verbose` and `review-gate gaps` list them.")
    suggestion: str = Field(description="A config change that would close the gap.")
    patch: ConfigPatch | None = Field(
        default=None, description="The suggestion as a JSON Patch of one config file, when one exists "
                                  "(`review-gate gaps --apply ID` applies it).")

    @property
    def id(self) -> str:
        """A short id of the gap's kind and subject, the same in every run (``review-gate gaps``)."""
        return gap_id(self.kind, self.subject)


def gap_id(kind: str, subject: str) -> str:
    return hashlib.sha256(f"{kind}\0{subject}".encode("utf-8", "surrogatepass")).hexdigest()[:8]


class AgentRequest(Frozen):
    """An agent the caller adds to the manifest, and why (``run --add-agent ID[:GLOB] --gap-reason
    TEXT``): dispatched over the changed files ``glob`` selects (all of them without one) and
    logged as an ``agent_addition`` gap, as the LLM gap detector's additions are."""

    agent: str
    reason: str = Field(min_length=1)
    glob: str | None = Field(default=None, description="A gitignore-style glob over the changed paths.")


def config_snippet(obj: object) -> str:
    """Config a gap suggests, as it is quoted in a suggestion: compact JSON on one line."""
    return json.dumps(obj, separators=(", ", ": "))
