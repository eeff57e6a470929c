"""What every command that reviews a change builds first, once (cosmicpython's ``bootstrap``):
the repository, the configuration, what to review, how agents run, where the run state and the
baseline live, and which files are the gate's own. ``run``, ``plan`` and ``baseline`` start
here, so the three never disagree about what a change is or how it is judged."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from review_gate.change import blobs, git
from review_gate.change.own_files import Link, OwnFiles, inside, link_target, locate, relative
from review_gate.config.locations import builtin_dir, find_config_file
from review_gate.errors import UsageError
from review_gate.judging import baseline, shared_acceptances
from review_gate.models import CommandAgent, LlmAgent, Packing, PRFacts, ReviewConfig, Waiver
from review_gate.models.config import AGENTS_FILE, COMPOSITION_FILE, DOMAINS_FILE, RULES_FILE
from review_gate.pipeline.normalize import DiffRequest
from review_gate.pipeline.options import DispatchOptions
from review_gate.state.location import companions, keep_out_of_git, state_file, state_link, state_location
from review_gate.text.globs import literal_glob

PER_AGENT_FILES = (RULES_FILE, AGENTS_FILE, DOMAINS_FILE, COMPOSITION_FILE)


@dataclass(frozen=True)
class Setup:
    root: Path | None
    config: ReviewConfig
    request: DiffRequest
    options: DispatchOptions
    state_path: Path
    baselines: list[Path]  # where the baseline is looked for, in order
    explicit_baseline: bool = False
    state_link: Path | None = None  # a symbolic link on the state path: the run uses no state

    def own_files(self, written: Mapping[str, list[str]] | None = None) -> OwnFiles:
        links = []
        if self.state_link is not None and (path := inside(self.state_link.parent, self.root)) is not None:
            name = self.state_link.name if path == "." else f"{path}/{self.state_link.name}"
            links.append(Link(path=name, kind="state_changed", target=link_target(self.state_link)))
        return locate(self.root, config_dir=self.config.directory, named=config_names(self.config, self.root),
                      gate_names=gate_names(), state=[] if self.state_link else companions(self.state_path),
                      baselines=[*self.baselines, *self.shared()], written=written, links=links)

    def shared(self) -> list[Path]:
        """Where the team's shared acceptances are looked for (``shared_acceptances``)."""
        return shared_acceptances.candidates(self.config.directory, self.root)

    def committed(self) -> Callable[[str], bool] | None:
        """Whether the change commits a path (``own_files.sealed``): None for every file of a range,
        the index, a diff file or a push; in a working-tree review, a path git tracks (in the index)
        and not an untracked report or bundle the gate just wrote. The index is read once, when asked."""
        root = self.root
        if self.request.mode != "worktree" or root is None:
            return None

        @functools.cache
        def tracked() -> frozenset[str]:
            return frozenset(os.fsdecode(path) for _, _, path in git.index_files(root))

        return lambda path: path in tracked()

    def keep_state_ignored(self) -> None:
        """Write the run state's .gitignore again when it is gone and the state is still there:
        ``git clean -fd`` or ``git stash -u`` removes an uncommitted one, and the state then reads
        as an untracked file the change brings (no history, acceptances ignored, the reports the
        gate wrote reviewed as code). Called before the change is read."""
        if self.state_link is None and self.root is not None and self.state_path.is_file():
            keep_out_of_git(self.state_path)

    def state_trusted(self, facts: PRFacts) -> bool:
        """The run state is ours unless its path passes through a link, or the change itself
        brings or edits the state file."""
        return self.state_link is None and not self.own_files().touches(facts, "state_changed")

    def written(self, facts: PRFacts) -> dict[str, list[str]]:
        """What earlier runs wrote into the working tree, from a state the change did not touch;
        nothing is created when no run was recorded yet."""
        if not self.state_trusted(facts):
            return {}
        from review_gate.state import written
        from review_gate.state.store import open_store  # SQLite: only when a run may have written

        store = open_store(self.state_path, create=False)
        if store is None:
            return {}
        with store:
            return written.load(store)

    def trusted_base(self, facts: PRFacts) -> str | None:
        """The commit the baseline and the shared acceptances inside the repository are read at:
        one the reviewed branch cannot have written. A range and a working tree compared with a
        branch (the default one, or ``--base``) have it as their base already: the merge-base with
        that branch. Every other mode is compared with a commit of the branch itself (``--staged``:
        HEAD, a push and ``--pre-push``: what the remote has of it, a loop session: the commit it
        started at), so the branch's own earlier commits would waive its later ones: there it is
        the merge-base of the head with the default branch (main merged into the branch is on it,
        and counts). None (no file inside the repository is used) when there is no base or no
        default branch."""
        root, request = self.root, self.request
        if root is None or facts.base is None:
            return None
        if request.mode in ("range", "worktree") and not request.exact_base and not request.branch_base:
            return facts.base
        return git.default_base(root, facts.head or (facts.base if request.mode == "staged" else None))

    def waivers(self, facts: PRFacts) -> dict[str, Waiver]:
        """The baseline's and the shared acceptances' waivers, read where the reviewed change
        cannot have touched them (``trusted_base``'s version of a file in the repository)."""
        root = self.root
        base = self.trusted_base(facts)

        def show(commit: str, path: str) -> bytes | None:
            return blobs.file_at(root, commit, path) if root is not None else None

        found: baseline.Baseline | None
        if facts.base is None and self.explicit_baseline:
            # No base commit to read from (a diff file): the file the user named is taken as it is.
            found = baseline.load(self.baselines[0])
        else:
            found = baseline.read_trusted(self.baselines, base if root is not None else None,
                                          lambda p: relative(p, root), show)
        shared = shared_acceptances.read_trusted(self.shared(), base if root is not None else None,
                                                 lambda p: relative(p, root), show)
        return {**(found.waivers() if found is not None else {}), **(shared.waivers() if shared is not None else {})}

    def networked(self) -> bool:
        """Whether the run may talk to a model: not offline, and an llm agent that can run (its key
        set) or a gap detector. Otherwise no HTTP client is made (nor httpx imported)."""
        if self.options.offline or self.options.llm_left_out:
            return False
        from review_gate.llm.keys import missing_key

        settings = self.config.settings
        return any(isinstance(a, LlmAgent) and a.enabled and (missing_key(a) is None or a.id == settings.gap_detector)
                   for a in self.config.agents.agents)

    def extras(self, agents: Collection[str] | None = None) -> dict[str, str]:
        """Agent id -> what else its answer depends on: the configuration's identity (every file of
        its directory), a command agent's program (its bytes, ``agents.program.fingerprint``), an
        llm agent's instructions and the Standards. Folded into its freshness key, so a look-alike
        configuration's pairs never pass for this one's, and editing any of them reviews again.
        ``agents``: only these (the ones a plan dispatches); default every agent."""
        from review_gate.agents import program
        from review_gate.config.identity import identity

        # Each agent's entry and rules are in its agent SHA already, parsed (freshness.agent_sha),
        # and the domains and policies decide only who reviews which file: those files are keyed
        # per agent, every other file of the directory (review-gate.json, scripts, the modules
        # they import, instructions, templates) for all.
        config = identity(self.config.directory, skip=companions(self.state_path), per_agent=PER_AGENT_FILES)
        out = {}
        for agent in self.config.agents.agents:
            if agents is not None and agent.id not in agents:
                continue
            if isinstance(agent, CommandAgent):
                out[agent.id] = "\0".join([config, program.fingerprint(agent, root=self.options.repo_root,
                                                                        config_dir=self.config.directory)])
            elif isinstance(agent, LlmAgent):
                path = find_config_file(agent.instructions, self.config.directory)
                text = path.read_text(encoding="utf-8", errors="replace") if path is not None else ""
                # a packed request asks differently: its answers are not those of the agent alone
                parts = [config, text, self.options.standards or "", self.options.packing]
                if self.options.intent:  # only then: a run without one keeps the keys it always had
                    parts.append("intent:" + self.options.intent)
                out[agent.id] = "\0".join(parts)
            else:
                out[agent.id] = config
        return out


