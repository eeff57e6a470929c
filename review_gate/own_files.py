"""The gate's own files in the repository it reviews, kept out of the review.

A run reads and writes files beside the code it judges: its configuration directory, the
run-state database, the committed baseline, and the reports and bundles it wrote. None of them
is code: scanning them gives false findings (a rule's own text matches itself, a report quotes
the secret it flagged), and a baseline or state the change itself brings must not judge it.

So a change to the configuration, the baseline or the state is reported as a gap, never
reviewed; a file the gate wrote is left out silently, but only while its content is still
exactly what the gate wrote (by git blob id, as recorded in the run state): a file an attacker
names like a report is reviewed like any other file. Pure: the caller finds the paths.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import Field

from review_gate.models import FileChange, Gap, PRFacts
from review_gate.models.base import Frozen

GATE_DIRECTORY = ".review-gate"  # at the repository root: init writes the configuration here
MAX_LISTED = 10


class OwnFiles(Frozen):
    """Repository-relative POSIX paths of the gate's files, by what a change to them means."""

    config_dir: str | None = Field(default=None, description="The configuration in use, when inside the repository.")
    directories: list[str] = Field(default_factory=list, description="The gate's directories (config, .review-gate).")
    baselines: list[str] = Field(default_factory=list, description="Where the baseline is looked for.")
    state: list[str] = Field(default_factory=list, description="The state database, its side files, its .gitignore.")
    written: Mapping[str, list[str]] = Field(
        default_factory=dict, description="Files the gate wrote (reports, bundles) -> blob ids of what it wrote.")

    def kind(self, path: str) -> str | None:
        """The gap kind a change to ``path`` gives, None when the path is not the gate's."""
        if path in self.state:
            return "state_changed"
        if path in self.baselines:
            return "baseline_changed"
        if any(_under(path, d) for d in self.directories):
            return "config_changed"
        return None

    def touches(self, facts: PRFacts, kind: str) -> list[str]:
        """The changed paths (new or old) of the gate's files of ``kind``."""
        return [p for f in facts.files for p in _paths(f) if self.kind(p) == kind]

    def was_written(self, change: FileChange) -> bool:
        return change.content_sha is not None and change.content_sha in self.written.get(change.path, ())


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _paths(change: FileChange) -> list[str]:
    return [change.path] + ([change.old_path] if change.old_path and change.old_path != change.path else [])


def relative(path: Path | str | None, root: Path | None) -> str | None:
    """``path`` relative to the repository root as POSIX text; None outside it (or no repository)."""
    if path is None or root is None:
        return None
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return None


def locate(root: Path | None, *, config_dir: str | None, state: Iterable[Path], baselines: Iterable[Path],
           written: Mapping[str, list[str]] | None = None) -> OwnFiles:
    """The gate's files of a run in repository ``root``; ``state``: the state file and its companions."""
    config = relative(config_dir, root) if config_dir else None
    directories = [d for d in (config, GATE_DIRECTORY if root is not None else None) if d and d != "."]
    return OwnFiles(config_dir=config, directories=sorted(set(directories)),
                    baselines=sorted(p for p in (relative(b, root) for b in baselines) if p),
                    state=sorted(p for p in (relative(s, root) for s in state) if p),
                    written=dict(written or {}))


def split(facts: PRFacts, own: OwnFiles) -> tuple[PRFacts, list[Gap]]:
    """The facts without the gate's own files, and one gap per own file set the change touches."""
    kept: list[FileChange] = []
    touched: dict[tuple[str, str], list[str]] = {}
    for change in facts.files:
        kinds = [(own.kind(p), p) for p in _paths(change)]
        for kind, path in kinds:
            if kind is not None:
                touched.setdefault((kind, _subject(kind, path, own)), []).append(path)
        if own.kind(change.path) is None and not own.was_written(change):
            kept.append(change)
    if len(kept) == len(facts.files):
        return facts, _gaps(touched, own)
    return facts.model_copy(update={"files": kept}), _gaps(touched, own)


def _subject(kind: str, path: str, own: OwnFiles) -> str:
    if kind != "config_changed":
        return path
    return next(d for d in own.directories if _under(path, d))


def _gaps(touched: dict[tuple[str, str], list[str]], own: OwnFiles) -> list[Gap]:
    gaps = []
    for (kind, subject), paths in touched.items():
        shown = ", ".join(paths[:MAX_LISTED]) + (f" and {len(paths) - MAX_LISTED} more" if len(paths) > MAX_LISTED
                                                  else "")
        if kind == "state_changed":
            gaps.append(Gap(kind=kind, subject=subject,
                            reason=f"the change adds or edits the run-state database ({shown}); its cache and "
                                   "acceptances are not used for this run, and it is not reviewed as code",
                            suggestion=f"remove it from the change (git rm --cached {subject}); it is per machine "
                                       "and ignored by the .gitignore review-gate writes beside it"))
        elif kind == "baseline_changed":
            gaps.append(Gap(kind=kind, subject=subject,
                            reason=f"the change edits the baseline ({shown}); it is not trusted for this run: "
                                   "only the base side's baseline waives findings",
                            suggestion="have a person review the baseline change; it applies once it is on "
                                       "the base branch"))
        else:
            in_use = subject == own.config_dir
            what = ("the review configuration this run uses" if in_use
                    else "review-gate's directory (not the configuration this run uses)")
            gaps.append(Gap(kind="config_changed", subject=subject,
                            reason=f"the change edits {what} in {subject}/: {shown}; a change can weaken the "
                                   "gate that judges it, and these files are not reviewed as code",
                            suggestion="have a person review this edit; in CI, load the configuration from the "
                                       "base branch (--config DIR from a trusted checkout)"))
    return gaps


def blob_ids(data: bytes) -> list[str]:
    """The git blob ids ``data`` has in a SHA-1 and in a SHA-256 repository."""
    header = b"blob %d\0" % len(data)
    return [hashlib.sha1(header + data, usedforsecurity=False).hexdigest(), hashlib.sha256(header + data).hexdigest()]


