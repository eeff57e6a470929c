"""What a batch run keeps between submit and collect: one stable run id, its plan, its config,
the results of the agents that ran locally at submit, and its request map (each request's
custom id, the agents it asks for and the files it shows)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from review_gate.models import (
    AgentManifest,
    AgentResult,
    FailOn,
    FilterMode,
    Finding,
    Gap,
    PRClassification,
    PRFacts,
    ReviewConfig,
)
from review_gate.models.base import Frozen
from review_gate.models.findings import Waiver

Provider = Literal["openai", "anthropic"]


class Endpoint(Frozen):
    """One provider batch: the agents of one provider, endpoint and key share it."""

    ordinal: int
    provider: Provider
    url: str = Field(description="The agents' base_url (no key).")
    api_key_env: str | None
    agent: str = Field(description="An agent of this endpoint, whose settings read its answers.")


class Unit(Frozen):
    """Agents asked together in each of the unit's requests: one agent, or a pack of them."""

    agents: list[str]
    lenses: list[str] | None = Field(description="Packed: the lens ids the answers name; None for one agent.")
    endpoint: int
    system: str
    unreviewed: list[str] = Field(description="Files no request of the unit can hold (over the token budget).")
    criteria: bool = Field(default=False, description="Its answers judge the change against its intent.")


class Request(Frozen):
    """One line of a batch request file."""

    custom_id: str
    unit: int
    files: list[str]
    user: str


class FrozenRun(Frozen):
    """Everything ``batch collect`` needs, as ``batch submit`` left it."""

    run_id: str
    kind: Literal["live", "batch", "sweep"] = "batch"
    runner: Literal["batch", "host"] = Field(default="batch", description="Who answers its requests: the "
                                             "providers' batch APIs, or the coding agent's host (scale.host).")
    intent: str | None = Field(default=None, description="What the change is for, as its requests carry it.")
    facts: PRFacts
    classification: PRClassification
    manifest: AgentManifest
    gaps: list[Gap]
    config: ReviewConfig
    extras: dict[str, str]
    local: list[AgentResult] = Field(description="Results of the agents run at submit (not the batched ones).")
    waivers: dict[str, Waiver] = Field(description="The baseline's and pre-existing waivers, read at submit.")
    filter_mode: FilterMode | None = None
    fail_on: FailOn | None = None
    endpoints: list[Endpoint]
    units: list[Unit]
    requests: list[Request]
    bundle_dir: str | None = None
    left_out: int = Field(default=0, ge=0, description="Changed files left out as review-gate's own.")
    own_file_findings: list[Finding] = Field(default_factory=list,
                                             description="The gate's own findings on its files the change edits.")

    def dump(self) -> str:
        """JSON with what model dumps leave out: each file's patch, each result's findings."""
        data = self.model_dump(mode="json")
        for file_data, change in zip(data["facts"]["files"], self.facts.files, strict=True):
            file_data["patch"] = change.patch
        for result_data, result in zip(data["local"], self.local, strict=True):
            result_data["findings"] = [f.model_dump(mode="json") for f in result.findings]
            result_data["raw"] = result.raw
            result_data["prompts"] = result.prompts
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def load(cls, text: str) -> FrozenRun:
        data: dict[str, Any] = json.loads(text)
        return cls.model_validate(data)
