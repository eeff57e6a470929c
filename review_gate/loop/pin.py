"""What a loop session pins at `loop start`, so the coder it drives cannot move the goalposts.

The configuration is the trusted side (docs/loop.md): a coder in automated mode that weakens a
rule instead of fixing the code must never get a GO. So the session records a digest of the
configuration in use: its parsed content (as ``config_sha`` hashes it for the run state), the
bytes of every regular file under its directory (``config.identity.digests``: the five files,
templates, instructions, the scripts its command agents run and every module or package they
import from there; not the run state or the loop's own folders), and the bytes of the program
and script each reviewing command agent runs wherever they are (``agents.program``: a
``tools/lint.py`` of the working tree too). A review whose configuration differs is NO_GO,
with a finding that names the files to restore.

The base is pinned too: the commit the first review would compare with (``--base`` or the
merge-base with the default branch), resolved once. Every review of the session compares the
working tree with that commit itself, so committing the change, moving the base branch or
checking out an older commit cannot empty (or hide part of) the change.
"""

from __future__ import annotations

import json
from pathlib import Path

from review_gate import api
from review_gate.agents import program
from review_gate.change import git
from review_gate.change.input_files import regular_sha256
from review_gate.config.identity import digests
from review_gate.errors import ReviewGateError
from review_gate.models import CommandAgent, ReviewConfig
from review_gate.state.freshness import config_sha
from review_gate.state.location import companions, state_location

SKIPPED = {".gitignore"}  # in the config directory, but nothing the gate judges by
VERSION = 2  # pins written before (version 1) named only the files the configuration names


def config_pin(config_dir: str | None, root: Path) -> str:
    """The configuration at ``config_dir`` (None: the one found for ``root``) as JSON text:
    ``{"config": <config_sha>, "files": {name: sha256}, "programs": {agent: {path: sha256}},
    "pin": 2}``; one that does not load is ``{"error": ...}``."""
    try:
        config = api.load(config_dir, root)
        files = digests(config.directory, skip=companions(state_location(config, root)))
    except ReviewGateError as exc:
        return json.dumps({"error": exc.message}, sort_keys=True)
    return json.dumps({"config": config_sha(config), "pin": VERSION, "programs": _programs(config, root),
                       "files": {k: v for k, v in files.items() if k not in SKIPPED}}, sort_keys=True)


def _programs(config: ReviewConfig, root: Path) -> dict[str, str]:
    """"AGENT: PATH" -> SHA-256 of the program and script each command agent a policy dispatches
    runs (the coders and approvers of the loop itself are not reviewers: left out)."""
    dispatched = {agent for policy in config.composition.policies for agent in policy.dispatch}
    found = {}
    for agent in config.agents.agents:
        if not isinstance(agent, CommandAgent) or not agent.enabled or agent.id not in dispatched:
            continue
        try:
            runs = program.resolve(agent, root=str(root), config_dir=config.directory)
        except program.Refused as refused:
            found[f"{agent.id}: {refused.message}"] = "refused"
            continue
        for path in runs.files:
            found[f"{agent.id}: {path}"] = regular_sha256(path) or "missing"
    return found


def changed(pinned: str, now: str) -> list[str] | None:
    """None when the configuration is the pinned one; else the files (and programs) that differ
    (possibly none by name: the parsed configuration differs, or it no longer loads)."""
    if pinned == now:
        return None
    before, after = json.loads(pinned), json.loads(now)
    old, new = before.get("files", {}), after.get("files", {})
    if "pin" not in before and "error" not in before:  # an older pin: it named fewer files
        new = {name: sha for name, sha in new.items() if name in old}
        if before.get("config") == after.get("config") and old == new:
            return None
    names = {name for name in {*old, *new} if old.get(name) != new.get(name)}
    programs_before, programs_now = before.get("programs", {}), after.get("programs", {})
    if "pin" in before:
        names |= {name for name in {*programs_before, *programs_now}
                  if programs_before.get(name) != programs_now.get(name)}
    return sorted(names)


def config_error(now: str) -> str | None:
    error = json.loads(now).get("error")
    return str(error) if error else None


def base_commit(root: Path, ref: str | None) -> str:
    """The commit a working-tree review would compare with now: the merge-base of ``ref`` (the
    default branch when None) and HEAD; git's empty tree in a repository without a commit."""
    return git.worktree_base(root, ref)