def setup(*, root: Path | None, config: ReviewConfig, request: DiffRequest, offline: bool = False,
          concurrency: int | None = None, timeout_s: float | None = None, constitution: str | None = None,
          baseline_file: str | None = None, no_baseline: bool = False, packing: Packing | None = None,
          intent: str | None = None, llm_left_out: str | None = None) -> Setup:
    settings = config.settings
    link = state_link(config, root)
    state_path = state_location(config, root) if link is not None else state_file(config, root)
    options = DispatchOptions(
        concurrency=concurrency or settings.concurrency, timeout_s=timeout_s, default_timeout_s=settings.timeout_s,
        offline=offline, repo_root=str(root) if root else None, config_dir=config.directory,
        standards=standards(config, root, constitution), packing=packing or settings.packing,
        staged=request.mode == "staged", private_paths=private_paths(config, root, state_path), intent=intent,
        llm_left_out=llm_left_out)
    return Setup(root=root, config=config, request=request, options=options,
                 state_path=state_path,
                 baselines=baseline.candidates(baseline_file, no_baseline, config.directory, root),
                 explicit_baseline=baseline_file is not None, state_link=link)


def config_names(config: ReviewConfig, root: Path | None = None) -> list[str]:
    """The files of ``config``'s directory that are the configuration, relative to it: what
    ``init`` writes there, each agent's instructions, the constitution, and the files in it a
    command agent's argv names (a script the configuration runs: ``sh .review-gate/fix.sh``)."""
    names = gate_names()
    names += [a.instructions for a in config.agents.agents if isinstance(a, LlmAgent)]
    if config.settings.constitution:
        names.append(config.settings.constitution)
    if config.directory is not None:
        names += command_files(config, Path(config.directory), root)
    return names


