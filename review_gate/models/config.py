"""The five configuration files (DESIGN §4), as models; their JSON Schemas are generated from here.

The rules, the domains, the composition and the one table of the files are here; the values the
files share are in ``config_values.py``, the agents in ``agent_config.py``, review-gate.json in
``settings.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from pydantic import Field, PrivateAttr

from review_gate.models.agent_config import AgentsFile, CommandAgent, LlmAgent, PatternAgent
from review_gate.models.base import Frozen
from review_gate.models.config_values import ConfigFile, Id, Interpreter, PrType, Severity, Text
from review_gate.models.rule_context import Action, PathClass, PathClasses, Placeholders, RuleContext
from review_gate.models.settings import SettingsFile

GATE_AGENT = "review-gate"  # a rule of the gate itself: raised by the gate, not matched by an agent
INTENT_UNMET = "intent-unmet"  # a reviewer judged that the change does not do what its intent asks
GATE_RULES = frozenset({INTENT_UNMET})  # the rules whose agent is GATE_AGENT
PEER_TOOLS = ("noqa", "nosec", "eslint", "zizmor", "semgrep")
PeerCode = Annotated[str, Field(max_length=200, pattern=r"^(noqa|nosec|eslint|zizmor|semgrep):[A-Za-z0-9_./@-]+$")]


class RuleExamples(Frozen):
    fires: list[Text] = Field(default_factory=list, max_length=10, description="Added lines the rule flags.")
    passes: list[Text] = Field(default_factory=list, max_length=10,
                               description="Near misses: added lines like them that it does not flag.")
    path: str = Field(default="example.txt", min_length=1, description="The file the lines are in.")


class Rule(Frozen):
    id: Id
    name: Text
    severity: Severity
    agent: Id
    category: Text
    description: Text
    detection: Text
    recommendation: Text
    pattern: str | None = Field(
        default=None, description="RE2 pattern matched on each added line by a pattern agent."
    )
    paths: list[str] = Field(
        default_factory=list,
        description="gitignore-style globs; empty means every file. A script a domain claims by its #! line "
                    "(`shebangs`) is matched also as if it had the extensions of that domain's `*.ext` globs.",
    )
    exclude_paths: list[str] = Field(
        default_factory=list, description="gitignore-style globs of files the rule skips."
    )
    enabled: bool = True
    redact: bool = Field(
        default=False, description="Hide the matched text in messages (secrets must not reach CI logs)."
    )
    confidence: float | None = Field(
        default=None, ge=0, le=1, description="How sure a match of this rule is a real problem."
    )
    peers: list[PeerCode] = Field(
        default_factory=list, max_length=30,
        description="Codes of other tools' rules for the same problem, as TOOL:CODE (noqa:S501, nosec:B501, "
                    "eslint:no-eval, zizmor:unpinned-uses, semgrep:RULE-ID): that tool's suppression comment "
                    "naming the code waives this rule's finding on its line, reported as waived (a bare # nosec, "
                    "// eslint-disable-line, nosemgrep: only a warning or info finding).",
    )
    examples: RuleExamples | None = Field(
        default=None, description="Lines that show the rule: one it flags, and a near miss it does not "
                                  "(`review-gate rule ID` shows them).")
    path_classes: dict[PathClass, Action] | None = Field(
        default=None,
        description="What the rule does in test, fixture, example, docs, generated, vendored and minified files: "
                    "skip, keep, or a lower severity. Classes not named take the rules file's "
                    "`path_classes.default` (never for a rule of category `secrets`).")
    placeholders: Placeholders | None = Field(
        default=None, description="How a match that holds a placeholder, not a secret, is told apart (dropped).")
    contexts: list[RuleContext] = Field(
        default_factory=list, max_length=20,
        description="Contexts in which a finding is skipped or lowered (a library's own opt-out branch, a "
                    "version bump); the first that applies decides.")
    once_per_file: bool = Field(
        default=False, description="Report only the first finding of the rule in each file (one drop per migration).")


class RulesFile(ConfigFile):
    path_classes: PathClasses = Field(
        default_factory=PathClasses,
        description="Which files are tests, fixtures, examples, docs, generated, vendored or minified, and what a "
                    "rule that does not say otherwise does there.")
    rules: list[Rule]


class Domain(Frozen):
    id: Id
    description: Text
    paths: list[str] = Field(min_length=1, description="gitignore-style globs.")
    shebangs: list[Interpreter] = Field(
        default_factory=list, max_length=50,
        description="Interpreters whose `#!` line puts a file in this domain whatever its name (python3, bash, "
                    "node): the program named, or the one `env` runs. A name matches with or without its "
                    "version (python matches python3 and python3.12).",
    )
    risk_weight: int = Field(ge=0, le=10)
    pr_type: PrType | None = Field(
        default=None,
        description="The PR type a change is when every file it touches is in this domain.",
    )

    def claims(self, interpreter: str | None) -> bool:
        """Whether ``shebangs`` list ``interpreter`` (lower case), with or without its version."""
        if interpreter is None or not self.shebangs:
            return False
        wanted = {s.lower() for s in self.shebangs}
        # python3.12 is claimed by python3.12, python3 or python
        return not wanted.isdisjoint((interpreter, _MINOR.sub("", interpreter), _VERSION.sub("", interpreter)))

    def extensions(self) -> list[str]:
        """The extensions its ``*.ext`` globs select files by (``.py``)."""
        return [found.group(1) for glob in self.paths if (found := _EXTENSION.fullmatch(glob))]


_VERSION = re.compile(r"[0-9][0-9.]*$")
_MINOR = re.compile(r"\.[0-9.]*$")
_EXTENSION = re.compile(r"\*(\.[A-Za-z0-9_+-]+)")  # a glob that selects files by their extension alone


def script_names(path: str, interpreter: str | None, domains: Sequence[Domain], kind: str | None = None) -> list[str]:
    """The other names globs match a file by: a name that ends in spaces or dots is also the name
    without them (``python 'app.py '`` runs it, Windows drops them), an extension in capitals is
    also the extension in lower case (``UP.PY``), and a script is also its
    name with each extension of every domain that claims its interpreter (``bin/deploy`` run by
    python3 is ``bin/deploy.py`` too; none from a domain whose extension it already has), and a YAML
    file of a ``kind`` known by its content is also the name of that kind's usual place
    (``change.content_kind.aliases``: ``ci/build.yml`` holding a workflow is ``.github/workflows/build.yml``)."""
    bare = path.rstrip(" .")
    bare = bare if bare and not bare.endswith("/") else path
    dot = bare.rfind(".")
    if dot > bare.rfind("/") + 1:  # UP.PY is Python to Python (and to Windows): *.py matches it
        bare = bare[:dot] + bare[dot:].lower()
    names: dict[str, None] = {bare: None} if bare != path else {}
    names.update((alias, None) for alias in _kind_aliases(path, kind))
    if interpreter is None:
        return list(names)
    path = bare or path
    suffix = path[path.rfind("."):] if "." in path.rpartition("/")[2] else ""
    for domain in domains:
        if domain.claims(interpreter) and suffix not in (extensions := domain.extensions()):
            names.update((path + ext, None) for ext in extensions)
    return list(names)


def _kind_aliases(path: str, kind: str | None) -> list[str]:
    """The usual place of a file's content kind: ``.github/workflows/NAME``, ``k8s/PATH``,
    ``DIR/docker-compose.EXT`` (the content kinds of ``change.content_kind``)."""
    if kind is None:
        return []
    name = path.rpartition("/")[2]
    if kind == "github-workflow":
        return [f".github/workflows/{name}"]
    if kind == "kubernetes":
        return [f"k8s/{path}"]
    parent, _, _ = path.rpartition("/")
    suffix = name[name.rfind("."):] if "." in name else ".yml"
    return [f"{parent}/docker-compose{suffix}" if parent else f"docker-compose{suffix}"]


class DomainsFile(ConfigFile):
    domains: list[Domain]


class Trigger(Frozen):
    type: Literal["always", "domain", "risk", "paths", "pr_type"]
    domains: list[Id] = Field(default_factory=list)
    min_risk: int = Field(default=0, ge=0, le=100)
    paths: list[str] = Field(default_factory=list)
    pr_types: list[PrType] = Field(default_factory=list)


class Policy(Frozen):
    id: Id
    description: Text
    trigger: Trigger
    dispatch: list[Id] = Field(min_length=1)
    priority: int = Field(default=50, ge=0, le=100)


class CompositionFile(ConfigFile):
    policies: list[Policy]


RULES_FILE = "review-rules.json"
DOMAINS_FILE = "review-domains.json"
AGENTS_FILE = "review-agents.json"
COMPOSITION_FILE = "review-composition.json"
SETTINGS_FILE = "review-gate.json"


class FileKind(NamedTuple):
    field: str  # the ReviewConfig field that holds the file
    model: type[ConfigFile]


class ReviewConfig(Frozen):
    """The five files, loaded and checked, with where each one came from."""

    FILES: ClassVar[dict[str, FileKind]] = {
        RULES_FILE: FileKind("rules", RulesFile),
        DOMAINS_FILE: FileKind("domains", DomainsFile),
        AGENTS_FILE: FileKind("agents", AgentsFile),
        COMPOSITION_FILE: FileKind("composition", CompositionFile),
        SETTINGS_FILE: FileKind("settings", SettingsFile),
    }
    """File name -> where it goes: the one table of the config files, in the order they load."""

    rules: RulesFile
    domains: DomainsFile
    agents: AgentsFile
    composition: CompositionFile
    settings: SettingsFile
    directory: str | None = Field(description="The config directory, None for the built-in one.")
    sources: dict[str, str] = Field(description="File name -> path it was read from.")
    _digest: str | None = PrivateAttr(default=None)
    _hashed: dict[str, tuple[dict[str, Any] | None, list[dict[str, Any]]]] = PrivateAttr(default_factory=dict)

    def digest(self) -> str:
        """SHA-256 of what the five files say, as checked (not where they were read from): what a
        review pair's freshness, a shard's report and a loop's pin compare. Made once: dumping
        the whole configuration costs 30 ms, and a snapshot of it (``config.snapshot``) carries
        the digest to the next process."""
        if self._digest is None:
            data = self.model_dump(mode="json", exclude={"directory", "sources"})
            text = json.dumps(data, sort_keys=True).encode("utf-8", "surrogateescape")
            self._digest = hashlib.sha256(text).hexdigest()
        return self._digest

    def hashed(self, agent_id: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """What of agent ``agent_id`` its answers depend on, as JSON data: its entry (None when
        there is none) and its enabled rules (a review pair's freshness, ``state.freshness``).
        Left out of the entry: ``capabilities``, which change nothing it answers, and
        ``dimensions`` while unset, so an entry written before they existed keeps its SHA. Made
        once an agent, and carried by a snapshot as the digest is."""
        if agent_id not in self._hashed:
            spec = self.agent(agent_id)
            skip = {"capabilities"} | ({"dimensions"} if getattr(spec, "dimensions", None) is None else set())
            entry = spec.model_dump(mode="json", exclude=skip) if spec is not None else None
            self._hashed[agent_id] = (entry, [r.model_dump(mode="json") for r in self.rules_for(agent_id)])
        return self._hashed[agent_id]

    def file(self, name: str) -> ConfigFile:
        """The model of config file ``name`` (``review-gate.json`` -> ``settings``).

        >>> from review_gate.config import load_config
        >>> type(load_config(None).file("review-gate.json")).__name__
        'SettingsFile'
        """
        model: ConfigFile = getattr(self, self.FILES[name].field)
        return model

    def agent(self, agent_id: str) -> PatternAgent | CommandAgent | LlmAgent | None:
        return next((a for a in self.agents.agents if a.id == agent_id), None)

    def rules_for(self, agent_id: str) -> list[Rule]:
        return [r for r in self.rules.rules if r.agent == agent_id and r.enabled]

    def gate_rule(self, rule_id: str) -> Rule | None:
        """One of the gate's own rules (``GATE_RULES``) as the configuration sets it, enabled or not."""
        return next((r for r in self.rules.rules if r.id == rule_id and r.agent == GATE_AGENT), None)
