"""What a loop session pins at `loop start`, so the coder it drives cannot move the goalposts.

The configuration is the trusted side (docs/loop.md): a coder in automated mode that weakens a
rule instead of fixing the code must never get a GO. So the session records a digest of the
configuration in use (its parsed content, as ``config_sha`` hashes it for the run state, and
the bytes of every file the gate reads from its directory: the five files, the loop templates,
instructions, the constitution, the scripts its command agents run); a review whose
configuration differs is NO_GO, with a finding that names the files to restore.

The base is pinned too: the commit the first review would compare with (``--base`` or the
merge-base with the default branch), resolved once. Every review of the session compares the
working tree with that commit itself, so committing the change, moving the base branch or
checking out an older commit cannot empty (or hide part of) the change.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from review_gate import api, git, held
from review_gate.bootstrap import config_names
from review_gate.errors import ReviewGateError
from review_gate.state.freshness import config_sha

SKIPPED = {".gitignore"}  # in the config directory, but nothing the gate judges by


def config_pin(config_dir: str | None, root: Path) -> str:
    """The configuration at ``config_dir`` (None: the one found for ``root``) as JSON text:
    ``{"config": <config_sha>, "files": {name: sha256}}``; one that does not load is ``{"error": ...}``."""
    try:
        config = api.load(config_dir, root)
    except ReviewGateError as exc:
        return json.dumps({"error": exc.message}, sort_keys=True)
    files: dict[str, str | None] = {}
    directory = Path(config.directory) if config.directory is not None else None
    if directory is not None:
        for name in sorted(set(config_names(config, root)) - SKIPPED):
            files[name] = _file_sha(directory / name)
    return json.dumps({"config": config_sha(config), "files": {k: v for k, v in files.items() if v}},
                      sort_keys=True)


def _file_sha(path: Path) -> str | None:
    if not path.is_file() or held.in_use(path):  # never open the run state beside its connection
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def changed(pinned: str, now: str) -> list[str] | None:
    """None when the configuration is the pinned one; else the files that differ (possibly
    none by name: the parsed configuration differs, or it no longer loads)."""
    if pinned == now:
        return None
    before, after = json.loads(pinned), json.loads(now)
    old, new = before.get("files", {}), after.get("files", {})
    return sorted(name for name in {*old, *new} if old.get(name) != new.get(name))


def config_error(now: str) -> str | None:
    error = json.loads(now).get("error")
    return str(error) if error else None


def base_commit(root: Path, ref: str | None) -> str:
    """The commit a working-tree review would compare with now: the merge-base of ``ref`` (the
    default branch when None) and HEAD; git's empty tree in a repository without a commit."""
    return git.worktree_base(root, ref)
