"""Stage 1: a diff (file, stdin or git range) -> PRFacts."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

import anyio.to_thread

from review_gate.change import git, pushed, submodules, worktree_diff
from review_gate.change.binary_sections import Where, reveal
from review_gate.change.diff_parser import parse_diff, parse_stream
from review_gate.change.input_files import MIB, chunks, human
from review_gate.errors import GitError, InputError, UsageError
from review_gate.models import Commit, FileChange, PRFacts, Unread
from review_gate.models.base import Frozen
from review_gate.pipeline.boundary import checked
from review_gate.text.escape import sanitize

MAX_DIFF_BYTES = 256 * MIB  # the largest diff reviewed, from any source, on any machine
MIN_DIFF_BYTES = 64 * MIB  # what the limit never goes under, however little memory is free
RESIDENT_PER_BYTE = 6  # memory a review holds per byte of diff, with room (benchmarks/speed.py: about 5)
DIFF_TOO_BIG_FIX = ("review the change in parts: fewer commits or paths (--base/--head, or git diff -- PATHS > "
                    "part.diff), or `review-gate sweep PATHS` for part of the tree (--shard K/N splits the agents' "
                    "work, not the diff: every shard reads it whole)")


def diff_limit() -> int:
    """The largest diff this machine can review (``limit_for`` its available memory). A larger one
    is refused before it is read whole, never left to the kernel's out-of-memory killer."""
    return limit_for(_available_memory())


def limit_for(available: int | None) -> int:
    """What ``available`` bytes of memory hold at about RESIDENT_PER_BYTE bytes a byte of diff,
    between MIN_DIFF_BYTES and MAX_DIFF_BYTES (the latter when the memory is unknown).

    >>> limit_for(600 * MIB) // MIB, limit_for(None) // MIB, limit_for(1) // MIB
    (100, 256, 64)
    """
    if available is None:
        return MAX_DIFF_BYTES
    return max(MIN_DIFF_BYTES, min(MAX_DIFF_BYTES, available // RESIDENT_PER_BYTE))


def _available_memory() -> int | None:
    """The memory this process may still fill: the system's available memory, within the address
    space a limit (``ulimit -v``) leaves it."""
    found = _system_memory()
    try:
        import resource

        cap = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return found
    if cap == resource.RLIM_INFINITY or cap <= 0:
        return found
    return cap if found is None else min(found, cap)


def _system_memory() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def too_big(what: str, size: int, limit: int) -> InputError:
    return InputError(f"{what} is {_megabytes(size)}: over the {human(limit)} of diff review-gate can hold in memory "
                      "here", fix=DIFF_TOO_BIG_FIX)


def _megabytes(size: int) -> str:
    return f"{size / MIB:,.0f} MiB" if size >= MIB else f"{size:,} bytes"


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
    # range: a head that is an ancestor of the base is an empty range. Asked for by a person that is
    # a mistake (the reverse of a commit was meant) and refused; pushed, it is a force push that
    # rewinds a branch, which adds nothing to review
    behind_ok: bool = False
    # range: the base is a commit of the branch itself (what a pre-push's remote already has of it),
    # not one the reviewed branch cannot write: the baseline and the team's acceptances are read at
    # the merge-base with the default branch instead (``bootstrap.Setup.trusted_base``)
    branch_base: bool = False


async def normalize(request: DiffRequest) -> PRFacts:
    r"""Read the diff the request names and parse it.

    >>> import anyio
    >>> diff = b"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    >>> facts = anyio.run(normalize, DiffRequest(mode="stdin", stdin_data=diff))
    >>> [f.path for f in facts.files]
    ['x.py']
    """
    return await anyio.to_thread.run_sync(normalize_now, request)


def normalize_now(request: DiffRequest) -> PRFacts:
    """``normalize`` in this thread."""
    return checked("normalize", _normalize(checked("normalize", request)))


def _parse(data: bytes | Iterable[bytes], where: Where, given: str | None = None) -> list[FileChange]:
    """The files of a diff; ``given``: the name of a diff given as input, which may be a patch series."""
    files = parse_diff(data) if isinstance(data, bytes) else parse_stream(data)
    if given is not None:
        _one_version_each(files, given)
    return merge_sections(reveal(files, where))


def _one_version_each(files: list[FileChange], name: str) -> None:
    """Refuse a patch series (``git format-patch --stdout``, ``git log -p``) that changes one file
    in more than one section. Each section's line numbers, context and removed lines belong to the
    version of the file its own commit started from; judged together, a later section's context
    showed a line an earlier one added as unchanged, under a comment the base has, and that comment
    waived it (issue 29). Judging every section against its own old side would take a review per
    commit: that is a range, which reads the history from git. What git
    itself writes twice for one path in one diff, a file deleted and one added in its place (a
    file that becomes a symbolic link), is one version after another and stays."""
    seen: dict[str, FileChange] = {}
    for change in files:
        first = seen.get(change.path)
        if first is None and change.status == "renamed" and change.old_path is not None:
            first = seen.get(change.old_path)
        if first is not None and not (first.status == "deleted" and change.status == "added"):
            raise InputError(f"{name} changes {sanitize(change.path)} in more than one section (a patch series): "
                             "each section's lines and comments belong to another version of the file",
                             fix="review the commits as a range (from FIRST^ to LAST) in their repository, or give "
                                 "their combined diff (git diff FIRST^ LAST); a series whose commits each change "
                                 "other files is reviewed as it is")
        seen[change.path] = change


def _read_file(path: str, name: str) -> Iterator[bytes]:
    """The diff file in chunks; one larger than the limit is refused by its size before it is read."""
    limit = diff_limit()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}", fix=DIFF_TOO_BIG_FIX) from exc
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode) and info.st_size > limit:
        os.close(fd)
        raise too_big(name, info.st_size, limit)
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a device or a socket"
        raise InputError(f"cannot read {name}: it is {kind}, not a file", fix="pass the path of a unified diff file")
    with os.fdopen(fd, "rb") as handle:
        try:
            yield from chunks(handle, limit=limit, name=name, fix=DIFF_TOO_BIG_FIX)
        except OSError as exc:
            raise InputError(f"cannot read {name}: {exc.strerror or exc}", fix=DIFF_TOO_BIG_FIX) from exc


