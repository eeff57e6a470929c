"""``review-gate explain PATH...``: which domains, policies and agents a changed file triggers."""

from __future__ import annotations

import argparse

from review_gate import console
from review_gate.commands.common import config_for, find_repo_root
from review_gate.escape import sanitize
from review_gate.models import FileChange, Policy, PRClassification, PRFacts, ReviewConfig
from review_gate.pipeline.classify import classify
from review_gate.pipeline.compose import policy_scope


def _fires(policy: Policy, alone: PRClassification) -> str | None:
    """'yes', a condition the whole change must meet, or None when the policy ignores the file
    that ``alone`` classifies (compose's own rule, on a change of that one file)."""
    trigger = policy.trigger
    if trigger.type == "risk":
        return f"when the change's risk score is at least {trigger.min_risk}"
    if trigger.type == "pr_type":
        return f"when the change's type is {' or '.join(trigger.pr_types)}"
    return "yes" if policy_scope(policy, alone) else None


def explain(path: str, config: ReviewConfig) -> list[str]:
    change = FileChange(path=path, old_path=path, status="modified", added=0, removed=0)
    alone = classify(PRFacts(source="explain", files=[change]), config.domains.domains)
    domains = alone.files[0].domains
    lines = [sanitize(path), f"  domains: {', '.join(domains) or 'none (unclassified)'}"]
    agents: set[str] = set()
    for policy in sorted(config.composition.policies, key=lambda p: (-p.priority, p.id)):
        fires = _fires(policy, alone)
        if fires is None:
            continue
        lines.append(f"  policy {policy.id} ({policy.trigger.type}, priority {policy.priority}): "
                     f"{'fires' if fires == 'yes' else fires} -> {', '.join(policy.dispatch)}")
        if fires == "yes":
            agents.update(policy.dispatch)
    lines.append(f"  agents: {', '.join(sorted(agents)) or 'none'}")
    return lines


def explain_command(args: argparse.Namespace) -> int:
    config = config_for(args, find_repo_root())
    for path in args.paths:
        for line in explain(path.replace("\\", "/").removeprefix("./"), config):
            console.out(line)
    return 0
