"""Stage 3: classification + policies -> AgentManifest. Pure: same input, same output."""

from __future__ import annotations

from review_gate.models import AgentManifest, ManifestEntry, Policy, PRClassification
from review_gate.pipeline.boundary import checked
from review_gate.text.globs import Globs


def policy_scope(policy: Policy, classification: PRClassification) -> list[str]:
    """The files a policy selects; empty when its trigger does not fire."""
    trigger = policy.trigger
    every = [f.path for f in classification.files]
    if trigger.type == "always":
        return every
    if trigger.type == "risk":
        return every if classification.risk_score >= trigger.min_risk else []
    if trigger.type == "pr_type":
        return every if classification.pr_type in trigger.pr_types else []
    if trigger.type == "domain":
        wanted = set(trigger.domains)
        return [f.path for f in classification.files if wanted.intersection(f.domains)]
    globs = Globs(trigger.paths)  # a script matches by its domain's extensions too (FileDomains.names)
    return [f.path for f in classification.files if globs.match(f.path) or any(globs.match(n) for n in f.names)]


def compose(classification: PRClassification, policies: list[Policy]) -> AgentManifest:
    """One entry per dispatched agent: the union of its policies' scopes, highest priority first.

    An agent whose policies fire on no file is not dispatched: it would review nothing.
    """
    classification = checked("compose", classification)
    scopes: dict[str, set[str]] = {}
    chosen_by: dict[str, list[str]] = {}
    priority: dict[str, int] = {}
    for policy in sorted(policies, key=lambda p: (-p.priority, p.id)):
        files = policy_scope(policy, classification)
        if not files:
            continue
        for agent_id in policy.dispatch:
            scopes.setdefault(agent_id, set()).update(files)
            chosen_by.setdefault(agent_id, []).append(policy.id)
            priority[agent_id] = max(priority.get(agent_id, 0), policy.priority)
    entries = [
        ManifestEntry(agent=a, files=sorted(scopes[a]), policies=chosen_by[a], priority=priority[a])
        for a in scopes
    ]
    entries.sort(key=lambda e: (-e.priority, e.agent))
    return checked("compose", AgentManifest(entries=entries))
