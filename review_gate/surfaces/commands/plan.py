"""``review-gate plan``: stages 1-4 (facts, classification, manifest, gaps); no agent runs."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pydantic_core import to_json

from review_gate import api
from review_gate.models import Plan
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import diff_request, find_repo_root, output_targets, write_output
from review_gate.text.escape import json_safe, sanitize

if TYPE_CHECKING:
    from rich.text import Text


def render_json(plan: Plan) -> str:
    data = {
        "facts": plan.facts.model_dump(mode="json", exclude={"files": {"__all__": {"hunks"}}}),
        "classification": plan.classification.model_dump(mode="json"),
        "manifest": [e.model_dump(mode="json") for e in plan.manifest.entries],
        "gaps": [g.model_dump(mode="json") for g in plan.gaps],
    }
    # pydantic-core writes it (the stdlib's indenting encoder is Python, a tenth of a large plan's time);
    # raw UTF-8 made terminal-safe, as the JSON report is
    return json_safe(to_json(data, indent=2).decode("utf-8")) + "\n"


def render_text(plan: Plan) -> list[Text]:
    from rich.text import Text  # rich only for text output: `plan --format json` never draws

    from review_gate.outputs.text import plural

    c = plan.classification
    facts = plan.facts
    lines = [Text(f"source: {sanitize(facts.source)}"),
             Text(f"{plural(len(facts.files), 'file')}, +{facts.lines_added} -{facts.lines_removed} · "
                  f"risk {c.risk_score} ({c.risk_level}) · type {c.pr_type}"),
             Text(f"domains: {', '.join(c.domains) or 'none'}")]
    if c.unclassified:
        lines.append(Text(f"unclassified: {plural(len(c.unclassified), 'file')}", style="yellow"))
    lines.append(Text("agents:", style="bold"))
    for entry in plan.manifest.entries:
        lines.append(Text(f"  {entry.agent}  priority {entry.priority}  {plural(len(entry.files), 'file')}  "
                          f"(policies: {', '.join(entry.policies)})"))
    if not plan.manifest.entries:
        lines.append(Text("  none", style="dim"))
    for gap in plan.gaps:
        lines.append(Text(f"gap [{gap.kind}] {sanitize(gap.reason)}", style="dim"))
        lines.append(Text(f"    {sanitize(gap.suggestion)}", style="dim"))
    return lines


def plan_command(args: argparse.Namespace) -> int:
    targets = output_targets(args)
    request = diff_request(args, find_repo_root())  # checked with the flags' own words
    plan = api.plan(request=request, config=args.config, offline=args.offline)
    for fmt, path in targets:
        if fmt == "json":
            text = render_json(plan)
            if path and path != "-":
                write_output(path, text)
            else:
                sys.stdout.write(text)
        elif path and path != "-":
            write_output(path, "\n".join(t.plain for t in render_text(plan)) + "\n")
        else:
            for line in render_text(plan):
                console.stdout().print(line)
    return 0
