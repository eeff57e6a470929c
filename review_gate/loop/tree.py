"""The artifact a GO locks: the git tree id of the working tree, as ``git add -A`` would stage it
(untracked files that git does not ignore included), computed in a throwaway copy of the index
so the user's own index is never touched. ``loop status`` compares it with the tree now."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from review_gate.change import git
from review_gate.errors import GitError


def _git(args: list[str], root: Path, env: dict[str, str]) -> str:
    result = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=False)
    if result.returncode != 0:
        lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {lines[-1] if lines else result.returncode}")
    return result.stdout.decode("utf-8", "replace").strip()


def tree_hash(root: Path) -> str:
    env = git.environment()
    index = Path(_git(["rev-parse", "--git-path", "index"], root, env))
    if not index.is_absolute():
        index = root / index
    with tempfile.TemporaryDirectory(prefix="review-gate-") as tmp:
        scratch = Path(tmp) / "index"
        if index.is_file():
            shutil.copyfile(index, scratch)
        env["GIT_INDEX_FILE"] = str(scratch)
        _git(["add", "--all", "--", "."], root, env)
        return _git(["write-tree"], root, env)


def changed_paths(root: Path) -> list[str]:
    """Paths the working tree changes against HEAD, untracked ones included (what a code
    approver is pointed at)."""
    env = git.environment()
    result = subprocess.run(["git", "status", "--porcelain=v1", "-z", "--untracked-files=all"], cwd=root, env=env,
                            capture_output=True, check=False)
    if result.returncode != 0:
        return []
    entries = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    paths: list[str] = []
    skip = False
    for entry in entries:
        if skip:  # the old path of a rename
            skip = False
            continue
        if len(entry) > 3:
            paths.append(entry[3:])
            skip = entry[0] in "RC"
    return paths
