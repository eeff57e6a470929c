"""Sweeps: the files of a repository as they are, reviewed as if each were added whole.

A sweep's change is synthesized: every file of the working tree that git lists (tracked, and
untracked but not ignored; within the PATHSPECs; with ``since``, only those changed since that
commit) becomes an added file whose every line is added, written as the git diff that would add
it (``new file mode``, its blob id on the ``index`` line) and read by the same parser as any
diff. So classification, policies, agents, findings, the gate and the reports are the ones a
diff gets, and freshness too: a file's input key is its synthesized patch and blob id, which
are the same as long as the file is, so a second sweep of an unchanged tree calls no agent.

Files are judged by content as a diff's are (``review_gate.change.text_or_binary``): UTF-16/32 text is
decoded and reviewed, text with a stray NUL byte is reviewed as it is, and binary files are added
with no lines and listed as not inspected. A file over ``max_bytes`` is not read whole: when its
first bytes are binary it is listed as a binary file; when they are text it is unreviewed
content, which counts against the gate (and an ``uncovered_file`` gap says how to review it).
Symbolic links are taken as git stores them (their target, as text), never followed; submodules
are left out. The gate's own files (its configuration, state, baseline and the reports it
wrote) are never reviewed as code; those that hold data and that git tracks are scanned by the
secret rules only, as in a review of a change (``own_files.sealed``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from review_gate.change import binary_formats, git, text_or_binary, whole_file_diff
from review_gate.change.blobs import blob_ids
from review_gate.change.diff_parser import parse_diff
from review_gate.change.own_files import OwnFiles
from review_gate.errors import UsageError
from review_gate.models import Gap, PRFacts, Unread
from review_gate.models.facts import SWEEP_SOURCE
from review_gate.state import open_databases

MAX_FILE_BYTES = 2_000_000  # a file larger than this is not read whole (it is unreviewed unless binary)


@dataclass(frozen=True)
class Swept:
    """A sweep's change, the files it left out for their size, and the commit it was made at."""

    facts: PRFacts
    gaps: list[Gap]
    head: str | None = None
    left_out: int = 0  # the gate's own files among those listed: not reviewed, and counted in the report


def sweep_facts(cwd: Path, root: Path, pathspecs: Sequence[str] = (), *, since: str | None = None,
                own: OwnFiles | None = None, max_bytes: int = MAX_FILE_BYTES) -> Swept:
    """The change a sweep reviews: every listed file added whole. ``cwd``: where the PATHSPECs
    are relative to (inside ``root``, the repository)."""
    listed = git.ls_files(cwd, pathspecs)
    if pathspecs and not listed:
        raise UsageError(f"no file of the repository matches {' '.join(pathspecs)}",
                         fix="name files or directories git tracks (see `git ls-files`), or give no PATHSPEC")
    since_commit = git.resolve(root, since) if since is not None else None
    if since_commit is not None:
        changed = git.changed_since(root, since_commit)
        listed = [p for p in listed if p in changed]
    sha256 = git.object_format(root) == "sha256"
    sections: list[bytes] = []
    gaps: list[Gap] = []
    unread: dict[str, Unread] = {}
    inside: dict[str, str] = {}  # the text inside a binary file: the secret rules read it (binary_formats)
    for raw in listed:
        section = _section(root, raw, max_bytes, sha256, gaps, unread, inside)
        if section is not None:
            sections.append(section)
    files = [f.model_copy(update={"unread": unread[f.path], "binary_text": inside.get(f.path, "")})
             if f.path in unread else f for f in parse_diff(b"".join(sections))]
    listed_files = len(files)
    if own is not None:  # its data files go on to the plan, which has the secret rules scan those git tracks;
        # its configuration does not: a sweep is no change of it (a review of a change scans it)
        files = [f for f in files if not own.left_out(f) or (own.holds_data(f) and not own.is_configuration(f.path))]
    head = git.resolve(root, "HEAD") if git.has_head(root) else None
    where = f" since {since}" if since is not None else ""
    scope = " ".join(pathspecs) if pathspecs else "the working tree"
    source = f"{SWEEP_SOURCE}{scope}{where}" + (f" at {head[:12]}" if head else "")
    # The base is the commit the trusted inputs (the baseline) are read from: the one the sweep
    # is relative to, else HEAD.
    return Swept(PRFacts(source=source, base=since_commit or head, head=None, files=files), gaps, head,
                 left_out=listed_files - len(files))


