"""Does a shell command line commit, push or open a pull request, or take a step only a person
may take? Read as bash reads it, never run.

A coding agent's shell tool hands the hook a command line before any shell sees it. The line
is parsed by tree-sitter's bash grammar (``hooks.syntax``: quotes, escapes and ``$'...'``;
lists, pipelines, subshells, ``{ }``, ``if``/``while``/``for``/``case`` bodies, functions;
substitutions wherever they are; redirections, here-documents and here-strings), and every
simple command in it is looked at:

- past what a shell or a wrapper puts before the program: assignments (``A=1``); and past any
  program that is not known to run nothing: its arguments are read as a command from the first
  word that names git, hub, gh, a shell or ``eval`` (``timeout -s KILL 30 git push``, ``nice -n
  5``, ``stdbuf -oL``, ``sudo -u ci``, ``env -i A=1``, ``xargs``, ``nohup``, ``exec``, ``find
  -exec``...);
- into the command lines it holds: substitutions (``$( )``, backticks, ``<( )``: in double
  quotes too, never in single quotes), ``eval ARGS``, ``sh -c STRING`` (any shell; ``-lc``,
  ``-xc`` too), an argument with a space in it given to a program that may run it (``watch 'git
  push'``, ``ssh host 'git push'``), an assignment's value (``CMD='git push'``), ``git rebase
  --exec``, ``git submodule foreach``, a function's body (where it is defined and where it is
  called);
- through aliases (``hooks.git_commands``); a ``!`` alias is read as a line;
- where it runs: ``cd``/``pushd``/``popd`` earlier on the line (a subshell's, a
  substitution's or a child shell's stays in it; after one in a pipeline's element, where the
  line is is not known), ``git -C``; a commit, push or pull request for a
  repository other than the payload's directory's (or for one the line does not name: ``cd
  "$D"``, ``--git-dir``, ``--work-tree``, ``GIT_DIR=``, ``GIT_INDEX_FILE=``) is ``elsewhere``:
  the hook reviews one repository and would pass another's push.

Data is data: the arguments of ``echo``, ``printf``, ``grep`` and their kin, and of a git
subcommand that runs nothing (``git log --grep push``), are not commands, so ``echo "git push"``
is not a push (``echo "git push" | sh`` is: a shell reading its standard input is judged by
the loose pattern below). A here-document is data unless a program on the line may run it
(``cat <<EOF | bash``): then it is read as a line.

A person's steps (``waive``, ``hooks.persons_steps``): running ``review-gate accept``,
``baseline``, ``init``, ``gaps --apply`` or ``loop approve|reject`` (found like git, through the
same wrappers and nested lines: ``python -m review_gate`` too), or writing into a protected path.

Where the reading is unsure it fails closed, since a review too many costs only time and a push
missed is a false pass. A word the shell changes before running it (an expansion, a
substitution, a glob, a brace list) or words a program appends (``xargs``, ``parallel``, ``find
-exec``) in the place of git's subcommand count as a commit and a push, in gh's as a pull
request, in review-gate's as a person's step; in the place of the program, as each program of
ours it could name; so does a subcommand that is not git's own when configuration on the line
could define it as an alias (``-c include.path``, ``--config-env``, ``GIT_CONFIG_COUNT=``,
``HOME=``...). Otherwise any ``git``/``hub`` word followed anywhere later in the text by
``commit``, ``push`` or ``pull-request``, and ``gh`` followed by ``pr create``, counts: a line
the grammar reports an error or a missing part in (an unbalanced quote; what it could read is
read too), nested too deep or too long; a comment that holds an operator and a git word; a
program named by a variable or a substitution (``$GIT push``, ``$(which git) push``); ``git``
with no subcommand or with one that is neither git's nor an alias (``git flow``); a shell
running a script or its standard input; a word naming git inside an argument of a program we
do not know. Such a line is also a person's step when a ``review-gate`` word is followed by
``accept``, ``baseline``, ``init``, ``approve``, ``reject`` or ``--apply``, or when it mentions a
protected path at all.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePath

from review_gate.surfaces.hooks import git_commands, script, syntax
from review_gate.surfaces.hooks.loose import loose
from review_gate.surfaces.hooks.persons_steps import Protected, review_gate_step, settled_directory
from review_gate.surfaces.hooks.programs import (
    ASSIGNMENT,
    CD,
    FEEDERS,
    GIT_WORD,
    HEADERS,
    INERT,
    PROGRAMS,
    READERS,
    RESERVED,
    REVIEW_GATE,
    SHELL_VALUE_OPTIONS,
    SHELLS,
    SINKS,
    SPACE,
    STEPS,
    Gated,
    literal,
    program,
)
from review_gate.surfaces.hooks.repositories import Repositories

__all__ = ["MAX_DEPTH", "Gated", "gates", "loose", "writes_into"]

MAX_DEPTH = 4  # command lines inside command lines (sh -c, eval, $( ), aliases) read at most
MAX_TEXT = 64 * 1024  # characters parsed; a longer line is judged by the loose pattern
MAX_SUBSTITUTIONS = 64  # $( ) and backticks read in one line
MAX_PARSED = 256 * 1024  # characters parsed for one payload (lines in lines: bodies, sh -c, aliases); then loosely

# configuration given to one git command through its environment (aliases, includes) and a
# repository other than the directory's (these name the repository, work tree or index git uses)
_CONFIG_ENV = re.compile(r"\bGIT_CONFIG(?:_COUNT|_PARAMETERS|_KEY_\d+|_GLOBAL|_SYSTEM)?=|\bGIT_CONFIG\b"
                         r"|\b(?:HOME|XDG_CONFIG_HOME)=")  # another ~/.gitconfig
_FOREIGN_ENV = re.compile(r"\bGIT_(?:DIR|WORK_TREE|INDEX_FILE|COMMON_DIR|OBJECT_DIRECTORY|NAMESPACE)=")
# a comment that may be code: were the grammar wrong about where it starts, it would run
_CODE_IN_COMMENT = re.compile(r"[;&|()`$]")
_BRACES = re.compile(r"\{[^{}]*\}")


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
    reader = Reader(cwd if cwd is not None else Path.cwd(), protected, exempt)
    if (settled := settled_directory(command)) is not None:  # `cd build && rm -rf *`: the rest runs in build
        reader.protected.cwd = Path(os.path.normpath(reader.cwd / settled))
    joined = command.replace("\\\n", "")  # bash joins a line ending in a backslash to the next
    reader.configured = any(_CONFIG_ENV.search(text) for text in (command, joined))
    reader.foreign = any(_FOREIGN_ENV.search(text) for text in (command, joined))
    reader.protected.mentioned = bool(reader.protected) and reader.protected.mentioned_by(command, joined, MAX_TEXT)
    return reader.read(command, 0)


def writes_into(path: str, cwd: Path, protected: Sequence[Path], exempt: Sequence[Path] = ()) -> bool:
    """Whether the file ``path`` (relative to ``cwd``) is, or is inside, a ``protected`` path
    and not inside an ``exempt`` one, its symbolic links resolved."""
    return Protected(cwd, protected, exempt).named([path], cwd)


class Reader:
    """One payload's reading: where the line's commands run, the aliases and functions it
    defines, and what git has told about the repositories (each asked once)."""

    max_depth = MAX_DEPTH

    def __init__(self, cwd: Path, protected: Sequence[Path] = (), exempt: Sequence[Path] = ()) -> None:
        self.cwd = cwd
        self.protected = Protected(cwd, protected, exempt)
        self.repositories = Repositories(cwd)
        self.parsed = 0
        self.defined: dict[str, str] = {}  # git aliases the line sets with `git config alias.X V`
        self.functions: dict[str, tuple[script.Item, ...]] = {}  # the line's shell functions
        self.here: Path | None = cwd  # where the line's next command runs (a `cd` moves it; None: not known)
        self.stack: list[Path | None] = []  # pushd's
        self.configured = False  # git configuration in the line's environment (GIT_CONFIG_COUNT...)
        self.foreign = False  # GIT_DIR=, GIT_WORK_TREE=, GIT_INDEX_FILE=... somewhere on the line

    # ------------------------------------------------------------------ the line and its items

    def line(self, text: str, depth: int) -> set[Gated]:
        """A command line a child process runs (``sh -c``, an alias, a value read as a line):
        where its ``cd`` goes is its own."""
        here, stack = self.here, list(self.stack)
        try:
            return self.read(text, depth)
        finally:
            self.here, self.stack = here, stack

    def read(self, text: str, depth: int) -> set[Gated]:
        """A command line this shell runs (the payload's, ``eval``'s)."""
        self.parsed += len(text)
        if depth > MAX_DEPTH or len(text) > MAX_TEXT or self.parsed > MAX_PARSED:
            return self.loose(text)
        script = syntax.read(text)
        if script is None or script.substitutions > MAX_SUBSTITUTIONS:
            return self.loose(text)
        # a line bash would not read as the grammar did: loosely too (bash runs the lines before the error)
        found = self.loose(text) | self.loose(script.text) if script.broken else set()
        runs = _runs(script.items)
        found |= self.items(script.items, depth, script.text, runs)
        return found | self.bodies(script.bodies, depth, runs)

    def bodies(self, bodies: Sequence[str], depth: int, runs: bool) -> set[Gated]:
        """Here-documents are data, unless a program on their line (or on a line their
        substitution is in) may run them: ``cat <<EOF | bash``, ``x=$(python3 - <<EOF)``."""
        found: set[Gated] = set()
        for body in bodies if runs else ():
            found |= self.line(body, depth + 1)
        return found

    def items(self, items: Sequence[script.Item], depth: int, context: str, runs: bool) -> set[Gated]:
        """``runs``: a program on the line, or on a line it is nested in, may run a here-document."""
        found: set[Gated] = set()
        for item in items:
            if isinstance(item, script.Command):
                if item.writes and self.protected and self.protected.named(self.resolved(item.writes), self.here):
                    found.add("waive")  # > .review-gate/review-rules.json
                if item.words:
                    found |= self.simple(self.resolved(item.words), depth, context)
            elif isinstance(item, script.Scope):
                if item.piped:
                    found |= self.pipeline(item, depth, context, runs)
                elif not item.nested:  # a subshell: part of the line (`(echo x) | sh`)
                    found |= self.within(item.items, depth, context, runs)
                elif depth + 1 > MAX_DEPTH:
                    found |= self.loose(item.text) | {g for body in item.bodies for g in self.loose(body)}
                else:  # a substitution's command line: a line of its own
                    inside = runs or _runs(item.items)
                    found |= self.within(item.items, depth + 1, item.text, inside)
                    found |= self.bodies(item.bodies, depth + 1, inside)
            elif isinstance(item, script.Function):
                self.functions[item.name] = item.body  # read here too: what it does counts, called or not
                found |= self.within(item.body, depth, context, runs)
            elif isinstance(item, script.Comment):
                if _CODE_IN_COMMENT.search(item.text) and GIT_WORD.search(item.text):
                    found |= self.read(item.text[1:], depth + 1)
            else:
                found |= self.loose(item.text)
        return found

    def pipeline(self, piped: script.Scope, depth: int, context: str, runs: bool) -> set[Gated]:
        """Each element starts where the pipeline does. bash runs them in subshells, zsh the
        last in the shell itself: after a ``cd`` in one, where the line is is not known."""
        found: set[Gated] = set()
        start, stack = self.here, list(self.stack)
        moved = False
        for element in piped.items:
            self.here, self.stack = start, list(stack)
            inside = element.items if isinstance(element, script.Scope) else (element,)
            found |= self.items(inside, depth, context, runs)
            moved |= self.here != start or self.stack != stack
        self.here, self.stack = (None if moved else start), stack
        return found

    def within(self, items: Sequence[script.Item], depth: int, context: str, runs: bool) -> set[Gated]:
        """Items whose ``cd`` stays inside them."""
        here, stack = self.here, list(self.stack)
        try:
            return self.items(items, depth, context, runs)
        finally:
            self.here, self.stack = here, stack

    def resolved(self, words: Sequence[str]) -> list[str]:
        """The words with the places a substitution or ``$PWD`` names filled in: where the line
        is (``$(pwd)``), the top of its repository (``$(git rev-parse --show-toplevel)``)."""
        out = []
        for word in words:
            if script.HERE in word:
                word = word.replace(script.HERE, str(self.here) if self.here is not None else "$PWD")
            if script.TOP in word:
                top = self.repositories.root(self.here) if self.here is not None else None
                word = word.replace(script.TOP, top or script.UNKNOWN)
            out.append(word)
        return out

    # ------------------------------------------------------------------ one command

    def simple(self, words: list[str], depth: int, context: str) -> set[Gated]:
        """One simple command, past its reserved words and assignments."""
        found: set[Gated] = set()
        index = 0
        while index < len(words):
            word = words[index]
            if word in RESERVED:
                index += 1
            elif word == "function":
                index += 2
            elif ASSIGNMENT.match(word):
                value = word.partition("=")[2]
                if SPACE.search(value):  # CMD='git push'; sh -c "$CMD"
                    found |= self.line(value, depth + 1)
                index += 1
            else:
                break
        if index >= len(words) or words[index] in HEADERS:
            return found
        return found | self.program(words[index:], depth, context)

    def program(self, words: list[str], depth: int, context: str, *, fed: bool = False) -> set[Gated]:
        """``fed``: a program (xargs, find -exec) appends words of its own to ``words``."""
        if depth > MAX_DEPTH:
            return self.loose(context)
        word, args = words[0], words[1:]
        name = PurePath(word).name
        found: set[Gated] = set()
        if word in self.functions:  # its body runs here, its cd too (and the program it names is read as well)
            if depth < MAX_DEPTH:
                found = self.items(self.functions[word], depth + 1, context, runs=False)
            else:
                self.here = None  # where a body read too deep leaves the line is not known
        if not literal(word):  # `$CMD` alone may expand to a whole command: as if fed its words
            # (a lone `$` is what the grammar leaves of `$"..."`)
            return found | self.unknown(word, args, depth, context, fed=fed or (not args and word != "$"))
        if name in ("git", "hub"):
            return found | git_commands.git(self, args, depth, context, hub=name == "hub", fed=fed)
        if name.startswith("git-"):  # git's own programs: /usr/lib/git-core/git-send-pack
            return found | git_commands.git(self, [name[len("git-"):], *args], depth, context, fed=fed)
        if name in ("gh", "glab"):
            return found | git_commands.gh(self, args, depth, context, fed=fed, lab=name == "glab")
        if name in SHELLS:
            return found | self.shell(args, depth, context)
        if name == "eval":
            return found | self.read(" ".join(args), depth + 1)
        if name in REVIEW_GATE:
            return found | ({"waive"} if review_gate_step(args, fed=fed) else set())
        if name in CD:
            self.change_directory(name, args)
            return found
        if name in INERT:
            return found
        if self.protected and name not in READERS and self.protected.writes(name, args, self.here):
            return found | {"waive"}  # sed -i, rm, mv, cp INTO, tee, sqlite3... on the configuration
        if GIT_WORD.search(word):
            return found | self.loose(context)
        return found | self.arguments(args, depth, context, fed=fed or name in FEEDERS)

    def unknown(self, word: str, args: list[str], depth: int, context: str, *, fed: bool) -> set[Gated]:
        """A program named by an expansion, a substitution or a glob: read as each program of
        ours it could be (``/usr/bin/gi[t]``, ``$GIT``); words with a space as command lines."""
        pattern = re.compile(fnmatch.translate(_BRACES.sub("*", re.sub(r"\$\{[^}]*\}|\$\w*|`[^`]*`?", "*",
                                                                       PurePath(word).name))))
        found = self.loose(context)
        for name in sorted(PROGRAMS - {"eval"}):
            if pattern.match(name):
                found |= self.program([name, *args], depth + 1, context, fed=fed)
        return found | self.arguments(args, depth, context, fed=fed)

    def arguments(self, args: list[str], depth: int, context: str, *, fed: bool = False) -> set[Gated]:
        """The arguments of a program that may run them (a wrapper, find -exec, watch, ssh...)."""
        found: set[Gated] = set()
        for index, arg in enumerate(args):
            if PurePath(arg).name in PROGRAMS or (PurePath(arg).name.startswith("git-") and literal(arg)):
                return found | self.program(args[index:], depth, context, fed=fed)
            if not literal(arg) and index + 1 < len(args) and args[index + 1] in STEPS:
                return found | self.unknown(arg, args[index + 1:], depth, context, fed=fed)  # nice $G push
            if SPACE.search(arg):
                found |= self.line(arg, depth + 1) or self.loose(arg)
            elif GIT_WORD.search(arg):
                found |= self.loose(context)
        return found

    def shell(self, args: list[str], depth: int, context: str) -> set[Gated]:
        index = 0
        while index < len(args):
            arg = args[index]
            if arg in SHELL_VALUE_OPTIONS:
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

    def loose(self, text: str) -> set[Gated]:
        """The fail-closed reading (``loose``), and any mention of a protected path."""
        found = loose(text)
        if self.protected.named_in(text):
            found.add("waive")
        return found

    # ------------------------------------------------------------------ where it runs

    def change_directory(self, name: str, args: list[str]) -> None:
        """Follow ``cd``/``pushd``/``popd``: where the line's next commands run."""
        operands = [a for a in args if not a.startswith("-") or a == "-"]
        if name == "popd":
            self.here = self.stack.pop() if self.stack else None
            return
        if name == "pushd":
            self.stack.append(self.here)
        target = operands[0] if operands else "~"
        if self.here is None or target == "-" or not literal(target.lstrip("~")):
            self.here = None
        else:
            self.here = Path(os.path.normpath(self.here / os.path.expanduser(target)))


def _runs(items: Sequence[script.Item]) -> bool:
    """Whether a program of the line ``items`` may run a here-document: one that is not a sink."""
    return any(program(c.words) not in SINKS for c in script.commands(tuple(items)) if c.words)
