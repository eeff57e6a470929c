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
from collections import defaultdict
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from review_gate.models import AgentManifest, Gap, LlmAgent, PRClassification, PRFacts, ReviewConfig
from review_gate.models.manifest import config_snippet
from review_gate.pipeline.compose import policy_scope

if TYPE_CHECKING:
    import httpx


async def gap_detect(facts: PRFacts, classification: PRClassification, manifest: AgentManifest,
                     config: ReviewConfig, *, offline: bool = False,
                     http: httpx.AsyncClient | None = None) -> tuple[AgentManifest, list[Gap]]:
    """The manifest, amended by the LLM gap detector when one is configured and the run is not
    offline, and every gap: the deterministic ones, then the detector's. ``http``: the run's
    HTTP client (else the detector makes its own). The detector is bounded by its timeout and
    never breaks a run: a failure or a timeout is one ``gap_detector_failed`` gap."""
    gaps = missed(classification, manifest, config)
    detector = next((a for a in config.agents.agents if a.id == config.settings.gap_detector), None)
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


def missed(classification: PRClassification, manifest: AgentManifest, config: ReviewConfig) -> list[Gap]:
    """The gaps of the configuration, deterministic: changed files no domain claims (grouped by
    extension), touched domains no policy routes, dispatched agents the registry does not know,
    files named like configuration, and changed files no agent will see."""
    gaps: list[Gap] = []
    by_ext: dict[str, list[str]] = defaultdict(list)
    for path in classification.unclassified:
        suffix = PurePosixPath(path).suffix
        by_ext[f"**/*{suffix}" if suffix else path].append(path)
    for glob, paths in sorted(by_ext.items()):
        listed = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        name = (glob.rsplit(".", 1)[-1] if glob.startswith("**/*.")
                else PurePosixPath(glob).name.strip(".").replace(".", "-") or "other")
        gaps.append(Gap(
            kind="unclassified_file", subject=glob,
            reason=f"{len(paths)} changed file(s) match no domain: {listed}",
            suggestion="add to review-domains.json \"domains\": " + config_snippet(
                {"id": name.lower(), "description": f"{name} files", "paths": [glob], "risk_weight": 2}),
        ))
    routed = {d for p in config.composition.policies if p.trigger.type == "domain" for d in p.trigger.domains}
    # When the policies that fire on every file (always, or met by this change's risk or type)
    # already dispatch every enabled agent, a domain policy could add nothing: every domain is routed.
    on_every_file = {a for p in config.composition.policies if p.trigger.type != "domain"
                     and len(policy_scope(p, classification)) == len(classification.files) for a in p.dispatch}
    all_routed = {a.id for a in config.agents.agents if a.enabled} <= on_every_file
    for domain in classification.domains:
        if domain not in routed and not all_routed:
            gaps.append(Gap(
                kind="domain_without_policy", subject=domain,
                reason=f"domain {domain!r} was touched but no policy routes it to an agent",
                suggestion="add to review-composition.json \"policies\": " + config_snippet({
                    "id": f"{domain}-review", "description": f"Review changes in {domain}",
                    "trigger": {"type": "domain", "domains": [domain]},
                    "dispatch": ["<agent id>"], "priority": 50}),
            ))
    known = {a.id for a in config.agents.agents}
    for entry in manifest.entries:
        if entry.agent not in known:
            gaps.append(Gap(
                kind="unknown_agent", subject=entry.agent,
                reason=f"policies {', '.join(entry.policies)} dispatch {entry.agent!r}, which is not in the registry",
                suggestion=f"add an agent with id {entry.agent!r} to review-agents.json",
            ))
    named = [item.path for item in classification.files if PurePosixPath(item.path).name in ReviewConfig.FILES]
    if named:
        # The diff is untrusted: a change that edits a gate's policy must not slip by. (The
        # configuration in use is never reviewed at all; see review_gate.own_files.)
        listed = ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
        gaps.append(Gap(
            kind="config_changed", subject=named[0] if len(named) == 1 else f"{len(named)} files",
            reason=f"the change edits files named like review configuration ({listed}); a change can weaken "
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
