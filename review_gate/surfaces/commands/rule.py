"""``review-gate rule ID``: what a rule checks, why, how it is found, how to fix it, an example it
flags and a near miss, and which policies and domains route it (``--format json`` too)."""

from __future__ import annotations

import argparse
import json
import sys

from review_gate import api
from review_gate.config import rulebook
from review_gate.judging.refine import actions
from review_gate.models import ReviewConfig
from review_gate.models.config import GATE_AGENT
from review_gate.surfaces import console
from review_gate.surfaces.commands.common import find_repo_root
from review_gate.surfaces.commands.config_cmd import origin_line
from review_gate.text.escape import json_safe, sanitize


def rule_command(args: argparse.Namespace) -> int:
    config = api.load(args.config, find_repo_root())
    if args.rule is None:
        return listed(config, args.format)
    return show(config, args.rule, args.format)


def listed(config: ReviewConfig, fmt: str = "text") -> int:
    """Every rule of the configuration in use, one a line (a trial: nothing listed them but the
    whole `config show`)."""
    rules = sorted(config.rules.rules, key=lambda r: r.id)
    if fmt == "json":
        rows = [{"id": r.id, "severity": r.severity, "category": r.category, "agent": r.agent, "name": r.name,
                 "enabled": r.enabled} for r in rules]
        sys.stdout.write(json_safe(json.dumps(rows, indent=2, ensure_ascii=False)) + "\n")
        sys.stdout.flush()
        return 0
    width = max((len(r.id) for r in rules), default=0)
    for r in rules:
        state = "" if r.enabled else " (disabled)"
        console.out(sanitize(f"{r.id:<{width}}  {r.severity:<8} {r.category} · {r.agent} · {r.name}{state}"))
    console.out(sanitize(f"{len(rules)} rules; `review-gate rule ID` describes one"))
    return 0


def show(config: ReviewConfig, wanted: str, fmt: str = "text") -> int:
    card = rulebook.card(config, rulebook.find(config, wanted))
    if fmt == "json":
        sys.stdout.write(json_safe(json.dumps(card.as_json(), indent=2, ensure_ascii=False)) + "\n")
        sys.stdout.flush()
        return 0
    rule = card.rule
    state = "" if rule.enabled else " (disabled)"
    kind = (f"{card.agent_kind} agent" if card.agent_kind
            else "raised by" if rule.agent == GATE_AGENT else "agent not in the registry")
    lines = [f"{rule.id}: {rule.name}{state}",
             f"  severity {rule.severity} · category {rule.category} · {kind} {rule.agent}",
             "", f"  {rule.description}", "",
             f"  detection:      {rule.detection}",
             f"  recommendation: {rule.recommendation}"]
    if rule.pattern:
        lines.append(f"  pattern:        {rule.pattern}")
    if rule.agent == GATE_AGENT:  # no agent runs it: the gate raises it from an llm reviewer's answer
        lines += ["  raised:         when an llm reviewer given the change's intent judges it not met",
                  "", "  set its severity, or \"enabled\": false, by id in review-rules.json"]
        for line in lines:
            console.out(sanitize(line))
        return 0
    lines.append(f"  paths:          {', '.join(rule.paths) or 'every file'}"
                 + (f" (except {', '.join(rule.exclude_paths)})" if rule.exclude_paths else ""))
    taken = actions(rule, config)
    if taken:  # a trial: verify=False in tests/ was never flagged, and nothing here said why
        lines.append("  path classes:   " + ", ".join(f"{name} {action}" for name, action in sorted(taken.items()))
                     + " (review-rules.json's path_classes say which files are which)")
    if rule.peers:
        lines.append(f"  peers:          {', '.join(rule.peers)} (their suppression comments waive it inline)")
    for example in card.examples:
        label = "flags:     " if example.expected else "near miss: "
        drift = "" if example.holds in (None, example.expected) else "  [the pattern no longer agrees]"
        lines.append(f"  {label}     {example.path}: {example.line}{drift}")
    if not card.examples and rule.pattern:
        lines.append("  examples:       none given (a rule's \"examples\" field holds them)")
    routes = [f"{r.policy} ({r.trigger}, priority {r.priority})" for r in card.routes]
    lines.append(f"  policies:       {'; '.join(routes) or f'none dispatches {rule.agent}: the rule never runs'}")
    lines.append(f"  domains:        {', '.join(card.domains) or 'any (no domain trigger)'}")
    if set_by := origin_line(config, "review-rules.json", rule.id):
        lines.append(f"  set by:         {set_by}")
    lines += ["", f"  waive one finding in the code: # review-gate: ignore[{rule.id}] why it is acceptable"]
    out = console.stdout()
    if not out.is_terminal:
        for line in lines:
            console.out(sanitize(line))
        return 0
    from rich.text import Text

    from review_gate.outputs.text import print_hanging

    for line in lines:  # a long pattern wraps under itself on a terminal, not across the labels
        label, colon, body = line.partition(":  ")
        if colon and label.startswith("  ") and not label[2:3].isspace():
            print_hanging(out, 0, Text(sanitize(label + colon + " " * (len(body) - len(body.lstrip())))),
                          Text(sanitize(body.lstrip())))
        else:
            print_hanging(out, 0, Text(""), Text(sanitize(line)))
    return 0
