"""``review-gate agents list``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from review_gate import console
from review_gate.agents import KINDS
from review_gate.commands.common import config_for, find_repo_root


def agents_command(args: argparse.Namespace) -> int:
    config = config_for(args, find_repo_root())
    rows: list[dict[str, Any]] = []
    for agent in config.agents.agents:
        policies = [p.id for p in config.composition.policies if agent.id in p.dispatch]
        state = "enabled" if agent.enabled else "disabled"
        if agent.kind not in KINDS:
            state = "unavailable kind"
        rows.append({"id": agent.id, "kind": agent.kind, "state": state, "required": agent.required,
                     "timeout_s": agent.timeout_s or config.settings.timeout_s,
                     "rules": len(config.rules_for(agent.id)), "policies": policies,
                     "network": KINDS[agent.kind].needs_network if agent.kind in KINDS else None,
                     "description": agent.description})
    if args.format == "json":
        console.out(json.dumps({"agents": rows}, indent=2))
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("id", "kind", "state", "required", "timeout", "rules", "dispatched by"):
        table.add_column(column)
    for r in rows:
        table.add_row(r["id"], r["kind"], r["state"], "yes" if r["required"] else "no",
                      f"{r['timeout_s']:g}s", str(r["rules"]), ", ".join(r["policies"]) or "no policy")
    console.stdout().print(table)
    return 0
