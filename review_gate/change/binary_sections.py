"""What a diff shows as binary, read again by content: stage 1's second look.

git prints ``Binary files a/x and b/x differ`` for a file it takes for binary, and no line of
it. Attributes decide that before content does (``*.py -diff``, ``binary``, a diff driver with
``binary = true``), and the change under review may bring those attributes itself; UTF-16 text
and text with a stray NUL are binary to git as well. The change must never decide how it is
judged, so every such section is decided again from the file's bytes (``review_gate.change.text_or_binary``):

- text: the section is replaced by the text diff of the two sides (git's own algorithm, run
  without attributes), UTF-16/32 decoded first; reviewers see it as any text change;
- binary by content: kept, and marked ``binary`` (listed as not inspected);
- content that could not be read, or a ``--diff`` section that carries none (``Binary files
  differ``, or a ``delta`` whose base the repository lacks): kept, and marked ``unreadable``,
  which counts against the gate.

The sides are read from where the change is: blobs (by the full ids of the section's ``index``
line), the working tree's file for a working-tree change, and a ``GIT binary patch`` of a diff
file (``review_gate.change.binary_patches``), whose literal or delta ``git apply`` would write.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from review_gate.change import binary_formats, binary_patches, blobs, git, text_or_binary, whole_file_diff
from review_gate.change.diff_parser import parse_diff
from review_gate.errors import ReviewGateError
from review_gate.models import FileChange, Unread, UnreadKind
from review_gate.state import open_databases

READ_LIMIT = 16 * 1024 * 1024  # a side larger than this is classified by its head, never read whole

_INDEX = re.compile(rb"^index ([0-9a-f]+)\.\.([0-9a-f]+)", re.MULTILINE)
_BODY = (b"Binary files ", b"GIT binary patch", b"--- ", b"@@ ")  # where a section's header ends


@dataclass(frozen=True)
class Where:
    """Where the sides of a change can be read: ``root``, the repository (None for a diff read
    outside one); ``worktree``, the new side is the working tree's file; ``patch``, the diff is
    a file given to review (its binary patches carry content, its ids are only claims)."""

    root: Path | None
    worktree: bool = False
    patch: bool = False


@dataclass(frozen=True)
class _Side:
    data: bytes
    whole: bool  # False: only the first bytes were read (the file is over READ_LIMIT), or kept
    text: str | None = None  # a binary blob's text inside (binary_formats.text_inside), when only its head is kept


def reveal(files: list[FileChange], where: Where) -> list[FileChange]:
    """``files`` with each section git showed as binary decided by content (see the module).

    >>> reveal([], Where(root=None))
    []
    """
    hidden = [_hidden(f) for f in files]
    if not any(hidden):
        return files  # the common case costs one scan of each section for a NUL byte
    ids = [i for f, h in zip(files, hidden, strict=True) if h for i in _ids(_section(f))]
    store = _Store(where.root, ids, whole_binaries=where.patch)
    return [_revealed(f, where, store) if h else f for f, h in zip(files, hidden, strict=True)]


def _hidden(change: FileChange) -> bool:
    """git showed no line a reviewer can read: binary to git, or lines holding NUL bytes (UTF-16
    shown as text because a ``diff`` attribute says so: every other byte of its text is zero)."""
    return change.binary or "\0" in change.patch


def _section(change: FileChange) -> bytes:
    return change.patch.encode("utf-8", "surrogateescape")


def _ids(section: bytes) -> tuple[str, str]:
    """The old and new object ids of the section's ``index`` line ("" for none, or all zeros)."""
    match = _INDEX.search(section)
    if match is None:
        return "", ""
    old, new = (i.decode("ascii") if i.strip(b"0") else "" for i in match.groups())
    return old, new


class _Store:
    """The blobs the sections name, read in one go; and the new content of each section read so
    far, so a later delta of a patch series finds its base."""

    def __init__(self, root: Path | None, ids: list[str], *, whole_binaries: bool) -> None:
        """``whole_binaries``: keep a binary blob whole (a binary delta's base), else its head
        only, which is all that tells it is binary: a change of many large images stays small."""
        self.root = root
        self.keep = whole_binaries
        self.sides: dict[str, _Side] = {}
        if root is None or not ids:
            return
        sizes = blobs.sizes(root, ids)
        small = {i: size for i, size in sizes.items() if size <= READ_LIMIT}
        self.sides.update((i, self._kept(data)) for i, data in blobs.read_sized(root, small))
        for large in (i for i, size in sizes.items() if size > READ_LIMIT):
            self.sides[large] = _Side(blobs.head(root, large, text_or_binary.BINARY_PROBE), False)

    def _kept(self, data: bytes) -> _Side:
        if self.keep or text_or_binary.readable(data[:text_or_binary.BINARY_PROBE]) is not None:
            return _Side(data, True)
        return _Side(data[:text_or_binary.BINARY_PROBE], False, binary_formats.text_inside(data))

    def get(self, object_id: str) -> _Side | None:
        return self.sides.get(object_id) if object_id else None


