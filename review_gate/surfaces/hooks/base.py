"""What the hosts share: the payload they send, what needs a review, the answer, its JSON.

Both hosts send one JSON object on stdin (``hook_event_name``, ``session_id``, ``cwd``; Stop
adds ``stop_hook_active``; PreToolUse adds ``tool_name`` and ``tool_input.command`` for a shell
call) and read a decision as JSON on stdout with exit 0. Unknown fields are ignored, as a host
adds fields from release to release.

    >>> gates_for(Payload(event="PreToolUse", tool_name="Bash", command="make && timeout 60 git push origin HEAD"))
    ('push',)
    >>> gates_for(Payload(event="PreToolUse", tool_name="Bash", command="git log --grep=push"))
    ()
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from review_gate.errors import UsageError

if TYPE_CHECKING:  # the full path's functions import it: the fast path needs no pathlib
    from pathlib import Path

STOP_EVENTS = ("Stop", "SubagentStop")
PROBE_EVENT = "reviewGateHookCheck"  # `hook check` asks the hook, as the host runs it, what it judges with
TOOL_EVENT = "PreToolUse"
SHELL_TOOLS = ("Bash",)
EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")  # tools that write the file they name
MAX_PAYLOAD = 8 * 1024 * 1024
RESERVE_S = 5.0  # of a hook's --budget, kept for reading the change, deciding and answering

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
    file_path: str | None = None  # the file an edit tool writes
    transcript: str | None = None  # transcript_path: the session's transcript (Claude Code: JSONL)
    new_text: str = ""  # what an edit tool writes: Write's content, Edit's new_string, MultiEdit's new_strings
    old_text: str | None = None  # what an Edit or MultiEdit replaces (None: Write, the whole file)
    edits: tuple[tuple[str, str, bool], ...] = ()  # Edit's or MultiEdit's (old_string, new_string, replace_all)


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

    def entries(self, program: str = "review-gate") -> dict[str, list[dict[str, Any]]]:
        """Event -> the matcher groups ``init --hooks`` merges into the settings file, running
        ``program`` (a shell word: the absolute path of review-gate, quoted)."""
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
    if not data.strip():
        raise UsageError("the hook payload on standard input is empty (the host sends one JSON object)",
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
    given = tool_input if isinstance(tool_input, dict) else {}
    new, old = _edit_texts(given)
    return Payload(event=_text(raw.get("hook_event_name")) or "", session=_text(raw.get("session_id")) or "",
                   cwd=_absolute(_text(raw.get("cwd"))), stop_hook_active=raw.get("stop_hook_active") is True,
                   tool_name=_text(raw.get("tool_name")), command=_text(given.get("command")),
                   file_path=_text(given.get("file_path")) or _text(given.get("notebook_path")),
                   transcript=_text(raw.get("transcript_path")), new_text=new, old_text=old,
                   edits=_edits(given))


def _edit_texts(given: dict[str, Any]) -> tuple[str, str | None]:
    """What an edit tool's input writes, and what it replaces: Write's ``content``; Edit's
    ``new_string`` over ``old_string``; MultiEdit's ``edits``; NotebookEdit's ``new_source``."""
    edits = given.get("edits")
    if isinstance(edits, list):
        pairs = [(_text(e.get("new_string")) or "", _text(e.get("old_string")) or "")
                 for e in edits if isinstance(e, dict)]
        return "\n".join(n for n, _ in pairs), "\n".join(o for _, o in pairs)
    if (content := _text(given.get("content"))) is not None:
        return content, None
    if (new := _text(given.get("new_string"))) is not None:
        return new, _text(given.get("old_string")) or ""
    return _text(given.get("new_source")) or "", None


def _edits(given: dict[str, Any]) -> tuple[tuple[str, str, bool], ...]:
    """Edit's or MultiEdit's replacements in order: (``old_string``, ``new_string``, ``replace_all``)."""
    edits = given.get("edits")
    listed = [e for e in edits if isinstance(e, dict)] if isinstance(edits, list) else \
        ([given] if _text(given.get("new_string")) is not None else [])
    return tuple((_text(e.get("old_string")) or "", _text(e.get("new_string")) or "", e.get("replace_all") is True)
                 for e in listed)


def _absolute(cwd: str | None) -> str | None:
    """The payload's directory made absolute (relative to where the host runs the hook: ``\"cwd\":
    \".\"`` in a hand-written payload), so paths and globs on the line resolve where they run."""
    return os.path.abspath(cwd) if cwd else cwd


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def gates_for(payload: Payload) -> tuple[Gate, ...]:
    """What the event calls for: a review before a stop; before a shell command, one for each
    of the commit, the push and the pull request it would make (in that order); nothing for any
    other event, tool or command. How a command line is read (wrappers, compound commands,
    ``sh -c``, aliases, and failing closed where unsure): ``hooks.shell``."""
    if payload.event in STOP_EVENTS:
        return ("stop",)
    if payload.event != TOOL_EVENT or payload.tool_name not in SHELL_TOOLS or not payload.command:
        return ()
    from pathlib import Path

    from review_gate.surfaces.hooks import shell  # the shell reader, loaded for a line to read

    found = shell.gates(payload.command, Path(payload.cwd) if payload.cwd else None)
    order: tuple[Gate, ...] = ("commit", "push", "pr")
    return tuple(gate for gate in order if gate in found)


