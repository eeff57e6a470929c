"""Everything review-gate asks git, as argv lists (never a shell): the repository, its refs and
commits, and the diffs of a change. What git holds in blobs is read by ``change.blobs``."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path

from review_gate.errors import GitError
from review_gate.models import Commit

# --no-textconv: a textconv driver (named by the change's own .gitattributes, defined by the user's
# config) would show reviewers a transformed text instead of what is committed. What attributes
# make git call binary is read again by review_gate.change.binary_sections.
DIFF_OPTIONS = ("--no-color", "--no-ext-diff", "--no-textconv", "--full-index", "-M",
                "--src-prefix=a/", "--dst-prefix=b/")


WORKTREE_FIX = ("run `git status` in the repository to see what git says about the working tree; or review what "
                "is committed instead (--head HEAD) or the staged changes (--staged)")
OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1, SHA-256
LINK_MODE = "120000"  # the mode git gives a symbolic link
CHUNK = 1 << 20  # bytes of a diff read from git at a time


# What every git command of ours runs with: no prompt, no lock of the user's index, and the
# repository's objects as they are: `git replace` refs and grafts (which the change's author can
# set locally, and which a push does not carry) would show a reviewer another commit's content.
SAFE_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_GRAFT_FILE": os.devnull}


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a git command of ours runs in: ours, with ``SAFE_ENV`` and ``extra``."""
    return {**os.environ, **SAFE_ENV, **(extra or {})}


# Questions about refs and objects, whose answers one run does not change: HEAD's commit, the
# default branch, a merge base, a blob of a commit. A run asks them from many places.
STABLE = frozenset({"rev-parse", "symbolic-ref", "merge-base", "cat-file"})
REMEMBERED_BYTES = 1 << 16  # a longer answer (a blob) is asked again rather than kept
_answers: ContextVar[dict[tuple[object, ...], subprocess.CompletedProcess[bytes]] | None] = ContextVar(
    "git_answers", default=None)


@contextlib.contextmanager
def one_run() -> Iterator[None]:
    """Within: each ``STABLE`` question is asked of git once, its answer remembered (up to
    ``REMEMBERED_BYTES``). A run's tasks and worker threads share them; a long-lived process (a
    server, the loop) asks again in its next run, after a commit may have moved HEAD."""
    if _answers.get() is not None:
        yield
        return
    token = _answers.set({})
    try:
        yield
    finally:
        _answers.reset(token)


def _ask(argv: Sequence[str], cwd: Path, env: dict[str, str] | None,
         stdin: bytes | None) -> subprocess.CompletedProcess[bytes]:
    answers = _answers.get()
    key = (tuple(argv), str(cwd), tuple(sorted((env or {}).items())))
    if answers is None or stdin is not None or argv[1] not in STABLE:
        return subprocess.run(argv, cwd=cwd, env=environment(env), capture_output=True, check=False, input=stdin)
    if key not in answers:
        result = subprocess.run(argv, cwd=cwd, env=environment(env), capture_output=True, check=False)
        if len(result.stdout) > REMEMBERED_BYTES:
            return result
        answers[key] = result
    return answers[key]


def run(args: Sequence[str], cwd: Path, env: dict[str, str] | None = None,
        check: bool = True, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    if shutil.which("git") is None:
        raise GitError("git is not installed or not on PATH", fix="install git, or pass --diff FILE")
    result = _ask(["git", *args], cwd, env, stdin)
    if check and result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {' '.join(args[:2])} failed: {message[-1] if message else result.returncode}")
    return result


def repo_root(cwd: Path) -> Path | None:
    result = _ask(["git", "rev-parse", "--show-toplevel"], cwd, None, None) if shutil.which("git") else None
    if result is None or result.returncode != 0:
        return None
    return Path(result.stdout.decode().strip())


def bare_repository(cwd: Path) -> bool:
    """Whether ``cwd`` is inside a bare repository (one with no working tree)."""
    result = subprocess.run(["git", "rev-parse", "--is-bare-repository"], cwd=cwd,
                            capture_output=True, check=False) if shutil.which("git") else None
    return result is not None and result.returncode == 0 and result.stdout.strip() == b"true"


def resolve(root: Path, ref: str) -> str:
    """The commit id of ``ref``, or a GitError naming it."""
    if ref.startswith("-"):
        raise GitError(f"unknown git ref {ref!r}", fix="refs cannot start with '-'")
    result = run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
                 root, check=False)
    if result.returncode != 0 and ref == "HEAD" and not has_head(root):
        raise GitError("the repository has no commit yet: there is no HEAD to compare with",
                       fix="review the working tree without --base or --head (every file is new), or commit first")
    if result.returncode != 0:
        raise GitError(f"unknown git ref {ref!r}",
                       fix="name a branch, tag or commit that exists (see `git branch -a`), "
                           "or fetch it first")
    return result.stdout.decode().strip()


