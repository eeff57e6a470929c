"""What a push brings that no remote has: the base a pushed range is compared with, so that the
commits it merges in from a branch already pushed (``git merge main`` on a feature branch) are not
reviewed again, as pre-commit's pre-push stage promises (docs/pre-commit.md).

The pushed range ``FROM..TO`` of a branch that merged ``main`` holds every change of ``main``
since the branch began; comparing ``TO`` with ``FROM`` reviews them all again, and the gate's
own files ``main`` changed (a team acceptance merged there) look like the branch's own edit of
them. So the base is ``FROM`` with those merged commits merged into it, as git would merge them
(``git merge-tree --write-tree``): what is left is the branch's own work, the resolution of a
conflict included. Only a commit a remote already has counts as pushed; when the merge of it
conflicts, or more than one unrelated pushed history was merged in, the range is compared with
``FROM`` as before (more is reviewed, never less).
"""

from __future__ import annotations

from pathlib import Path

from review_gate.change.git import run


def own_base(root: Path, base: str, head: str) -> str:
    """The commit or tree ``head`` is compared with: ``base``, with the pushed history the range
    merges in merged into it."""
    listed = run(["rev-list", "--merges", "--parents", f"{base}..{head}"], root, check=False).stdout.decode()
    merged = {parent for line in listed.splitlines() for parent in line.split()[2:]}
    pushed = [p for p in sorted(merged) if _on_a_remote(root, p) and not _ancestor(root, p, base)]
    newest = [p for p in pushed if not any(other != p and _ancestor(root, p, other) for other in pushed)]
    if len(newest) != 1:
        return base
    result = run(["merge-tree", "--write-tree", "--no-messages", base, newest[0]], root, check=False)
    tree = result.stdout.decode().split("\n", 1)[0].strip()
    return tree if result.returncode == 0 and len(tree) in (40, 64) else base


def _on_a_remote(root: Path, commit: str) -> bool:
    found = run(["for-each-ref", "--count=1", "--contains", commit, "refs/remotes"], root, check=False)
    return found.returncode == 0 and bool(found.stdout.strip())


def _ancestor(root: Path, commit: str, of: str) -> bool:
    return run(["merge-base", "--is-ancestor", commit, of], root, check=False).returncode == 0


__all__ = ["own_base"]