def command_files(config: ReviewConfig, directory: Path, root: Path | None) -> list[str]:
    """The words of command agents' argv that name a path inside ``directory`` (relative to the
    agent's working directory), relative to it. Spelled out, never resolved: a link is not
    followed (own_files reports what the configuration reads through one)."""
    inside = os.path.abspath(directory)
    names = []
    for agent in config.agents.agents:
        if not isinstance(agent, CommandAgent):
            continue
        cwd = os.path.abspath(directory if agent.cwd == "config" else root or Path.cwd())
        for word in agent.command:
            path = os.path.normpath(os.path.join(cwd, word))
            if path != inside and path.startswith(inside.rstrip(os.sep) + os.sep):
                names.append(Path(os.path.relpath(path, inside)).as_posix())
    return names


def gate_names() -> list[str]:
    """What review-gate writes into a configuration directory: the five files, the loop's prompt
    templates and the .gitignore (``init``), the baseline (``baseline``; its own file even
    when a run does not apply it) and the shared acceptances (``accept --shared``)."""
    templates = sorted(f"loop/{p.name}" for p in (builtin_dir("config") / "loop").glob("*.md"))
    return [*ReviewConfig.FILES, *templates, ".gitignore", baseline.FILE_NAME, shared_acceptances.FILE_NAME]


def private_paths(config: ReviewConfig, root: Path | None, state_path: Path) -> tuple[str, ...]:
    """What an llm agent's tools never read: review-gate.json's ``private_paths`` and the run
    state's files, wherever ``state_path`` puts them in the repository."""
    state = [p for p in (relative(f, root) for f in companions(state_path)) if p]
    return (*config.settings.private_paths, *(literal_glob(p) for p in state))


def standards(config: ReviewConfig, root: Path | None, constitution: str | None) -> str | None:
    """The constitution's Standards section: ``--constitution FILE`` (checked: a missing file is the
    user's error), else review-gate.json's ``constitution``, relative to the config directory."""
    from review_gate.llm.prompt import standards_section

    if constitution:
        path = Path(constitution)
        if not path.is_file():
            raise UsageError(f"--constitution {constitution}: {'a directory' if path.is_dir() else 'no such file'}",
                             fix="name a Markdown file with a '## Standards' section")
    elif config.settings.constitution:
        path = Path(config.directory or root or ".") / config.settings.constitution
    else:
        return None
    try:
        return standards_section(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