def has_head(root: Path) -> bool:
    return run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], root, check=False).returncode == 0


def empty_tree(root: Path) -> str:
    """The id of the empty tree (differs between SHA-1 and SHA-256 repositories); not written."""
    return run(["hash-object", "-t", "tree", os.devnull], root).stdout.decode().strip()


# the empty tree's id in a SHA-1 and in a SHA-256 repository: what ``empty_tree`` says, without a process
_EMPTY_TREES = frozenset(hash_function(b"tree 0\0").hexdigest() for hash_function in (hashlib.sha1, hashlib.sha256))


def is_empty_tree(object_id: str) -> bool:
    """``object_id`` is the empty tree's, in a repository of either object format."""
    return object_id.lower() in _EMPTY_TREES


def default_branch(root: Path) -> str | None:
    """origin's HEAD if known, else the first of main, master, trunk that exists."""
    result = run(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], root, check=False)
    if result.returncode == 0 and result.stdout.strip():
        return result.stdout.decode().strip()
    for name in ("main", "master", "trunk", "origin/main", "origin/master"):
        if run(["rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"], root, check=False).returncode == 0:
            return name
    return None


def worktree_base(root: Path, ref: str | None) -> str:
    """What the working tree is compared with: the merge-base of ``ref`` (the default branch
    when None) and HEAD; the empty tree when there is no commit yet and no ``ref``."""
    if ref is None and not has_head(root):
        return empty_tree(root)
    base_ref = ref or default_branch(root)
    if base_ref is None:
        raise GitError("cannot tell the default branch (no origin/HEAD, main, master or trunk)",
                       fix="name the branch or commit to compare against as the base")
    return merge_base(root, resolve(root, base_ref), resolve(root, "HEAD"))


def default_base(root: Path, head: str | None = None) -> str | None:
    """The merge-base of ``head`` (HEAD when None) with the default branch: the newest commit of
    the branch's history that the branch itself did not write. None without a commit, a default
    branch or a common history."""
    try:
        branch = default_branch(root)  # a name git itself gave or one of a fixed few: never an option
        if branch is None or (head is None and not has_head(root)):
            return None
        return merge_base(root, branch, head or "HEAD")
    except GitError:
        return None


def merge_base(root: Path, a: str, b: str) -> str:
    result = run(["merge-base", a, b], root, check=False)
    if result.returncode != 0:
        raise GitError(f"{a[:12]} and {b[:12]} have no common ancestor (a shallow clone?)",
                       fix="fetch more history (git fetch --unshallow, or fetch-depth: 0 in CI), "
                           "or pass --base with a commit both histories share")
    return result.stdout.decode().strip()


def behind_base(root: Path, base: str, head: str, base_ref: str, head_ref: str) -> None:
    """Refuse a range whose head is an ancestor of its base: git's merge-base range of it is empty,
    so a user asking for the reverse of a commit (``--base F --head F~1``) would get a silent pass."""
    if head == base or run(["merge-base", "--is-ancestor", head, base], root, check=False).returncode != 0:
        return
    raise GitError(f"--head {head_ref} ({head[:12]}) is an ancestor of --base {base_ref} ({base[:12]}): "
                   "the range from their merge-base to the head is empty, there is nothing to review",
                   fix=f"to review the change that goes back from {base_ref} to {head_ref}, commit it: "
                       f"`git commit-tree {head[:12]}^{{tree}} -p {base[:12]} -m reverse` prints a commit C, "
                       f"then --base {base[:12]} --head C; to review {head_ref}..{base_ref}, swap --base and --head")


