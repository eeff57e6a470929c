"""The answer to a tool call that surely writes nothing the hook guards, found without the gate.

A coding agent's host runs the hook before every tool call: hundreds in a session, nearly all
reads (``Read``, ``Grep``), everyday lines (``ls -la``, ``pytest -q``) and edits of source files.
Answering those through ``gate.decide`` loads the models, the configuration and the shell reader
(about 0.25 s of CPU each); this module answers them from the payload alone, with nothing heavier
than ``json`` and ``os`` (``tests/cli/test_start_up.py`` holds what they import).

It never decides against the agent: ``allowed`` is True only when the full path would answer
a silent allow, and None sends the event to the full path. What it lets through, and why the
full path would too (``tests/integrations/test_hook_fast_path.py`` replays every hook test's
table through both):

- an event that is neither a stop nor a tool call, and a tool that neither runs a shell nor
  writes a file (``Read``, ``Grep``, ``WebFetch``...): the full path reviews nothing for them;
- an edit tool whose file is not, is not inside, and does not hold a guarded path (the
  configuration's directories, the hosts' hook settings: any path with a ``.review-gate``,
  ``.claude`` or ``.codex`` name in it, links resolved), whose new text holds no waiver marker,
  nor the file as the edit leaves it;
- a shell line that is one plain command (words of letters, digits and ``_@%+=:,./-`` only: no
  quote, expansion, glob, redirection, operator or second line), whose program only reads what
  it is given or is a test runner or linter (``QUIET``: none removes or moves what it names),
  that names no git, shell or review-gate word, no waiver marker, no guarded name, no ``..``,
  and no directory above the payload's (which may hold the configuration).

Anything else, a ``--config`` or ``$REVIEW_GATE_CONFIG`` on a shell call included, is for the
full path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from review_gate.surfaces.hooks.base import EDIT_TOOLS, PROBE_EVENT, SHELL_TOOLS, STOP_EVENTS, TOOL_EVENT, Payload
from review_gate.surfaces.hooks.edited import MAX_FILE, applied
from review_gate.surfaces.hooks.programs import CD, GIT_WORD, PROGRAMS, READERS
from review_gate.text.waiver_markers import MARKERS

# Names that make a path one the hook guards, or a directory holding one (compared casefolded:
# a case-insensitive file system reads .Claude as .claude)
GUARDED = (".review-gate", ".claude", ".codex")
# Programs that only read what they are given (the shell reader's own table, less `cd`, which
# moves where the rest of a line runs), and the test runners and linters an agent runs all day,
# which the full path reads as programs it does not know
QUIET = (READERS - CD) | frozenset({"pwd", "pytest", "ruff", "mypy", "whoami", "uname", "date"})
MAX_LINE = 1000  # characters of a shell line read here; a longer one is for the full path
_PLAIN_LINE = re.compile(r"[ \t]*[A-Za-z0-9_@%+=:,./-]+(?:[ \t]+[A-Za-z0-9_@%+=:,./-]+)*[ \t]*")
_SHELL_WORDS = PROGRAMS | {"exec", "command", "builtin", "source"}


def allowed(payload: Payload, config: str | None, environ: Mapping[str, str] = os.environ) -> bool | None:
    """True when the full path would surely allow ``payload`` silently; None when it must judge.
    ``config``: the hook's ``--config``; ``environ`` holds ``REVIEW_GATE_CONFIG``."""
    if payload.event in STOP_EVENTS or payload.event == PROBE_EVENT:
        return None
    if payload.event != TOOL_EVENT:
        return True
    if payload.tool_name not in (*SHELL_TOOLS, *EDIT_TOOLS):
        return True
    cwd = os.path.abspath(payload.cwd or os.getcwd())
    if not os.path.isdir(cwd) or _guarded(cwd) or _guarded(os.path.realpath(cwd)):
        return None
    configs = [os.path.abspath(c) for c in (config, environ.get("REVIEW_GATE_CONFIG")) if c]
    if payload.tool_name in SHELL_TOOLS:
        return _quiet_line(payload.command or "", cwd) if not configs else None
    return _quiet_edit(payload, cwd, configs)


def _guarded(path: str) -> bool:
    folded = path.casefold()
    return any(name in folded for name in GUARDED)


def _quiet_line(command: str, cwd: str) -> bool | None:
    if not command.strip():
        return True  # the full path reads nothing in an empty line
    if len(command) > MAX_LINE or _PLAIN_LINE.fullmatch(command) is None:
        return None
    words = command.split()
    if words[0] not in QUIET or any(w in _SHELL_WORDS for w in words) or GIT_WORD.search(command):
        return None
    folded = command.casefold()
    if "review" in folded or ".." in command or any(m in folded for m in MARKERS) or _guarded(command):
        return None
    above = _up_from(cwd)
    for word in words[1:]:
        for part in word.split("="):  # --rootdir=PATH names PATH
            if part and _holds(os.path.join(cwd, part), above):
                return None
    return True


def _up_from(cwd: str) -> set[str]:
    """Every directory above the payload's, as written and links resolved."""
    found: set[str] = set()
    for start in (cwd, os.path.realpath(cwd)):
        path = start
        while True:
            parent = os.path.dirname(path)
            found.add(parent)
            if parent == path:
                break
            path = parent
    return found


def _holds(path: str, above: set[str]) -> bool:
    """Whether ``path`` is a directory above the payload's (as written or resolved), or resolves
    to a guarded path."""
    real = os.path.realpath(path)
    return os.path.normpath(path) in above or real in above or _guarded(real)


def _quiet_edit(payload: Payload, cwd: str, configs: Sequence[str]) -> bool | None:
    if _marked(payload.new_text):
        return None
    if not payload.file_path:
        return True  # the full path has no file to guard and no marker to find
    given = os.path.join(cwd, os.path.expanduser(payload.file_path))
    real = os.path.realpath(given)
    if _guarded(given) or _guarded(real) or os.path.isdir(real):
        return None
    for config in configs:
        for form in (config, os.path.realpath(config)):
            for path in (os.path.normpath(given), real):
                if path == form or path.startswith(form + os.sep) or form.startswith(path + os.sep):
                    return None
    if not payload.edits:
        return True
    if not os.path.exists(real):
        return True  # nothing to apply the edit to: the full path looks at its new text only
    try:
        if not os.path.isfile(real) or os.path.getsize(real) > MAX_FILE:
            return None
        with open(real, encoding="utf-8", errors="replace") as handle:
            before = handle.read(MAX_FILE + 1)
    except OSError:
        return None
    after = applied(before, payload.edits)
    return True if after is None or not _marked(after) else None


def _marked(text: str) -> bool:
    folded = text.casefold()
    return any(marker in folded for marker in MARKERS)
