"""Stage 1: a diff (file, stdin or git range) -> PRFacts."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import anyio.to_thread

from review_gate import git, submodules
from review_gate.diff import parse_diff
from review_gate.errors import GitError, InputError, UsageError
from review_gate.escape import sanitize
from review_gate.models import Commit, FileChange, PRFacts, Unread
from review_gate.models.base import Frozen
from review_gate.reading import MIB, read_path
from review_gate.reveal import Where, reveal

MAX_DIFF_BYTES = 256 * MIB  # a diff given as input; git's own output is what the repository holds
DIFF_TOO_BIG_FIX = "review a narrower range or fewer paths (review-gate --base REF, or git diff -- PATHS)"


class DiffRequest(Frozen):
    """What to review. ``mode`` picks the source; the other fields apply to some modes."""

    mode: Literal["worktree", "staged", "range", "push", "file", "stdin"]
    repo_root: str | None = None
    base: str | None = None
    head: str | None = None
    path: str | None = None
    stdin_data: bytes | None = None
    remote: str | None = None  # push: the remote pushed to; everything it lacks up to head is reviewed
    # worktree: compare with ``base`` itself (a commit id, or the empty tree), not its merge-base
    # with HEAD: a loop session's pinned base, which commits made since cannot move
    exact_base: bool = False


async def normalize(request: DiffRequest) -> PRFacts:
    r"""Read the diff the request names and parse it.

    >>> import anyio
    >>> diff = b"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    >>> facts = anyio.run(normalize, DiffRequest(mode="stdin", stdin_data=diff))
    >>> [f.path for f in facts.files]
    ['x.py']
    """
    return await anyio.to_thread.run_sync(_normalize, request)


def _parse(data: bytes, where: Where) -> list[FileChange]:
    return merge_sections(reveal(parse_diff(data), where))


def merge_sections(files: list[FileChange]) -> list[FileChange]:
    """One FileChange per file, whatever the number of sections that touch it.

    A patch series (``git format-patch --stdout``, ``git log -p``) has one section per commit
    that touched a file. Every section's hunks are kept, in order, so every line any commit
    added is reviewed (a line a later commit removed again is still in the history). A rename
    continues the file it renames. The line numbers of an earlier section are those of the file
    as that commit left it.
    """
    merged: list[FileChange] = []
    where: dict[str, int] = {}
    for change in files:
        index = where.get(change.path)
        if index is None and change.status in ("renamed", "copied") and change.old_path is not None:
            index = where.get(change.old_path) if change.status == "renamed" else None
        if index is None:
            where[change.path] = len(merged)
            merged.append(change)
            continue
        where[change.path] = index
        merged[index] = _merge(merged[index], change)
    return merged


def _merge(first: FileChange, later: FileChange) -> FileChange:
    status = first.status
    if first.binary or later.binary:
        status = "binary"
    elif first.status != "added":
        status = later.status if later.status in ("deleted", "renamed") else first.status
    return FileChange.model_construct(
        path=later.path, old_path=first.old_path, status=status, old_mode=first.old_mode,
        new_mode=later.new_mode or first.new_mode, added=first.added + later.added,
        removed=first.removed + later.removed, hunks=[*first.hunks, *later.hunks],
        content_sha=later.content_sha, binary=first.binary or later.binary,
        non_utf8=first.non_utf8 or later.non_utf8, unread=_worst(first.unread, later.unread),
        patch=first.patch + later.patch)


_UNREAD_RANK = {"binary": 0, "submodule": 1, "unreadable": 2}


def _worst(first: Unread | None, later: Unread | None) -> Unread | None:
    """What one section of a series left unread stays unread: it is in the history pushed."""
    if first is None or later is None:
        return first or later
    return first if _UNREAD_RANK[first.kind] > _UNREAD_RANK[later.kind] else later


def _given(data: bytes, name: str) -> bytes:
    """A diff given as input; an empty one is refused: it is what a failed command upstream
    (``gh pr diff`` without a token, a wrong range) leaves, and passing it would gate nothing."""
    if not data.strip():
        raise InputError(f"{name} is empty: there is no change to review",
                         fix="check the command that wrote the diff; when the change really is empty, "
                             "there is nothing to gate")
    return data


def _normalize(request: DiffRequest) -> PRFacts:
    given = Where(root=Path(request.repo_root) if request.repo_root else None, patch=True)
    if request.mode == "stdin":
        return PRFacts(source="stdin", files=_parse(_given(request.stdin_data or b"", "standard input"), given))
    if request.mode == "file":
        assert request.path is not None
        name = f"the diff {sanitize(request.path)}"
        data = read_path(request.path, limit=MAX_DIFF_BYTES, name=name, fix=DIFF_TOO_BIG_FIX)
        return PRFacts(source=request.path, files=_parse(_given(data, name), given))
    if request.repo_root is None:
        raise GitError("not inside a git repository", fix="review a git repository, or a diff file")
    root = Path(request.repo_root)
    base, head, data, commits = _from_git(root, request)
    source = {"worktree": f"working tree against {base[:12]}",
              "staged": f"staged changes against {base[:12]}",
              "range": f"{request.base}...{request.head}",
              "push": f"push of {request.head} ({base[:12]}..{(head or '')[:12]})"}[request.mode]
    where = Where(root=root, worktree=request.mode == "worktree")
    files = submodules.review(root, _parse(data, where), lambda diff, repo: _parse(diff, Where(root=repo)))
    return PRFacts(source=source, base=base, head=head, files=files, commits=commits)


def _from_git(root: Path, request: DiffRequest) -> tuple[str, str | None, bytes, list[Commit]]:
    if request.mode == "staged":
        if request.base is not None:
            raise UsageError("staged changes are compared with HEAD; a base cannot be given")
        base = git.resolve(root, "HEAD") if git.has_head(root) else git.empty_tree(root)
        return base, None, git.diff_staged(root, base), []
    head_ref = request.head or "HEAD"
    if request.mode == "push":
        head = git.resolve(root, head_ref)
        base = git.unpushed_base(root, head, request.remote)
        return base, head, git.diff_range(root, base, head), git.commits(root, base, head)
    if request.mode == "worktree" and request.exact_base and request.base is not None:
        empty = git.empty_tree(root)
        base = empty if request.base == empty else git.resolve(root, request.base)
        commits = git.commits(root, base, git.resolve(root, "HEAD")) if git.has_head(root) else []
        return base, None, git.diff_worktree(root, base), commits
    if not git.has_head(root) and request.head is None and request.base is None:
        return git.empty_tree(root), None, git.diff_worktree(root, git.empty_tree(root)), []
    head = git.resolve(root, head_ref)
    base_ref = request.base or git.default_branch(root)
    if base_ref is None:
        raise GitError("cannot tell the default branch (no origin/HEAD, main, master or trunk)",
                       fix="name the branch or commit to compare against as the base")
    base = git.merge_base(root, git.resolve(root, base_ref), head)
    commits = git.commits(root, base, head)
    if request.mode == "range":
        return base, head, git.diff_range(root, base, head), commits
    return base, None, git.diff_worktree(root, base), commits
