"""``review-gate explain PATH...``: which domains, policies and agents a changed file triggers."""

from __future__ import annotations

import argparse

from review_gate import console
from review_gate.commands.common import config_for, find_repo_root
from review_gate.escape import sanitize
from review_gate.globs import Globs
from review_gate.models import Policy, ReviewConfig


def _fires(policy: Policy, path: str, domains: list[str]) -> str | None:
    """'yes', a condition the whole change must meet, or None when the policy ignores this file."""
    trigger = policy.trigger
    if trigger.type == "always":
        return "yes"
    if trigger.type == "domain":
        return "yes" if set(trigger.domains) & set(domains) else None
    if trigger.type == "paths":
        return "yes" if Globs(trigger.paths).match(path) else None
    if trigger.type == "risk":
        return f"when the change's risk score is at least {trigger.min_risk}"
    return f"when the change's type is {' or '.join(trigger.pr_types)}"


def explain(path: str, config: ReviewConfig) -> list[str]:
    domains = [d.id for d in config.domains.domains if Globs(d.paths).match(path)]
    lines = [sanitize(path), f"  domains: {', '.join(domains) or 'none (unclassified)'}"]
    agents: set[str] = set()
    for policy in sorted(config.composition.policies, key=lambda p: (-p.priority, p.id)):
        fires = _fires(policy, path, domains)
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
