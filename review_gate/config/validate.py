"""Checks across the five files, after each one has passed its schema (DESIGN §4)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from review_gate.config.locations import find_config_file
from review_gate.config.messages import show, suggest
from review_gate.config.rule_settings import check_path_classes, check_rule
from review_gate.errors import ConfigProblem
from review_gate.models import Agent, CommandAgent, LlmAgent, ReviewConfig, Rule
from review_gate.models.config import (
    AGENTS_FILE,
    COMPOSITION_FILE,
    DOMAINS_FILE,
    GATE_AGENT,
    GATE_RULES,
    RULES_FILE,
    SETTINGS_FILE,
)
from review_gate.models.loop import MANUAL, SKIP, named_agents, role_problem
from review_gate.text.escape import sanitize
from review_gate.text.globs import GlobError, Globs, check_glob
from review_gate.text.interpreters import script_at
from review_gate.text.regex import PatternError, compile_pattern

RE2_SYNTAX = "https://github.com/google/re2/wiki/Syntax"
GLOB_EXAMPLE = "'src/**/*.py'"


def check_references(config: ReviewConfig) -> list[ConfigProblem]:
    """Every cross-file problem, in file order; an empty list means the config is sound."""
    found = _Problems(config)
    found.unique(RULES_FILE, "rules", (r.id for r in config.rules.rules))
    found.unique(DOMAINS_FILE, "domains", (d.id for d in config.domains.domains))
    found.unique(AGENTS_FILE, "agents", (a.id for a in config.agents.agents))
    found.unique(COMPOSITION_FILE, "policies", (p.id for p in config.composition.policies))
    _domains(config, found)
    _agents(config, found)
    dispatched = _policies(config, found)
    _rules(config, found, dispatched)
    _settings(config, found)
    _loop(config, found)
    return found.problems


def file_problems(config: ReviewConfig) -> list[ConfigProblem]:
    """The checks of ``check_references`` that look past the five files, at the files they name:
    what a configuration checked before (``config.snapshot``) is checked for again."""
    found = _Problems(config)
    for i, agent in enumerate(config.agents.agents):
        if isinstance(agent, LlmAgent):
            _instructions(config, found, i, agent)
        elif isinstance(agent, CommandAgent) and agent.enabled:
            _command_files(config, found, i, agent)
    _constitution(config, found)
    return found.problems


def _command_files(config: ReviewConfig, found: _Problems, i: int, agent: CommandAgent) -> None:
    """The program a command agent names by its path, and the script its interpreter runs, exist
    (a missing one was a run-time failure of every review). Checked where the configuration can
    tell: an absolute path, one relative to the configuration directory (``cwd: config``), or
    under ``.review-gate/`` of the repository the configuration directory is in (``cwd: repo``)."""
    if config.directory is None:
        return
    directory = Path(config.directory)
    root = directory.parent if directory.name == ".review-gate" else None
    at = [0] if "/" in agent.command[0] else []
    if (script := script_at(agent.command)) is not None:
        at.append(script)
    for index in at:
        word = agent.command[index]
        base = directory if agent.cwd == "config" else root
        path = Path(word) if Path(word).is_absolute() else base / word if base is not None else None
        if path is not None and not path.is_file():
            what = "program" if index == 0 else "script"
            where = "the configuration directory" if agent.cwd == "config" else "the repository"
            found.add(AGENTS_FILE, f"/agents/{i}/command/{index}",
                      f"agent {show(agent.id)}: its {what} {show(word)} does not exist ({path})",
                      f"create it, or correct the path (relative to {where}, as cwd: {agent.cwd} says)")


class _Problems:
    """The problems found so far, and the checks every file shares."""

    def __init__(self, config: ReviewConfig) -> None:
        self.sources = config.sources
        self.problems: list[ConfigProblem] = []

    def add(self, file: str, pointer: str, message: str, fix: str) -> None:
        self.problems.append(ConfigProblem(self.sources[file], pointer, message, fix))

    def unique(self, file: str, key: str, ids: Iterable[str]) -> None:
        first: dict[str, int] = {}
        for index, item_id in enumerate(ids):
            if item_id in first:
                self.add(file, f"/{key}/{index}/id",
                         f"duplicate id {show(item_id)}: /{key}/{first[item_id]} already has it",
                         "rename one of them; ids must be unique within the file")
            first.setdefault(item_id, index)

    def globs(self, file: str, pointer: str, patterns: list[str]) -> None:
        try:
            Globs(patterns)  # one compile per list, the same one classify reuses from the cache
            return
        except GlobError:
            pass
        for index, pattern in enumerate(patterns):
            try:
                check_glob(pattern)
            except GlobError as exc:
                self.add(file, f"{pointer}/{index}", *glob_problem(pattern, exc))

    def described(self, file: str, pointer: str, text: str) -> None:
        if not text.strip():
            self.add(file, pointer, "description is blank", "say in a sentence what this entry is for")


def _known(names: Iterable[str], value: str, where: str) -> str:
    options = sorted(names)
    if not options:
        return f"add it to {where}"
    return f"{suggest(value, options)}add it to {where} or use one of: {', '.join(options)}"


def _domains(config: ReviewConfig, found: _Problems) -> None:
    for i, domain in enumerate(config.domains.domains):
        found.described(DOMAINS_FILE, f"/domains/{i}/description", domain.description)
        found.globs(DOMAINS_FILE, f"/domains/{i}/paths", domain.paths)


def _agents(config: ReviewConfig, found: _Problems) -> None:
    for i, agent in enumerate(config.agents.agents):
        found.described(AGENTS_FILE, f"/agents/{i}/description", agent.description)
        if agent.on_failure == "fail_open" and agent.required:
            found.add(AGENTS_FILE, f"/agents/{i}/on_failure",
                      f"agent {show(agent.id)} is required, and a required agent that fails always makes the gate "
                      "incomplete: 'on_failure' fail_open would change nothing",
                      'set "required": false to let it fail open, or remove "on_failure"')
        if isinstance(agent, LlmAgent):
            _llm_agent(config, found, i, agent)
        elif isinstance(agent, CommandAgent) and agent.enabled:
            _command_files(config, found, i, agent)
        if isinstance(agent, CommandAgent) and agent.dimensions is not None and agent.output != "dimensions":
            found.add(AGENTS_FILE, f"/agents/{i}/dimensions",
                      f"'dimensions' maps dimension verdicts, but agent {show(agent.id)} prints "
                      f"{show(agent.output)}", 'set "output": "dimensions", or remove \'dimensions\'')


def _llm_agent(config: ReviewConfig, found: _Problems, i: int, agent: LlmAgent) -> None:
    at = f"/agents/{i}"
    if agent.provider == "anthropic" and not agent.api_key_env:
        found.add(AGENTS_FILE, f"{at}/api_key_env", "an anthropic agent needs 'api_key_env'",
                  'name the environment variable that holds the key, e.g. "api_key_env": "ANTHROPIC_API_KEY"')
    _instructions(config, found, i, agent)
    for key, message, fix in request_problems(agent):
        found.add(AGENTS_FILE, f"{at}/{key}", message, fix)


def _instructions(config: ReviewConfig, found: _Problems, i: int, agent: LlmAgent) -> None:
    if find_config_file(agent.instructions, config.directory) is None:
        where = f"{config.directory}" if config.directory else "the built-in config directory"
        found.add(AGENTS_FILE, f"/agents/{i}/instructions",
                  f"instructions file {show(agent.instructions)} not found in {where}",
                  "write the agent's instructions in a Markdown file and give its path relative to the "
                  "config directory")


def _policies(config: ReviewConfig, found: _Problems) -> set[str]:
    """Check the policies; return the ids of the agents they dispatch."""
    agents = {a.id for a in config.agents.agents}
    domains = {d.id for d in config.domains.domains}
    dispatched: set[str] = set()
    for i, policy in enumerate(config.composition.policies):
        at = f"/policies/{i}"
        found.described(COMPOSITION_FILE, f"{at}/description", policy.description)
        for j, agent_id in enumerate(policy.dispatch):
            dispatched.add(agent_id)
            if agent_id not in agents:
                found.add(COMPOSITION_FILE, f"{at}/dispatch/{j}", f"unknown agent {show(agent_id)}",
                          _known(agents, agent_id, AGENTS_FILE))
        trigger = policy.trigger
        for j, domain_id in enumerate(trigger.domains):
            if domain_id not in domains:
                found.add(COMPOSITION_FILE, f"{at}/trigger/domains/{j}", f"unknown domain {show(domain_id)}",
                          _known(domains, domain_id, DOMAINS_FILE))
        found.globs(COMPOSITION_FILE, f"{at}/trigger/paths", trigger.paths)
        needs = {"domain": ("domains", trigger.domains), "paths": ("paths", trigger.paths),
                 "pr_type": ("pr_types", trigger.pr_types)}.get(trigger.type)
        if needs is not None and not needs[1]:
            found.add(COMPOSITION_FILE, f"{at}/trigger/{needs[0]}",
                      f"a {show(trigger.type)} trigger with no {needs[0]} never fires",
                      f"list at least one entry in trigger.{needs[0]}")
    if not any(p.trigger.type == "always" for p in config.composition.policies):
        found.add(COMPOSITION_FILE, "/policies", "no policy has a trigger of type 'always'",
                  'add one, e.g. {"id": "baseline", "trigger": {"type": "always"}, ...}, so that every '
                  "change gets at least one reviewer")
    return dispatched


def _rules(config: ReviewConfig, found: _Problems, dispatched: set[str]) -> None:
    agents = {a.id: a for a in config.agents.agents}
    check_path_classes(config.rules, lambda pointer, message, fix: found.add(RULES_FILE, pointer, message, fix))
    for i, rule in enumerate(config.rules.rules):
        at = f"/rules/{i}"
        found.described(RULES_FILE, f"{at}/description", rule.description)
        found.globs(RULES_FILE, f"{at}/paths", rule.paths)
        found.globs(RULES_FILE, f"{at}/exclude_paths", rule.exclude_paths)
        owner = agents.get(rule.agent)
        if rule.agent == GATE_AGENT and owner is None:
            if rule.id not in GATE_RULES:
                found.add(RULES_FILE, f"{at}/agent", f"rule {show(rule.id)}: the gate raises only its own rules "
                          f"({', '.join(sorted(GATE_RULES))}), not one it does not know",
                          "assign the rule to an agent of review-agents.json")
        elif owner is None:
            found.add(RULES_FILE, f"{at}/agent", f"unknown agent {show(rule.agent)}",
                      _known(agents, rule.agent, AGENTS_FILE))
        elif rule.enabled and rule.agent not in dispatched:
            found.add(RULES_FILE, f"{at}/agent",
                      f"orphan rule: no policy dispatches agent {show(rule.agent)}, so the rule never runs",
                      f"add {show(rule.agent)} to a policy's 'dispatch' list in {COMPOSITION_FILE}, "
                      'or set "enabled": false on the rule')
        check_rule(rule, at, lambda pointer, message, fix: found.add(RULES_FILE, pointer, message, fix))
        if rule.pattern is not None:
            _rule_pattern(found, at, rule, owner)
        elif owner is not None and owner.kind == "pattern":
            found.add(RULES_FILE, at,
                      f"missing 'pattern': {show(owner.id)} is a pattern agent and needs one to run this rule",
                      "add an RE2 'pattern', or assign the rule to another agent")


def _rule_pattern(found: _Problems, at: str, rule: Rule, owner: Agent | None) -> None:
    assert rule.pattern is not None
    try:
        if not rule.pattern:
            found.add(RULES_FILE, f"{at}/pattern",
                      f"rule {show(rule.id)} has an empty pattern, which matches every line",
                      "write the RE2 pattern the rule looks for, or remove 'pattern'")
        else:
            compile_pattern(rule.pattern)
    except PatternError as exc:
        message, fix = pattern_problem(exc)
        found.add(RULES_FILE, f"{at}/pattern", f"{message} (rule {show(rule.id)})", fix)
    if owner is not None and owner.kind != "pattern":
        found.add(RULES_FILE, f"{at}/pattern",
                  f"agent {show(owner.id)} is a {owner.kind} agent and ignores patterns",
                  "assign the rule to a pattern agent, or drop the pattern")


def _constitution(config: ReviewConfig, found: _Problems) -> None:
    constitution = config.settings.constitution
    if constitution is not None and config.directory is not None \
            and not (Path(config.directory) / constitution).is_file():
        found.add(SETTINGS_FILE, "/constitution",
                  f"constitution file {show(constitution)} not found in {config.directory}",
                  "give the path of a Markdown file relative to the config directory, or remove 'constitution'")


def _settings(config: ReviewConfig, found: _Problems) -> None:
    _constitution(config, found)
    found.globs(SETTINGS_FILE, "/private_paths", config.settings.private_paths)
    _unpriced(config, found)
    gap_detector = config.settings.gap_detector
    if gap_detector is None:
        return
    detector = {a.id: a for a in config.agents.agents}.get(gap_detector)
    llm_ids = sorted(a.id for a in config.agents.agents if isinstance(a, LlmAgent))
    if detector is None:
        found.add(SETTINGS_FILE, "/gap_detector", f"gap_detector: unknown agent {show(gap_detector)}",
                  _known(llm_ids, gap_detector, f"{AGENTS_FILE} as an agent of kind 'llm'")
                  + ", or remove 'gap_detector'")
    elif not isinstance(detector, LlmAgent):
        found.add(SETTINGS_FILE, "/gap_detector",
                  f"gap_detector {show(gap_detector)} is a {detector.kind} agent; the gap detector must be an "
                  "'llm' agent",
                  (f"use one of the llm agents: {', '.join(llm_ids)}" if llm_ids
                   else f"add an agent of kind 'llm' to {AGENTS_FILE} and name it") + ", or remove 'gap_detector'")
    elif detector.tools:
        index = config.agents.agents.index(detector)
        found.add(AGENTS_FILE, f"/agents/{index}/tools",
                  f"agent {show(gap_detector)} is the gap_detector, which reads the change and the manifest only: "
                  "it never calls tools",
                  f"remove 'tools' from {show(gap_detector)}, or name another llm agent as gap_detector in "
                  f"{SETTINGS_FILE}")


def _unpriced(config: ReviewConfig, found: _Problems) -> None:
    """With a cost budget, every model an enabled llm agent calls has a price: the budget cannot
    bound what a model with none spends (its cost would count as $0)."""
    if config.settings.max_cost_usd is None:
        return
    prices = config.settings.prices
    unpriced = sorted({a.model for a in config.agents.agents if isinstance(a, LlmAgent) and a.enabled
                       and a.model not in prices})
    if unpriced:
        users = sorted(a.id for a in config.agents.agents if isinstance(a, LlmAgent) and a.model in unpriced)
        found.add(SETTINGS_FILE, "/max_cost_usd",
                  f"max_cost_usd {config.settings.max_cost_usd:g}: model(s) {', '.join(map(show, unpriced))} "
                  f"(of {', '.join(users)}) have no price, so what they spend cannot be bounded",
                  f'give each a price in review-gate.json, e.g. "prices": {{{json.dumps(unpriced[0][:100])}: '
                  '{"input_per_mtok": 3, "output_per_mtok": 15, "as_of": "YYYY-MM-DD"}}, or remove max_cost_usd')


def _loop(config: ReviewConfig, found: _Problems) -> None:
    """The agents ``loop`` names exist, are enabled and can do the job (as ``loop start`` checks)."""
    agents = {a.id: a for a in config.agents.agents}
    able = sorted(a.id for a in config.agents.agents if a.kind in ("command", "llm"))
    for key, phase, role, agent_id in named_agents(config.settings.loop):
        pointer = "/loop/phases/" + key.replace(".", "/")
        agent = agents.get(agent_id)
        either = f"{SKIP} or {MANUAL}" if role == "approver" else MANUAL
        if agent is None:
            found.add(SETTINGS_FILE, pointer, f"loop {key}: unknown agent {show(agent_id)}",
                      _known(able, agent_id, f"{AGENTS_FILE} as a command agent") + f", or use {either}")
        elif not agent.enabled:
            found.add(SETTINGS_FILE, pointer, f"loop {key}: agent {show(agent_id)} is disabled",
                      f"set \"enabled\": true on it in {AGENTS_FILE}, or name another {role}")
        elif (why := role_problem(agent.kind, phase, role)) is not None:
            found.add(SETTINGS_FILE, pointer, f"loop {key}: agent {show(agent_id)} cannot be the {role}: {why}",
                      f"name a command agent (a coding CLI that reads the prompt on stdin), or use {either}")


def request_problems(agent: LlmAgent) -> list[tuple[str, str, str]]:
    """(key, problem, fix) for request settings the agent's provider or model would refuse (HTTP 400)."""
    model = show(agent.model)
    if agent.provider == "anthropic":
        return [(key, f"'{key}' is for openai reasoning models; this agent's provider is anthropic",
                 f'remove "{key}"') for key in ("reasoning", "reasoning_effort") if getattr(agent, key)]
    problems = []
    if agent.reasoning_effort is not None and not agent.is_reasoning:
        detected = "is set false" if agent.reasoning is False else f"is not detected for model {model}"
        problems.append(("reasoning_effort", f"'reasoning_effort' is for reasoning models, and 'reasoning' {detected}",
                         f'set "reasoning": true if {model} is a reasoning model, else remove "reasoning_effort"'))
    if agent.temperature is not None and agent.is_reasoning:
        how = "set" if agent.reasoning else f"detected from the model name {model}"
        problems.append(("temperature", f"a reasoning model ('reasoning' {how}) takes only its default temperature",
                         f'remove "temperature", or set "reasoning": false if {model} is not a reasoning model'))
    return problems


