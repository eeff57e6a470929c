"""Does a shell command line commit, push or open a pull request, or take a step only a person
may take? Read as a shell would, never run.

A coding agent's shell tool hands the hook a command line before any shell sees it. The line
is split as a shell splits it (quotes; ``;``, ``&&``, ``||``, ``|``, ``&`` and newlines; ``( )``
and ``{ }``; redirections and their targets), and every simple command in it is looked at:

- past what a shell or a wrapper puts before the program: assignments (``A=1``), reserved words
  (``if``, ``then``, ``do``, ``!``, ``{``...), ``function NAME``; and past any program that is
  not known to run nothing: its arguments are read as a command from the first word that names
  git, hub, gh, a shell or ``eval`` (``timeout -s KILL 30 git push``, ``nice -n 5``, ``stdbuf
  -oL``, ``sudo -u ci``, ``env -i A=1``, ``xargs``, ``nohup``, ``exec``, ``find -exec``...);
- into the command lines it holds: ``$( )`` and backticks (wherever they are, even in quotes),
  ``eval ARGS``, ``sh -c STRING`` (any shell; ``-lc``, ``-xc`` too), an argument with a space
  in it given to a program that may run it (``watch 'git push'``, ``ssh host 'git push'``), an
  assignment's value (``CMD='git push'``), ``git rebase --exec``, ``git submodule foreach``;
- through aliases: git's, read with ``git config --get alias.NAME`` (argv, never a shell) in the
  payload's directory, or set on the line itself (``git -c alias.p=push p``, ``git config
  alias.p push && git p``); gh's, read from its ``config.yml``. A ``!`` alias is read as a line;
- as bash decodes it: ``$'\x70ush'`` is ``push``;
- where it runs: ``cd``/``pushd``/``popd`` earlier on the line, ``git -C``; a commit, push or
  pull request for a repository other than the payload's directory's (or for one the line does
  not name: ``cd "$D"``, ``--git-dir``, ``--work-tree``, ``GIT_DIR=``, ``GIT_INDEX_FILE=``)
  is ``elsewhere``: the hook reviews one repository and would pass another's push.

Data is data: the arguments of ``echo``, ``printf``, ``grep`` and their kin, and of a git
subcommand that runs nothing (``git log --grep push``), are not commands, so ``echo "git push"``
is not a push (``echo "git push" | sh`` is: a shell reading its standard input is judged by
the loose pattern below).

A person's steps (``waive``): running ``review-gate accept``, ``baseline``, ``init``, ``gaps
--apply`` or ``loop approve|reject`` (found like git, through the same wrappers and nested
lines: ``python -m review_gate`` too), or writing into a protected path (the configuration's
directories, the hooks' settings): a redirection into one, a git command that rewrites files
naming one, a copy whose destination is one, a link to one, ``find`` that deletes or runs a
writer on one, any other program given one except those that only read it (``cat``,
``grep``...); paths followed through ``cd``, symbolic links and globs (``hooks.paths``).

Where the reading is unsure it fails closed, since a review too many costs only time and a push
missed is a false pass. A word the shell changes before running it (an expansion, a
substitution, a glob, a brace list) or words a program appends (``xargs``, ``parallel``, ``find
-exec``) in the place of git's subcommand count as a commit and a push, in gh's as a pull
request, in review-gate's as a person's step; in the place of the program, as each program of
ours it could name; so does a subcommand that is not git's own when configuration on the line
could define it as an alias (``-c include.path``, ``--config-env``, ``GIT_CONFIG_COUNT=``,
``HOME=``...). Otherwise any ``git``/``hub`` word followed anywhere later in the text by
``commit``, ``push`` or ``pull-request``, and ``gh`` followed by ``pr create``, counts: a line
that cannot be split (an unbalanced quote), nested too deep or too long; a program named by a
variable or a substitution (``$GIT push``, ``$(which git) push``); ``git`` with no subcommand
or with one that is neither git's nor an alias (``git flow``); a shell running a script or its
standard input; a word naming git inside an argument of a program we do not know. Such a line
is also a person's step when a ``review-gate`` word is followed by ``accept``, ``baseline``,
``init``, ``approve``, ``reject`` or ``--apply``, or when it mentions a protected path at all.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Literal

from review_gate.hooks import paths

Gated = Literal["commit", "push", "pr", "waive", "elsewhere"]

MAX_DEPTH = 4  # command lines inside command lines (sh -c, eval, $( ), aliases) read at most
MAX_TEXT = 64 * 1024  # characters split as a shell would; a longer line is judged by the loose pattern
MAX_SUBSTITUTIONS = 64  # $( ) and backticks read in one line
MAX_LOOKUPS = 16  # git config calls for one payload
LOOKUP_TIMEOUT_S = 5.0

_PUNCTUATION = "();<>|&\n"
_REDIRECTIONS = frozenset({"<", ">", ">>", "<<", "<<<", ">&", "<&", "&>", "&>>", ">|", "<>"})
_RESERVED = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until",
                       "esac", "coproc"})
_HEADERS = frozenset({"for", "select", "case", "in"})  # their words are not commands
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_REVIEW_GATE = frozenset({"review-gate", "review_gate"})  # the console script, and `python -m review_gate`
_PROGRAMS = frozenset({"git", "hub", "gh", "glab", "eval", *_SHELLS, *_REVIEW_GATE})
# Programs that append words of their own (standard input, file names) to the command they run
_FEEDERS = frozenset({"xargs", "parallel", "find", "fd", "fdfind", "rush"})
# Programs that never run their arguments: what they are given is data.
_INERT = frozenset({"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "which", "type", "whereis",
                    "whatis", "apropos", "man", "info", "help", "true", "false", ":", "test", "[", "[["})
_CD = frozenset({"cd", "pushd", "popd"})
# git subcommands that run nothing given to them (builtins cannot be aliased, so none is looked up)
# Programs that a here-document feeds data, not a script (`cat > notes <<EOF`, `git commit -F - <<EOF`)
_SINKS = _INERT | _CD | {"cat", "tee", "git", "gh", "hub", "head", "tail", "wc", "sort", "uniq", "less", "more", "jq"}
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
# review-gate's commands that only a person may run (with `gaps --apply`): they waive findings
# (accept, baseline) or write the configuration (init)
_PERSONS_STEPS = frozenset({"accept", "baseline", "init"})
_LOOP_APPROVALS = frozenset({"approve", "reject"})
# words after a program named by an expansion that say it may be ours: `nice $G push`, `sudo $RG accept`
_STEPS = frozenset({"commit", "push", "pull-request", "pr", "mr", "send-pack", *_PERSONS_STEPS, "gaps", "loop"})
# Programs that only read the files they are given: naming the configuration is not writing it
_READERS = _INERT | _CD | frozenset({
    "cat", "less", "more", "head", "tail", "wc", "diff", "cmp", "ls", "stat", "file", "tree", "du", "jq", "bat",
    "nl", "od", "xxd", "hexdump", "strings", "realpath", "readlink", "basename", "dirname", "md5sum", "sha1sum",
    "sha256sum", "sha512sum", "cksum", "colordiff", "view"})
_COPIES = frozenset({"cp", "install", "rsync", "scp"})  # they write their last operand only
# Programs that remove or move what they are given: a directory that holds a protected path goes
# with it (`rm -rf .claude` takes .claude/settings.json and the hooks in it)
_REMOVERS = frozenset({"rm", "rmdir", "mv", "unlink", "shred", "trash", "trash-put", "gio"})
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                                "--super-prefix", "--attr-source"})
_GH_BUILTINS = frozenset({
    "agent-task", "alias", "api", "attestation", "auth", "browse", "cache", "co", "codespace", "completion",
    "config", "copilot", "extension", "gist", "gpg-key", "help", "issue", "label", "org", "pr", "preview",
    "project", "release", "repo", "ruleset", "run", "search", "secret", "ssh-key", "status", "variable",
    "workflow", "version"})
_GLAB_BUILTINS = frozenset({
    "alias", "api", "auth", "changelog", "check-update", "ci", "cluster", "completion", "config", "deploy-key",
    "duo", "gpg-key", "help", "incident", "issue", "iteration", "job", "label", "milestone", "release", "repo",
    "schedule", "securefile", "snippet", "ssh-key", "stack", "token", "user", "variable", "version"})
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_SPACE = re.compile(r"\s")
_GIT_WORD = re.compile(r"\b(?:git|hub|gh|glab)\b")
_LOOSE_GIT = re.compile(r"\b(?:git|hub)\b")
_LOOSE_GATED = re.compile(r"\b(commit|push|pull-request)\b")
_LOOSE_GH = re.compile(r"\b(?:gh|glab)\b")
_LOOSE_PR = re.compile(r"\b(?:pr|mr)\s+(?:create|new|merge)\b")
_LOOSE_RG = re.compile(r"\breview[-_]gate\b")
_LOOSE_WAIVE = re.compile(r"\b(?:accept|baseline|init|approve|reject)\b|--ap(?:p|pl|ply)?\b")
_PARENS = re.compile(r"[()]")
# what the comment scanner stops at, by quoting state: none, '...', $'...', "..."
_SPECIAL = {"": re.compile(r"[\\'\"#<\n]"), "'": re.compile(r"'"), "$'": re.compile(r"[\\']"),
            '"': re.compile(r'[\\"]')}
_ANSI_C = re.compile(r"(?:[^\\']|\\.)*'", re.S)  # the rest of a $'...' word, to its closing quote
_ANSI_ESCAPE = re.compile(r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))",
                          re.S)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_HEREDOC = re.compile(r"<<(-?)[ \t]*(?:'([^'\n]*)'|\"([^\"\n]*)\"|\\?([^\s;&|()<>'\"]+))")
_WORD_START = " \t\n;&|()<>"
_HIDES = re.compile(r"[;&|()`$]")
_GATES: dict[str, Gated] = {"commit": "commit", "push": "push", "pull-request": "pr"}
# What a git command whose subcommand is not on the line (an expansion, `$'...'`, a glob, words
# xargs appends, an alias config on the line defines) may do: reviewed as both (fail closed).
_ANY_GIT: frozenset[Gated] = frozenset({"commit", "push"})
_ANY: frozenset[Gated] = frozenset({"commit", "push", "pr"})
# A word a shell changes before running it: an expansion, a substitution, a glob, a brace list
_EXPANDS = re.compile(r"[$`*?]|\[.*\]|\{[^{}]*[,.][^{}]*\}|\{\}")
_BRACES = re.compile(r"\{[^{}]*\}")
# configuration given to one git command through its environment (aliases, includes) and a
# repository other than the directory's (these name the repository, work tree or index git uses)
_CONFIG_ENV = re.compile(r"\bGIT_CONFIG(?:_COUNT|_PARAMETERS|_KEY_\d+|_GLOBAL|_SYSTEM)?=|\bGIT_CONFIG\b"
                         r"|\b(?:HOME|XDG_CONFIG_HOME)=")  # another ~/.gitconfig
_FOREIGN_ENV = re.compile(r"\bGIT_(?:DIR|WORK_TREE|INDEX_FILE|COMMON_DIR|OBJECT_DIRECTORY|NAMESPACE)=")
_TOPLEVEL = re.compile(r"\$\(\s*git\s+rev-parse\s+--show-toplevel\s*\)$")
_FOREIGN_OPTIONS = frozenset({"--git-dir", "--work-tree", "--namespace"})
_FIND_READS = frozenset({"-print", "-print0", "-printf", "-ls", "-prune", "-quit"})
_FIND_ACTS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"})
_FIND_NAMES = frozenset({"-name", "-iname", "-lname", "-ilname"})
_FIND_PATHS = frozenset({"-path", "-ipath", "-wholename", "-iwholename"})
_FIND_ANY = frozenset({"-regex", "-iregex", "!", "-not"})  # tests read as "any file may match"
MAX_WALK = 5000  # files of a protected directory compared with find's tests at most


def gates(command: str, cwd: Path | None = None, protected: Sequence[Path] = (),
          exempt: Sequence[Path] = ()) -> set[Gated]:
    """What the shell line ``command`` would commit, push or open (``commit``, ``push``, ``pr``),
    and ``waive`` when it takes a step only a person may take: runs ``review-gate accept``,
    ``baseline``, ``init`` or ``gaps --apply``, or writes into one of the ``protected``
    directories (the configuration's) outside the ``exempt`` ones (the loop's session files,
    which a coder writes); ``elsewhere`` when what it would commit, push or open is not the
    repository of ``cwd`` (``git -C DIR``, ``--git-dir``, ``GIT_DIR=``, a ``cd`` before it),
    or cannot be told to be. ``cwd`` is where its git aliases are looked up and relative paths
    start (default: the current directory).

    >>> sorted(gates("timeout 30 git push origin main && gh pr create --fill"))
    ['pr', 'push']
    >>> gates('echo "git push"; git log --grep=push')
    set()
    >>> sorted(gates("timeout 5 review-gate accept 4f2a9c --reason fine && git push"))
    ['push', 'waive']
    >>> gates("sed -i /tls/d .review-gate/review-rules.json", Path("/w"), [Path("/w/.review-gate")])
    {'waive'}
    """
    reader = _Reader(cwd if cwd is not None else Path.cwd(), protected, exempt)
    reader.configured = bool(_CONFIG_ENV.search(command))
    reader.foreign = bool(_FOREIGN_ENV.search(command))
    reader.mentioned = any(name in command for name in reader.names)
    return reader.line(command, 0)


def writes_into(path: str, cwd: Path, protected: Sequence[Path], exempt: Sequence[Path] = ()) -> bool:
    """Whether the file ``path`` (relative to ``cwd``) is, or is inside, a ``protected`` path
    and not inside an ``exempt`` one, its symbolic links resolved."""
    return _Reader(cwd, protected, exempt).names_protected([path])


def loose(text: str) -> set[Gated]:
    """The fail-closed reading: a ``git``/``hub`` word and, anywhere after it, ``commit``,
    ``push`` or ``pull-request``; ``gh``/``glab`` and, after it, ``pr create`` (``new``,
    ``merge``, ``mr create``...). Linear in the text."""
    found: set[Gated] = set()
    git = _LOOSE_GIT.search(text)
    if git is not None:
        found |= {_GATES[m.group(1)] for m in _LOOSE_GATED.finditer(text, git.end())}
    gh = _LOOSE_GH.search(text)
    if gh is not None and _LOOSE_PR.search(text, gh.end()):
        found.add("pr")
    rg = _LOOSE_RG.search(text)
    if rg is not None and _LOOSE_WAIVE.search(text, rg.end()):
        found.add("waive")
    return found


def _literal(word: str) -> bool:
    """Whether a shell runs ``word`` as it stands: no expansion, substitution, glob or brace list."""
    return _EXPANDS.search(word) is None


class _Reader:
    """One payload's reading: where aliases are looked up, and what the line itself defines."""

    def __init__(self, cwd: Path, protected: Sequence[Path] = (), exempt: Sequence[Path] = ()) -> None:
        self.cwd = cwd
        # the configuration's directories, as absolute paths and as the line may name them
        self.protected = _forms(cwd, protected)
        self.exempt = _forms(cwd, exempt)
        self.names = sorted({n for d in self.protected for n in (d, os.path.relpath(d, cwd))})
        self.lookups = 0
        self.known: dict[tuple[str, str], str | None] = {}
        self.roots: dict[str, str | None] = {}
        self.defined: dict[str, str] = {}  # git aliases the line sets with `git config alias.X V`
        self.gh: dict[str, str] | None = None
        self.here: Path | None = cwd  # where the line's next command runs (a `cd` moves it; None: not known)
        self.stack: list[Path | None] = []  # pushd's
        self.subshells: list[tuple[Path | None, list[Path | None]]] = []  # where each open ( ) began
        self.configured = False  # git configuration in the line's environment (GIT_CONFIG_COUNT...)
        self.foreign = False  # GIT_DIR=, GIT_WORK_TREE=, GIT_INDEX_FILE=... somewhere on the line
        self.mentioned = False  # the line names a protected directory somewhere (D=.review-gate)

    def line(self, text: str, depth: int) -> set[Gated]:
        if depth > MAX_DEPTH or len(text) > MAX_TEXT:
            return self.loose(text)
        text, bodies = _strip_comments(text)
        inner = _substitutions(text)
        if inner is None:
            return self.loose(text) | {gate for body in bodies for gate in self.loose(body)}
        found: set[Gated] = set()
        for part in inner:
            found |= self.line(part, depth + 1)
        tokens = _split(self.blanked(text))
        if tokens is None:
            return found | self.loose(text) | {gate for body in bodies for gate in self.loose(body)}
        marked = _commands(tokens)
        commands = [(words, written) for words, written in marked if words not in ([p] for p in _SUBSHELL)]
        for words, written in marked:
            if words == ["("]:
                self.subshells.append((self.here, list(self.stack)))
                continue
            if words == [")"]:
                if self.subshells:  # a `case` pattern's ) closes nothing
                    self.here, self.stack = self.subshells.pop()
                continue
            if self.protected and self.names_protected(written):
                found.add("waive")  # > .review-gate/review-rules.json
            if words:
                found |= self.simple(words, depth, text)
        if any(_program(words) not in _SINKS for words, _ in commands if words):  # cat <<EOF | bash: a script
            for body in bodies:
                found |= self.line(body, depth + 1)
        return found

    def blanked(self, text: str) -> str:
        """``text`` with each substitution (read on its own above) as one word that is not on
        the line: ``$(cat g.txt) commit`` runs whatever the file names, so the program is read as
        each it could be. The forms that name where the line already is keep that place:
        ``$(git rev-parse --show-toplevel)`` (the repository's top), ``$(pwd)``, ``$PWD``."""
        here = str(self.cwd)
        top = self._root(self.cwd) if _TOPLEVEL.search(text) else None
        text = _TOPLEVEL.sub(lambda _: top or _UNKNOWN, text)
        text = _HERE.sub(lambda _: here, text)
        return _blank_substitutions(text)

    def simple(self, words: list[str], depth: int, context: str) -> set[Gated]:
        """One simple command, past its reserved words and assignments."""
        found: set[Gated] = set()
        index = 0
        while index < len(words):
            word = words[index]
            if word in _RESERVED:
                index += 1
            elif word == "function":
                index += 2
            elif _ASSIGNMENT.match(word):
                value = word.partition("=")[2]
                if _SPACE.search(value):  # CMD='git push'; sh -c "$CMD"
                    found |= self.line(value, depth + 1)
                index += 1
            else:
                break
        if index >= len(words) or words[index] in _HEADERS:
            return found
        return found | self.program(words[index:], depth, context)

    def program(self, words: list[str], depth: int, context: str, *, fed: bool = False) -> set[Gated]:
        """``fed``: a program (xargs, find -exec) appends words of its own to ``words``."""
        if depth > MAX_DEPTH:
            return self.loose(context)
        word, args = words[0], words[1:]
        name = PurePath(word).name
        if not _literal(word):  # `$CMD` alone may expand to a whole command: as if fed its words
            # (a lone `$` is what the split leaves of `$(...)`, whose text is read on its own)
            return self.unknown(word, args, depth, context, fed=fed or (not args and word != "$"))
        if name in ("git", "hub"):
            return self.git(args, depth, context, hub=name == "hub", fed=fed)
        if name.startswith("git-"):  # git's own programs: /usr/lib/git-core/git-send-pack
            return self.git([name[len("git-"):], *args], depth, context, fed=fed)
        if name in ("gh", "glab"):
            return self.gh_command(args, depth, context, fed=fed, lab=name == "glab")
        if name in _SHELLS:
            return self.shell(args, depth, context)
        if name == "eval":
            return self.line(" ".join(args), depth + 1)
        if name in _REVIEW_GATE:
            return self.review_gate(args, fed=fed)
        if name in _CD:
            self.change_directory(name, args)
            return set()
        if name in _INERT:
            return set()
        if self.protected and name not in _READERS and self.writes(name, args):
            return {"waive"}  # sed -i, rm, mv, cp INTO, tee, sqlite3... on the configuration
        if _GIT_WORD.search(word):
            return self.loose(context)
        return self.arguments(args, depth, context, fed=fed or name in _FEEDERS)

    def unknown(self, word: str, args: list[str], depth: int, context: str, *, fed: bool) -> set[Gated]:
        """A program named by an expansion, a substitution or a glob: read as each program of
        ours it could be (``/usr/bin/gi[t]``, ``$GIT``); words with a space as command lines."""
        pattern = re.compile(fnmatch.translate(_BRACES.sub("*", re.sub(r"\$\{[^}]*\}|\$\w*|`[^`]*`?", "*",
                                                                       PurePath(word).name))))
        found = self.loose(context)
        for program in sorted(_PROGRAMS - {"eval"}):
            if pattern.match(program):
                found |= self.program([program, *args], depth + 1, context, fed=fed)
        return found | self.arguments(args, depth, context, fed=fed)

    def arguments(self, args: list[str], depth: int, context: str, *, fed: bool = False) -> set[Gated]:
        """The arguments of a program that may run them (a wrapper, find -exec, watch, ssh...)."""
        found: set[Gated] = set()
        for index, arg in enumerate(args):
            if PurePath(arg).name in _PROGRAMS or (PurePath(arg).name.startswith("git-") and _literal(arg)):
                return found | self.program(args[index:], depth, context, fed=fed)
            if not _literal(arg) and index + 1 < len(args) and args[index + 1] in _STEPS:
                return found | self.unknown(arg, args[index + 1:], depth, context, fed=fed)  # nice $G push
            if _SPACE.search(arg):
                found |= self.line(arg, depth + 1) or self.loose(arg)
            elif _GIT_WORD.search(arg):
                found |= self.loose(context)
        return found

    def review_gate(self, args: list[str], *, fed: bool = False) -> set[Gated]:
        """review-gate's own steps that only a person may take: waiving findings (``accept``,
        ``baseline``) and changing the configuration (``gaps --apply``, ``init``). Its command
        is its first argument, else it runs a review (``cli._with_default_command``); a command
        that is not on the line (``$'acc\\x65pt'``, ``$CMD``, what xargs appends) may be one."""
        command = args[0] if args else ""
        if not _literal(command) or (fed and not args):
            return {"waive"}
        if not fed and any(a in ("-h", "--help") for a in args) and all(_literal(a) for a in args):
            return set()  # argparse prints the help and exits before the command runs
        applies = any(len(o := a.partition("=")[0]) >= len("--ap") and "--apply".startswith(o) for a in args)
        if command in _PERSONS_STEPS or (command == "gaps" and applies):
            return {"waive"}
        if command == "loop" and len(args) > 1 and (args[1] in _LOOP_APPROVALS or not _literal(args[1])):
            return {"waive"}  # the approval a loop waits for is a person's (approve --complete overrides a NO_GO)
        return set()

    def change_directory(self, name: str, args: list[str]) -> None:
        """Follow ``cd``/``pushd``/``popd``: where the line's next commands run (a subshell's
        ``cd`` until the subshell ends)."""
        operands = [a for a in args if not a.startswith("-") or a == "-"]
        if name == "popd":
            self.here = self.stack.pop() if self.stack else None
            return
        if name == "pushd":
            self.stack.append(self.here)
        target = operands[0] if operands else "~"
        if self.here is None or target == "-" or not _literal(target.lstrip("~")):
            self.here = None
        else:
            self.here = Path(os.path.normpath(self.here / os.path.expanduser(target)))

    def writes(self, name: str, args: list[str]) -> bool:
        if name == "find":
            base = self.here if self.here is not None else self.cwd
            return paths.find_writes(args, str(base), self.protected, self.exempt, _READERS, MAX_WALK)
        targets = _targets(name, args)
        if name in _REMOVERS and self.holds_protected(targets):
            return True
        # code given inline (python -c "open('.review-gate/x', 'w')") names the path inside a word
        return self.names_protected(targets) or any(n in t for t in targets for n in self.names if t != n)

    def holds_protected(self, words: Sequence[str]) -> bool:
        """Whether a word names a directory that holds a protected path (or a glob that could),
        so removing or moving it takes the protected path along."""
        base = self.here if self.here is not None else self.cwd
        for word in words:
            if not word or word.startswith("-"):
                continue
            path = os.path.join(base, os.path.expanduser(word))
            for protected in self.protected:
                ancestors = [str(p) for p in Path(protected).parents]
                if paths.is_glob(path):
                    if any(paths.glob_names(path, [a], []) for a in ancestors if len(a) > len(str(base))):
                        return True
                elif any(form in ancestors for form in paths.forms(path)):
                    return True
        return False

    def names_protected(self, words: Sequence[str], directory: Path | None = None) -> bool:
        """Whether a word names a file in (or is) a directory of the configuration; an option's
        value too (``--output=.review-gate/x``); as the path is written and with its links
        resolved; a glob that could match one. After a ``cd`` to a directory not known, a
        relative path is also looked for in the configuration's directories."""
        here = directory if directory is not None else self.here
        bases = [here] if here is not None else [self.cwd, *(Path(d) for d in self.protected if os.path.isdir(d))]
        for word in words:
            for candidate in {word, word.partition("=")[2]}:
                if not candidate or candidate.startswith("-"):
                    continue
                if "$" in candidate and self.mentioned:
                    return True  # `D=.review-gate; echo x > $D/baseline.json`: where it goes is not on the line
                for number, base in enumerate(bases):
                    path = os.path.join(base, os.path.expanduser(candidate))
                    if number and not os.path.isabs(candidate) and not os.path.lexists(path) and \
                            not paths.is_glob(candidate):
                        continue  # a guess at where an unknown `cd` went: only what is there
                    if self._names(path):
                        return True
        return False

    def _names(self, path: str) -> bool:
        if paths.is_glob(path):
            return paths.glob_names(path, self.protected, self.exempt)
        return any(paths.within(form, self.protected) and not paths.within(form, self.exempt)
                   for form in paths.forms(path))

    def loose(self, text: str) -> set[Gated]:
        """The fail-closed reading (``loose``), and any mention of the configuration's directory."""
        found = loose(text)
        if any(name in text for name in self.names):
            found.add("waive")
        return found

    def shell(self, args: list[str], depth: int, context: str) -> set[Gated]:
        index = 0
        while index < len(args):
            arg = args[index]
            if arg in _SHELL_VALUE_OPTIONS:
                index += 2
            elif arg.startswith("--") and arg != "--":
                index += 1
            elif arg[:1] in "-+" and len(arg) > 1 and arg != "--":
                if "c" in arg[1:]:  # -c, -lc, -xec: every word after it is read as a command line
                    found: set[Gated] = set()
                    for command in args[index + 1:]:
                        found |= self.line(command, depth + 1)
                    return found
                index += 1
            else:
                break
        return self.loose(context)  # a script or its standard input: what it runs is not on the line

    def git(self, args: list[str], depth: int, context: str, *, hub: bool = False, fed: bool = False) -> set[Gated]:
        """A git (or hub) command, run where the line's ``cd``s left it (``self.here``). What it
        commits or pushes for another repository, or one not known, adds ``elsewhere``."""
        return self._git(args, depth, context, hub, fed, self.here, self.foreign)

    def _git(self, args: list[str], depth: int, context: str, hub: bool, fed: bool, where: Path | None,
             foreign: bool) -> set[Gated]:
        local, index, configured = dict(self.defined), 0, self.configured
        found: set[Gated] = set()
        while index < len(args) and args[index].startswith("-"):
            option, equals, value = args[index].partition("=")
            if option in _GIT_VALUE_OPTIONS and not equals:
                value = args[index + 1] if index + 1 < len(args) else ""
                index += 1
            index += 1
            if option == "-C" and not _TOPLEVEL.match(value):  # -C "$(git rev-parse --show-toplevel)": the same
                where = where / os.path.expanduser(value) if where is not None and _literal(value) else None
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
                    if _SPACE.search(meaning):  # core.pager='git push', core.sshCommand=...
                        found |= self.line(meaning, depth + 1)
        gated = found | self._subcommand(args[index:], depth, context, hub, fed, where, foreign, local, configured)
        if gated & _ANY and (foreign or not self._home(where)):
            gated.add("elsewhere")
        return gated

    def _subcommand(self, words: list[str], depth: int, context: str, hub: bool, fed: bool, where: Path | None,
                    foreign: bool, local: dict[str, str], configured: bool) -> set[Gated]:
        unknown = set(_ANY if hub else _ANY_GIT)
        if not words:
            # `git` alone: data of another program (e.g. $(which git) push), or what xargs appends
            return unknown if fed else self.loose(context)
        sub, rest = words[0], words[1:]
        if not _literal(sub):
            return unknown  # git $(printf pu sh), git ${p}sh, git $'\x70ush', git p*h, find -exec git {}
        if sub in ("commit", "push"):
            return {_GATES[sub]}
        if sub in _GIT_PUSHES or sub.startswith("remote-"):
            return {"push"}
        if hub and sub == "pull-request":
            return {"pr"}
        if sub in _GIT_RUNS:
            return self.arguments(rest, depth + 1, context)
        directory = where if where is not None else self.cwd
        if sub in _GIT_WRITES and self.protected and self.names_protected(rest, directory):
            return {"waive"}  # git checkout main -- .review-gate/
        if sub == "config":
            self._define(rest)
        if sub in _GIT_DATA or (hub and sub in _HUB_DATA):
            return set()
        if sub.lower() not in local and (configured or where is None or foreign):
            return self.loose(context) | unknown  # an alias the line's configuration may define, or not known where
        expansion = local[sub.lower()] if sub.lower() in local else self._git_alias(directory, sub)
        if expansion is None or depth >= MAX_DEPTH:
            return self.loose(context)  # git-SUB on the PATH, a typo, or aliases too deep: not known
        if expansion.startswith("!"):
            return self.line(" ".join([expansion[1:], *map(shlex.quote, rest)]), depth + 1)
        try:
            expanded = shlex.split(expansion)
        except ValueError:
            return self.loose(f"git {expansion}")
        return self._git([*expanded, *rest], depth + 1, context, hub, fed, where, foreign)

    def gh_command(self, args: list[str], depth: int, context: str, *, fed: bool = False,
                   lab: bool = False) -> set[Gated]:
        """gh (``lab``: glab): opening or merging a pull (merge) request, or writing through the
        API (any method but GET; an endpoint of refs, merges or pulls)."""
        positional = [(i, a) for i, a in enumerate(args)
                      if not a.startswith("-") and (i == 0 or args[i - 1] not in ("-R", "--repo"))]
        if not positional:
            return {"pr"} if fed else set()
        index, command = positional[0]
        second = positional[1][1] if len(positional) > 1 else ("$" if fed else "")
        gated: set[Gated] = {"pr"} if self._home(self.here) else {"pr", "elsewhere"}
        if not _literal(command):
            return gated
        if command == ("mr" if lab else "pr"):
            opens = ("create", "new", "merge", "accept") if lab else ("create", "new", "merge")
            return gated if second in opens or not _literal(second) else set()
        if command == "api":
            return gated if _api_writes(args[index + 1:]) else set()
        if lab:
            return set() if command in _GLAB_BUILTINS else self.loose(context)
        if command in _GH_BUILTINS:
            return set()
        expansion = self._gh_aliases().get(command)
        if expansion is None or depth >= MAX_DEPTH:
            return self.loose(context)  # an extension, or a typo: not known
        rest = args[:index] + args[index + 1:]
        if expansion.startswith("!"):
            return self.line(" ".join([expansion[1:], *map(shlex.quote, rest)]), depth + 1)
        try:
            expanded = shlex.split(expansion)
        except ValueError:
            return self.loose(f"gh {expansion}")
        return self.gh_command([*expanded, *rest], depth + 1, context)

    def _define(self, rest: list[str]) -> None:
        for index, arg in enumerate(rest[:-1]):
            if arg.lower().startswith("alias."):
                self.defined[arg[len("alias."):].lower()] = rest[index + 1]

    def _home(self, where: Path | None) -> bool:
        """Whether ``where`` is in the repository of the payload's directory (the one reviewed)."""
        if where is None:
            return False
        if os.path.realpath(where) == os.path.realpath(self.cwd):
            return True
        root = self._root(where)
        return root is not None and root == self._root(self.cwd)

    def _root(self, directory: Path) -> str | None:
        key = os.path.realpath(directory)
        if key not in self.roots:
            if self.lookups >= MAX_LOOKUPS or not os.path.isdir(key):
                return None
            self.lookups += 1
            self.roots[key] = repo_root(Path(key))
        return self.roots[key]

    def _git_alias(self, directory: Path, name: str) -> str | None:
        key = (str(directory), name.lower())
        if key not in self.known:
            if self.lookups >= MAX_LOOKUPS or not directory.is_dir():
                return None
            self.lookups += 1
            self.known[key] = git_alias(directory, name)
        return self.known[key]

    def _gh_aliases(self) -> dict[str, str]:
        if self.gh is None:
            self.gh = gh_aliases()
        return self.gh


