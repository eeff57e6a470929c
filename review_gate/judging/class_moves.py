"""Files the change moves across path classes are reviewed whole, as new to where they land.

A rule may skip a file in a test, a fixture, docs or an example, and judge only the lines a
change adds. So a change that renamed ``tests/fixtures/evil.py`` to ``app/ev.py`` (no line
added, or one) brought the fixture's ``eval(request.args[...])`` into the application unread:
a pass. Here a file renamed or copied from a path of other classes (by the trusted
``.gitattributes`` and the rules' globs, as ``refine`` classes them) becomes a file whose every
line is added, its old path kept, so every agent reads it where it now stands and no line of it
passes for pre-existing (``refine`` only takes lines from files of the same classes).

A symbolic link the change adds or points elsewhere is the same move by other means
(``ln -s ../tests/fixtures/evil.py app/ev.py``: Python imports the fixture as ``app.ev``): a link
to a file of the repository in other classes is reviewed as that file's content, whole, at the
link's path. A link to a directory is not followed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from pathlib import Path

from review_gate.change import blobs, whole_file_diff
from review_gate.change.diff_parser import parse_diff
from review_gate.errors import GitError
from review_gate.judging.path_classes import Classifier
from review_gate.judging.surroundings import GitSurroundings
from review_gate.models import FileChange, PRFacts, ReviewConfig

MOVES = ("renamed", "copied")
LINK_MODE = "120000"  # git's mode of a symbolic link


def crossing(facts: PRFacts, classifier: Classifier) -> list[FileChange]:
    """The text files the change renames or copies from a path of other classes."""
    return [c for c in facts.files if c.status in MOVES and c.old_path is not None and not c.binary
            and c.unread is None and classifier.classes(c.old_path) != classifier.classes(c.path)]


def link_targets(facts: PRFacts, classifier: Classifier) -> dict[str, str]:
    """Link path -> the repository path it points at, for each link the change adds or re-points
    at a path of other classes inside the repository."""
    targets = {}
    for change in facts.files:
        if change.new_mode != LINK_MODE or change.status == "deleted":
            continue
        added = [line.text for hunk in change.hunks for line in hunk.lines if line.added]
        if len(added) != 1 or not added[0] or added[0].startswith("/"):
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(change.path), added[0]))
        if target.startswith("../") or target in (".", "..") or target == change.path:
            continue
        if classifier.classes(target) != classifier.classes(change.path):
            targets[change.path] = target
    return targets


def as_new(change: FileChange, data: bytes) -> FileChange:
    """``change`` with ``data`` as its every line added (its path, old path and status kept)."""
    name = whole_file_diff.quoted(b"b/" + change.path.encode("utf-8", "surrogateescape"))
    diff = b"--- /dev/null\n+++ " + name + b"\n" + whole_file_diff.added_hunk(data)
    [whole] = parse_diff(diff) if data else [change.model_copy(update={"hunks": [], "patch": ""})]
    return change.model_copy(update={"hunks": whole.hunks, "patch": whole.patch, "added": whole.added, "removed": 0})


def reviewed_whole(facts: PRFacts, moved: Mapping[str, bytes]) -> PRFacts:
    """``facts`` with each file of ``moved`` (path -> its new content) made new whole. Pure."""
    if not moved:
        return facts
    return facts.model_copy(update={"files": [as_new(c, moved[c.path]) if c.path in moved else c
                                              for c in facts.files]})


def read_moves(facts: PRFacts, config: ReviewConfig, root: Path | None) -> PRFacts:
    """``reviewed_whole`` with the moved files' content read from the repository: the blob the
    diff names, else (a rename with no edit shows none) the file it was in the base commit; a
    link's, its target's as the change leaves it. Without a repository, or content that cannot be
    had (a link to a directory), the file stays as the diff shows it."""
    if root is None or not facts.files:
        return facts
    around = GitSurroundings(root, facts.base)
    classifier = Classifier(config.rules.path_classes, around.gitattributes())
    moves = crossing(facts, classifier)
    links = link_targets(facts, classifier)
    if not moves and not links:
        return facts
    moved: dict[str, bytes] = {}
    try:
        moved.update((c.path, data) for c, data in blobs.new_contents(root, moves) if data is not None)
        unchanged = {c.old_path: c.path for c in moves if c.path not in moved and c.old_path is not None}
        if unchanged and facts.base is not None:
            found = blobs.files_at(root, facts.base, list(unchanged), blobs.MAX_BYTES)
            moved.update((unchanged[old], data) for old, data in found.items())
        moved.update(_targets(root, facts.head, links))
    except (GitError, OSError):
        pass  # what could be read is reviewed whole; the rest as the diff shows it
    return reviewed_whole(facts, moved)


def _targets(root: Path, head: str | None, links: Mapping[str, str]) -> dict[str, bytes]:
    """Each link's target content as the change leaves it: in ``head``, else in the working tree
    (a regular file inside ``root``, reached through no link out of it)."""
    if not links:
        return {}
    if head is not None:
        found = blobs.files_at(root, head, sorted(set(links.values())), blobs.MAX_BYTES)
        return {link: found[target] for link, target in links.items() if target in found}
    inside = root.resolve()
    out = {}
    for link, target in links.items():
        path = (root / target).resolve()
        if path.is_relative_to(inside) and path.is_file() and path.stat().st_size <= blobs.MAX_BYTES:
            out[link] = path.read_bytes()
    return out
