"""Which (file, agent) pairs a run can reuse, and how cached and new results merge. Pure.

A pair is fresh when a completed (or itself cached) pair of an earlier run has the same file,
agent, input SHA, agent SHA and model id. The input SHA covers what the agent was shown of the
file, not only the file: agents judge the lines a diff adds, and those depend on the base, so
the same file reviewed against another base is another input. The agent SHA covers its entry,
its rules and what else shapes its answer (an llm agent's instructions and the Standards).
Each agent also has one scope pair (file '') whose SHA covers its whole scope: it carries the
findings the agent reported without a file, which are reused only when the whole scope is
unchanged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from review_gate.models import (
    AgentManifest,
    AgentResult,
    FileChange,
    Finding,
    ManifestEntry,
    PRFacts,
    ReviewConfig,
)
from review_gate.models.config import script_names

SCOPE = ""  # the file name of an agent's scope pair

# (file, input SHA) -> (findings, run id) of the newest reusable pair, for one agent/agent SHA/model
Known = Mapping[tuple[str, str], tuple[list[Finding], str]]
Lookup = Callable[[str, str, str], Known]


def _sha(data: str) -> str:
    return hashlib.sha256(data.encode("utf-8", "surrogateescape")).hexdigest()


def agent_sha(config: ReviewConfig, agent_id: str, extra: str = "") -> str:
    """The agent's entry and rules (``ReviewConfig.hashed``), and ``extra``: any other text its
    answer depends on."""
    entry, rules = config.hashed(agent_id)
    return _sha(json.dumps({"agent": entry, "rules": rules, "extra": extra}, sort_keys=True))


def config_sha(config: ReviewConfig) -> str:
    return config.digest()


def file_sha(change: FileChange) -> str:
    """The new content's git blob id when the diff carries it (recorded, not a freshness key)."""
    return change.content_sha or _sha(change.patch)


def input_sha(change: FileChange, names: Sequence[str] = ()) -> str:
    """What an agent is shown of a file: its section of the diff (added lines, their numbers,
    context and removed lines) and the new content's id; and for a script, the other ``names``
    its rules' globs match it by (``models.config.script_names``: they follow the domains)."""
    shown = change.patch + "\0" + (change.content_sha or "")
    if change.secrets_only:  # read by the secret rules only: not the review the file gets as code
        shown += "\0secrets_only"
    return _sha(shown + "".join("\0" + name for name in names) if names else shown)


def model_id(config: ReviewConfig, agent_id: str) -> str:
    spec = config.agent(agent_id)
    return str(getattr(spec, "model", None) or "")


@dataclass
class AgentCache:
    """One manifest entry: its keys, the findings reused, and the files still to review."""

    entry: ManifestEntry
    kind: str
    required: bool
    agent_sha: str
    model_id: str
    file_shas: dict[str, str]
    input_shas: dict[str, str]
    scope_sha: str
    reused: dict[str, tuple[list[Finding], str]] = field(default_factory=dict)  # file -> (findings, run)
    scope_reused: tuple[list[Finding], str] | None = None
    stale: list[str] = field(default_factory=list)

    @property
    def cached(self) -> bool:
        """Nothing to call: every file and the scope itself are fresh."""
        return not self.stale and self.scope_reused is not None

    def cached_findings(self) -> list[Finding]:
        found = [f for path in self.entry.files if path in self.reused for f in self.reused[path][0]]
        return found + (self.scope_reused[0] if self.scope_reused and not self.stale else [])


@dataclass
class CacheSplit:
    """What to dispatch (the stale part of the manifest) and how to merge it with the cache."""

    agents: list[AgentCache]
    manifest: AgentManifest

    def merge(self, dispatched: list[AgentResult]) -> list[AgentResult]:
        """One result per original entry, in manifest order: cached ones built, the rest merged."""
        by_agent = {r.id: r for r in dispatched}
        out = []
        for cache in self.agents:
            entry = cache.entry
            if cache.cached:
                out.append(AgentResult(id=entry.agent, kind=cache.kind, status="cached", required=cache.required,
                                       attempts=0, duration_s=0.0, files=entry.files,
                                       findings=cache.cached_findings()))
                continue
            result = by_agent[entry.agent]
            if cache.reused:
                findings = [*cache.cached_findings(), *result.findings] if result.status == "completed" else []
                result = result.model_copy(update={"files": entry.files, "findings": findings})
            out.append(result)
        return out

def plan_reuse(manifest: AgentManifest, facts: PRFacts, config: ReviewConfig, lookup: Lookup | None,
               extras: Mapping[str, str] | None = None) -> CacheSplit:
    """Split the manifest into fresh pairs (reused) and stale ones (to dispatch).

    ``lookup(agent, agent_sha, model_id)`` returns the reusable pairs; None means no cache
    (--no-cache): every pair is stale, but the keys are still computed so the run is recorded.
    ``extras``: agent id -> other text its answer depends on, folded into its agent SHA.
    """
    contents = {f.path: file_sha(f) for f in facts.files}
    domains = config.domains.domains
    inputs = {f.path: input_sha(f, script_names(f.path, f.interpreter, domains, f.content_kind)) for f in facts.files}
    caches = []
    for entry in manifest.entries:
        spec = config.agent(entry.agent)
        input_shas = {p: inputs.get(p, "") for p in entry.files}
        scope = _sha(json.dumps(sorted(input_shas.items())))
        cache = AgentCache(entry=entry, kind=spec.kind if spec else "unknown", required=spec.required if spec else True,
                         agent_sha=agent_sha(config, entry.agent, (extras or {}).get(entry.agent, "")),
                         model_id=model_id(config, entry.agent),
                         file_shas={p: contents.get(p, "") for p in entry.files}, input_shas=input_shas,
                         scope_sha=scope)
        known = lookup(entry.agent, cache.agent_sha, cache.model_id) if lookup and spec and spec.enabled else {}
        for path in entry.files:
            hit = known.get((path, input_shas[path]))
            if hit is not None:
                cache.reused[path] = hit
            else:
                cache.stale.append(path)
        cache.scope_reused = known.get((SCOPE, scope))
        if not cache.stale and cache.scope_reused is None:
            # Every file is fresh but the scope changed (a file left the diff): what the agent
            # said about the scope as a whole may no longer hold, so it reviews it all again.
            cache.reused.clear()
            cache.stale = list(entry.files)
        caches.append(cache)
    to_run = [p.entry.model_copy(update={"files": p.stale}) for p in caches if not p.cached]
    return CacheSplit(agents=caches, manifest=AgentManifest(entries=to_run))