def _section(root: Path, raw: bytes, max_bytes: int, sha256: bool, gaps: list[Gap],
             unread: dict[str, Unread], inside: dict[str, str]) -> bytes | None:
    """The git diff that adds file ``raw`` whole, None for what a sweep leaves out; what no agent
    will read of it goes into ``unread`` (by path) and ``gaps``."""
    path = root / os.fsdecode(raw)
    name = raw.decode("utf-8", "replace")
    try:
        info = path.lstat()
    except OSError:
        return None  # deleted in the working tree, or unreadable: nothing there to review
    if stat.S_ISLNK(info.st_mode):
        data, mode = os.readlink(path).encode("utf-8", "surrogateescape"), git.LINK_MODE
    elif stat.S_ISREG(info.st_mode):
        mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
        if open_databases.in_use(path):  # the run state this process has open: reading (and closing) it drops its locks
            return None
        try:
            with path.open("rb") as handle:  # a file over the limit: its first bytes only
                data = handle.read(text_or_binary.BINARY_PROBE if info.st_size > max_bytes else max_bytes + 1)
        except OSError:
            return None
        if info.st_size > max_bytes or len(data) > max_bytes:  # over the limit, or it grew meanwhile
            return _oversized(raw, name, mode, data, max(info.st_size, len(data)), max_bytes, gaps, unread)
    else:
        return None  # a submodule's directory, a FIFO...
    blob = blob_ids(data)[1 if sha256 else 0]
    head = _header(raw, mode, blob)
    text = text_or_binary.readable(data)
    if text is None:
        unread[name] = Unread(kind="binary", reason=f"{name} is binary by content: no agent reads it")
        inside[name] = binary_formats.text_inside(data)
        return head + b"Binary files /dev/null and %s differ\n" % whole_file_diff.quoted(b"b/" + raw)
    header = b"--- /dev/null\n+++ %s\n" % whole_file_diff.quoted(b"b/" + raw) if text else b""
    return head + header + whole_file_diff.added_hunk(text)


def _header(raw: bytes, mode: str, blob: str | None) -> bytes:
    old, new = whole_file_diff.quoted(b"a/" + raw), whole_file_diff.quoted(b"b/" + raw)
    index = b"index %s..%s\n" % (b"0" * 7, blob.encode()) if blob else b""
    return b"diff --git %s %s\nnew file mode %s\n%s" % (old, new, mode.encode(), index)


def _oversized(raw: bytes, name: str, mode: str, data: bytes, size: int, limit: int, gaps: list[Gap],
               unread: dict[str, Unread]) -> bytes:
    """A file over the limit, added with no lines: binary by its first bytes, else unreviewed text."""
    head = _header(raw, mode, None)
    if text_or_binary.readable(data[:text_or_binary.BINARY_PROBE]) is None:
        unread[name] = Unread(kind="binary", reason=f"{name} is binary by content: no agent reads it")
        return head + b"Binary files /dev/null and %s differ\n" % whole_file_diff.quoted(b"b/" + raw)
    gap = _too_large(raw, size, limit)
    gaps.append(gap)
    unread[name] = Unread(kind="unreadable", reason=gap.reason, fix=gap.suggestion)
    return head


def _too_large(raw: bytes, size: int, limit: int) -> Gap:
    path = raw.decode("utf-8", "replace")
    return Gap(kind="uncovered_file", subject=path,
               reason=f"{path} is {size} bytes, over the sweep's limit of {limit}: no agent was shown it",
               suggestion="review it on its own (review-gate sweep --max-file-bytes N PATH), or exclude it "
                          "from the sweep with a PATHSPEC such as ':!PATH'")


__all__ = ["MAX_FILE_BYTES", "Swept", "sweep_facts"]
