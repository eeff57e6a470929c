"""git, hub, gh and glab commands: which commit, push, or open or merge a pull request, and for
which repository. Their aliases are followed: git's, read with ``git config --get alias.NAME``
(argv, never a shell) where the command runs, or set on the line itself (``git -c alias.p=push
p``, ``git config alias.p push && git p``); gh's, read from its ``config.yml``. A ``!`` alias
is read as a command line.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from review_gate.surfaces.hooks.programs import ANY, ANY_GIT, GATES, SPACE, Gated, literal

if TYPE_CHECKING:
    from review_gate.surfaces.hooks.shell import Reader

# git subcommands that run nothing given to them (builtins cannot be aliased, so none is looked up)
_GIT_DATA = frozenset({
    "add", "am", "annotate", "apply", "archive", "blame", "branch", "bundle", "cat-file", "check-attr",
    "check-ignore", "check-ref-format", "checkout", "cherry", "cherry-pick", "clean", "clone", "commit-graph",
    "config", "count-objects", "describe", "diff", "diff-files", "diff-index", "diff-tree", "fetch",
    "for-each-ref", "format-patch", "fsck", "gc", "grep", "hash-object", "help", "init", "log", "ls-files",
    "ls-remote", "ls-tree", "maintenance", "merge", "merge-base", "mv", "notes", "pull", "range-diff", "reflog",
    "remote", "repack", "replace", "rerun", "reset", "restore", "rev-list", "rev-parse", "revert", "rm",
    "shortlog", "show", "show-branch", "show-ref", "sparse-checkout", "stash", "status", "switch",
    "symbolic-ref", "tag", "update-index", "update-ref", "var", "verify-commit", "verify-tag", "version",
    "whatchanged", "worktree", "write-tree"})
_GIT_RUNS = frozenset({"rebase", "bisect", "submodule", "filter-branch", "difftool", "mergetool"})
# plumbing that updates a remote's refs as `git push` does (`git remote-ext|-https...` read a push from stdin)
_GIT_PUSHES = frozenset({"send-pack", "http-push"})
_HUB_DATA = frozenset({"fork", "create", "browse", "compare", "ci-status", "sync", "issue", "pr", "release", "api",
                       "gist", "alias", "delete"})
# git subcommands that write the working tree's files they are given
_GIT_WRITES = frozenset({"checkout", "restore", "rm", "mv", "clean", "stash"})
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                                "--super-prefix", "--attr-source"})
_FOREIGN_OPTIONS = frozenset({"--git-dir", "--work-tree", "--namespace"})
_GH_BUILTINS = frozenset({
    "agent-task", "alias", "api", "attestation", "auth", "browse", "cache", "co", "codespace", "completion",
    "config", "copilot", "extension", "gist", "gpg-key", "help", "issue", "label", "org", "pr", "preview",
    "project", "release", "repo", "ruleset", "run", "search", "secret", "ssh-key", "status", "variable",
    "workflow", "version"})
_GLAB_BUILTINS = frozenset({
    "alias", "api", "auth", "changelog", "check-update", "ci", "cluster", "completion", "config", "deploy-key",
    "duo", "gpg-key", "help", "incident", "issue", "iteration", "job", "label", "milestone", "release", "repo",
    "schedule", "securefile", "snippet", "ssh-key", "stack", "token", "user", "variable", "version"})


def git(reader: Reader, args: list[str], depth: int, context: str, *, hub: bool = False,
        fed: bool = False) -> set[Gated]:
    """A git (or hub) command, run where the line's ``cd``s left it (``reader.here``). What it
    commits or pushes for another repository, or one not known, adds ``elsewhere``."""
    return _git(reader, args, depth, context, hub, fed, reader.here, reader.foreign)


def _git(reader: Reader, args: list[str], depth: int, context: str, hub: bool, fed: bool, where: Path | None,
         foreign: bool) -> set[Gated]:
    local, index, configured = dict(reader.defined), 0, reader.configured
    found: set[Gated] = set()
    while index < len(args) and args[index].startswith("-"):
        option, equals, value = args[index].partition("=")
        if option in _GIT_VALUE_OPTIONS and not equals:
            value = args[index + 1] if index + 1 < len(args) else ""
            index += 1
        index += 1
        if option == "-C":
            where = where / os.path.expanduser(value) if where is not None and literal(value) else None
        elif option in _FOREIGN_OPTIONS:
            foreign = True
        elif option == "--config-env":
            configured = True  # alias.X=ENVVAR: its meaning is not on the line
        elif option == "-c":
            key, _, meaning = value.partition("=")
            if key.lower().startswith("alias."):
                local[key[len("alias."):].lower()] = meaning
            else:
                configured |= key.lower().startswith("include")
                if SPACE.search(meaning):  # core.pager='git push', core.sshCommand=...
                    found |= reader.line(meaning, depth + 1)
    gated = found | _subcommand(reader, args[index:], depth, context, hub, fed, where, foreign, local, configured)
    if gated & ANY and (foreign or not reader.repositories.home(where)):
        gated.add("elsewhere")
    return gated


def _subcommand(reader: Reader, words: list[str], depth: int, context: str, hub: bool, fed: bool,
                where: Path | None, foreign: bool, local: dict[str, str], configured: bool) -> set[Gated]:
    unknown = set(ANY if hub else ANY_GIT)
    if not words:
        # `git` alone: data of another program (e.g. $(which git) push), or what xargs appends
        return unknown if fed else reader.loose(context)
    sub, rest = words[0], words[1:]
    if not literal(sub):
        return unknown  # git $(printf pu sh), git ${p}sh, git "$SUB", git p*h, find -exec git {}
    if sub in ("commit", "push"):
        return {GATES[sub]}
    if sub in _GIT_PUSHES or sub.startswith("remote-"):
        return {"push"}
    if hub and sub == "pull-request":
        return {"pr"}
    if sub in _GIT_RUNS:
        return reader.arguments(rest, depth + 1, context)
    directory = where if where is not None else reader.cwd
    # git clean: what `git clean -n` lists decides (`-e .review-gate` names a path it keeps), below
    if sub in _GIT_WRITES and sub != "clean" and reader.protected and reader.protected.named(rest, directory):
        return {"waive"}  # git checkout main -- .review-gate/
    if sub in ("clean", "stash") and reader.protected and sweeps(reader, sub, rest, directory):
        return {"waive"}  # git clean -fdx, git stash -u: the untracked hook settings go with them
    if sub == "config":
        _define(reader.defined, rest)
    if sub in _GIT_DATA or (hub and sub in _HUB_DATA):
        return set()
    if sub.lower() not in local and (configured or where is None or foreign):
        return reader.loose(context) | unknown  # an alias the line's configuration may define, or not known where
    expansion = local[sub.lower()] if sub.lower() in local else reader.repositories.git_alias(directory, sub)
    if expansion is None or depth >= reader.max_depth:
        return reader.loose(context)  # git-SUB on the PATH, a typo, or aliases too deep: not known
    if expansion.startswith("!"):
        return reader.line(" ".join([expansion[1:], *map(shlex.quote, rest)]), depth + 1)
    try:
        expanded = shlex.split(expansion)  # git splits an alias's words as a shell does, quotes and all
    except ValueError:
        return reader.loose(f"git {expansion}")
    return _git(reader, [*expanded, *rest], depth + 1, context, hub, fed, where, foreign)


def _define(defined: dict[str, str], rest: list[str]) -> None:
    """``git config alias.NAME VALUE`` earlier on the line: NAME is VALUE from then on."""
    for index, arg in enumerate(rest[:-1]):
        if arg.lower().startswith("alias."):
            defined[arg[len("alias."):].lower()] = rest[index + 1]


def gh(reader: Reader, args: list[str], depth: int, context: str, *, fed: bool = False,
       lab: bool = False) -> set[Gated]:
    """gh (``lab``: glab): opening or merging a pull (merge) request, or writing through the
    API (any method but GET; an endpoint of refs, merges or pulls)."""
    positional = [(i, a) for i, a in enumerate(args)
                  if not a.startswith("-") and (i == 0 or args[i - 1] not in ("-R", "--repo"))]
    if not positional:
        return {"pr"} if fed else set()
    index, command = positional[0]
    second = positional[1][1] if len(positional) > 1 else ("$" if fed else "")
    gated: set[Gated] = {"pr"} if reader.repositories.home(reader.here) else {"pr", "elsewhere"}
    if not literal(command):
        return gated
    if command == ("mr" if lab else "pr"):
        opens = ("create", "new", "merge", "accept") if lab else ("create", "new", "merge")
        return gated if second in opens or not literal(second) else set()
    if command == "api":
        return gated if api_writes(args[index + 1:]) else set()
    if lab:
        return set() if command in _GLAB_BUILTINS else reader.loose(context)
    if command in _GH_BUILTINS:
        return set()
    expansion = reader.repositories.gh_aliases().get(command)
    if expansion is None or depth >= reader.max_depth:
        return reader.loose(context)  # an extension, or a typo: not known
    rest = args[:index] + args[index + 1:]
    if expansion.startswith("!"):
        return reader.line(" ".join([expansion[1:], *map(shlex.quote, rest)]), depth + 1)
    try:
        expanded = shlex.split(expansion)
    except ValueError:
        return reader.loose(f"gh {expansion}")
    return gh(reader, [*expanded, *rest], depth + 1, context)


def api_writes(args: list[str]) -> bool:
    """Whether ``gh api ARGS`` (or ``glab api``) may write: a method other than GET (given, or
    implied by a field or an input body), an endpoint of refs, merges or pulls, or one not on
    the line."""
    method, fields, endpoint = "", False, ""
    for index, arg in enumerate(args):
        value = args[index + 1] if index + 1 < len(args) else ""
        if arg in ("-X", "--method"):
            method = value
        elif arg.startswith("--method="):
            method = arg.partition("=")[2]
        elif arg.startswith("-X") and len(arg) > 2:
            method = arg[2:]
        elif arg in ("-f", "-F", "--field", "--raw-field", "--input") or arg.startswith(
                ("--field=", "--raw-field=", "--input=", "-f", "-F")):
            fields = True
        elif not endpoint and not arg.startswith("-") and args[index - 1:index] not in (
                ["-X"], ["--method"], ["-H"], ["--header"], ["-q"], ["--jq"], ["-t"], ["--template"],
                ["--hostname"], ["--cache"], ["-p"], ["--preview"]):
            endpoint = arg
    method = method.upper() or ("POST" if fields else "GET")
    if method != "GET" or not literal(method) or "$" in endpoint or "`" in endpoint:
        return True
    return bool(re.search(r"/(?:git/refs|merges|pulls|merge_requests)\b", endpoint)) or "createPullRequest" in endpoint


_CLEAN_FLAGS = frozenset("dfxXqni")
_STASH_OTHERS = frozenset({"list", "show", "drop", "pop", "apply", "branch", "clear", "create", "store"})


def sweeps(reader: Reader, sub: str, rest: list[str], directory: Path) -> bool:
    """Whether ``git clean`` or ``git stash`` (``rest``: its arguments) would remove a protected
    file that is untracked: what ``git clean -n`` with the same options says it would remove, or
    the untracked files ``git stash -u``/``-a`` takes away, under its pathspecs. Where the line
    or git cannot tell, it may (fail closed)."""
    parsed = _clean(rest) if sub == "clean" else _stash(rest)
    if parsed is None:
        return False  # removes nothing untracked (git clean -n, git stash without -u, git stash pop)
    options, pathspecs, ignored = parsed
    if options is not None and not all(literal(w) for w in [*options, *pathspecs]):
        options, pathspecs = ["-d", "-x"], []  # what it removes is not on the line: the most it could
    if not all(literal(w) for w in pathspecs):
        pathspecs = []
    if sub == "clean":
        removed = reader.repositories.untracked(directory, pathspecs, clean=options or [])
    else:  # the whole work tree unless pathspecs limit it, wherever it runs
        removed = reader.repositories.untracked(directory, pathspecs or [":/"], ignored=ignored)
    if removed is None:
        return True
    return any(reader.protected.named([path], directory) or reader.protected.holds_protected([path], directory)
               for path in removed)


def _clean(rest: list[str]) -> tuple[list[str] | None, list[str], bool] | None:
    """git clean's options to pass on to ``git clean -n`` and its pathspecs; None for a dry run."""
    options: list[str] = []
    pathspecs: list[str] = []
    index = 0
    while index < len(rest):
        word = rest[index]
        index += 1
        if word == "--":
            pathspecs += rest[index:]
            break
        if word in ("-e", "--exclude"):
            options += ["-e", rest[index] if index < len(rest) else ""]
            index += 1
        elif word.startswith("--exclude="):
            options.append(word)
        elif word in ("--dry-run",):
            return None
        elif word in ("--force", "--quiet", "--interactive"):
            continue
        elif word.startswith("--") or not literal(word):
            return ["-d", "-x"], [], True  # not known, or not on the line: the most it could
        elif word.startswith("-") and len(word) > 1:
            flags, _, value = word[1:].partition("e")
            if "n" in flags:
                return None
            if not set(flags) <= _CLEAN_FLAGS:
                return ["-d", "-x"], [], True
            options += [f"-{f}" for f in flags if f in "dxX"]
            if "e" in word[1:]:
                options += ["-e", value or (rest[index] if index < len(rest) else "")]
                index += 0 if value else 1
        else:
            pathspecs.append(word)
    return options, pathspecs, True


def _stash(rest: list[str]) -> tuple[list[str] | None, list[str], bool] | None:
    """Whether ``git stash`` takes untracked files (``-u``; ``-a``: ignored ones too) and under
    which pathspecs; None when it takes none."""
    words = list(rest)
    save = False
    if words and words[0] in ("push", "save"):
        save = words.pop(0) == "save"
    elif words and words[0] in _STASH_OTHERS:
        return None
    untracked, ignored, pathspecs = False, False, []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            pathspecs += [] if save else words[index:]
            break
        if not literal(word):
            return None, [], True
        if word in ("-m", "--message", "--pathspec-from-file"):
            index += 1
        elif word in ("--include-untracked", "--all"):
            untracked, ignored = True, ignored or word == "--all"
        elif word.startswith("-") and not word.startswith("--") and len(word) > 1:
            flags = word[1:].partition("m")[0]
            untracked |= bool({"u", "a"} & set(flags))
            ignored |= "a" in flags
            if "m" in word[1:] and not word[1:].partition("m")[2]:
                index += 1
        elif not word.startswith("-") and not save:
            pathspecs.append(word)
    return ([], pathspecs, ignored) if untracked else None