def _revealed(change: FileChange, where: Where, store: _Store) -> FileChange:
    section = _section(change)
    old_id, new_id = _ids(section)
    added = change.old_path is None or b"\nnew file mode " in section
    deleted = b"\ndeleted file mode " in section
    old = None if added else store.get(old_id)
    if deleted:
        return _rewritten(change, section, old, None) or change
    new = _new_side(change, section, where, store, old, new_id)
    if new is not None and new_id and where.patch:  # a later section of a patch series may build on it
        store.sides.setdefault(new_id, new)
    if new is None:
        return _shown_as_text(change) or _unread(change, "unreadable", *_missing(change.path, where))
    text = text_or_binary.readable(new.data)
    if text is None:  # its text (metadata) is still read by the secret rules: a key in it leaks all the same
        inside = new.text if new.text is not None else binary_formats.text_inside(new.data)
        return _unread(change, "binary", f"{change.path} is binary by content: no agent reads it").model_copy(
            update={"binary_text": inside})
    if not new.whole:
        return _unread(change, "unreadable",
                       f"{change.path}: text git showed as binary, over {READ_LIMIT // 2**20} MiB, too large to "
                       "read again", "review it by other means, or keep a text file this large out of the change")
    return _rewritten(change, section, old, text) or _unread(
        change, "unreadable", f"{change.path}: text git showed as binary, whose diff could not be made again",
        "run again; if it persists, review the file by other means and report the case")


def _new_side(change: FileChange, section: bytes, where: Where, store: _Store, old: _Side | None,
              new_id: str) -> _Side | None:
    if where.worktree and where.root is not None:
        return _worktree_file(where.root, change.path)
    if where.patch and b"\nGIT binary patch" in section:
        hunk = binary_patches.forward_hunk(section)
        if hunk is None:
            return None
        if hunk.method == "literal":
            return _Side(hunk.data, True)
        built = binary_patches.apply_delta(old.data, hunk.data) if old is not None and old.whole else None
        return _Side(built, True) if built is not None else None
    return store.get(new_id)


def _shown_as_text(change: FileChange) -> FileChange | None:
    """A section git showed as text lines with NUL bytes, whose sides cannot be read (a diff file
    made with ``--text``): kept as it is when its added lines read as text with a few stray NULs;
    None when they may be wide text, which its lines split at every byte 0x0A cannot show."""
    if change.binary:
        return None
    added = "\n".join(ln.text for h in change.hunks for ln in h.lines if ln.added)
    data = added.encode("utf-8", "surrogateescape")
    wide = text_or_binary.wide_encoding(data[:text_or_binary.BINARY_PROBE]) is not None
    return change if not wide and text_or_binary.readable(data) is not None else None


def _worktree_file(root: Path, path: str) -> _Side | None:
    place = root / path
    try:
        info = place.lstat()
        if stat.S_ISLNK(info.st_mode):
            return _Side(os.readlink(place).encode("utf-8", "surrogateescape"), True)
        # a committed state.db this process has open: closing it would drop the connection's locks
        if not stat.S_ISREG(info.st_mode) or open_databases.in_use(place):
            return None
        with place.open("rb") as handle:
            data = handle.read(READ_LIMIT + 1)
    except OSError:
        return None
    return _Side(data, True) if len(data) <= READ_LIMIT else _Side(data[:text_or_binary.BINARY_PROBE], False)


def _missing(path: str, where: Where) -> tuple[str, str]:
    """Why a section's new content could not be read, and how to have it read."""
    if where.patch:
        return (f"{path}: the diff file does not carry its content ('Binary files differ', a binary delta whose "
                "base this repository lacks, or a binary patch that cannot be read)",
                "review the git range instead (--base/--head), or make the diff with "
                "`git diff --binary` or `git format-patch --binary`, in the repository that has the base")
    return (f"{path}: git showed it as binary and its content could not be read",
            "make the file readable (in a partial clone, fetch its objects) and run again")


def _rewritten(change: FileChange, section: bytes, old: _Side | None, new: bytes | None) -> FileChange | None:
    """The change as a text diff of its old side and ``new``, the new side's text (None: a
    deletion); None when that cannot be made. An old side that is binary, unknown or too large
    counts as empty, so every new line is shown as added."""
    old_text = text_or_binary.readable(old.data) if old is not None and old.whole else None
    new_text = new or b""
    if not new_text and not old_text:
        return change  # nothing on either side to show (a binary deleted, an empty file)
    if not old_text:
        hunks: bytes | None = whole_file_diff.added_hunk(new_text)
    elif not new_text:
        hunks = whole_file_diff.removed_hunk(old_text)
    else:
        hunks = git.diff_texts(old_text, new_text)
    if hunks is None:
        return None
    try:
        parsed = parse_diff(_header(section, change, deleted=new is None) + hunks)
    except ReviewGateError:
        return None
    return parsed[0] if len(parsed) == 1 else None


def _header(section: bytes, change: FileChange, *, deleted: bool) -> bytes:
    """The section's own header lines (paths, modes, rename, index) and ---/+++ lines for its text."""
    kept = []
    for line in section.split(b"\n"):
        if line.startswith(_BODY):
            break
        kept.append(line)
    old = b"/dev/null" if change.old_path is None and b"\nnew file mode " in section else \
        whole_file_diff.quoted(b"a/" + (change.old_path or change.path).encode("utf-8", "surrogateescape"))
    new = b"/dev/null" if deleted else whole_file_diff.quoted(b"b/" + change.path.encode("utf-8", "surrogateescape"))
    return b"\n".join(kept) + b"\n--- " + old + b"\n+++ " + new + b"\n"


def _unread(change: FileChange, kind: UnreadKind, reason: str, fix: str = "") -> FileChange:
    return change.model_copy(update={"unread": Unread(kind=kind, reason=reason, fix=fix)})


__all__ = ["READ_LIMIT", "Where", "reveal"]
