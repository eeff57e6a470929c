"""The gate's own files in the repository it reviews, kept out of the review.

A run reads and writes files beside the code it judges: its configuration, the run-state
database, the committed baseline, the loop's session files and the reports and bundles it
wrote. None of them is code: scanning them gives false findings (a rule's own text matches
itself, a report quotes the secret it flagged), and a baseline or state the change itself
brings must not judge it.

So a change to the configuration, the baseline or the state is reported as a gap, never
reviewed; a file the gate wrote is left out silently, but only while its content is still
exactly what the gate wrote (by git blob id, as recorded in the run state): a file an attacker
names like a report is reviewed like any other file.

Own files are named exactly, never by directory: the five config files and the files the
configuration names (instructions, constitution, loop templates, scripts its command agents
run) in the directory in use; in a
``.review-gate/`` that is not in use, the five files and the templates ``init`` writes; the
loop's files by their shape. Anything else in ``.review-gate/`` is code and is reviewed. Paths
are taken as git spells them, never through a symbolic link inside the repository: a committed
link named ``.review-gate`` is a change to review, not a way to make a directory of code the
gate's own (``locate`` reports it as a gap). ``split`` is pure (the gaps it makes are worded in
``own_file_gaps.py``); ``locate`` looks at the disk.

Left out of the code review is not left unscanned: a file of the gate that holds data rather
than configuration (the run state and its side files, the loop's session, hand-off and log
files, the baseline, a report or bundle the gate wrote) can hold a secret (a bundle stores the
diff it reviewed), and once a change commits it, it leaves the machine. ``sealed`` gives those
the change commits back to the review, marked ``secrets_only``: only the secret rules read
them (``secret_scope``), so no rule text or quoted finding is judged as code, yet a committed
key fails the gate. The configuration itself stays out: its rule texts would flag themselves,
and a change to it is a gap a person reviews.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from pydantic import Field

from review_gate.change.own_file_gaps import link_gaps, read_through_gaps, touched_gaps
from review_gate.models import AgentManifest, FileChange, Gap, ManifestEntry, PRFacts, ReviewConfig
from review_gate.models.base import Frozen
from review_gate.models.manifest import GapKind
from review_gate.models.rule_context import SECRETS as SECRETS  # the category ``sealed`` files are scanned by

GATE_DIRECTORY = ".review-gate"  # at the repository root: init writes the configuration here
BASELINE_NAME = "baseline.json"  # review_gate.judging.baseline.FILE_NAME (that module reads the configuration)
ACCEPTANCES_NAME = "acceptances.json"  # review_gate.judging.shared_acceptances.FILE_NAME, committed like the baseline
SEALED_POLICY = "review-gate-own-files"  # what a manifest entry names for the sealed files it scans
# The loop's files (review_gate.loop.files), by shape: a file of that name elsewhere is code.
_LOOP_FILES = re.compile(
    r"(?:sessions/[^/]+/[0-9]+/(?:[a-z]+\.[a-z]+\.md|review\.findings\.json)|hil/[^/]+\.json"
    r"|review-logs/[^/]+\.jsonl|(?:sessions|hil|review-logs)/\.gitignore)")


class Link(Frozen):
    """A symbolic link inside the repository where the gate would keep its files: not followed."""

    path: str = Field(description="The link, relative to the repository root.")
    kind: GapKind = Field(description="config_changed (the gate's directory) or state_changed (the state path).")
    target: str | None = Field(default=None, description="Where it points, as the link says.")


class OwnFiles(Frozen):
    """Repository-relative POSIX paths of the gate's files, by what a change to them means."""

    config_dir: str | None = Field(default=None, description="The configuration in use, when inside the repository.")
    config: Mapping[str, list[str]] = Field(
        default_factory=dict, description="A configuration directory -> the gate's files in it, each exactly.")
    loop_dir: str | None = Field(default=None, description="Where the loop keeps its files (.review-gate).")
    baselines: list[str] = Field(default_factory=list, description="Where the baseline is looked for.")
    state: list[str] = Field(default_factory=list, description="The state database, its side files, its .gitignore.")
    written: Mapping[str, list[str]] = Field(
        default_factory=dict, description="Files the gate wrote (reports, bundles) -> blob ids of what it wrote.")
    links: list[Link] = Field(default_factory=list, description="Links on the gate's paths, not followed.")
    read_first: Mapping[str, str] = Field(
        default_factory=dict, description="A baseline of the repository -> the file outside it that this run "
                                          "reads in its place (a configuration directory's own, found first).")
    read_through: Mapping[str, str] = Field(
        default_factory=dict, description="A file of the repository the configuration in use reads, though it is "
                                          "not one of its files (a symbolic link, a name out of its directory) -> "
                                          "the name it is read by. Reviewed as code; a change to it is a gap.")

    def kind(self, path: str) -> str | None:
        """The gap kind a change to ``path`` gives, None when the path is not the gate's."""
        if path in self.state:
            return "state_changed"
        if path in self.baselines:
            return "baseline_changed"
        if self.directory_of(path) is not None:
            return "config_changed"
        return None

    def touches(self, facts: PRFacts, kind: str) -> list[str]:
        """The changed paths (new or old) of the gate's files of ``kind``."""
        return [p for f in facts.files for p in _paths(f) if self.kind(p) == kind and not self.inert(p)]

    def inert(self, path: str) -> bool:
        """The .gitignore the store wrote beside the state (its content checked): left out of the
        review, yet no change of the state, since it ignores the state and itself and holds
        nothing a run reads. (A run that listed it in the instant another run wrote it took the
        state for the change's.)"""
        return self.kind(path) == "state_changed" and path.rsplit("/", 1)[-1] == ".gitignore"

    def was_written(self, change: FileChange) -> bool:
        return change.content_sha is not None and change.content_sha in self.written.get(change.path, ())

    def left_out(self, change: FileChange) -> bool:
        """Whether ``change`` stays out of the review: its (new) path is the gate's, or the gate wrote it."""
        return self.kind(change.path) is not None or self.was_written(change)

    def directory_of(self, path: str) -> str | None:
        """The configuration (or loop) directory ``path`` is one of the gate's files in."""
        for directory, files in self.config.items():
            if path in files:
                return directory
        loop = self.loop_dir
        if loop is not None and _under(path, loop) and _LOOP_FILES.fullmatch(path[len(loop) + 1:]):
            return loop
        return None

    def holds_data(self, change: FileChange) -> bool:
        """Whether the secret rules scan ``change`` (left out) when a change commits it: the state
        (but the .gitignore the store wrote, whose content it checked), the loop's files, a
        baseline, a file the gate wrote, the configuration's files."""
        path = change.path
        kind = self.kind(path)
        if kind == "state_changed":
            return not self.inert(path)
        if kind == "baseline_changed" or self.was_written(change):
            return True
        # the configuration too: the secret rules find nothing in its own texts (a test holds the
        # built-in one to that), and a key in a rule's description or a loop template leaves with it
        return self.directory_of(path) is not None

    def is_configuration(self, path: str) -> bool:
        """One of a configuration directory's own files (not a loop file, not a baseline)."""
        directory = self.directory_of(path)
        return (directory is not None and path in self.config.get(directory, ())
                and path.rsplit("/", 1)[-1] not in (BASELINE_NAME, ACCEPTANCES_NAME))

    def directories(self) -> set[str]:
        return {*self.config, *([self.loop_dir] if self.loop_dir else [])}


