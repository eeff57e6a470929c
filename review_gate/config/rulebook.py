"""What one rule is and what routes it: ``review-gate rule ID`` (and ``explain RULE_ID``).

Everything is read from the configuration in use: the rule's own fields, the agent that runs it,
the policies that dispatch that agent and the domains their triggers name, and the rule's
examples, each checked against its pattern and paths as the pattern agent would match it, so a
rule changed since its examples were written says so instead of showing a wrong example.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from review_gate.errors import UsageError
from review_gate.models import ReviewConfig, Rule
from review_gate.text.globs import Globs
from review_gate.text.regex import PatternError, compile_pattern

MIN_ID = 3  # characters of an id given as a prefix ("sec-tls")


@dataclass(frozen=True)
class Route:
    policy: str
    trigger: str  # "always", "domain: python, javascript", "paths: src/**", "risk >= 50", "pr_type: fix"
    priority: int


@dataclass(frozen=True)
class Example:
    path: str
    line: str
    expected: bool  # True: the rule flags it; False: a near miss
    holds: bool | None  # whether the pattern agrees now (None: the rule has no pattern)


@dataclass(frozen=True)
class RuleCard:
    rule: Rule
    agent_kind: str | None  # None: no agent of that id in the registry
    routes: list[Route] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        data = self.rule.model_dump(mode="json", exclude_none=True)
        data.pop("examples", None)
        return {**data, "agent_kind": self.agent_kind,
                "policies": [{"id": r.policy, "trigger": r.trigger, "priority": r.priority} for r in self.routes],
                "domains": self.domains,
                "examples": [{"kind": "fires" if e.expected else "near_miss", "path": e.path, "line": e.line,
                              "flagged": e.holds} for e in self.examples]}


def find(config: ReviewConfig, wanted: str) -> Rule:
    """The rule ``wanted`` names (its id, case aside, or the one id it starts); a UsageError
    naming the closest ids when none does."""
    rules = config.rules.rules
    given = wanted.strip().lower()
    for rule in rules:
        if rule.id.lower() == given:
            return rule
    starting = [r for r in rules if r.id.lower().startswith(given)] if len(given) >= MIN_ID else []
    if len(starting) == 1:
        return starting[0]
    ids = [r.id for r in rules]
    # close enough to be the id meant: a trial's `rule NOSUCH` was offered three unrelated ids
    # a word of the id (`rule tls`): the ids that hold it, as the rules' names and categories do
    holding = [r.id for r in rules if given and (given in r.id.lower() or given in r.category.lower()
                                                  or given in r.name.lower())]
    close = [r.id for r in starting[:5]] or _closest(given, ids) or holding[:5]
    hint = (f"closest: {', '.join(close)}" if close else "`review-gate rule` lists them" if ids
            else "this configuration has no rules")
    raise UsageError(f"no rule {wanted!r} in the configuration" + (" (several start so)" if starting else ""),
                     fix=f"give a rule id as a report shows it ({hint})")


def _closest(given: str, ids: list[str]) -> list[str]:
    """The ids close to ``given`` and nearly as close as the closest: rule ids share their shape
    (``sec-...-01``), so a typo of one was also offered the ids that merely share it."""
    scored = sorted(((difflib.SequenceMatcher(None, given, i).ratio(), i) for i in ids), reverse=True)
    best = scored[0][0] if scored else 0.0
    return [i for score, i in scored[:3] if score >= max(0.6, best - 0.1)]


def card(config: ReviewConfig, rule: Rule) -> RuleCard:
    """The rule with its agent's kind, the policies and domains that route it, its examples."""
    agent = config.agent(rule.agent)
    routes = [Route(p.id, _trigger(p.trigger.type, p.trigger.domains, p.trigger.paths, p.trigger.min_risk,
                                   p.trigger.pr_types), p.priority)
              for p in sorted(config.composition.policies, key=lambda p: (-p.priority, p.id))
              if rule.agent in p.dispatch]
    domains = sorted({d for p in config.composition.policies if rule.agent in p.dispatch
                      and p.trigger.type == "domain" for d in p.trigger.domains})
    examples = []
    if rule.examples is not None:
        examples = [Example(rule.examples.path, line, expected, flags(rule, rule.examples.path, line))
                    for expected, lines in ((True, rule.examples.fires), (False, rule.examples.passes))
                    for line in lines]
    return RuleCard(rule, agent.kind if agent is not None else None, routes, domains, examples)


def flags(rule: Rule, path: str, line: str) -> bool | None:
    """Whether the rule's pattern flags ``line`` added to ``path`` (its paths and exclude_paths
    apply), as the pattern agent matches it; None for a rule without a pattern."""
    if not rule.pattern:
        return None
    if rule.paths and not Globs(rule.paths).match(path):
        return False
    if rule.exclude_paths and Globs(rule.exclude_paths).match(path):
        return False
    try:
        return compile_pattern(rule.pattern).search(line.encode("utf-8")) is not None
    except PatternError:
        return None


def _trigger(kind: str, domains: Sequence[str], paths: Sequence[str], min_risk: int, pr_types: Sequence[str]) -> str:
    if kind == "domain":
        return f"domain: {', '.join(domains)}"
    if kind == "paths":
        return f"paths: {', '.join(paths)}"
    if kind == "risk":
        return f"risk >= {min_risk}"
    if kind == "pr_type":
        return f"pr_type: {', '.join(pr_types)}"
    return kind
