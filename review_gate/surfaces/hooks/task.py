"""The task of a Claude Code session, for the LLM reviewers a hook runs (``run --intent``).

A hook's payload carries no task: Claude Code sends ``session_id``, ``transcript_path``,
``cwd``, ``permission_mode``, ``hook_event_name`` and, for Stop, ``stop_hook_active`` (newer
releases add ``last_assistant_message``: the agent's words, not the task). The task is what the
person asked, and the transcript holds it: one JSON object a line, the person's prompts being
``{"type": "user", "message": {"role": "user", "content": "..."}}`` lines (``content`` a string,
or a list of blocks whose ``text`` blocks are the prompt; ``tool_result`` blocks are the
results of the agent's tool calls, not the person). Lines Claude Code adds itself are left out:
``isMeta`` ones, those of another ``userType`` than ``external``, compaction summaries, and
texts that start as its commands, reminders and hook messages do.

The transcript is read defensively: a regular file only, line by line with a bound per line and
in all (a long session's tool output can run to hundreds of megabytes), and a line that is not
JSON is skipped. Whatever goes wrong, the review runs without a task rather than not at all.

    >>> print(requests_text(["Add a CSV export of the orders page.", "Also keep the old JSON endpoint."]))
    The person's requests in this coding session, oldest first (from its transcript):
    <BLANKLINE>
    ### Request 1
    <BLANKLINE>
    Add a CSV export of the orders page.
    <BLANKLINE>
    ### Request 2
    <BLANKLINE>
    Also keep the old JSON endpoint.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from review_gate.change.intent import MAX_BYTES, clip

MAX_LINE = 1024 * 1024  # bytes of one transcript line read; longer ones (tool output) are skipped
MAX_READ = 256 * 1024 * 1024  # bytes of a transcript read in all
MAX_REQUESTS = 50
HEAD = "The person's requests in this coding session, oldest first (from its transcript):"
INJECTED = ("<command-", "<local-command", "<system-reminder>", "<user-prompt-submit-hook>", "Caveat:",
            "[Request interrupted", "Stop hook feedback", "PreToolUse:", "PostToolUse:",
            "This session is being continued from a previous conversation")


def session_task(transcript: str | None) -> str | None:
    """The person's requests in the transcript at ``transcript`` as one intent text, or None
    (no path, not a regular file, unreadable, no request found)."""
    if not transcript:
        return None
    try:
        prompts = _prompts(Path(transcript))
    except OSError:
        return None
    return requests_text(prompts) if prompts else None


def _prompts(path: Path) -> list[str]:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return []
        found: list[str] = []
        read = 0
        while read < MAX_READ:
            line = handle.readline(MAX_LINE)
            if not line:
                break
            read += len(line)
            if not line.endswith(b"\n") and len(line) == MAX_LINE:
                read += _skip_rest(handle)  # a tool's output, not a prompt
                continue
            if b'"user"' not in line:
                continue
            text = prompt_of(line)
            if text is not None and (not found or found[-1] != text):
                found.append(text)
        return found


def _skip_rest(handle: Any) -> int:
    skipped = 0
    while True:
        part = handle.readline(MAX_LINE)
        skipped += len(part)
        if not part or part.endswith(b"\n"):
            return skipped


def prompt_of(line: bytes) -> str | None:
    """The person's prompt a transcript line holds, or None."""
    try:
        entry = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(entry, dict) or entry.get("type") != "user" or entry.get("isMeta") \
            or entry.get("isCompactSummary") or entry.get("userType", "external") != "external":
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    if not isinstance(content, str):
        return None
    text = content.strip()
    if not text or text.startswith(INJECTED):
        return None
    return text


def requests_text(prompts: list[str]) -> str:
    """The prompts as one text within MAX_BYTES: the first (the task, usually) and as many of the
    latest as fit, saying how many in between were left out."""
    shown = list(enumerate(prompts, 1))
    if len(shown) > MAX_REQUESTS:
        shown = [shown[0], *shown[-(MAX_REQUESTS - 1):]]

    def render(chosen: list[tuple[int, str]]) -> str:
        parts = [HEAD]
        for index, (number, text) in enumerate(chosen):
            if index and number != chosen[index - 1][0] + 1:
                parts.append(f"({number - chosen[index - 1][0] - 1} requests in between left out)")
            parts.append(f"### Request {number}\n\n{text}")
        return "\n\n".join(parts)

    text = render(shown)
    while len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES and len(shown) > 1:
        shown = [shown[0], *shown[2:]]  # drop the oldest after the first
        text = render(shown)
    return clip(text)


__all__ = ["session_task"]