def _under(path: str, directory: str) -> bool:
    return path.startswith(directory.rstrip("/") + "/")


def _paths(change: FileChange) -> list[str]:
    return [change.path] + ([change.old_path] if change.old_path and change.old_path != change.path else [])


def relative(path: Path | str | None, root: Path | None) -> str | None:
    """``path`` relative to the repository root as POSIX text, links resolved; None outside it.

    For a file the gate wrote and recognises by its content (a report): wherever a link put it,
    git lists it where it really is."""
    if path is None or root is None:
        return None
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return None


def inside(path: Path | str | None, root: Path | None) -> str | None:
    """``path`` relative to the repository root as git spells it ("." for the root itself); None
    outside the repository, or when a symbolic link inside the repository is on the way (the
    path itself included): git lists the link, never files through it, so what a link leads to
    is never one of the gate's files. Links outside the repository (a symlinked /tmp) are fine.
    """
    if path is None or root is None:
        return None
    absolute = Path(os.path.abspath(path))
    real_root = root.resolve()
    parts = _parts_below(absolute, root, real_root)
    if parts is None:
        return None
    for depth in range(1, len(parts) + 1):
        if real_root.joinpath(*parts[:depth]).is_symlink():
            return None
    return "/".join(parts) or "."


def _parts_below(absolute: Path, root: Path, real_root: Path) -> tuple[str, ...] | None:
    for base in (root, real_root):
        try:
            return absolute.relative_to(base).parts
        except ValueError:
            pass
    # Spelled through a link outside the repository: find the ancestor that is the root.
    for depth, ancestor in enumerate(absolute.parents):
        try:
            if ancestor.resolve() == real_root:
                return absolute.parts[len(absolute.parts) - depth - 1:]
        except OSError:
            return None
    return None


