"""Where a loop keeps its files in the repository, and how they are written.

    .review-gate/sessions/<task>/<iteration>/plan.prompt.md, plan.response.md, ...
    .review-gate/hil/<task>.json               the hand-off item after max_iterations NO_GO
    .review-gate/review-logs/<task>.jsonl      one decision record per review (seed 001)

Each of the three folders gets a ``.gitignore`` holding ``*`` when the loop creates it: the files
are per machine, and an untracked session file must not become part of the change the gate
reviews next. A folder a symbolic link leads out of the repository is refused, as for the state
file. Files are replaced atomically, so a crash leaves the old content or the new, never half.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from review_gate.change.input_files import MIB, regular_bytes, regular_sha256
from review_gate.errors import InputError
from review_gate.loop.model import content_name

GATE_DIR = ".review-gate"
FOLDERS = ("sessions", "hil", "review-logs")
MAX_CONTENT_BYTES = 32 * MIB  # a prompt, a response, a review: text a person or an agent wrote
IGNORE = "# review-gate loop files: per machine, never reviewed as code (delete this file to commit them)\n*\n"


@dataclass(frozen=True)
class Files:
    root: Path
    task: str

    @property
    def gate(self) -> Path:
        return self.root / GATE_DIR

    @property
    def session_dir(self) -> Path:
        return self.gate / "sessions" / self.task

    def iteration_dir(self, iteration: int) -> Path:
        return self.session_dir / str(iteration)

    def content(self, iteration: int, phase: str, stage: str) -> Path:
        return self.iteration_dir(iteration) / content_name(phase, stage)

    def findings(self, iteration: int) -> Path:
        """What the review of ``iteration`` found, as the revise prompt and the decision log read it."""
        return self.iteration_dir(iteration) / "review.findings.json"

    @property
    def handoff(self) -> Path:
        return self.gate / "hil" / f"{self.task}.json"

    @property
    def log(self) -> Path:
        return self.gate / "review-logs" / f"{self.task}.jsonl"

    def shown(self, path: Path) -> str:
        """``path`` as a person types it: relative to the repository root."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def prepare(self, path: Path) -> None:
        """Make the folders of ``path``, each loop folder with its .gitignore; refuse a folder that
        a symbolic link leads out of the repository."""
        folder = path.parent
        top = next((self.gate / name for name in FOLDERS if folder.is_relative_to(self.gate / name)), None)
        created = top is not None and not top.exists()
        existing = next(p for p in (folder, *folder.parents) if p.exists())
        self._inside(folder, existing)  # before anything is made: a link must not make us create folders elsewhere
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create {folder}: {exc.strerror}",
                             fix="make the repository's .review-gate/ folder writable") from exc
        self._inside(folder, folder)
        if created and top is not None:
            with contextlib.suppress(OSError):
                (top / ".gitignore").write_text(IGNORE, encoding="utf-8")


    def check(self) -> None:
        """Refuse, before a session starts, loop folders that a symbolic link leads out of the repository."""
        for name in FOLDERS:
            folder = self.gate / name
            self._inside(folder, next(p for p in (folder, *folder.parents) if p.exists()))

    def _inside(self, folder: Path, probe: Path) -> None:
        try:
            probe.resolve().relative_to(self.root.resolve())
        except ValueError:
            raise InputError(f"{folder}: a symbolic link leads it out of the repository (to {probe.resolve()})",
                             fix="remove the link; the loop writes its files inside the repository") from None
        # A link inside the repository (.review-gate -> src) would put session files among the
        # code, where the next review takes them for code (review_gate.change.own_files follows no link).
        for part in (probe, *probe.parents):
            if part == self.root or not part.is_relative_to(self.root):
                break
            if part.is_symlink():
                raise InputError(f"{folder}: {part.relative_to(self.root).as_posix()} is a symbolic link; the loop "
                                 "does not write through links inside the repository",
                                 fix="make it a real directory")


def write_text(files: Files, path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (a temporary file renamed over it, synced first)."""
    files.prepare(path)
    data = text.encode("utf-8")
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}", fix="make the folder writable") from exc


def read_text(path: Path) -> str | None:
    """The text of the regular file at ``path``; None when there is none (missing, or something
    else where it should be: a directory, a FIFO, a socket, which is never opened to block).
    InputError when it is larger than MAX_CONTENT_BYTES or cannot be read."""
    data = regular_bytes(path, limit=MAX_CONTENT_BYTES, name=str(path),
                         fix="a loop file holds a prompt, a response or a review; replace it with one")
    return None if data is None else data.decode("utf-8", "replace")


def no_file(path: Path, shown: str, fix: str, *, yet: bool = False) -> InputError:
    """Why there is no content file at ``path`` (shown as ``shown``): a directory or something
    else where the file should be is not "does not exist"."""
    if path.is_dir() and not path.is_symlink():
        return InputError(f"{shown} is a directory, not a file",
                          fix=f"remove that directory (rmdir {shown}); then {fix}")
    if path.exists() or path.is_symlink():
        return InputError(f"{shown} is not a regular file", fix=f"replace it with a file; then {fix}")
    return InputError(f"{shown} does not exist" + (" yet" if yet else ""), fix=fix)


def sha256(path: Path) -> str | None:
    """The SHA-256 of the file's bytes at this moment, hashed in pieces; None when there is no
    regular file (a FIFO or a directory where the file should be is not opened)."""
    return regular_sha256(path)
