"""Frozen models at every boundary. Models import nothing else of review-gate."""

from __future__ import annotations

from review_gate.models.classification import FileDomains, PRClassification, RiskLevel
from review_gate.models.config import (
    Agent,
    AgentsFile,
    CommandAgent,
    CompositionFile,
    Decision,
    Domain,
    DomainsFile,
    FilterMode,
    Gate,
    GateCondition,
    GateFile,
    LlmAgent,
    PatternAgent,
    Policy,
    Price,
    PrType,
    ReviewConfig,
    Rule,
    RulesFile,
    Severity,
    Trigger,
)
from review_gate.models.facts import Commit, FileChange, Hunk, Line, PRFacts
from review_gate.models.findings import Finding, RawFinding
from review_gate.models.manifest import AgentManifest, Gap, ManifestEntry
from review_gate.models.plan import Plan
from review_gate.models.report import AgentResult, AgentStatus, Coverage, Metrics, ReviewReport, RuleInfo, Usage

__all__ = [
    "Agent",
    "AgentManifest",
    "AgentResult",
    "AgentStatus",
    "AgentsFile",
    "CommandAgent",
    "Commit",
    "CompositionFile",
    "Coverage",
    "Decision",
    "Domain",
    "DomainsFile",
    "FileChange",
    "FileDomains",
    "FilterMode",
    "Finding",
    "Gap",
    "Gate",
    "GateCondition",
    "GateFile",
    "Hunk",
    "Line",
    "LlmAgent",
    "ManifestEntry",
    "Metrics",
    "PRClassification",
    "PRFacts",
    "PatternAgent",
    "Plan",
    "Policy",
    "PrType",
    "Price",
    "RawFinding",
    "ReviewConfig",
    "ReviewReport",
    "RiskLevel",
    "Rule",
    "RuleInfo",
    "RulesFile",
    "Severity",
    "Trigger",
    "Usage",
]