def _join(directory: str, name: str) -> str | None:
    """``name`` (a path a configuration gives, relative to its directory) inside ``directory``;
    None for a name that leaves it (absolute, ``..``): such a file is reviewed as code."""
    clean = name.replace("\\", "/")
    parts = [p for p in clean.split("/") if p not in ("", ".")]
    if not parts or clean.startswith("/") or ".." in parts:
        return None
    return "/".join(parts) if directory == "." else "/".join([directory, *parts])


def locate(root: Path | None, *, config_dir: str | None, named: Iterable[str] = (), gate_names: Iterable[str] = (),
           state: Iterable[Path], baselines: Iterable[Path], written: Mapping[str, list[str]] | None = None,
           links: Iterable[Link] = ()) -> OwnFiles:
    """The gate's files of a run in repository ``root``.

    ``named``: the files of the configuration in use, relative to its directory (the five
    files, what it names); ``gate_names``: the files ``.review-gate/`` holds as configuration
    when it is not the directory in use; ``state``: the state file and its companions.
    """
    config = inside(config_dir, root) if config_dir else None
    directories: dict[str, list[str]] = {}
    if config is not None:
        directories[config] = sorted({p for n in named if (p := _join(config, n)) is not None})
    found = list(links)
    gate = root / GATE_DIRECTORY if root is not None else None
    loop_dir = None
    if gate is not None and gate.is_symlink():
        found.append(Link(path=GATE_DIRECTORY, kind="config_changed", target=link_target(gate)))
    elif gate is not None:
        loop_dir = GATE_DIRECTORY
        if config != GATE_DIRECTORY:
            directories[GATE_DIRECTORY] = sorted({p for n in gate_names if (p := _join(GATE_DIRECTORY, n))})
    baselines = list(baselines)
    return OwnFiles(config_dir=config, config=directories, loop_dir=loop_dir,
                    baselines=sorted(p for p in (inside(b, root) for b in baselines) if p),
                    read_first=_read_first(baselines, root),
                    state=sorted(p for p in (inside(s, root) for s in state) if p),
                    written=dict(written or {}), links=found,
                    read_through=_read_through(root, config_dir, named, directories.get(config or "", [])))


def _read_first(baselines: list[Path], root: Path | None) -> dict[str, str]:
    """Each baseline of the repository that a file of the same name outside it, earlier in the
    order they are looked for and present, comes before."""
    found: dict[str, str] = {}
    for index, path in enumerate(baselines):
        name = inside(path, root)
        if name is None:
            continue
        earlier = next((b for b in baselines[:index] if b.name == path.name and inside(b, root) is None
                        and b.is_file()), None)
        if earlier is not None:
            found[name] = str(earlier)
    return found


