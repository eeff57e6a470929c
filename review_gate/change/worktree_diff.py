"""The diff of the working tree against a commit, untracked files included, read through a scratch
copy of the index so that the user's own index is never touched."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from review_gate.change.git import DIFF_OPTIONS, WORKTREE_FIX, run
from review_gate.errors import GitError


def diff_worktree(root: Path, base: str) -> bytes:
    """The working tree against ``base``, untracked files that git does not ignore included.

    Untracked files are marked intent-to-add in a throwaway copy of the index, so the user's
    real index is never touched; in that copy, the flags that hide a tracked file's changes
    from git (assume-unchanged, skip-worktree) are cleared. Untracked files are named one by
    one, as git lists them: ``git add --all`` stops at a nested repository without a commit
    ("adding files failed"). A nested repository is no content of this one (a commit would
    record at most the commit it points to): it is shown as a gitlink of its own, with no
    lines, and its files are not reviewed.
    """
    try:
        return _worktree_diff(root, base)
    except GitError as exc:
        if exc.fix is not None:
            raise
        raise GitError(exc.message, fix=WORKTREE_FIX) from exc


def _worktree_diff(root: Path, base: str) -> bytes:
    index = Path(run(["rev-parse", "--git-path", "index"], root).stdout.decode().strip())
    if not index.is_absolute():
        index = root / index
    listed = run(["ls-files", "-z", "--others", "--exclude-standard"], root).stdout.split(b"\0")
    files = [path for path in listed if path and not path.endswith(b"/")]
    nested = [path[:-1] for path in listed if path.endswith(b"/")]  # git lists a nested repository as DIR/
    with tempfile.TemporaryDirectory(prefix="review-gate-") as tmp:
        scratch = Path(tmp) / "index"
        if index.is_file():
            shutil.copyfile(index, scratch)
        env = {"GIT_INDEX_FILE": str(scratch)}
        _clear_flags(root, env)
        if files:
            _intend_to_add(root, files, env)
        diff = run(["diff", *DIFF_OPTIONS, base, "--"], root, env=env).stdout
    return diff + b"".join(_gitlink(path, _head_of(root / os.fsdecode(path))) for path in nested)


def _clear_flags(root: Path, env: dict[str, str]) -> None:
    """Clear, in the scratch index ``env`` names, the flags that make git skip a tracked
    file's content: assume-unchanged (`git update-index --assume-unchanged`, ``ls-files -v``
    tag in lower case) and skip-worktree (tag ``S``) on a file that is on the disk; git would
    show neither file's changes. A skip-worktree file absent from the disk is left out of the
    working tree on purpose (a sparse checkout), not deleted, and keeps its flag."""
    listed = run(["ls-files", "-v", "-z"], root, env=env).stdout.split(b"\0")
    assumed = [entry[2:] for entry in listed if entry[:1].islower() and entry[1:2] == b" "]
    skipped = [entry[2:] for entry in listed if entry[:1] in (b"S", b"s") and entry[1:2] == b" "
               and os.path.lexists(root / os.fsdecode(entry[2:]))]
    for flag, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:
            run(["update-index", flag, "-z", "--stdin"], root, env=env, stdin=b"\0".join(paths) + b"\0")


def _head_of(nested: Path) -> bytes | None:
    """The commit a nested repository's HEAD names, None when it has none (a fresh `git init`)."""
    done = run(["rev-parse", "--verify", "-q", "HEAD"], nested, check=False)
    return done.stdout.strip() or None if done.returncode == 0 else None


def _intend_to_add(root: Path, files: list[bytes], env: dict[str, str]) -> None:
    # Literal pathspecs from standard input: a name holding `*`, a newline or a leading `-` names itself.
    added = run(["add", "--intent-to-add", "--pathspec-from-file=-", "--pathspec-file-nul"], root, check=False,
                env={**env, "GIT_LITERAL_PATHSPECS": "1"}, stdin=b"\0".join(files))
    if added.returncode != 0:
        message = added.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git add --intent-to-add failed on the untracked files: "
                       f"{message[-1] if message else added.returncode}",
                       fix="run `git status` to see the file git names, then ignore it (.gitignore) or move it "
                           "away; or review what is committed instead (--head HEAD) or the staged changes (--staged)")


def _gitlink(path: bytes, commit: bytes | None) -> bytes:
    """A diff section that adds the nested repository ``path`` and none of its files: the
    commit its HEAD names, as `git add` would record it; without a commit, nothing `git add`
    could record (a section with no content)."""
    name = _quoted(b"a/" + path), _quoted(b"b/" + path)
    section = b"diff --git " + name[0] + b" " + name[1] + b"\nnew file mode 160000\n"
    if commit is None:
        return section
    return (section + b"index 0000000.." + commit[:7] + b"\n--- /dev/null\n+++ " + name[1]
            + b"\n@@ -0,0 +1 @@\n+Subproject commit " + commit + b"\n")


def _quoted(path: bytes) -> bytes:
    """``path`` as git writes an unusual name in a diff header: C-style, in double quotes."""
    if not any(byte < 0x20 or byte in (0x22, 0x5C) or byte >= 0x7F for byte in path):
        return path
    escapes = {0x07: b"\\a", 0x08: b"\\b", 0x09: b"\\t", 0x0A: b"\\n", 0x0B: b"\\v", 0x0C: b"\\f",
               0x0D: b"\\r", 0x22: b'\\"', 0x5C: b"\\\\"}
    body = b"".join(escapes.get(byte, b"\\%03o" % byte if byte < 0x20 or byte >= 0x7F else bytes([byte]))
                    for byte in path)
    return b'"' + body + b'"'


__all__ = ["diff_worktree"]
