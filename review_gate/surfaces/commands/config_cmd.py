"""``review-gate config validate | show [--origin] | diff``."""

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


def origin_data(config: ReviewConfig) -> dict[str, object]:
    """The layers of ``config``, base first, and each entry's and setting's origin: the layers that
    defined, added, changed (with the fields) or disabled it, each with its file and JSON pointer."""
    from pathlib import Path

    from review_gate.config.layers import LISTS
    from review_gate.config.load import origins

    stack, found = origins(Path(config.directory) if config.directory is not None else None)
    kinds: dict[str, object] = {}
    for name in config.FILES:
        touched = found.touches.get(name, {})
        entries = {key: [_touch(t) for t in ts] for key, ts in touched.items() if not key.startswith("/")}
        keys = {key[1:]: [_touch(t) for t in ts] for key, ts in touched.items() if key.startswith("/")}
        kinds[LISTS.get(name, "settings")] = entries if name in LISTS else keys
        if name in LISTS and keys:
            kinds[f"{LISTS[name]}_settings"] = keys
    return {"layers": [each.name for each in stack], "origins": kinds}


def origin_line(config: ReviewConfig, file: str, ident: str) -> str | None:
    """Which layers set entry ``ident`` of ``file`` (``built-in; severity by .review-gate/review-rules.json``),
    or None when the configuration has one layer (the built-in one, or a full copy)."""
    if not _layers(config):
        return None
    from pathlib import Path

    from review_gate.config.load import origins

    _, found = origins(Path(config.directory) if config.directory is not None else None)
    said = []
    for touch in found.of(file, ident):
        what = {"defined": "from", "added": "added by", "disabled": "disabled by"}.get(touch.action)
        if what is None:
            what = f"{', '.join(touch.fields) or 'changed'} by"
        said.append(f"{what} {touch.file}")
    return "; ".join(said) or None


def _touch(touch: object) -> dict[str, object]:
    from review_gate.config.layers import Touch

    assert isinstance(touch, Touch)
    shown: dict[str, object] = {"layer": touch.layer, "file": touch.file, "pointer": touch.pointer,
                                "action": touch.action}
    if touch.action == "changed" and touch.fields:
        shown["fields"] = list(touch.fields)
    return shown


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
        data = show_data(config)
        if args.origin:
            data = {**data, **origin_data(config)}
        console.out(json.dumps(data, indent=2))
        return 0
    if args.config_command == "diff":
        from review_gate.config.load import load_config
        from review_gate.config.overlay_diff import overlay

        console.out(json.dumps(overlay(load_config(None), config), indent=2))
        return 0
    where = config.directory or "built-in configuration"
    stack = _layers(config)
    if len(stack) > 1:
        where = f"{where} (layers: {' < '.join(stack)})"
    console.out(sanitize(
        f"config OK: {where}: {plural(len(config.rules.rules), 'rule')}, "
        f"{plural(len(config.domains.domains), 'domain')}, "
        f"{plural(len(config.agents.agents), 'agent')}, "
        f"{plural(len(config.composition.policies), 'policy', 'policies')}"))
    if config.directory is not None and len(stack) <= 1:
        fallback = [name for name, source in config.sources.items() if source.endswith("(built-in)")]
        if fallback:
            console.out(f"  from the built-in configuration (not in {sanitize(config.directory)}): "
                        f"{', '.join(fallback)}")
    return 0


def _layers(config: ReviewConfig) -> list[str]:
    """The names of the layers an overlay stacks, base first; [] for a full copy or the built-in one."""
    if config.directory is None:
        return []
    from pathlib import Path

    from review_gate.config.load import origins

    stack, _ = origins(Path(config.directory))
    return [each.name for each in stack] if any(each.overlay for each in stack) else []