def _read_through(root: Path | None, config_dir: str | None, named: Iterable[str],
                  own: list[str]) -> dict[str, str]:
    """The files of the repository that the configuration's ``named`` files really are, where
    that is not one of its own files (``own``): a link such as review-rules.json ->
    ../src/rules.json, or instructions named ``../src/prompt.md``. A change to them changes the
    gate, yet git shows it as a change to code."""
    if root is None or config_dir is None:
        return {}
    real_root = root.resolve()
    found: dict[str, str] = {}
    for name in named:
        given = Path(config_dir) / name
        try:
            real = given.resolve().relative_to(real_root).as_posix()
        except (OSError, ValueError, RuntimeError):
            continue  # outside the repository: no change under review can edit it
        if real not in own:
            found[real] = name
    return found


def link_target(link: Path) -> str | None:
    try:
        return os.readlink(link)
    except OSError:
        return None


def split(facts: PRFacts, own: OwnFiles) -> tuple[PRFacts, list[Gap]]:
    """The facts without the gate's own files, and one gap per own file set the change touches
    (and per link on the gate's paths, changed or not)."""
    kept: list[FileChange] = []
    touched: dict[tuple[str, str], list[str]] = {}
    replaced: list[str] = []
    read: dict[str, str] = {}
    for change in facts.files:
        for path in _paths(change):
            kind = own.kind(path)
            if kind is not None and not own.inert(path) and not facts.as_is:  # a sweep edits no file
                touched.setdefault((kind, _subject(kind, path, own)), []).append(path)
            elif path in own.directories() or path == GATE_DIRECTORY:
                replaced.append(path)  # a file or a link where the gate's directory is: reviewed, and said
            elif path in own.read_through:
                read[path] = own.read_through[path]  # reviewed as code, and said
        if not own.left_out(change):
            kept.append(change)
    gaps = [*link_gaps(own.links, replaced), *touched_gaps(touched, own.config_dir), *read_through_gaps(read)]
    if len(kept) == len(facts.files):
        return facts, gaps
    return facts.model_copy(update={"files": kept}), gaps


def sealed(facts: PRFacts, own: OwnFiles, committed: Callable[[str], bool] | None = None) -> list[FileChange]:
    """The gate's data files (``OwnFiles.holds_data``) that ``facts`` brings and commits, marked
    ``secrets_only``. ``committed(path)``: whether the change commits that path; None: every file
    it holds (a range, the index, a diff file, a push). A working-tree review passes whether git
    tracks the path: an untracked report or bundle the gate just wrote stays out, unscanned."""
    return [change.model_copy(update={"secrets_only": True}) for change in facts.files
            if change.status != "deleted" and own.left_out(change) and own.holds_data(change)
            and (committed is None or committed(change.path))]


def secret_rules(config: ReviewConfig, agent: str) -> list[str]:
    """The enabled rules of category ``secrets`` with a pattern that pattern agent ``agent`` runs."""
    return [r.id for r in config.rules_for(agent) if r.category == SECRETS and r.pattern]


def secret_scope(manifest: AgentManifest, files: list[FileChange], config: ReviewConfig) -> AgentManifest | None:
    """``manifest`` with the ``sealed`` files in the scope of every enabled pattern agent that runs
    a secret rule (an entry of its own when no policy chose that agent); None when no agent does
    (a configuration without secret rules scans no file for secrets). Only pattern agents: a
    model or a program never reads the gate's files; and ``agents.pattern`` runs only the secret
    rules on them."""
    scanners = [a.id for a in config.agents.agents
                if a.kind == "pattern" and a.enabled and secret_rules(config, a.id)]
    if not files or not scanners:
        return None
    paths = [f.path for f in files]
    entries = list(manifest.entries)
    for agent in scanners:
        at = next((i for i, e in enumerate(entries) if e.agent == agent), None)
        if at is None:
            entries.append(ManifestEntry(agent=agent, files=sorted(paths), policies=[SEALED_POLICY], priority=0))
        else:
            entry = entries[at]
            entries[at] = entry.model_copy(update={"files": sorted({*entry.files, *paths}),
                                                   "policies": [*entry.policies, SEALED_POLICY]})
    return manifest.model_copy(update={"entries": entries})


def _subject(kind: str, path: str, own: OwnFiles) -> str:
    if kind != "config_changed":
        return path
    directory = own.directory_of(path)
    assert directory is not None
    return directory
