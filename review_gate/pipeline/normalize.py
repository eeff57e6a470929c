"""Stage 1: a diff (file, stdin or git range) -> PRFacts."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import anyio.to_thread

from review_gate import git
from review_gate.diff import parse_diff
from review_gate.errors import GitError, InputError, UsageError
from review_gate.models import Commit, PRFacts
from review_gate.models.base import Frozen


class DiffRequest(Frozen):
    """What to review. ``mode`` picks the source; the other fields apply to some modes."""

    mode: Literal["worktree", "staged", "range", "file", "stdin"]
    repo_root: str | None = None
    base: str | None = None
    head: str | None = None
    path: str | None = None
    stdin_data: bytes | None = None


async def normalize(request: DiffRequest) -> PRFacts:
    """Read the diff the request names and parse it.

    >>> import anyio
    >>> facts = anyio.run(normalize, DiffRequest(mode="stdin", stdin_data=b""))
    >>> facts.files
    []
    """
    return await anyio.to_thread.run_sync(_normalize, request)


def _normalize(request: DiffRequest) -> PRFacts:
    if request.mode == "stdin":
        return PRFacts(source="stdin", files=parse_diff(request.stdin_data or b""))
    if request.mode == "file":
        assert request.path is not None
        try:
            data = Path(request.path).read_bytes()
        except OSError as exc:
            raise InputError(f"--diff {request.path}: {exc.strerror}",
                             fix="pass the path of a unified diff file, or - for standard input") from exc
        return PRFacts(source=request.path, files=parse_diff(data))
    if request.repo_root is None:
        raise GitError("not inside a git repository",
                       fix="run review-gate inside a git repository, or pass --diff FILE (- for stdin)")
    root = Path(request.repo_root)
    base, head, data, commits = _from_git(root, request)
    source = {"worktree": f"working tree against {base[:12]}",
              "staged": f"staged changes against {base[:12]}",
              "range": f"{request.base}...{request.head}"}[request.mode]
    return PRFacts(source=source, base=base, head=head, files=parse_diff(data), commits=commits)


def _from_git(root: Path, request: DiffRequest) -> tuple[str, str | None, bytes, list[Commit]]:
    if request.mode == "staged":
        if request.base is not None:
            raise UsageError("--staged compares the index with HEAD; it takes no --base")
        base = git.resolve(root, "HEAD") if git.has_head(root) else git.empty_tree(root)
        return base, None, git.diff_staged(root, base), []
    head_ref = request.head or "HEAD"
    if not git.has_head(root) and request.head is None and request.base is None:
        return git.empty_tree(root), None, git.diff_worktree(root, git.empty_tree(root)), []
    head = git.resolve(root, head_ref)
    base_ref = request.base or git.default_branch(root)
    if base_ref is None:
        raise GitError("cannot tell the default branch (no origin/HEAD, main, master or trunk)",
                       fix="name the base with --base REF")
    base = git.merge_base(root, git.resolve(root, base_ref), head)
    commits = git.commits(root, base, head)
    if request.mode == "range":
        return base, head, git.diff_range(root, base, head), commits
    return base, None, git.diff_worktree(root, base), commits
