"""Checks across the five files, after each one has passed its schema (DESIGN §4)."""

from __future__ import annotations

from collections.abc import Iterable

from review_gate.errors import ConfigProblem
from review_gate.globs import GlobError, check_glob
from review_gate.models import ReviewConfig
from review_gate.patterns import PatternError, compile_pattern

RULES, DOMAINS, AGENTS, COMPOSITION, GATE = (
    "review-rules.json", "review-domains.json", "review-agents.json",
    "review-composition.json", "review-gate.json",
)


def check_references(config: ReviewConfig) -> list[ConfigProblem]:
    """Every cross-file problem, in file order; an empty list means the config is sound."""
    src = config.sources
    problems: list[ConfigProblem] = []

    def add(file: str, pointer: str, message: str, fix: str) -> None:
        problems.append(ConfigProblem(src[file], pointer, message, fix))

    def unique(file: str, key: str, ids: Iterable[str]) -> None:
        seen: set[str] = set()
        for index, item_id in enumerate(ids):
            if item_id in seen:
                add(file, f"/{key}/{index}/id", f"duplicate id {item_id!r}", "give each entry its own id")
            seen.add(item_id)

    def globs(file: str, pointer: str, patterns: list[str]) -> None:
        for index, pattern in enumerate(patterns):
            try:
                check_glob(pattern)
            except GlobError as exc:
                add(file, f"{pointer}/{index}", f"bad glob: {exc}", "write a gitignore-style glob such as 'src/**/*.py'")

    def described(file: str, pointer: str, text: str) -> None:
        if not text.strip():
            add(file, pointer, "description is blank", "say in a sentence what this entry is for")

    agents = {a.id: a for a in config.agents.agents}
    domains = {d.id for d in config.domains.domains}
    unique(RULES, "rules", (r.id for r in config.rules.rules))
    unique(DOMAINS, "domains", (d.id for d in config.domains.domains))
    unique(AGENTS, "agents", (a.id for a in config.agents.agents))
    unique(COMPOSITION, "policies", (p.id for p in config.composition.policies))

    for i, domain in enumerate(config.domains.domains):
        described(DOMAINS, f"/domains/{i}/description", domain.description)
        globs(DOMAINS, f"/domains/{i}/paths", domain.paths)

    for i, agent in enumerate(config.agents.agents):
        described(AGENTS, f"/agents/{i}/description", agent.description)

    dispatched: set[str] = set()
    for i, policy in enumerate(config.composition.policies):
        at = f"/policies/{i}"
        described(COMPOSITION, f"{at}/description", policy.description)
        for j, agent_id in enumerate(policy.dispatch):
            dispatched.add(agent_id)
            if agent_id not in agents:
                add(COMPOSITION, f"{at}/dispatch/{j}", f"unknown agent {agent_id!r}",
                    f"add it to review-agents.json or use one of: {', '.join(sorted(agents))}")
        trigger = policy.trigger
        for j, domain_id in enumerate(trigger.domains):
            if domain_id not in domains:
                add(COMPOSITION, f"{at}/trigger/domains/{j}", f"unknown domain {domain_id!r}",
                    f"add it to review-domains.json or use one of: {', '.join(sorted(domains))}")
        globs(COMPOSITION, f"{at}/trigger/paths", trigger.paths)
        needs = {"domain": ("domains", trigger.domains), "paths": ("paths", trigger.paths),
                 "pr_type": ("pr_types", trigger.pr_types)}.get(trigger.type)
        if needs is not None and not needs[1]:
            add(COMPOSITION, f"{at}/trigger/{needs[0]}", f"a {trigger.type!r} trigger with no {needs[0]} never fires",
                f"list at least one entry in trigger.{needs[0]}")
    if not any(p.trigger.type == "always" for p in config.composition.policies):
        add(COMPOSITION, "/policies", "no policy with trigger type 'always'",
            "add one so that every change gets at least one reviewer")

    for i, rule in enumerate(config.rules.rules):
        at = f"/rules/{i}"
        described(RULES, f"{at}/description", rule.description)
        globs(RULES, f"{at}/paths", rule.paths)
        globs(RULES, f"{at}/exclude_paths", rule.exclude_paths)
        agent = agents.get(rule.agent)
        if agent is None:
            add(RULES, f"{at}/agent", f"unknown agent {rule.agent!r}",
                f"add it to review-agents.json or use one of: {', '.join(sorted(agents))}")
        elif rule.enabled and rule.agent not in dispatched:
            add(RULES, f"{at}/agent", f"orphan rule: no policy dispatches agent {rule.agent!r}",
                "add the agent to a policy's dispatch list in review-composition.json, or set \"enabled\": false")
        if rule.pattern is not None:
            try:
                compile_pattern(rule.pattern)
            except PatternError as exc:
                add(RULES, f"{at}/pattern", f"not a valid RE2 pattern: {exc}",
                    "RE2 has no look-around or backreferences; see https://github.com/google/re2/wiki/Syntax")
            if agent is not None and agent.kind != "pattern":
                add(RULES, f"{at}/pattern", f"agent {agent.id!r} is a {agent.kind} agent and ignores patterns",
                    "assign the rule to a pattern agent, or drop the pattern")
        elif agent is not None and agent.kind == "pattern":
            add(RULES, f"{at}", f"pattern agent {agent.id!r} needs a pattern to run this rule",
                "add an RE2 \"pattern\", or assign the rule to another agent")

    gap_detector = config.settings.gap_detector
    if gap_detector is not None:
        add(GATE, "/gap_detector", f"an LLM gap detector ({gap_detector!r}) needs the llm agent kind, "
            "which this version does not have", "remove gap_detector")
    return problems