def elsewhere(payload: Payload) -> bool:
    """Whether a shell command would commit, push or open a pull request for a repository,
    work tree or index other than the payload's directory's, which is the one reviewed
    (``git -C DIR``, ``--git-dir``, ``GIT_DIR=``, ``GIT_INDEX_FILE=``, a ``cd`` earlier on the
    line), or for one that cannot be told (``cd "$DIR"``)."""
    if payload.event != TOOL_EVENT or payload.tool_name not in SHELL_TOOLS or not payload.command:
        return False
    from pathlib import Path

    from review_gate.surfaces.hooks import shell

    return "elsewhere" in shell.gates(payload.command, Path(payload.cwd) if payload.cwd else None)


def persons_step(payload: Payload, protected: Sequence[Path], exempt: Sequence[Path] = ()) -> bool:
    """Whether a tool call takes a step only a person may take: a shell command that runs
    ``review-gate accept``, ``baseline``, ``init`` or ``gaps --apply`` or writes into a
    ``protected`` path outside the ``exempt`` ones (``hooks.shell``), or an edit tool writing one."""
    if payload.event != TOOL_EVENT:
        return False
    from pathlib import Path

    from review_gate.surfaces.hooks import shell

    cwd = Path(payload.cwd) if payload.cwd else Path.cwd()
    if payload.tool_name in SHELL_TOOLS and payload.command:
        return "waive" in shell.gates(payload.command, cwd, protected, exempt)
    if payload.tool_name in EDIT_TOOLS and payload.file_path:
        return shell.writes_into(payload.file_path, cwd, protected, exempt)
    return False


def adds_waiver(payload: Payload, peers: Callable[[], Sequence[str]], root: Path | None = None) -> str | None:
    """The inline waiver a tool call would add, as written, or None (``waiver_comments.adds_waiver``):
    an edit tool's result over the file as it is (Edit and MultiEdit applied to the file's text,
    so a waiver the edit completes from the text around it counts: ``nosXec`` -> ``nosec``;
    their new text over what it replaces when the file cannot be read), or what a shell command
    may write (``echo '# review-gate: ignore[...]' >> app.py``, its words as bash and printf make
    them, a sed or perl substitution applied to the files it edits: ``hooks.written``). ``peers``
    gives the peer codes the configuration's rules name; asked only when a comment may be one.
    ``root``: the repository's top, inside which a file is read."""
    if payload.event != TOOL_EVENT:  # before the shell reader is loaded: a stop writes nothing
        return None
    from pathlib import Path

    from review_gate.judging.waiver_comments import adds_waiver as found
    from review_gate.surfaces.hooks import edited, written
    from review_gate.text.waiver_markers import MARKERS

    cwd = Path(payload.cwd or ".")
    if payload.tool_name in SHELL_TOOLS and payload.command:
        if (replaced := written.overwrite(payload.command)) is not None:  # cat > f <<'EOF': a Write
            target, body = replaced
            comment = found(body, edited.current(target, cwd, root) or "", peers())
            return comment.text if comment is not None else None
        # what the line may write, as bash and sed make it: "# revie""w-gate", s/x/x # nosec/, \/\/
        text = "\n".join(written.texts(payload.command, cwd))
        if any(marker in text for marker in MARKERS) and (comment := found(text, "", peers())) is not None:
            return comment.text
        for new, old in written.edited(payload.command, cwd, root):
            if old is None:
                return new  # a substitution that cannot be computed, on a line near a waiver: fail closed
            if (comment := found(new, old, peers())) is not None:
                return comment.text
        return None
    if payload.tool_name not in EDIT_TOOLS:
        return None
    before = edited.current(payload.file_path, cwd, root) if payload.file_path else None
    after = edited.applied(before, payload.edits) if before is not None and payload.edits else None
    if after is not None and before is not None:
        comment = found(after, before, peers()) if any(m in after for m in MARKERS) else None
    elif payload.new_text and any(marker in payload.new_text for marker in MARKERS):
        old = payload.old_text if payload.old_text is not None else before
        if old is None and payload.file_path:  # a Write outside the repository: the file as it is
            path = cwd / payload.file_path
            try:
                old = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
            except OSError:
                old = ""
        comment = found(payload.new_text, old or "", peers())
    else:
        return None
    return comment.text if comment is not None else None


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
