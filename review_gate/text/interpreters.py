"""Programs that run a script named by their first argument that is no option (``python x.py``,
``bash lint.sh``, ``node check.js``): what a command agent's argv runs besides its program.

    >>> script_at(["python3", "-u", "lint.py", "--json"]), script_at(["python3", "-m", "lint"])
    (2, None)
    >>> script_at(["./lint.sh"]), script_at(["semgrep", "--json"]), script_at(["bash", "-e", "x.sh"])
    (None, None, 2)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

INTERPRETER = re.compile(r"(?:python|pypy)[0-9.]*|(?:ba|da|z|k|mk|)sh|fish|node(?:js)?|deno|bun|ruby|"
                         r"perl[0-9.]*|php[0-9.]*|Rscript|lua[0-9.]*|tclsh|pwsh")
_SHELL = re.compile(r"(?:ba|da|z|k|mk|)sh|fish")
_PYTHON = re.compile(r"(?:python|pypy)[0-9.]*")
# the options after which there is inline code or a module, not a script: a shell's -c (also in a
# cluster, -lc; its -e is errexit), Python's -c and -m, the others' -e, -E, -c, -p, --eval...
_CODE = {"shell": re.compile(r"-[A-Za-z]*c[A-Za-z]*|--command"), "python": re.compile(r"-[A-Za-z]*[cm]"),
         "other": re.compile(r"-[ceEp]|--eval|--print|--command")}


def script_at(argv: Sequence[str]) -> int | None:
    """The index of the script the interpreter ``argv[0]`` runs, when it is plainly one: its first
    argument that is no option, before any option that gives code or a module instead."""
    if not argv or not INTERPRETER.fullmatch(PurePath(argv[0]).name):
        return None
    name = PurePath(argv[0]).name
    code = _CODE["shell" if _SHELL.fullmatch(name) else "python" if _PYTHON.fullmatch(name) else "other"]
    for index, word in enumerate(argv[1:], start=1):
        if code.fullmatch(word):
            return None
        if not word.startswith(("-", "+")):
            return index
    return None