def glob_problem(pattern: str, exc: GlobError) -> tuple[str, str]:
    """Message and fix for a glob that pathspec refuses."""
    if not pattern.strip():
        return (f"empty glob {show(pattern)} matches nothing",
                f"remove it, or write a gitignore-style glob such as {GLOB_EXAMPLE}")
    if pattern.lstrip().startswith("#"):
        return (f"glob {show(pattern)} is a comment in gitignore syntax and matches nothing",
                "remove it, or write \\# to match a name that starts with '#'")
    trailing = len(pattern) - len(pattern.rstrip("\\"))
    if trailing % 2 == 1:
        return (f"invalid glob {show(pattern)}: a trailing backslash escapes nothing",
                "remove the backslash (globs separate folders with '/'), or double it to match "
                "a literal backslash")
    return (f"invalid glob {show(pattern)}: {exc}",
            f"write a gitignore-style glob such as {GLOB_EXAMPLE}")


def pattern_problem(exc: PatternError) -> tuple[str, str]:
    """Message and fix for a rule pattern that RE2 refuses."""
    reason = sanitize(str(exc))
    message = f"not a valid RE2 pattern: {reason}"
    if any(op in reason for op in ("(?<=", "(?<!", "(?=", "(?!")):
        return message, ("RE2 has no look-ahead or look-behind; match the surrounding text as "
                         f"part of the pattern instead (syntax: {RE2_SYNTAX})")
    if "(?P=" in reason or reason.endswith("(?P") or any(f"\\{d}" in reason for d in "123456789"):
        return message, f"RE2 has no backreferences; spell the repeated text out (syntax: {RE2_SYNTAX})"
    if "missing )" in reason or "unexpected )" in reason:
        return message, "balance the parentheses, or escape a literal one as \\( or \\)"
    return message, f"fix the regular expression (syntax: {RE2_SYNTAX})"