def _api_writes(args: list[str]) -> bool:
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
    if method != "GET" or not _literal(method) or "$" in endpoint or "`" in endpoint:
        return True
    return bool(re.search(r"/(?:git/refs|merges|pulls|merge_requests)\b", endpoint)) or "createPullRequest" in endpoint


def repo_root(directory: Path) -> str | None:
    """The top of the work tree ``directory`` is in, None outside one or when git cannot tell."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=directory, env=env,
                              capture_output=True, timeout=LOOKUP_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    top = done.stdout.decode("utf-8", "replace").strip()
    return os.path.realpath(top) if done.returncode == 0 and top else None


def git_alias(directory: Path, name: str) -> str | None:
    """git's expansion of the alias ``name`` in ``directory``, None if there is none or git
    cannot tell. Only git's configuration is read (argv, never a shell, no command run)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(["git", "config", "--get", f"alias.{name}"], cwd=directory, env=env,
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


def _strip_comments(text: str) -> tuple[str, list[str]]:
    """The line without its comments and here-document bodies, and the bodies. A comment is an
    unquoted ``#`` that begins a word, to the end of its line; quotes (``'...'``, ``"..."``,
    ``$'...'``, backslashes) are followed as a shell follows them. A comment that holds an
    operator or a substitution and a git word is kept: were the scan wrong about a quote, what
    it took for a comment could be a command."""
    out: list[str] = []
    bodies: list[str] = []
    at, quote = 0, ""
    heredocs: list[tuple[bool, str]] = []  # (<<-, delimiter) of the bodies that start at the next newline
    while (match := _SPECIAL[quote].search(text, at)) is not None:
        i, char = match.start(), match.group()
        out.append(text[at:i])
        at = i + 1
        if char == "\\":
            out.append(text[i:i + 2])
            at = i + 2
        elif quote:
            quote = ""  # the closing quote: the scanner stops at nothing else inside quotes
            out.append(char)
        elif char == "'" and text[i - 1:i] == "$" and text[i - 2:i - 1] != "\\" and (
                closing := _ANSI_C.match(text, i + 1)):
            # $'\x70ush' is `push` to the shell: read it as that, in plain single quotes
            out[-1] = out[-1][:-1]
            out.append("'" + _ansi_c(text[i + 1:closing.end() - 1]).replace("'", "'\\''") + "'")
            at = closing.end()
        elif char == "#" and (i == 0 or text[i - 1] in _WORD_START):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            if _HIDES.search(text, i, end) and _GIT_WORD.search(text, i, end):
                out.append(char)
            else:
                at = end
        elif char == "\n" and heredocs:
            out.append(char)
            for dash, delimiter in heredocs:
                at = _body(text, at, dash, delimiter, bodies)
            heredocs = []
        else:
            if char in "'\"":
                quote = "$'" if char == "'" and text[i - 1:i] == "$" else char
            elif char == "<" and text[i - 1:i] != "<" and not text.startswith("<<<", i) and (
                    heredoc := _HEREDOC.match(text, i)):
                heredocs.append((heredoc.group(1) == "-", next(g for g in heredoc.groups()[1:] if g is not None)))
            out.append(char)
    out.append(text[at:])
    return "".join(out), bodies


