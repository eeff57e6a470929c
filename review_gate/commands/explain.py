"""``review-gate explain PATH...``: which domains, policies and agents a changed file triggers."""

from __future__ import annotations

import argparse

from review_gate import api, console
from review_gate.escape import sanitize


def explain_command(args: argparse.Namespace) -> int:
    for found in api.explain(args.paths, config=args.config):
        console.out(sanitize(found.path))
        console.out(f"  domains: {', '.join(found.domains) or 'none (unclassified)'}")
        for match in found.policies:
            fires = "fires" if match.fires == "yes" else match.fires
            console.out(f"  policy {match.policy} ({match.trigger}, priority {match.priority}): "
                        f"{fires} -> {', '.join(match.dispatch)}")
        console.out(f"  agents: {', '.join(found.agents) or 'none'}")
    return 0
