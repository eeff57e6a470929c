"""``review-gate config validate | show``."""

from __future__ import annotations

import argparse
import json

from review_gate.errors import ConfigError
from review_gate.models import ReviewConfig
from review_gate.outputs.text import plural
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import config_for, find_repo_root
from review_gate.text.escape import sanitize

MAX_SHOWN = 50


def show_data(config: ReviewConfig) -> dict[str, object]:
    """The effective configuration: where each file came from, and its content with defaults."""
    return {
        "directory": config.directory,
        "sources": config.sources,
        **{name: config.file(name).model_dump(mode="json", by_alias=True, exclude_none=True)
           for name in config.FILES},
    }


def config_command(args: argparse.Namespace) -> int:
    root = find_repo_root()
    try:
        config = config_for(args, root, one_pass=args.config_command == "validate")
    except ConfigError as exc:  # both actions list every problem, not only the first
        for problem in exc.problems[:MAX_SHOWN]:
            console.err(f"{sanitize(problem.describe())}\n  fix: {sanitize(problem.fix)}")
        if len(exc.problems) > MAX_SHOWN:
            console.err(f"… and {len(exc.problems) - MAX_SHOWN} more problems")
        console.err(f"config invalid: {plural(len(exc.problems), 'problem')}")
        return 2
    if args.config_command == "show":
        console.out(json.dumps(show_data(config), indent=2))
        return 0
    where = config.directory or "built-in configuration"
    console.out(sanitize(
        f"config OK: {where}: {plural(len(config.rules.rules), 'rule')}, "
        f"{plural(len(config.domains.domains), 'domain')}, "
        f"{plural(len(config.agents.agents), 'agent')}, "
        f"{plural(len(config.composition.policies), 'policy', 'policies')}"))
    if config.directory is not None:
        fallback = [name for name, source in config.sources.items() if source.endswith("(built-in)")]
        if fallback:
            console.out(f"  from the built-in configuration (not in {sanitize(config.directory)}): "
                        f"{', '.join(fallback)}")
    return 0
