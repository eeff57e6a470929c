"""The gate's own files as the change leaves them, read the way every run will read them once
the change is on the base branch.

A change that edits the configuration, the baseline or the shared acceptances is never judged
by its own copies (they are gaps; the base side's copies judge it). So an edit that breaks them
passed its own review, and from the merge on every run stopped with exit 2, in CI and for every
teammate. Here the change's copies are checked as ``review-gate config validate`` and the
baseline's reader would check them, and each problem is a major finding on the file: it says
what a person must fix before merging, and it can only add to the verdict, never lift it.

A configuration is checked as a whole directory (one file can break another's references):
the directory as the change leaves it is copied to a temporary one, with the files outside it
that it reads (``OwnFiles.read_through``), and loaded from there.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from review_gate.change import blobs, git
from review_gate.change.own_files import ACCEPTANCES_NAME, OwnFiles
from review_gate.errors import ConfigProblem, GitError, ProblemsError
from review_gate.judging.fingerprint import fingerprint
from review_gate.models import Finding, PRFacts
from review_gate.models.config import SETTINGS_FILE

AGENT = "review-gate"  # the gate's own finding, not an agent's
KIND = "own-file-invalid"  # in the fingerprint only: the finding has no rule of the configuration
MAX_FILES = 500  # files of one configuration directory copied at most; past it the directory is not checked
MAX_BYTES = blobs.MAX_BYTES


def check(facts: PRFacts, own: OwnFiles, root: Path | None) -> list[Finding]:
    """One major finding per problem in the gate's files the change edits, as it leaves them.
    Nothing without a repository and a base commit (a diff file's content cannot be had)."""
    if root is None or facts.base is None:
        return []
    # a configuration's deleted file counts (the built-in one takes its place), a deleted baseline does not
    edited = [f for f in facts.files if not own.was_written(f)
              and ((f.status != "deleted" and own.kind(f.path) == "baseline_changed") or own.is_configuration(f.path))]
    if not edited:
        return []
    new = {change.path: data for change, data in blobs.new_contents(root, [f for f in edited if f.status != "deleted"])
           if data is not None}
    findings = []
    for change in edited:
        data = new.get(change.path) if own.kind(change.path) == "baseline_changed" else None
        if data is not None and (problems := _data_problems(change.path, data)):
            first = _read_instead(root, facts.base, own, change.path)
            findings.append(_finding(change.path, problems, read_instead=first))
    directories = sorted({d for f in edited if own.is_configuration(f.path) and (d := own.directory_of(f.path))})
    for directory in directories:
        by_file: dict[str, list[ConfigProblem]] = {}
        for path, problem in _config_problems(root, facts, own, directory, new):
            by_file.setdefault(path, []).append(problem)
        findings += [_finding(path, found, f"`review-gate config validate --config {directory}` on the branch")
                     for path, found in by_file.items()]
    return findings


def _data_problems(path: str, data: bytes) -> list[ConfigProblem]:
    from review_gate.judging import baseline, shared_acceptances

    parse = shared_acceptances.parse if path.rsplit("/", 1)[-1] == ACCEPTANCES_NAME else baseline.parse
    try:
        parse(baseline.json_from_bytes(data, path), path)
    except ProblemsError as exc:
        return exc.problems
    return []


def _config_problems(root: Path, facts: PRFacts, own: OwnFiles, directory: str,
                     new: dict[str, bytes]) -> list[tuple[str, ConfigProblem]]:
    from review_gate.config.load import load_config

    deleted = {f.path for f in facts.files if f.status == "deleted"}
    files = _as_left(root, facts.head, directory, [*own.read_through], deleted)
    if files is None:
        return []
    files.update({path: data for path, data in new.items() if path == directory or path.startswith(directory + "/")
                  or path in own.read_through})
    with tempfile.TemporaryDirectory(prefix="review-gate-own-") as tmp:
        for path, data in files.items():
            target = Path(tmp, *path.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        copy = Path(tmp, *directory.split("/"))
        copy.mkdir(parents=True, exist_ok=True)
        try:
            config = load_config(copy, one_pass=True)
        except ProblemsError as exc:
            return [(_shown(p.file, str(copy), directory), _renamed(p, str(copy), directory)) for p in exc.problems]
    blocked = _state_path_problem(config.settings.state_path, set(files), root)
    return [] if blocked is None else [(f"{directory}/{SETTINGS_FILE}", blocked)]


def _state_path_problem(state_path: str, files: set[str], root: Path) -> ConfigProblem | None:
    """A relative ``state_path`` that passes through a file of the repository: no run can open
    the run state there (``Not a directory``)."""
    path = Path(state_path)
    if path.is_absolute() or state_path.startswith("~"):
        return None  # outside the repository: this machine's business, not the change's
    parts = path.parts[:-1]
    for end in range(1, len(parts) + 1):
        prefix = "/".join(parts[:end])
        if prefix in files or (root / prefix).is_file():
            return ConfigProblem(SETTINGS_FILE, "/state_path", f"{state_path!r} passes through {prefix}, a file: "
                                 "the run state cannot be opened there",
                                 "name a path under a directory, such as .review-gate/state.db (the default)")
    return None


def _as_left(root: Path, head: str | None, directory: str, outside: Iterable[str],
             deleted: set[str]) -> dict[str, bytes] | None:
    """The files of ``directory`` (and ``outside``) in commit ``head``, else in the working tree;
    None when there are too many to copy or git cannot list them."""
    if head is not None:
        try:
            listed = [p.decode("utf-8", "surrogateescape") for _, kind, _, _, p in git.tree_files(root, head)
                      if kind == "blob"]
        except GitError:
            return None
        wanted = [p for p in listed if p.startswith(directory + "/") or p in outside]
        if len(wanted) > MAX_FILES:
            return None
        return blobs.files_at(root, head, wanted, MAX_BYTES)
    found: dict[str, bytes] = {}
    for path in [*_walk(root, directory), *outside]:
        if path in deleted:
            continue
        if len(found) >= MAX_FILES:
            return None
        full = root / path
        if full.is_file() and not full.is_symlink() and full.stat().st_size <= MAX_BYTES:
            found[path] = full.read_bytes()
    return found


def _walk(root: Path, directory: str) -> list[str]:
    found = []
    for top, dirs, names in os.walk(root / directory):
        dirs[:] = [d for d in dirs if d != ".git"]
        relative = Path(top).relative_to(root).as_posix()
        found += [f"{relative}/{name}" for name in names]
        if len(found) > MAX_FILES:
            break
    return found


def _shown(display: str, copy: str, directory: str) -> str:
    """The repository path a problem names (its display was the temporary copy's)."""
    if display.startswith(copy + os.sep):
        return directory + "/" + display[len(copy) + 1:].replace(os.sep, "/")
    return directory


def _renamed(problem: ConfigProblem, copy: str, directory: str) -> ConfigProblem:
    def shown(text: str) -> str:
        return text.replace(copy, directory)

    return ConfigProblem(shown(problem.file), problem.pointer, shown(problem.message), shown(problem.fix))


def _read_instead(root: Path, base: str, own: OwnFiles, path: str) -> str | None:
    """The file this run reads in place of baseline ``path``, unless it is a copy of the base's
    ``path`` (the Action's configuration from the base branch): then, once merged, it is this one."""
    first = own.read_first.get(path)
    if first is None:
        return None
    try:
        copy = Path(first).read_bytes()
    except OSError:
        return None
    return None if copy == blobs.file_at(root, base, path) else first


def _finding(path: str, problems: list[ConfigProblem], listed_by: str | None = None,
             read_instead: str | None = None) -> Finding:
    first = problems[0]
    where = f"{first.pointer}: " if first.pointer != "/" else ""
    more = f" (and {len(problems) - 1} more in this file)" if len(problems) > 1 else ""
    # a baseline this configuration never reads (its own comes first) breaks only the reviews that do
    effect = (f"this configuration reads {read_instead} instead, but a review that reads this file stops with "
              "exit 2" if read_instead else "once this change is on the base branch, every review stops with exit 2")
    return Finding(fingerprint=fingerprint(AGENT, KIND, path, f"{first.pointer} {first.message}", 0),
                   agent=AGENT, severity="warning" if read_instead else "major", category="configuration",
                   file=path, line=None, message=f"{effect}: {where}{first.message}{more}",
                   recommendation=first.fix + (f"; {listed_by} lists every problem" if listed_by else ""),
                   confidence=1.0)


__all__ = ["AGENT", "check"]
