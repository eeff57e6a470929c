"""Stage 4: what the config missed. ``missed`` is the deterministic part (pure); ``gap_detect``
runs it, then the optional LLM gap detector (``llm.gap_detector``, an agent of the registry
named by ``gap_detector``), which may add agents to the manifest: each addition is a gap too.

    >>> from review_gate.config import load_config
    >>> from review_gate.models import AgentManifest, PRClassification
    >>> nothing = PRClassification(files=[], domains=[], unclassified=[], risk_score=0, risk_level="low",
    ...                            pr_type="mixed")
    >>> missed(nothing, AgentManifest(entries=[]), load_config(None))
    []
"""

from __future__ import annotations

import contextlib
import difflib
from collections import defaultdict
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from review_gate.config import gap_patches as patches
from review_gate.errors import UsageError
from review_gate.models import (
    Agent,
    AgentManifest,
    AgentRequest,
    Gap,
    LlmAgent,
    PRClassification,
    PRFacts,
    ReviewConfig,
)
from review_gate.models.config import COMPOSITION_FILE, DOMAINS_FILE
from review_gate.pipeline.boundary import checked, checked_all
from review_gate.pipeline.compose import policy_scope
from review_gate.text.escape import sanitize
from review_gate.text.globs import GlobError, Globs, check_glob

if TYPE_CHECKING:
    import httpx

ADDED_POLICY = "added"  # the manifest's policy for an agent a caller added (AgentRequest)


async def gap_detect(facts: PRFacts, classification: PRClassification, manifest: AgentManifest,
                     config: ReviewConfig, *, offline: bool = False, http: httpx.AsyncClient | None = None,
                     requests: Sequence[AgentRequest] = ()) -> tuple[AgentManifest, list[Gap]]:
    """The manifest, amended by the agents the caller adds (``requests``) and by the LLM gap
    detector when one is configured and the run is not offline, and every gap: the
    deterministic ones, the caller's additions, then the detector's. ``http``: the run's
    HTTP client (else the detector makes its own). The detector is bounded by its timeout and
    never breaks a run: a failure or a timeout is one ``gap_detector_failed`` gap."""
    amended, gaps = await _gap_detect(checked("gap_detect", facts), checked("gap_detect", classification),
                                      checked("gap_detect", manifest), config, offline=offline, http=http,
                                      requests=requests)
    return checked("gap_detect", amended), checked_all("gap_detect", gaps)


def asks_model(config: ReviewConfig, *, offline: bool) -> bool:
    """Whether ``gap_detect`` would call the LLM gap detector: not offline, and ``gap_detector``
    names an llm agent."""
    return not offline and isinstance(_detector(config), LlmAgent)


def _detector(config: ReviewConfig) -> Agent | None:
    return next((a for a in config.agents.agents if a.id == config.settings.gap_detector), None)


def deterministic_gaps(facts: PRFacts, classification: PRClassification, manifest: AgentManifest,
                       config: ReviewConfig, *, requests: Sequence[AgentRequest] = ()
                       ) -> tuple[AgentManifest, list[Gap]]:
    """``gap_detect`` of a run that asks no model (offline, or no ``gap_detector``): no event loop."""
    amended, gaps = _deterministic(checked("gap_detect", facts), checked("gap_detect", classification),
                                   checked("gap_detect", manifest), config, requests)
    return checked("gap_detect", amended), checked_all("gap_detect", gaps)


def _deterministic(facts: PRFacts, classification: PRClassification, manifest: AgentManifest,
                   config: ReviewConfig, requests: Sequence[AgentRequest]) -> tuple[AgentManifest, list[Gap]]:
    gaps = [*missed(classification, manifest, config), *nested(facts)]
    if requests:
        manifest, added = requested(classification, manifest, config, requests)
        gaps = [*gaps, *added]
    return manifest, gaps