def diff_range(root: Path, base: str, head: str) -> bytes:
    return run(["diff", *DIFF_OPTIONS, base, head, "--"], root).stdout


def diff_range_chunks(root: Path, base: str, head: str, *, limit: int,
                      too_big: Callable[[int], Exception]) -> Iterator[bytes]:
    """``diff_range`` read as git writes it, a piece at a time: the whole diff is never held. Past
    ``limit`` bytes git is stopped and ``too_big(bytes read)`` raised: a range too large to review
    is refused before it fills the memory."""
    if shutil.which("git") is None:
        raise GitError("git is not installed or not on PATH", fix="install git, or pass --diff FILE")
    args = ["diff", *DIFF_OPTIONS, base, head, "--"]
    with tempfile.TemporaryFile() as errors, subprocess.Popen(
            ["git", *args], cwd=root, env=environment(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=errors) as process:
        assert process.stdout is not None
        size = 0
        try:
            while part := process.stdout.read(CHUNK):
                size += len(part)
                if size > limit:
                    raise too_big(size)
                yield part
        finally:
            if process.poll() is None:
                process.kill()
        if process.wait() != 0:
            errors.seek(0)
            message = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git diff failed: {message[-1] if message else process.returncode}")


def diff_staged(root: Path, base: str) -> bytes:
    return run(["diff", "--cached", *DIFF_OPTIONS, base, "--"], root).stdout


def commits(root: Path, base: str, head: str) -> list[Commit]:
    span = head if is_empty_tree(base) else f"{base}..{head}"
    result = run(["log", "--no-color", "--format=%H%x1f%an%x1f%s", span], root, check=False)
    found = []
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        parts = line.split("\x1f")
        if len(parts) == 3:
            found.append(Commit(sha=parts[0], author=parts[1], subject=parts[2]))
    return found


def diff_texts(old: bytes, new: bytes) -> bytes | None:
    """The hunks (from the first ``@@``) of git's unified diff from ``old`` to ``new``: the same
    algorithm as a repository's diff, run outside any repository, so no attribute or driver
    applies. Empty when they are equal; None when git fails."""
    with tempfile.TemporaryDirectory(prefix="review-gate-") as tmp:
        place = Path(tmp)
        (place / "a").write_bytes(old)
        (place / "b").write_bytes(new)
        result = run(["diff", "--no-index", "--text", "--no-color", "--no-ext-diff", "--no-textconv", "--", "a", "b"],
                     place, env={"GIT_CEILING_DIRECTORIES": str(place.parent)}, check=False)
    if result.returncode not in (0, 1):
        return None
    out = result.stdout
    if out.startswith(b"@@"):
        return out
    at = out.find(b"\n@@")
    return out[at + 1:] if at >= 0 else b""


def unpushed_base(root: Path, head: str, remote: str | None) -> str:
    """A commit the remote already has, from which ``head`` adds everything it would push: the
    common ancestor of the remote-side boundary of ``head --not --remotes``; the empty tree when
    the remote has none of ``head``'s history (the first push of a repository)."""
    remotes = f"--remotes={remote}" if remote else "--remotes"
    listed = run(["rev-list", "--boundary", head, "--not", remotes], root).stdout.decode().split()
    boundary = [line[1:] for line in listed if line.startswith("-")]
    if not boundary:
        return empty_tree(root)
    if len(boundary) == 1:
        return boundary[0]
    result = run(["merge-base", "--octopus", *boundary], root, check=False)
    found = result.stdout.decode().split()
    return found[0] if result.returncode == 0 and found else empty_tree(root)


def ls_files(cwd: Path, pathspecs: Sequence[str] = ()) -> list[bytes]:
    """Repository-relative paths (as git writes them) of the tracked files and the untracked ones
    git does not ignore, within ``pathspecs`` (relative to ``cwd``); a sweep's files."""
    out = run(["ls-files", "-z", "--full-name", "--cached", "--others", "--exclude-standard", "--", *pathspecs],
              cwd).stdout
    return list(dict.fromkeys(p for p in out.split(b"\0") if p))


def changed_since(root: Path, commit: str) -> set[bytes]:
    """Paths whose working-tree content differs from ``commit``'s, untracked ones included."""
    tracked = run(["diff", "--name-only", "-z", "--no-renames", commit, "--"], root).stdout
    untracked = run(["ls-files", "-z", "--others", "--exclude-standard"], root).stdout
    return {p for p in (tracked + b"\0" + untracked).split(b"\0") if p}


def object_format(root: Path) -> str:
    """sha1 or sha256: which ids the repository's objects have."""
    found = run(["rev-parse", "--show-object-format"], root, check=False).stdout.decode("ascii", "replace").strip()
    return found if found in ("sha1", "sha256") else "sha1"


def tree_files(root: Path, commit: str) -> list[tuple[str, str, str, int | None, bytes]]:
    """Every entry of ``commit``'s tree, recursively: (mode, type, object id, size, path), the
    size None for what is not a blob (a submodule's commit)."""
    out = run(["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--"], root).stdout
    found = []
    for record in out.split(b"\0"):
        meta, tab, path = record.partition(b"\t")
        parts = meta.decode("ascii", "replace").split()
        if tab and len(parts) == 4:
            found.append((parts[0], parts[1], parts[2], int(parts[3]) if parts[3].isdigit() else None, path))
    return found


def index_files(root: Path) -> list[tuple[str, str, bytes]]:
    """Every entry of the index (stage 0 and conflict stages alike): (mode, object id, path)."""
    out = run(["ls-files", "-s", "-z", "--full-name"], root).stdout
    found = []
    for record in out.split(b"\0"):
        meta, tab, path = record.partition(b"\t")
        parts = meta.decode("ascii", "replace").split()
        if tab and len(parts) == 3:
            found.append((parts[0], parts[1], path))
    return found


def origin_owner(root: Path) -> str | None:
    """The owner (organisation or user) in the URL of the remote ``origin``: ``docker-library`` for
    https://github.com/docker-library/postgres.git or git@github.com:docker-library/postgres."""
    result = run(["config", "--get", "remote.origin.url"], root, check=False)
    url = result.stdout.decode("utf-8", "replace").strip()
    if result.returncode != 0 or not url:
        return None
    if "://" in url:
        path = url.split("://", 1)[1].partition("/")[2]
    elif re.match(r"[\w.-]+@[\w.-]+:", url):  # scp-like: git@github.com:owner/name
        path = url.split(":", 1)[1]
    else:
        return None  # a local path names no owner
    parts = [p for p in path.removesuffix("/").removesuffix(".git").split("/") if p]
    return parts[-2] if len(parts) >= 2 else None


def git_path(root: Path, name: str) -> Path:
    """``git rev-parse --git-path NAME``: where the repository at ``root`` keeps ``name`` (absolute)."""
    found = Path(run(["rev-parse", "--git-path", name], root).stdout.decode("utf-8", "surrogateescape").strip())
    return found if found.is_absolute() else root / found


def has_commit(root: Path, commit: str) -> bool:
    """Whether the repository at ``root`` (a work tree or a git directory) holds commit ``commit``."""
    return bool(OBJECT_ID.fullmatch(commit)) and run(
        ["cat-file", "-e", f"{commit}^{{commit}}"], root, check=False).returncode == 0


def diff_prefixed(root: Path, base: str, head: str, prefix: str) -> bytes:
    """The diff from ``base`` to ``head`` in the repository at ``root``, its paths under ``prefix``
    (a submodule's path and a slash): as the superproject would show the submodule's files."""
    options = [o for o in DIFF_OPTIONS if not o.startswith(("--src-prefix", "--dst-prefix"))]
    return run(["diff", *options, f"--src-prefix=a/{prefix}", f"--dst-prefix=b/{prefix}", base, head, "--"],
               root).stdout
