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
link's path. A link to a directory the same: each file under it that stands in the classes of
the link's path and more (``ln -s ../tests/fixtures app/plugins``) is reviewed whole, as a file the
change adds at ``app/plugins/...``; a link that would bring more than ``MAX_LINKED_FILES`` such
files, or one too large to read, leaves the link unread, which the gate counts as not reviewed.
Links inside the linked directory are not followed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from pathlib import Path

from review_gate.change import blobs, git, text_or_binary, whole_file_diff
from review_gate.change.diff_parser import parse_diff
from review_gate.errors import GitError
from review_gate.judging.path_classes import Classifier
from review_gate.judging.surroundings import GitSurroundings
from review_gate.models import FileChange, PRFacts, ReviewConfig, Unread

MOVES = ("renamed", "copied")
LINK_MODE = "120000"  # git's mode of a symbolic link
MAX_LINKED_FILES = 200  # files of a linked directory reviewed at the link's path; more are not read


def crossing(facts: PRFacts, classifier: Classifier) -> list[FileChange]:
    """The text files the change renames or copies from a path of other classes."""
    return [c for c in facts.files if c.status in MOVES and c.old_path is not None and not c.binary
            and c.unread is None and classifier.classes(c.old_path) != classifier.classes(c.path)]


def links(facts: PRFacts) -> dict[str, str]:
    """Link path -> the repository path it points at, for each link the change adds or re-points
    at a path inside the repository."""
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
        targets[change.path] = target
    return targets


def link_targets(facts: PRFacts, classifier: Classifier) -> dict[str, str]:
    """``links`` whose target is a path of other classes than the link's."""
    return {link: target for link, target in links(facts).items()
            if classifier.classes(target) != classifier.classes(link)}


def lenient_there(classifier: Classifier, real: str, seen_as: str) -> bool:
    """Whether ``real`` stands in every class ``seen_as`` is in, and more: a rule may pass over it
    where it stands and not where it is reached (a fixture reached as application code). A docs
    path that links examples is in another class, not in none: nothing there is judged stricter."""
    return classifier.classes(seen_as) < classifier.classes(real)


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


def as_added(path: str, data: bytes) -> FileChange:
    """A file the change brings in at ``path`` (through a linked directory): every line added."""
    name = whole_file_diff.quoted(b"b/" + path.encode("utf-8", "surrogateescape"))
    [change] = parse_diff(b"--- /dev/null\n+++ " + name + b"\n" + whole_file_diff.added_hunk(data))
    return change


def with_linked(facts: PRFacts, linked: Mapping[str, bytes], unread: Mapping[str, Unread]) -> PRFacts:
    """``facts`` with the files reached through linked directories added (path -> content) and
    the links that bring too many of them unread. Pure."""
    if not linked and not unread:
        return facts
    files = [c.model_copy(update={"unread": unread[c.path]}) if c.path in unread else c for c in facts.files]
    known = {c.path for c in files}
    files += [as_added(path, data) for path, data in linked.items() if path not in known]
    return facts.model_copy(update={"files": files})


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
    to_files = link_targets(facts, classifier)
    every_link = links(facts)
    if not moves and not every_link:
        return facts
    moved: dict[str, bytes] = {}
    linked: dict[str, bytes] = {}
    unread: dict[str, Unread] = {}
    try:
        moved.update((c.path, data) for c, data in blobs.new_contents(root, moves) if data is not None)
        unchanged = {c.old_path: c.path for c in moves if c.path not in moved and c.old_path is not None}
        if unchanged and facts.base is not None:
            found = blobs.files_at(root, facts.base, list(unchanged), blobs.MAX_BYTES)
            moved.update((unchanged[old], data) for old, data in found.items())
        moved.update(_targets(root, facts.head, to_files))
        directories = {link: target for link, target in every_link.items() if link not in moved}
        linked, unread = _linked_directories(root, facts.head, directories, classifier)
    except (GitError, OSError):
        pass  # what could be read is reviewed whole; the rest as the diff shows it
    return with_linked(reviewed_whole(facts, moved), linked, unread)


def _linked_directories(root: Path, head: str | None, directories: Mapping[str, str],
                        classifier: Classifier) -> tuple[dict[str, bytes], dict[str, Unread]]:
    """For each link to a directory, its files that stand in a class the link's path is not in,
    by the path they are reached at, with their content (as the change leaves them); and the
    links whose files are too many or too large to read, unread."""
    linked: dict[str, bytes] = {}
    unread: dict[str, Unread] = {}
    for link, target in directories.items():
        inside = _files_under(root, head, target)
        reached = {f"{link}/{real[len(target) + 1:]}": real for real in inside}
        lenient = {at: real for at, real in reached.items() if lenient_there(classifier, real, at)}
        if not lenient:
            continue
        contents = _contents(root, head, sorted(lenient.values())) if len(lenient) <= MAX_LINKED_FILES else {}
        missing = [real for real in lenient.values() if real not in contents]
        if missing:
            unread[link] = Unread(
                kind="unreadable",
                reason=f"{link} links {target}/, whose {len(lenient)} files in other path classes (tests, "
                       f"fixtures, examples...) would be code here; more than {MAX_LINKED_FILES}, or over "
                       f"{blobs.MAX_BYTES} bytes each, are not read",
                fix="link only what the application needs, or move the files into it as code")
            continue
        for at, real in lenient.items():
            data = text_or_binary.readable(contents[real])
            if data:  # binary, or empty: no line to review
                linked[at] = data
    return linked, unread


def _files_under(root: Path, head: str | None, target: str) -> list[str]:
    """The files (not links, not submodules) under directory ``target`` as the change leaves it;
    empty when it is not a directory."""
    if head is not None:
        listed = git.run(["ls-tree", "-r", "-z", "--full-tree", head, "--", target + "/"], root, check=False).stdout
        out = []
        for entry in listed.split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            if meta.startswith((b"100644 blob", b"100755 blob")):
                out.append(name.decode("utf-8", "surrogateescape"))
        return out
    base = root.resolve()
    top = (root / target).resolve()
    if not top.is_relative_to(base) or not top.is_dir():
        return []
    return [str(path.relative_to(base).as_posix()) for path in sorted(top.rglob("*"))
            if path.is_file() and not path.is_symlink() and not any(p.is_symlink() for p in path.parents
                                                                    if p.is_relative_to(top))]


def _contents(root: Path, head: str | None, paths: list[str]) -> dict[str, bytes]:
    if head is not None:
        return blobs.files_at(root, head, paths, blobs.MAX_BYTES)
    out = {}
    for path in paths:
        file = root / path
        if file.stat().st_size <= blobs.MAX_BYTES:
            out[path] = file.read_bytes()
    return out


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