async def _gap_detect(facts: PRFacts, classification: PRClassification, manifest: AgentManifest,
                      config: ReviewConfig, *, offline: bool, http: httpx.AsyncClient | None,
                      requests: Sequence[AgentRequest]) -> tuple[AgentManifest, list[Gap]]:
    manifest, gaps = _deterministic(facts, classification, manifest, config, requests)
    detector = _detector(config)
    if not isinstance(detector, LlmAgent) or offline:
        return manifest, gaps
    import anyio

    from review_gate.llm.client import new_client
    from review_gate.llm.gap_detector import detect, failed

    deadline = detector.timeout_s or config.settings.timeout_s
    async with contextlib.AsyncExitStack() as stack:
        client = http if http is not None else await stack.enter_async_context(new_client())
        with anyio.move_on_after(deadline):
            amended, added = await detect(facts, classification, manifest, config, detector, client)
            return amended, [*gaps, *added]
    return manifest, [*gaps, failed(detector, f"timed out after {deadline:g} s")]


def nested(facts: PRFacts) -> list[Gap]:
    """A gap per git repository the change adds inside this one (a gitlink: a nested repository
    in the working tree, or a new submodule): the change holds at most the commit it points to,
    so its own files are reviewed by nobody here."""
    return [Gap(kind="nested_repository", subject=change.path,
                reason="a git repository inside this one: the change holds at most the commit it points to, "
                       "and its own files were not reviewed",
                suggestion=f"review it in its own repository (run review-gate in {change.path}), or move "
                           "it out of this working tree or ignore it if it does not belong here")
            for change in facts.files if change.new_mode == "160000"]


def missed(classification: PRClassification, manifest: AgentManifest, config: ReviewConfig) -> list[Gap]:
    """The gaps of the configuration, deterministic: changed files no domain claims (grouped by
    extension), touched domains no policy routes, dispatched agents the registry does not know,
    files named like configuration, and changed files no agent will see. A gap that a config
    entry closes carries that entry as a patch (``review_gate.config.gap_patches``)."""
    gaps: list[Gap] = []
    by_glob: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in classification.unclassified:
        by_glob[patches.unclassified_glob(path)].append(path)
    for (glob, name), paths in sorted(by_glob.items()):
        listed = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        domain_entry, patch = patches.new_domain(glob, name or "other", config)
        gaps.append(Gap(
            kind="unclassified_file", subject=glob,
            reason=f"{len(paths)} changed file(s) match no domain: {listed}",
            suggestion=patches.suggestion(DOMAINS_FILE, "domains", domain_entry), patch=patch,
        ))
    routed = {d for p in config.composition.policies if p.trigger.type == "domain" for d in p.trigger.domains}
    # When the policies that fire on every file (always, or met by this change's risk or type)
    # already dispatch every enabled agent, a domain policy could add nothing: every domain is routed.
    on_every_file = {a for p in config.composition.policies if p.trigger.type != "domain"
                     and len(policy_scope(p, classification)) == len(classification.files) for a in p.dispatch}
    all_routed = {a.id for a in config.agents.agents if a.enabled} <= on_every_file
    for domain in classification.domains:
        if domain not in routed and not all_routed:
            gaps.append(_unrouted(domain, config))
    known = {a.id for a in config.agents.agents}
    for entry in manifest.entries:
        if entry.agent not in known:
            gaps.append(Gap(
                kind="unknown_agent", subject=entry.agent,
                reason=f"policies {', '.join(entry.policies)} dispatch {entry.agent!r}, which is not in the registry",
                # A config that names an unknown agent does not load, so no patch: `config validate` says where.
                suggestion=f"add an agent with id {entry.agent!r} to review-agents.json",
            ))
    named = [item.path for item in classification.files if PurePosixPath(item.path).name in ReviewConfig.FILES]
    if named:
        # The diff is untrusted: a change that edits a gate's policy must not slip by. (The
        # configuration in use is never reviewed at all; see review_gate.change.own_files.)
        count = named[0] if len(named) == 1 else f"{len(named)} files"
        gaps.append(Gap(
            kind="config_changed", subject=named[0] if len(named) == 1 else f"{len(named)} files", files=named,
            reason=f"the change edits files named like review configuration ({count}); a change can weaken "
                   "a gate that reviews it",
            suggestion="have a person review this edit; in CI, load the configuration from the base "
                       "branch (--config DIR from a trusted checkout)",
        ))
    covered = {f for entry in manifest.entries for f in entry.files}
    for item in classification.files:
        if item.path not in covered:
            gaps.append(Gap(
                kind="uncovered_file", subject=item.path,
                reason="no policy dispatches any agent for this file",
                suggestion="add a policy with trigger {\"type\": \"always\"} to review-composition.json",
            ))
    return gaps


