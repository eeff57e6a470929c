"""Submodules reviewed, not just counted: a moved submodule's own range joins the change.

A submodule entry in a diff holds only the two commits it points to (``-Subproject commit A``,
``+Subproject commit B``). When both are present in the submodule's repository on this machine
(a checked-out submodule or nested clone at its path, or ``.git/modules/NAME``), the change
between them is what the move brings in: it is diffed there (``git diff A B``, its paths under
the submodule's path) and reviewed with the rest, and the entry itself is no longer unread.
When they are not, the entry stays unread and says how to make them present
(``review-gate.json``'s ``submodules`` decides whether that warns, is only listed, or makes the
review incomplete). A submodule added or removed, or whose working tree is dirty, is no range.
Submodules inside the submodule are reviewed the same way, to ``MAX_DEPTH`` levels.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from review_gate.change import git
from review_gate.errors import GitError
from review_gate.models import FileChange, Unread

MAX_DEPTH = 3
_COMMIT = re.compile(r"^Subproject commit ([0-9a-f]{40}|[0-9a-f]{64})$")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")
Parse = Callable[[bytes, Path], list[FileChange]]


def moved(change: FileChange) -> tuple[str, str] | None:
    """The (old, new) commits of a submodule entry the change moves, None when it is no move."""
    if change.unread is None or change.unread.kind != "submodule" or change.status == "added":
        return None
    old = [m.group(1) for h in change.hunks for r in h.removed_lines if (m := _COMMIT.match(r.text))]
    new = [m.group(1) for h in change.hunks for ln in h.lines if ln.added and (m := _COMMIT.match(ln.text))]
    return (old[-1], new[-1]) if old and new and old[-1] != new[-1] else None


def repository(root: Path, path: str) -> Path | None:
    """Where the submodule at ``path`` keeps its objects: its checkout (or a nested clone) at the path,
    else the superproject's ``modules/PATH`` git directory; None when neither exists."""
    if _UNSAFE.search(path) or path.startswith("/") or ".." in Path(path).parts:
        return None
    checkout = root / path
    if (checkout / ".git").exists():
        return checkout
    try:
        found = git.git_path(root, f"modules/{path}")
    except GitError:
        return None
    return found if (found / "HEAD").is_file() else None


def review(root: Path, files: list[FileChange], parse: Parse, depth: int = 0) -> list[FileChange]:
    """``files`` with each moved submodule whose commits are present followed by the changes of its
    range (``parse(diff, repository)`` reads a diff as the caller reads its own), and the others
    told how to make them present."""
    out: list[FileChange] = []
    for change in files:
        commits = moved(change)
        if commits is None:
            out.append(change)
            continue
        where = repository(root, change.path)
        present = where is not None and all(git.has_commit(where, c) for c in commits)
        if where is None or not present:
            out.append(_absent(change, commits, where is None))
            continue
        data = git.diff_prefixed(where, commits[0], commits[1], change.path + "/")
        inner = parse(data, where)
        if depth + 1 < MAX_DEPTH:
            inner = review(where, inner, parse, depth + 1)
        out.append(change.model_copy(update={"unread": None}))
        out.extend(inner)
    return out


def _absent(change: FileChange, commits: tuple[str, str], no_repository: bool) -> FileChange:
    old, new = commits[0][:12], commits[1][:12]
    where = "is not checked out here" if no_repository else "lacks one of them"
    fix = (f"make both commits present, then review again: git submodule update --init -- {change.path} "
           f"(or git -C {change.path} fetch)")
    return change.model_copy(update={"unread": Unread(
        kind="submodule", reason=f"submodule {change.path} moves from {old} to {new}, and its repository {where}: "
                                 "the commits it brings in are not reviewed", fix=fix)})
