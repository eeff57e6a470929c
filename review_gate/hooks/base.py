"""What the hosts share: the payload they send, what needs a review, the answer, its JSON.

Both hosts send one JSON object on stdin (``hook_event_name``, ``session_id``, ``cwd``; Stop
adds ``stop_hook_active``; PreToolUse adds ``tool_name`` and ``tool_input.command`` for a shell
call) and read a decision as JSON on stdout with exit 0. Unknown fields are ignored, as a host
adds fields from release to release.

    >>> gate_for(Payload(event="PreToolUse", tool_name="Bash", command="make && git push origin HEAD"))
    'push'
    >>> gate_for(Payload(event="PreToolUse", tool_name="Bash", command="git log --grep=push")) is None
    True
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Literal, Protocol

from review_gate.errors import UsageError

STOP_EVENTS = ("Stop", "SubagentStop")
TOOL_EVENT = "PreToolUse"
SHELL_TOOLS = ("Bash",)
MAX_PAYLOAD = 8 * 1024 * 1024

Gate = Literal["stop", "commit", "push", "pr"]
Action = Literal["allow", "block", "deny"]


@dataclass(frozen=True)
class Payload:
    event: str
    session: str = ""
    cwd: str | None = None
    stop_hook_active: bool = False
    tool_name: str | None = None
    command: str | None = None


@dataclass(frozen=True)
class Outcome:
    """The hook's answer: ``allow`` (the stop or the tool call goes ahead), ``block`` (a stop:
    the agent keeps working, ``reason`` its next instruction) or ``deny`` (a tool call does not
    run, ``reason`` tells the agent why); ``note``: a line for the person watching."""

    action: Action
    reason: str = ""
    note: str = ""


class Host(Protocol):
    """A coding-agent host: one module (``claude_code``, ``codex``)."""

    NAME: str
    SETTINGS: str  # the project's hook settings file, relative to the repository root
    TIMEOUT_S: int  # the timeout `init --hooks` writes into that file
    BUDGET_S: int  # the --budget of the command it writes, below TIMEOUT_S

    def entries(self) -> dict[str, list[dict[str, Any]]]:
        """Event -> the matcher groups ``init --hooks`` merges into the settings file."""
        ...

    def encode(self, outcome: Outcome, event: str) -> str:
        """The answer as the host reads it on stdout (exit 0); empty for a silent allow."""
        ...


_FROM_HOST = "run `review-gate hook HOST` from the host's hook settings, which send one JSON object"


def read_payload(data: bytes) -> Payload:
    """The host's payload, checked; a UsageError names what is wrong with it."""
    if len(data) > MAX_PAYLOAD:
        raise UsageError(f"the hook payload on standard input is over {MAX_PAYLOAD} bytes",
                         fix=_FROM_HOST)
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"the hook payload on standard input is not JSON ({exc})",
                         fix=_FROM_HOST) from exc
    if not isinstance(raw, dict):
        raise UsageError("the hook payload on standard input is not a JSON object",
                         fix=_FROM_HOST)
    tool_input = raw.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return Payload(event=_text(raw.get("hook_event_name")) or "", session=_text(raw.get("session_id")) or "",
                   cwd=_text(raw.get("cwd")), stop_hook_active=raw.get("stop_hook_active") is True,
                   tool_name=_text(raw.get("tool_name")), command=_text(command))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def gate_for(payload: Payload) -> Gate | None:
    """What the event calls for: a review before a stop, before a commit, a push or a pull
    request; None when nothing is gated (any other event, tool or command)."""
    if payload.event in STOP_EVENTS:
        return "stop"
    if payload.event != TOOL_EVENT or payload.tool_name not in SHELL_TOOLS or not payload.command:
        return None
    found = set(_gated(payload.command, depth=0))
    # A commit in the same command line as a push has not happened yet: review the working tree.
    for gate in ("commit", "push", "pr"):
        if gate in found:
            return gate
    return None


_GIT_VALUE_OPTIONS = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env",
                      "--super-prefix"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh"}
_WRAPPERS = {"sudo", "env", "command", "exec", "time", "nohup", "nice", "xargs", "builtin"}
_PROGRAMS = {"git", "gh", *_SHELLS}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPERATORS = re.compile(r"^[;&|()<>]+$")
_LOOSE = re.compile(r"\bgit\b[^;&|\n]*\b(commit|push)\b|\bgh\b[^;&|\n]*\bpr\s+create\b")


def _gated(command: str, depth: int) -> list[str]:
    """The gated git and gh subcommands a shell command line runs (in any of its pipelines,
    lists and ``sh -c`` strings). A line shlex cannot split is judged by a loose pattern: a
    review too many costs time, a push missed is a false pass."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return [("pr" if m.group(0).startswith("gh") else m.group(1)) for m in _LOOSE.finditer(command)]
    found: list[str] = []
    segment: list[str] = []
    for token in [*tokens, ";"]:
        if _OPERATORS.match(token):
            found += _segment(segment, depth)
            segment = []
        else:
            segment.append(token)
    return found


def _segment(words: list[str], depth: int) -> list[str]:
    index = 0
    while index < len(words) and _ASSIGNMENT.match(words[index]):
        index += 1  # FOO=bar git push
    if index < len(words) and PurePath(words[index]).name in _WRAPPERS:
        # sudo -u me git push, xargs -n1 git push: the first word that names a program we gate
        index = next((i for i in range(index + 1, len(words)) if PurePath(words[i]).name in _PROGRAMS), len(words))
    if index >= len(words):
        return []
    program = PurePath(words[index]).name
    rest = words[index + 1:]
    if program in _SHELLS and depth < 2 and "-c" in rest and rest.index("-c") + 1 < len(rest):
        return _gated(rest[rest.index("-c") + 1], depth + 1)
    if program == "git":
        sub = _git_subcommand(rest)
        return [sub] if sub in ("commit", "push") else []
    if program == "gh" and rest[:2] == ["pr", "create"]:
        return ["pr"]
    return []


def _git_subcommand(words: list[str]) -> str | None:
    index = 0
    while index < len(words) and words[index].startswith("-"):
        index += 2 if words[index] in _GIT_VALUE_OPTIONS else 1
    return words[index] if index < len(words) else None


def encode_json(outcome: Outcome, event: str) -> str:
    """The answer both hosts read, with only the fields their schemas name: a stop blocked with
    ``decision``/``reason``; a tool call denied with ``hookSpecificOutput``; an allow silent, or
    with ``systemMessage`` for the person. ASCII-only JSON: nothing in it can act on a terminal."""
    answer: dict[str, Any] = {}
    if outcome.action == "block":
        answer = {"decision": "block", "reason": outcome.reason}
    elif outcome.action == "deny":
        answer = {"hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny",
                                         "permissionDecisionReason": outcome.reason}}
    if outcome.note:
        answer["systemMessage"] = outcome.note
    return json.dumps(answer, ensure_ascii=True) + "\n" if answer else ""