def _unrouted(domain: str, config: ReviewConfig) -> Gap:
    reason = f"domain {domain!r} was touched but no policy routes it to an agent"
    made = patches.domain_policy(domain, config)
    if made is None:
        return Gap(kind="domain_without_policy", subject=domain, reason=reason,
                   suggestion=patches.suggestion(COMPOSITION_FILE, "policies", {
                       "id": f"{domain}-review", "description": f"Review changes in {domain}",
                       "trigger": {"type": "domain", "domains": [domain]}, "dispatch": ["<agent id>"],
                       "priority": 50}))
    policy, patch = made
    return Gap(kind="domain_without_policy", subject=domain, reason=reason,
               suggestion=patches.suggestion(COMPOSITION_FILE, "policies", policy), patch=patch)


def check_requests(requests: Sequence[AgentRequest], config: ReviewConfig) -> None:
    """Agents a caller adds must be enabled agents of the registry, with a reason and a usable glob."""
    known = sorted(a.id for a in config.agents.agents)
    for request in requests:
        spec = config.agent(request.agent)
        if spec is None:
            close = difflib.get_close_matches(request.agent, known, n=3, cutoff=0.6)
            hint = f"did you mean {' or '.join(close)}? " if close else ""
            raise UsageError(f"added agent {request.agent!r} is not in the registry (review-agents.json)",
                             fix=f"{hint}the agents are: {', '.join(known)}")
        if not spec.enabled:
            raise UsageError(f"added agent {request.agent!r} is disabled (\"enabled\": false in review-agents.json)",
                             fix="enable it, or add another agent")
        if not request.reason.strip():
            raise UsageError(f"added agent {request.agent!r} has an empty reason",
                             fix="say why the change needs this agent")
        if request.glob is not None:
            try:
                check_glob(request.glob)
            except GlobError as exc:
                raise UsageError(f"added agent {request.agent!r}: glob {request.glob!r} is not usable: {exc}",
                                 fix="give a gitignore-style glob such as 'src/**/*.py'") from None


def requested(classification: PRClassification, manifest: AgentManifest, config: ReviewConfig,
              requests: Sequence[AgentRequest]) -> tuple[AgentManifest, list[Gap]]:
    """The manifest with the agents a caller added (each over the changed files its glob selects,
    all of them without one), and one ``agent_addition`` gap for each that changed it, with the
    caller's reason and the policy that would make it permanent. Applied as the LLM gap
    detector's additions are: a new agent is an entry of policy ``added``; one already
    dispatched gets the files it did not have."""
    from review_gate.llm.gap_detector import Addition, apply

    check_requests(requests, config)
    changed = [f.path for f in classification.files]
    gaps = []
    for request in requests:
        files = Globs([request.glob]).select(changed) if request.glob is not None else changed
        if request.glob is not None and not files:
            raise UsageError(f"added agent {request.agent!r}: glob {request.glob!r} matches none of the "
                             f"{len(changed)} changed files",
                             fix="give a glob that selects changed files, or none to add the agent for every one")
        if not files:  # an empty change: nothing to review, nothing missed
            continue
        addition = Addition(request.agent, sorted(files), " ".join(request.reason.split()))
        manifest, effective = apply(manifest, [addition], policy=ADDED_POLICY)
        for addition in effective:
            globs = [request.glob] if request.glob is not None else patches.scope_globs(addition.files)
            # the caller's reason documents the policy; its control characters are shown, never kept
            description = sanitize(f"Send these files to {addition.agent}: {addition.reason}")[:300]
            policy, patch = patches.agent_policy(addition.agent, globs, config, suffix="added", description=description)
            gaps.append(Gap(kind="agent_addition", subject=addition.agent, reason=addition.reason,
                            suggestion=patches.suggestion(COMPOSITION_FILE, "policies", policy), patch=patch))
    return manifest, gaps