def _given_files(data: Iterable[bytes], name: str, where: Where) -> list[FileChange]:
    """The files of a diff given as input; an empty one is refused (see ``_given``)."""
    files = _parse(data, where, name)
    if not files:
        _given(b"", name)
    return files


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
    elif first.status == "deleted" and later.status == "added":
        status = "modified"  # git shows a file that becomes a link (or a link a file) as both: it is there
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
        text = _given(request.stdin_data or b"", "standard input")
        return PRFacts(source="stdin", files=_parse(text, given, "the diff on standard input"))
    if request.mode == "file":
        assert request.path is not None
        name = f"the diff {sanitize(request.path)}"
        return PRFacts(source=request.path, files=_given_files(_read_file(request.path, name), name, given))
    if request.repo_root is None:
        raise GitError("not inside a git repository", fix="review a git repository, or a diff file")
    root = Path(request.repo_root)
    base, head, data, commits = _from_git(root, request)
    against = _against(root, request, base)
    source = {"worktree": f"working tree against {against}",
              "staged": f"staged changes against {against}",
              "range": f"{request.base}...{request.head}",
              "push": f"push of {request.head} ({base[:12]}..{(head or '')[:12]})"}[request.mode]
    where = Where(root=root, worktree=request.mode == "worktree")
    if isinstance(data, bytes) and len(data) > (limit := diff_limit()):
        raise too_big(f"the diff of the {source}", len(data), limit)
    files = submodules.review(root, _parse(data, where), lambda diff, repo: _parse(diff, Where(root=repo)))
    return PRFacts(source=source, base=base, head=head, files=files, commits=commits)


def _against(root: Path, request: DiffRequest, base: str) -> str:
    """What a working tree or the index was compared with, as a person reads it: the branch the
    base was taken from and its commit (``main (e757b68)``), or the commit alone."""
    if request.mode == "staged":
        return f"HEAD ({base[:7]})"
    if request.exact_base:
        return base[:12]
    ref = request.base or (git.default_branch(root) if git.has_head(root) else None)
    return f"{ref} ({base[:7]})" if ref and not base.startswith(ref) else base[:12]


def _range_chunks(root: Path, base: str, head: str, what: str) -> Iterator[bytes]:
    limit = diff_limit()
    return git.diff_range_chunks(root, base, head, limit=limit, too_big=lambda size: too_big(sanitize(what), size,
                                                                                              limit))


def _from_git(root: Path, request: DiffRequest) -> tuple[str, str | None, bytes | Iterator[bytes], list[Commit]]:
    if request.mode == "staged":
        if request.base is not None:
            raise UsageError("staged changes are compared with HEAD; a base cannot be given")
        base = git.resolve(root, "HEAD") if git.has_head(root) else git.empty_tree(root)
        return base, None, git.diff_staged(root, base), []
    head_ref = request.head or "HEAD"
    if request.mode == "push":
        head = git.resolve(root, head_ref)
        base = git.unpushed_base(root, head, request.remote)
        return base, head, _range_chunks(root, base, head, f"the diff of the push {base[:12]}..{head[:12]}"), \
            git.commits(root, base, head)
    if request.mode == "worktree" and request.exact_base and request.base is not None:
        empty = git.empty_tree(root)
        base = empty if request.base == empty else git.resolve(root, request.base)
        commits = git.commits(root, base, git.resolve(root, "HEAD")) if git.has_head(root) else []
        return base, None, worktree_diff.diff_worktree(root, base), commits
    if not git.has_head(root) and request.head is None and request.base is None:
        return git.empty_tree(root), None, worktree_diff.diff_worktree(root, git.empty_tree(root)), []
    head = git.resolve(root, head_ref)
    base_ref = request.base or git.default_branch(root)
    if base_ref is None:
        raise GitError("cannot tell the default branch (no origin/HEAD, main, master or trunk)",
                       fix="name the branch or commit to compare against as the base")
    named_base = git.resolve(root, base_ref)
    if request.mode == "range" and not request.behind_ok:
        git.behind_base(root, named_base, head, base_ref, head_ref)
    base = git.merge_base(root, named_base, head)
    commits = git.commits(root, base, head)
    if request.mode == "range":
        # a push (--pre-push) reviews what no remote has: not the pushed commits it merges in again
        compared = pushed.own_base(root, base, head) if request.branch_base else base
        return base, head, _range_chunks(root, compared, head, f"the diff of {request.base}...{request.head}"), \
            commits
    return base, None, worktree_diff.diff_worktree(root, base), commits
