"""``review-gate config validate | show``."""

from __future__ import annotations

import argparse
import json

from review_gate import console
from review_gate.commands.common import config_for, find_repo_root
from review_gate.errors import ConfigError

MAX_SHOWN = 50


def config_command(args: argparse.Namespace) -> int:
    root = find_repo_root()
    try:
        config = config_for(args, root)
    except ConfigError as exc:
        if args.config_command != "validate":
            raise
        for problem in exc.problems[:MAX_SHOWN]:
            console.err(f"{problem.describe()}\n  fix: {problem.fix}")
        if len(exc.problems) > MAX_SHOWN:
            console.err(f"… and {len(exc.problems) - MAX_SHOWN} more problems")
        console.err(f"config invalid: {len(exc.problems)} problem(s)")
        return 2
    if args.config_command == "show":
        data = {
            "directory": config.directory,
            "sources": config.sources,
            **{name: getattr(config, attr).model_dump(mode="json", by_alias=True, exclude_none=True)
               for name, attr in (("review-rules.json", "rules"), ("review-domains.json", "domains"),
                                  ("review-agents.json", "agents"),
                                  ("review-composition.json", "composition"),
                                  ("review-gate.json", "settings"))},
        }
        console.out(json.dumps(data, indent=2))
        return 0
    where = config.directory or "built-in configuration"
    console.out(f"config OK: {where}: {len(config.rules.rules)} rules, {len(config.domains.domains)} domains, "
                f"{len(config.agents.agents)} agents, {len(config.composition.policies)} policies")
    return 0
