"""What git and gh say about the places a shell line runs in: the top of the repository a
directory is in, git's aliases there, gh's aliases. Asked with argv (never a shell), each once
per payload and at most ``MAX_LOOKUPS`` times: a hostile line cannot make the hook run git
without end.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

MAX_LOOKUPS = 16  # git calls for one payload
LOOKUP_TIMEOUT_S = 5.0


class Repositories:
    """One payload's answers, relative to ``cwd`` (the payload's directory: the one reviewed)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.lookups = 0
        self.roots: dict[str, str | None] = {}
        self.known: dict[tuple[str, str], str | None] = {}
        self.gh: dict[str, str] | None = None

    def home(self, where: Path | None) -> bool:
        """Whether ``where`` is in the repository of the payload's directory (the one reviewed)."""
        if where is None:
            return False
        if os.path.realpath(where) == os.path.realpath(self.cwd):
            return True
        root = self.root(where)
        return root is not None and root == self.root(self.cwd)

    def root(self, directory: Path) -> str | None:
        key = os.path.realpath(directory)
        if key not in self.roots:
            if self.lookups >= MAX_LOOKUPS or not os.path.isdir(key):
                return None
            self.lookups += 1
            self.roots[key] = repo_root(Path(key))
        return self.roots[key]

    def git_alias(self, directory: Path, name: str) -> str | None:
        key = (str(directory), name.lower())
        if key not in self.known:
            if self.lookups >= MAX_LOOKUPS or not directory.is_dir():
                return None
            self.lookups += 1
            self.known[key] = git_alias(directory, name)
        return self.known[key]

    def untracked(self, directory: Path, pathspecs: list[str], *, clean: list[str] | None = None,
                  ignored: bool = False) -> list[str] | None:
        """``untracked`` (below), within the payload's budget of git calls; None: not known."""
        if self.lookups >= MAX_LOOKUPS or not directory.is_dir():
            return None
        self.lookups += 1
        return untracked(directory, pathspecs, clean=clean, ignored=ignored)

    def gh_aliases(self) -> dict[str, str]:
        if self.gh is None:
            self.gh = gh_aliases()
        return self.gh


def _git_env() -> dict[str, str]:
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}


def repo_root(directory: Path) -> str | None:
    """The top of the work tree ``directory`` is in, None outside one or when git cannot tell."""
    try:
        done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=directory, env=_git_env(),
                              capture_output=True, timeout=LOOKUP_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    top = done.stdout.decode("utf-8", "replace").strip()
    return os.path.realpath(top) if done.returncode == 0 and top else None


def git_alias(directory: Path, name: str) -> str | None:
    """git's expansion of the alias ``name`` in ``directory``, None if there is none or git
    cannot tell. Only git's configuration is read (argv, never a shell, no command run)."""
    try:
        done = subprocess.run(["git", "config", "--get", f"alias.{name}"], cwd=directory, env=_git_env(),
                              capture_output=True, timeout=LOOKUP_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout.decode("utf-8", "replace").strip()
    return value if done.returncode == 0 and value else None


def gh_aliases() -> dict[str, str]:
    """gh's aliases (``aliases:`` in its ``config.yml``), as simple ``name: expansion`` lines."""
    base = os.environ.get("GH_CONFIG_DIR") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config"), "gh")
    try:
        with open(os.path.join(base, "config.yml"), encoding="utf-8", errors="replace") as handle:
            text = handle.read(1_000_000)
    except OSError:
        return {}
    aliases: dict[str, str] = {}
    inside = False
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[:1].isspace():
            inside = line.rstrip() == "aliases:"
        elif inside:
            name, colon, value = line.strip().partition(":")
            if colon:
                aliases[_unquote(name.strip())] = _unquote(value.strip())
    return aliases


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def untracked(directory: Path, pathspecs: list[str], *, clean: list[str] | None = None,
              ignored: bool = False) -> list[str] | None:
    """The untracked files (``ignored``: ignored ones too) under ``pathspecs`` in ``directory``,
    as absolute paths; with ``clean`` (git clean's options, ``-n`` added), what ``git clean``
    says it would remove. None when git cannot tell. Read-only: ``ls-files`` or ``clean -n``."""
    if clean is not None:
        argv = ["git", "-c", "core.quotePath=false", "clean", "-n", *clean, "--", *pathspecs]
    else:
        argv = ["git", "ls-files", "--others", *([] if ignored else ["--exclude-standard"]), "--", *pathspecs]
    try:
        done = subprocess.run(argv, cwd=directory, env={**_git_env(), "GIT_LITERAL_PATHSPECS": "0"},
                              capture_output=True, timeout=LOOKUP_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    names = done.stdout.decode("utf-8", "replace").splitlines()
    if clean is not None:
        names = [n[len("Would remove "):] for n in names if n.startswith("Would remove ")]
    return [os.path.normpath(os.path.join(directory, n)) for n in names if n]
