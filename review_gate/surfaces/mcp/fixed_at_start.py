"""What an MCP server fixes when it starts, which its calls cannot change (``review-gate mcp``).

The client is usually the coding agent whose change is judged, and the server runs outside the
host's sandbox. So the repository is the one the server starts in, the configuration is the one
found there (``--config DIR``, else $REVIEW_GATE_CONFIG, else the repository's .review-gate/, else
the built-in one) *as it is at start*: its files are copied to a private directory the agent
cannot reach through the working tree, and every call runs that copy (an edit of
.review-gate/ after the start is a change to review, never the configuration that reviews it),
and the gate's ``fail_on`` is that configuration's. The baseline and the team's acceptances of a
configuration inside the repository are not copied: they are read at the trusted base commit, as
the command line reads them. A call may name them again; another
configuration, another repository, a weaker ``fail_on`` or an ``offline`` review that skips
reviewers that can run is refused unless the person who started the server allowed it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from review_gate import api
from review_gate.models import FailOn
from review_gate.pipeline import arguments


@dataclass(frozen=True)
class Fixed:
    """What the server was started with, which a call cannot change: the repository (``root``,
    None when it started outside one), the configuration directory every call uses (the
    built-in configuration's own directory when none was found) and its ``fail_on``; and what
    the person who started it allowed a call to name instead."""

    root: Path | None
    config: str
    fail_on: str
    source: str | None = None  # the directory the configuration was copied from (None: built in)
    other_config: bool = False
    other_repo: bool = False
    weaker_fail_on: bool = False
    offline: bool = False

    @classmethod
    def at_start(cls, config: str | None = None, *, other_config: bool = False, other_repo: bool = False,
                 weaker_fail_on: bool = False, offline: bool = False) -> Fixed:
        """Found once, where the server starts: ``--config DIR``, else $REVIEW_GATE_CONFIG, else
        the repository's .review-gate/, else the built-in configuration (a configuration a call's
        agent creates later never replaces it). A configuration that does not load is refused."""
        import tempfile

        from review_gate.change import git
        from review_gate.config import identity
        from review_gate.config.locations import builtin_dir
        from review_gate.judging import baseline, shared_acceptances
        from review_gate.state.location import companions, state_location

        if config is not None:
            arguments.pathlike("--config", config)
        root = git.repo_root(Path.cwd())
        loaded = api.load(config, root)
        if loaded.directory is None:
            return cls(root=root.resolve() if root is not None else None, config=str(builtin_dir("config")),
                       fail_on=loaded.settings.gate.fail_on, other_config=other_config, other_repo=other_repo,
                       weaker_fail_on=weaker_fail_on, offline=offline)
        copy = Path(tempfile.mkdtemp(prefix="review-gate-mcp-config-"))
        skip = companions(state_location(loaded, root))
        if _in_repository(Path(loaded.directory), root):
            # The baseline and the team's acceptances of a configuration in the repository are the
            # change's to edit (an untracked one included): the copy, outside the repository, would
            # be read as it is. Left out, they are read where the command line reads them: at the
            # trusted base commit (``bootstrap.Setup.trusted_base``).
            named = (baseline.FILE_NAME, shared_acceptances.FILE_NAME)
            skip = [*skip, *(Path(loaded.directory) / name for name in named)]
        identity.copy(loaded.directory, copy, skip=skip)
        api.load(str(copy), root)  # the copy loads as the original did (a file changed meanwhile: refused)
        return cls(root=root.resolve() if root is not None else None, config=str(copy),
                   fail_on=loaded.settings.gate.fail_on, source=str(Path(loaded.directory).resolve()),
                   other_config=other_config, other_repo=other_repo, weaker_fail_on=weaker_fail_on,
                   offline=offline)

    def close(self) -> None:
        """Remove the private copy of the configuration (the server stops)."""
        if self.source is not None:
            shutil.rmtree(self.config, ignore_errors=True)

    def where(self, cwd: str | None) -> str | None:
        """The ``cwd`` a call gives, checked: inside the server's repository (unless allowed)."""
        if cwd is None:
            return None  # the directory the server started in
        from review_gate.change import git
        from review_gate.errors import UsageError

        root = git.repo_root(arguments.workdir(cwd))
        if self.other_repo or (root is not None and self.root is not None and root.resolve() == self.root):
            return cwd
        where = f"the one this server reviews, {self.root}" if self.root else "this server started outside one"
        raise UsageError(f"cwd {cwd!r}: another repository than {where}",
                         fix="leave cwd out; a person who means another repository starts a server there (or "
                             "this one with --allow-other-repo)")

    def config_for(self, config: str | None, cwd: str | None) -> str:
        """The configuration a call uses: the server's; one a call names only when it is the same
        directory, or the server allows another (a configuration decides which programs run)."""
        from review_gate.errors import UsageError

        if config is None:
            return self.config
        given = _path(config, cwd)
        arguments.pathlike("config", given)
        if self.other_config:
            return given
        try:
            same = Path(given).resolve() in (Path(self.config), Path(self.source or self.config))
        except (OSError, RuntimeError):
            same = False
        if same:
            return self.config
        raise UsageError(f"config {config!r}: not the configuration this server was started with "
                         f"({self.source or 'the built-in one'})",
                         fix="leave config out; a person who means another starts the server with --config DIR "
                             "(or --allow-other-config)")

    def fail_on_for(self, fail_on: str | None) -> FailOn:
        """The call's ``fail_on`` when it is as strict as the configuration's or stricter, else refused."""
        from review_gate.errors import UsageError

        wanted = fail_on or self.fail_on
        if not self.weaker_fail_on and arguments.FAIL_ON.index(wanted) > arguments.FAIL_ON.index(self.fail_on):
            raise UsageError(f"fail_on {wanted}: a weaker gate than the configuration's ({self.fail_on})",
                             fix="leave fail_on out or ask for a stricter one; a person who means a weaker gate "
                                 "starts the server with --allow-weaker-fail-on")
        return wanted  # type: ignore[return-value]  # one of FAIL_ON, checked by the schema and above

    def offline_for(self, offline: bool, directory: str, cwd: str | None) -> bool:
        """``offline`` when it leaves out no reviewer that would run (none of the configuration's
        llm agents has its key set), or the server allows it: skipping reviewers that can run is
        a weaker gate too (the skipped agents' findings would not count)."""
        if not offline or self.offline:
            return offline
        from review_gate.change import git
        from review_gate.errors import UsageError
        from review_gate.llm.keys import missing_key
        from review_gate.models import LlmAgent

        config = api.load(directory, git.repo_root(arguments.workdir(cwd)))
        running = sorted(a.id for a in config.agents.agents
                         if isinstance(a, LlmAgent) and a.enabled and missing_key(a) is None)
        if running:
            raise UsageError(f"offline: it would skip reviewers that can run ({', '.join(running[:3])}"
                             f"{', ...' if len(running) > 3 else ''})",
                             fix="leave offline out; a person who means an offline gate starts the server with "
                                 "--allow-offline")
        return offline




def _in_repository(directory: Path, root: Path | None) -> bool:
    if root is None:
        return False
    try:
        return directory.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return True  # not told: treated as the change's


def _path(config: str, cwd: str | None) -> str:
    """A relative config directory is taken from ``cwd``, as the command line takes it from its own."""
    if cwd is None or Path(config).is_absolute():
        return config
    return str(Path(cwd) / config)


__all__ = ["Fixed"]
