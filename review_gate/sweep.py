"""Sweeps: the files of a repository as they are, reviewed as if each were added whole.

A sweep's change is synthesized: every file of the working tree that git lists (tracked, and
untracked but not ignored; within the PATHSPECs; with ``since``, only those changed since that
commit) becomes an added file whose every line is added, written as the git diff that would add
it (``new file mode``, its blob id on the ``index`` line) and read by the same parser as any
diff. So classification, policies, agents, findings, the gate and the reports are the ones a
diff gets, and freshness too: a file's input key is its synthesized patch and blob id, which
are the same as long as the file is, so a second sweep of an unchanged tree calls no agent.

Binary files (a NUL byte in their first 8000 bytes, git's test) are added with no lines, as
the diff path has them. Files over ``max_bytes`` are not read: each becomes an
``uncovered_file`` gap that says so. Symbolic links are taken as git stores them (their target,
as text), never followed; submodules are left out. The gate's own files (its configuration,
state, baseline and the reports it wrote) are no part of a sweep.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from review_gate import git
from review_gate.diff import parse_diff
from review_gate.errors import UsageError
from review_gate.models import Gap, PRFacts
from review_gate.own_files import OwnFiles, blob_ids

MAX_FILE_BYTES = 2_000_000  # a file larger than this is not read (a gap says so)
BINARY_PROBE = 8000  # git's buffer_is_binary looks for a NUL byte in this many bytes


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
    for raw in listed:
        section = _section(root, raw, max_bytes, sha256, gaps)
        if section is not None:
            sections.append(section)
    files = parse_diff(b"".join(sections))
    listed_files = len(files)
    if own is not None:
        files = [f for f in files if not own.left_out(f)]
    head = git.resolve(root, "HEAD") if git.has_head(root) else None
    where = f" since {since}" if since is not None else ""
    scope = " ".join(pathspecs) if pathspecs else "the working tree"
    source = f"sweep of {scope}{where}" + (f" at {head[:12]}" if head else "")
    # The base is the commit the trusted inputs (the baseline) are read from: the one the sweep
    # is relative to, else HEAD.
    return Swept(PRFacts(source=source, base=since_commit or head, head=None, files=files), gaps, head,
                 left_out=listed_files - len(files))


def _section(root: Path, raw: bytes, max_bytes: int, sha256: bool, gaps: list[Gap]) -> bytes | None:
    """The git diff that adds file ``raw`` whole, None for what a sweep leaves out."""
    path = root / os.fsdecode(raw)
    try:
        info = path.lstat()
    except OSError:
        return None  # deleted in the working tree, or unreadable: nothing there to review
    if stat.S_ISLNK(info.st_mode):
        data, mode = os.readlink(path).encode("utf-8", "surrogateescape"), "120000"
    elif stat.S_ISREG(info.st_mode):
        if info.st_size > max_bytes:
            gaps.append(_too_large(raw, info.st_size, max_bytes))
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if len(data) > max_bytes:  # it grew meanwhile
            gaps.append(_too_large(raw, len(data), max_bytes))
            return None
        mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    else:
        return None  # a submodule's directory, a FIFO...
    blob = blob_ids(data)[1 if sha256 else 0]
    old, new = _quoted(b"a/" + raw), _quoted(b"b/" + raw)
    head = b"diff --git %s %s\nnew file mode %s\nindex %s..%s\n" % (
        old, new, mode.encode(), b"0" * 7, blob.encode())
    if b"\0" in data[:BINARY_PROBE]:
        return head + b"Binary files /dev/null and %s differ\n" % new
    if not data:
        return head
    lines = data.split(b"\n")
    ends_open = lines[-1] != b""
    if not ends_open:
        lines.pop()
    body = b"".join(b"+" + line + b"\n" for line in lines)
    if ends_open:
        body += b"\\ No newline at end of file\n"
    return head + b"--- /dev/null\n+++ %s\n@@ -0,0 +1,%d @@\n" % (new, len(lines)) + body


def _too_large(raw: bytes, size: int, limit: int) -> Gap:
    path = raw.decode("utf-8", "replace")
    return Gap(kind="uncovered_file", subject=path,
               reason=f"{path} is {size} bytes, over the sweep's limit of {limit}: no agent was shown it",
               suggestion="review it on its own (review-gate sweep --max-file-bytes N PATH), or exclude it "
                          "from the sweep with a PATHSPEC such as ':!PATH'")


_PLAIN = set(range(0x21, 0x7F)) - {ord('"'), ord("\\")}
_ESCAPED = {ord("\n"): b"\\n", ord("\t"): b"\\t", ord('"'): b'\\"', ord("\\"): b"\\\\"}


def _quoted(name: bytes) -> bytes:
    """``name`` as git writes it in a diff header: C-quoted when it holds anything unusual (a
    quote, a backslash, a control or non-ASCII byte, a space at either end)."""
    inner = name.strip(b" ")
    if all(b in _PLAIN or b == 0x20 for b in name) and inner == name:
        return name
    out = bytearray(b'"')
    for byte in name:
        if byte in _PLAIN or byte == 0x20:
            out.append(byte)
        else:
            out += _ESCAPED.get(byte, b"\\%03o" % byte)
    return bytes(out + b'"')


__all__ = ["MAX_FILE_BYTES", "Swept", "sweep_facts"]
