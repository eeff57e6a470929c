"""The steps only a person may take: running review-gate's waivers and configuration writers,
and writing into a protected path (the configuration's directories, the hooks' settings).

``review_gate_step`` judges the arguments of a ``review-gate`` command; ``Protected`` whether
the words of a command name a protected path (through ``cd``, links and globs: ``hooks.paths``)
and whether a program given them may write it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from review_gate.surfaces.hooks import paths, script, syntax, variables
from review_gate.surfaces.hooks.programs import COPIES, LOOP_APPROVALS, PERSONS_STEPS, READERS, REMOVERS, literal

FED = frozenset({"xargs", "parallel", "rush"})  # programs that run a command with words read from their input
MAX_WALK = 5000  # files of a protected directory compared with find's tests at most


def review_gate_step(args: Sequence[str], *, fed: bool = False) -> bool:
    """Whether ``review-gate ARGS`` takes a step only a person may take: waiving findings
    (``accept``, ``baseline``), changing the configuration (``gaps --apply``, ``init``) or
    approving a loop. Its command is its first argument, else it runs a review
    (``cli._with_default_command``); a command that is not on the line (``$'acc\\x65pt'``
    decoded is on it; ``$CMD`` and what xargs appends are not) may be one."""
    command = args[0] if args else ""
    if not literal(command) or (fed and not args):
        return True
    if not fed and any(a in ("-h", "--help") for a in args) and all(literal(a) for a in args):
        return False  # argparse prints the help and exits before the command runs
    applies = any(len(o := a.partition("=")[0]) >= len("--ap") and "--apply".startswith(o) for a in args)
    if command in PERSONS_STEPS or (command == "gaps" and applies):
        return True
    # the approval a loop waits for is a person's (approve --complete overrides a NO_GO)
    return command == "loop" and len(args) > 1 and (args[1] in LOOP_APPROVALS or not literal(args[1]))


def targets(name: str, args: Sequence[str]) -> list[str]:
    """The words of a program's arguments that may name a file it writes: for a copy, its
    destination only (``cp .review-gate/x /tmp`` reads the configuration); otherwise all."""
    if name not in COPIES:
        return list(args)  # ln too: a link to the configuration is a way to write it
    for index, arg in enumerate(args):
        if arg in ("-t", "--target-directory") and index + 1 < len(args):
            return [args[index + 1]]
        if arg.startswith("--target-directory="):
            return [arg]
    operands = [a for a in args if not a.startswith("-")]
    return operands[-1:]


def _forms(cwd: Path, given: Sequence[Path]) -> list[str]:
    """Each path, absolute, as written and with its links resolved."""
    return sorted({os.path.normpath(form) for p in given
                   for form in (os.path.join(cwd, p), os.path.realpath(os.path.join(cwd, p)))})


class Protected:
    """The paths a line must not write (``protected``, outside the ``exempt`` ones inside them:
    the loop's session files, which a coder writes), relative paths starting at ``cwd``."""

    def __init__(self, cwd: Path, protected: Sequence[Path] = (), exempt: Sequence[Path] = ()) -> None:
        self.cwd = cwd
        self.protected = _forms(cwd, protected)
        self.exempt = _forms(cwd, exempt)
        # the names a line may give them: absolute, or relative to the payload's directory
        self.names = sorted({n for d in self.protected for n in (d, os.path.relpath(d, cwd))})
        # the directories that hold one (.claude for .claude/settings.json): removing one takes it along,
        # so naming one is naming it (`rm -rf $(echo .claude)`); matched as a whole name (not .claude-notes)
        self.holders = sorted({h for d in self.protected for h in _holders(d, str(cwd))})
        self._holder_names = re.compile("|".join(
            rf"(?<![\w.-]){re.escape(n)}(?![\w.-])" for h in self.holders for n in (h, os.path.relpath(h, cwd))
        ) or r"(?!)")
        self.mentioned = False  # the line names one somewhere (D=.review-gate)

    def __bool__(self) -> bool:
        return bool(self.protected)

    def named_in(self, text: str) -> bool:
        """Whether ``text`` holds a protected path's name anywhere, or a directory's that holds one."""
        return any(name in text for name in self.names) or self._holder_names.search(text) is not None

    def globbed(self, words: Sequence[str]) -> bool:
        """Whether a glob among ``words`` could match a protected path or a directory that holds
        one, from the payload's directory (``ls -d .c*``, ``find . -name '.cl*'``)."""
        return any(paths.is_glob(word) and paths.glob_names(os.path.join(self.cwd, word),
                                                           [*self.protected, *self.holders], [])
                   for word in words if word and not word.startswith("-"))

    def mentioned_by(self, command: str, joined: str, max_text: int) -> bool:
        """Whether the line names a protected path (or a directory that holds one) anywhere: as
        written, with the variables it assigns filled in (``D=.cla; rm -rf ${D}ude``), or by a
        glob that could match one (``ls -d .c* | xargs rm -rf``). A line over ``max_text``
        characters: as written only."""
        if any(self.named_in(text) for text in (command, joined)):
            return True
        parsed = syntax.read(command) if len(command) <= max_text else None
        if parsed is None:
            return False
        every = [c.words for c in _all_commands(parsed.items)]
        return any(self.named_in(" ".join(words)) or self.globbed(words) for words in variables.expanded(every))

    def writes(self, name: str, args: Sequence[str], here: Path | None) -> bool:
        """Whether the program ``name`` given ``args`` (run in ``here``; None: not known) may
        write a protected path: it is not one that only reads (the caller checks), and a word
        names one."""
        if name == "find":
            return any(paths.find_writes(args, str(base), self.protected, self.exempt, READERS, MAX_WALK)
                       for base in {here or self.cwd, self.cwd})
        if name in FED and self.mentioned and _fed_writer(args):
            return True  # `printf .claude | xargs rm -rf`: the words it appends are not on the line
        written = targets(name, args)
        if name in REMOVERS and any(self.holds_protected(written, base) for base in {here or self.cwd, self.cwd}):
            return True
        # code given inline (python -c "open('.review-gate/x', 'w')") names the path inside a word
        return self.named(written, here) or any(n in t for t in written for n in self.names if t != n)

    def holds_protected(self, words: Sequence[str], base: Path) -> bool:
        """Whether a word names a directory that holds a protected path (or a glob that could),
        so removing or moving it takes the protected path along."""
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

    def named(self, words: Sequence[str], here: Path | None) -> bool:
        """Whether a word names a file in (or is) a protected directory; an option's value too
        (``--output=.review-gate/x``); as the path is written and with its links resolved; a
        glob that could match one. A relative path is read from ``here`` and from where the line
        started: a ``cd`` before it may not have run (``true || cd /tmp``, an ``if`` branch, a
        ``case`` arm, ``cd /tmp &``). After a ``cd`` to a directory not known (``here`` None),
        it is also looked for in the protected directories."""
        if here is None:
            bases, certain = [self.cwd, *(Path(d) for d in self.protected if os.path.isdir(d))], 1
        else:
            bases = [here] if here == self.cwd else [here, self.cwd]
            certain = len(bases)
        for word in words:
            for candidate in {word, word.partition("=")[2]}:
                if not candidate or candidate.startswith("-"):
                    continue
                if "$" in candidate and self.mentioned:
                    return True  # `D=.review-gate; echo x > $D/baseline.json`: where it goes is not on the line
                for number, base in enumerate(bases):
                    path = os.path.join(base, os.path.expanduser(candidate))
                    if number >= certain and not os.path.isabs(candidate) and not os.path.lexists(path) and \
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


def _holders(path: str, cwd: str) -> list[str]:
    """The directories holding ``path`` below where it and ``cwd`` part (``/r/.claude`` for
    ``/r/.claude/settings.json`` from ``/r`` or ``/r/src``); none when they share only ``/``."""
    common = os.path.commonpath([path, cwd])
    if common == os.path.dirname(common):
        return []
    return [str(p) for p in Path(path).parents if len(str(p)) > len(common)]


def _fed_writer(args: Sequence[str]) -> bool:
    """Whether the command xargs (or its kin) runs with ``args`` may write: its program is not one
    that only reads (options and their numbers passed over; none given: ``echo``)."""
    index = 0
    while index < len(args) and (args[index].startswith("-") or args[index].isdigit()):
        index += 2 if args[index] in _VALUED else 1
    return index < len(args) and os.path.basename(args[index]) not in READERS


_VALUED = frozenset({"-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a", "-j", "--jobs"})  # options given a value


def _all_commands(items: Sequence[script.Item]) -> list[script.Command]:
    """The simple commands of ``items``, in substitutions' lines too, in line order."""
    found: list[script.Command] = []
    for item in items:
        if isinstance(item, script.Command):
            found.append(item)
        elif isinstance(item, script.Scope):
            found += _all_commands(item.items)
        elif isinstance(item, script.Function):
            found += _all_commands(item.body)
    return found


_LEADING_CD = re.compile(r"\A\s*cd\s+([\w./@+-]+)\s*&&(?P<rest>.*)\Z", re.S)


def settled_directory(command: str) -> str | None:
    """The directory of a ``cd DIR &&`` the line starts with, when the rest is joined by ``&&``
    only (and pipes): then each command of it runs only if the ``cd`` did. After ``;``, ``||``,
    ``&`` or a new line a command runs whether it did or not (``cd x && true; rm *``)."""
    match = _LEADING_CD.match(command)
    if match is None:
        return None
    rest = match.group("rest").replace("&&", "")
    return None if re.search(r"[;&\n]|\|\|", rest) or "\\" in rest else match.group(1)
