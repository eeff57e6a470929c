"""Files the change moves across path classes are reviewed whole, as new to where they land.

A rule may skip a file in a test, a fixture, docs or an example, and judge only the lines a
change adds. So a change that renamed ``tests/fixtures/evil.py`` to ``app/ev.py`` (no line
added, or one) brought the fixture's ``eval(request.args[...])`` into the application unread:
a pass. Here a file renamed or copied from a path of other classes (by the trusted
``.gitattributes`` and the rules' globs, as ``refine`` classes them, its new path taking only the
classes a file the change adds may claim) becomes a file whose every
line is added, its old path kept, so every agent reads it where it now stands and no line of it
passes for pre-existing (``refine`` only takes lines from files of the same classes).

A symbolic link the change adds or points elsewhere is the same move by other means
(``ln -s ../tests/fixtures/evil.py app/ev.py``: Python imports the fixture as ``app.ev``): a link
to a file of the repository in other classes is reviewed as that file's content, whole, at the
link's path. A link to a directory the same: each file under it that stands in the classes of
the link's path and more (``ln -s ../tests/fixtures app/plugins``) is reviewed whole, as a file the
change adds at ``app/plugins/...``; a link that would bring more than ``MAX_LINKED_FILES`` such
files, or one too large to read, leaves the link unread, which the gate counts as not reviewed.
A link's target is where it really points, every link on the way followed (``app/t2 -> t``,
``app/t -> ../tests/fixtures``: ``change.left_tree``); links inside a linked directory are not
followed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path

from review_gate.change import blobs, git, text_or_binary, whole_file_diff
from review_gate.change.diff_parser import parse_diff
from review_gate.change.git import LINK_MODE
from review_gate.change.left_tree import LeftTree
from review_gate.errors import GitError
from review_gate.judging.path_classes import MOVES, Classifier, moved_across
from review_gate.judging.surroundings import GitSurroundings
from review_gate.models import FileChange, PRFacts, ReviewConfig, Unread

MAX_LINKED_FILES = 200  # files of a linked directory reviewed at the link's path; more are not read


def crossing(facts: PRFacts, classifier: Classifier,
             base_directories: Callable[[list[str]], AbstractSet[str]] | None = None) -> list[FileChange]:
    """The text files the change renames or copies from a path of other classes, and every file it
    copies: git reads a range, a working tree and the index with ``-M`` alone, so a copy is a file
    added whole there; only a diff given as input (``git diff -C``) shows one as a copy, whose
    lines the section does not show (issue 29). Other classes by their names, or by what the new
    path may claim (``Classifier.claimed``: ``tests/helper.py`` moved to a new ``app/spec/`` is no
    longer a test); ``base_directories``: which directories the base holds (None: no base to ask,
    the names alone decide)."""
    moves = [c for c in facts.files if c.status in MOVES and c.old_path is not None and not c.binary
             and c.unread is None]
    if base_directories is None:
        return [c for c in moves if c.status == "copied" or classifier.classes(c.old_path or "") !=
                classifier.classes(c.path)]
    roots = sorted({root for c in moves if c.status != "copied" for root in classifier.roots(c.path).values()
                    if root})
    known = base_directories(roots) if roots else set()
    return [c for c in moves if c.status == "copied" or moved_across(classifier, c, known)]


def unread_moves(facts: PRFacts, moves: list[FileChange]) -> PRFacts:
    """``facts`` with each of ``moves`` unread: its lines could not be had, and shown only as the
    diff shows them (none, for a whole rename or copy) they were reviewed as nothing. Pure."""
    if not moves:
        return facts
    lost = {c.path: Unread(kind="unreadable",
                           reason=f"{c.path} is a {'copy' if c.status == 'copied' else 'rename'} of {c.old_path}, "
                                  "to be reviewed whole, and neither the diff nor the repository has its content",
                           fix="give the diff with every line (git diff --no-renames), or with full blob ids "
                               "(--full-index) where the repository has the blobs, or review the commits as a range")
            for c in moves}
    return facts.model_copy(update={"files": [c.model_copy(update={"unread": lost[c.path]}) if c.path in lost else c
                                              for c in facts.files]})


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
    if not facts.files:
        return facts
    if root is None:  # a diff given outside a repository: nothing to read a move's lines from; no
        # base to ask which directories it holds either, so a move keeps the classes of its names
        return unread_moves(facts, crossing(facts, Classifier(config.rules.path_classes, None)))
    around = GitSurroundings(root, facts.base)
    classifier = Classifier(config.rules.path_classes, around.gitattributes())
    moves = crossing(facts, classifier, around.base_directories)
    every_link = links(facts)
    if not moves and not every_link:
        return facts
    moved: dict[str, bytes] = {}
    linked: dict[str, bytes] = {}
    unread: dict[str, Unread] = {}
    try:
        moved.update((c.path, data) for c, data in blobs.new_contents(root, moves) if data is not None)
        unchanged = {c.old_path: c.path for c in moves if c.path not in moved and c.old_path is not None}
        # a whole move shows no blob: its lines are the old path's in the base commit. A diff given
        # as input names no base: the old path is read at the merge-base of HEAD with the default
        # branch, which the branch did not write (HEAD and the working tree it may have: a clean
        # copy of the old path there would stand for what the diff brings onto main), and only for
        # a section with no hunk (an edited copy's old content is not its new one)
        start = facts.base
        if start is None:
            start = git.default_base(root)
            unchanged = {old: new for old, new in unchanged.items() if not _edited(facts, new)}
        if unchanged and start is not None:
            found = blobs.files_at(root, start, list(unchanged), blobs.MAX_BYTES)
            moved.update((unchanged[old], data) for old, data in found.items())
        if every_link:
            tree = LeftTree(root, facts.head)
            # where each link really points, every link on the way followed
            real = {link: points for link, target in every_link.items()
                    if (points := tree.resolve(target)) is not None and points != link}
            to_files = {link: target for link, target in real.items()
                        if classifier.classes(target) != classifier.classes(link)}
            files = tree.contents(list(to_files.values()))
            moved.update((link, files[target]) for link, target in to_files.items() if target in files)
            directories = {link: target for link, target in real.items() if link not in moved}
            linked, unread = _linked_directories(tree, directories, classifier)
    except (GitError, OSError):
        pass  # what could be read is reviewed whole; the rest as the diff shows it
    whole = with_linked(reviewed_whole(facts, moved), linked, unread)
    return unread_moves(whole, [c for c in moves if c.path not in moved])


def _edited(facts: PRFacts, path: str) -> bool:
    return any(c.hunks for c in facts.files if c.path == path)


def _linked_directories(tree: LeftTree, directories: Mapping[str, str],
                        classifier: Classifier) -> tuple[dict[str, bytes], dict[str, Unread]]:
    """For each link to a directory, its files that stand in the link path's classes and more,
    by the path they are reached at, with their content (as the change leaves them); and the
    links whose files are too many or too large to read, unread."""
    linked: dict[str, bytes] = {}
    unread: dict[str, Unread] = {}
    for link, target in directories.items():
        inside = tree.files_under(target)
        reached = {f"{link}/{real[len(target) + 1:]}": real for real in inside}
        lenient = {at: real for at, real in reached.items() if lenient_there(classifier, real, at)}
        if not lenient:
            continue
        contents = tree.contents(sorted(lenient.values())) if len(lenient) <= MAX_LINKED_FILES else {}
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
