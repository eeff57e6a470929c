"""``review-gate explain PATH...``: which domains, policies and agents a changed file triggers."""

from __future__ import annotations

import argparse

from review_gate import api
from review_gate.surfaces import console
from review_gate.text.escape import sanitize


def explain_command(args: argparse.Namespace) -> int:
    """Each argument that names no file but is a rule's id is described as ``rule`` does; the
    others are paths."""
    from pathlib import Path

    from review_gate.surfaces.commands.common import find_repo_root
    from review_gate.surfaces.commands.rule import show

    root = find_repo_root()
    config = api.load(args.config, root)
    ids = {r.id for r in config.rules.rules}
    rules = [a for a in args.paths if a in ids and not Path(a).exists()]
    for wanted in rules:
        show(config, wanted)
    paths = [a for a in args.paths if a not in rules]
    if not paths:
        return 0
    from review_gate.surfaces.commands.config_cmd import origin_line

    for found in api.explain(paths, config=args.config):
        console.out(sanitize(found.path))
        console.out(f"  domains: {', '.join(found.domains) or 'none (unclassified)'}")
        for match in found.policies:
            fires = "fires" if match.fires == "yes" else match.fires
            where = origin_line(config, "review-composition.json", match.policy)
            console.out(sanitize(f"  policy {match.policy} ({match.trigger}, priority {match.priority}): "
                                 f"{fires} -> {', '.join(match.dispatch)}" + (f" [{where}]" if where else "")))
        console.out(f"  agents: {', '.join(found.agents) or 'none'}")
    return 0
