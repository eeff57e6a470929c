"""What the programs a shell line may run do with their words: the tables ``hooks.shell`` judges by.

Each fact is written here once: which programs are shells, which only read what they are given,
which append words of their own to the command they run, which take a here-document as data.
"""

from __future__ import annotations

import re
from typing import Literal

Gated = Literal["commit", "push", "pr", "waive", "elsewhere"]
GATES: dict[str, Gated] = {"commit": "commit", "push": "push", "pull-request": "pr"}
# What a git command whose subcommand is not on the line (an expansion, a glob, words xargs
# appends, an alias config on the line defines) may do: reviewed as both (fail closed).
ANY_GIT: frozenset[Gated] = frozenset({"commit", "push"})
ANY: frozenset[Gated] = frozenset({"commit", "push", "pr"})

# Words a command starts with that run nothing themselves (the grammar reads the shell's own;
# these are left when it could not: a line it reported an error in, a line read loosely)
RESERVED = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac",
                      "coproc"})
HEADERS = frozenset({"for", "select", "case", "in"})  # their words are not commands
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
REVIEW_GATE = frozenset({"review-gate", "review_gate"})  # the console script, and `python -m review_gate`
PROGRAMS = frozenset({"git", "hub", "gh", "glab", "eval", *SHELLS, *REVIEW_GATE})
# Programs that append words of their own (standard input, file names) to the command they run
FEEDERS = frozenset({"xargs", "parallel", "find", "fd", "fdfind", "rush"})
# Programs that never run their arguments: what they are given is data.
INERT = frozenset({"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "which", "type", "whereis",
                   "whatis", "apropos", "man", "info", "help", "true", "false", ":", "test", "[", "[["})
CD = frozenset({"cd", "pushd", "popd"})
# Programs that a here-document feeds data, not a script (`cat > notes <<EOF`, `git commit -F - <<EOF`)
SINKS = INERT | CD | {"cat", "tee", "git", "gh", "hub", "head", "tail", "wc", "sort", "uniq", "less", "more", "jq"}
# review-gate's commands that only a person may run (with `gaps --apply`): they waive findings
# (accept, baseline) or write the configuration (init)
PERSONS_STEPS = frozenset({"accept", "baseline", "init"})
LOOP_APPROVALS = frozenset({"approve", "reject"})
# words after a program named by an expansion that say it may be ours: `nice $G push`, `sudo $RG accept`
STEPS = frozenset({"commit", "push", "pull-request", "pr", "mr", "send-pack", *PERSONS_STEPS, "gaps", "loop"})
# Programs that only read the files they are given: naming the configuration is not writing it
READERS = INERT | CD | frozenset({
    "cat", "less", "more", "head", "tail", "wc", "diff", "cmp", "ls", "stat", "file", "tree", "du", "jq", "bat",
    "nl", "od", "xxd", "hexdump", "strings", "realpath", "readlink", "basename", "dirname", "md5sum", "sha1sum",
    "sha256sum", "sha512sum", "cksum", "colordiff", "view"})
COPIES = frozenset({"cp", "install", "rsync", "scp"})  # they write their last operand only
# Programs that remove or move what they are given: a directory that holds a protected path goes
# with it (`rm -rf .claude` takes .claude/settings.json and the hooks in it)
REMOVERS = frozenset({"rm", "rmdir", "mv", "unlink", "shred", "trash", "trash-put", "gio"})

ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
SPACE = re.compile(r"\s")
GIT_WORD = re.compile(r"\b(?:git|hub|gh|glab)\b")
# A word a shell changes before running it: an expansion, a substitution, a glob, a brace list
_EXPANDS = re.compile(r"[$`*?]|\[.*\]|\{[^{}]*[,.][^{}]*\}|\{\}")


def literal(word: str) -> bool:
    """Whether a shell runs ``word`` as it stands: no expansion, substitution, glob or brace list."""
    return _EXPANDS.search(word) is None


def program(words: list[str] | tuple[str, ...]) -> str:
    """The name of the program a simple command runs, past reserved words and assignments."""
    from pathlib import PurePath  # here: the hook's fast path reads these tables without pathlib

    for word in words:
        if word not in RESERVED and not ASSIGNMENT.match(word):
            return PurePath(word).name
    return ""