def _ansi_c(body: str) -> str:
    """The text of a ``$'...'`` word as bash decodes it (``\\x70``, ``\\160``, ``\\u0070``, ``\\n``...)."""
    def one(match: re.Match[str]) -> str:
        hexadecimal, short, long, octal, control, other = match.groups()
        number = hexadecimal or short or long
        if number:
            return chr(min(int(number, 16), 0x10FFFF))
        if octal:
            return chr(int(octal, 8) & 0xFF)
        if control is not None:
            return chr(ord(control) & 0x1F)
        return _ANSI_SIMPLE.get(other, "\\" + other)

    return _ANSI_ESCAPE.sub(one, body)


def _body(text: str, at: int, dash: bool, delimiter: str, bodies: list[str]) -> int:
    """Keep the here-document body that starts at ``at`` in ``bodies``; where its delimiter line ends."""
    start = at
    while at < len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end + 1
        line = text[at:end].rstrip("\n")
        if (line.lstrip("\t") if dash else line) == delimiter:
            bodies.append(text[start:at])
            return end
        at = end
    bodies.append(text[start:])
    return at


def _split(text: str) -> list[str] | None:
    """The line's words and operators as a shell splits them (quotes removed); None when it
    cannot be split. ``#`` is not a comment: a word can hold one, and text after it is read."""
    lexer = shlex.shlex(text.replace("\\\n", ""), posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace = " \t\r"  # a newline separates commands, like `;`
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


def _forms(cwd: Path, paths: Sequence[Path]) -> list[str]:
    """Each path, absolute, as written and with its links resolved."""
    return sorted({os.path.normpath(form) for p in paths
                   for form in (os.path.join(cwd, p), os.path.realpath(os.path.join(cwd, p)))})


def _targets(name: str, args: list[str]) -> list[str]:
    """The words of a program's arguments that may name a file it writes: for a copy, its
    destination only (``cp .review-gate/x /tmp`` reads the configuration); otherwise all."""
    if name not in _COPIES:
        return args  # ln too: a link to the configuration is a way to write it
    for index, arg in enumerate(args):
        if arg in ("-t", "--target-directory") and index + 1 < len(args):
            return [args[index + 1]]
        if arg.startswith("--target-directory="):
            return [arg]
    operands = [a for a in args if not a.startswith("-")]
    return operands[-1:]


def _program(words: list[str]) -> str:
    """The name of the program a simple command runs, past reserved words and assignments."""
    for word in words:
        if word not in _RESERVED and not _ASSIGNMENT.match(word):
            return PurePath(word).name
    return ""


_SUBSHELL = ("(", ")")


def _commands(tokens: list[str]) -> list[tuple[list[str], list[str]]]:
    """Each simple command: its words (split at operators, redirections and their targets
    dropped) and the files its redirections write (``> F``, ``>> F``, ``&> F``, ``<> F``...)."""
    commands: list[tuple[list[str], list[str]]] = []
    words: list[str] = []
    written: list[str] = []
    redirection = ""
    for token in tokens:
        if token and all(c in _PUNCTUATION for c in token):
            if token in _REDIRECTIONS:
                if words and words[-1].isdigit():
                    words.pop()  # 2>&1: the descriptor is no argument
                redirection = token
                continue
            commands.append((words, written))
            words, written, redirection = [], [], ""
            # where a subshell starts and ends (`(`, `);`, `))`): what its cd does stays in it
            commands += [([char], []) for char in token if char in _SUBSHELL]
        elif redirection:
            if redirection in _WRITES and not (redirection == ">&" and (token.isdigit() or token == "-")):
                written.append(token)
            redirection = ""
        else:
            words.append(token)
    commands.append((words, written))
    return [command for command in commands if command[0] or command[1]]


def _substitutions(text: str) -> list[str] | None:
    """The text of each ``$( )`` and backtick substitution (quotes are not considered: one in
    single quotes is read too); None when there are too many to read."""
    found: list[str] = []
    start = text.find("$(")
    while start >= 0:
        if len(found) >= MAX_SUBSTITUTIONS:
            return None
        found.append(_balanced(text, start + 2))
        start = text.find("$(", start + 2)
    if "`" in text:
        quoted = text.split("`")[1::2]  # an unclosed one runs to the end
        if len(found) + len(quoted) > MAX_SUBSTITUTIONS:
            return None
        found += quoted
    return found


_UNKNOWN = "$__substituted__"  # a word no shell line holds: not literal, so read as every program it could be
_TOPLEVEL = re.compile(r"\$\(\s*git\s+rev-parse\s+--show-toplevel\s*\)|`\s*git\s+rev-parse\s+--show-toplevel\s*`")
_HERE = re.compile(r"\$\(\s*pwd\s*\)|`\s*pwd\s*`|\$\{PWD\}|\$PWD\b")


def _blank_substitutions(text: str) -> str:
    """Each outermost ``$( )`` and backtick span of ``text`` as the word ``_UNKNOWN``."""
    out: list[str] = []
    at = 0
    while (start := text.find("$(", at)) >= 0:
        inner = _balanced(text, start + 2)
        out += [text[at:start], _UNKNOWN]
        at = start + 2 + len(inner) + 1
    rest = text[at:]
    if "`" in rest:
        parts = rest.split("`")
        rest = "".join(part if index % 2 == 0 else _UNKNOWN for index, part in enumerate(parts))
    return "".join(out) + rest


def _balanced(text: str, start: int) -> str:
    depth = 1
    for match in _PARENS.finditer(text, start):
        depth += 1 if match.group() == "(" else -1
        if depth == 0:
            return text[start:match.start()]
    return text[start:]
