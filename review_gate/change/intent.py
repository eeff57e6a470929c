"""The change's intent: what it is for, as its author says it (a task and its acceptance
criteria, a pull request's title and description, what earlier reviews of a loop found).

Every LLM reviewer is given it as data, fenced like the diff (``llm.prompt.intent_section``):
``run --intent FILE|-``, the API's and the MCP server's ``intent``, the loop's review phase (its
task and NO_GO history), the GitHub Action (the pull request's title and body) and the Claude
Code Stop hook (the session's prompts). It is untrusted text like the diff: it never changes the
configuration, the rules, a pattern agent or the gate, and an intent that tries to instruct the
reviewer is only more data. What is read here is bounded and text:

    >>> decode(b"Fix the login redirect.\\r\\n", "--intent task.md")
    'Fix the login redirect.\\n'
    >>> decode(b"\\x89PNG\\r\\n\\x1a\\n\\x00\\x00", "--intent logo.png")
    Traceback (most recent call last):
    ...
    review_gate.errors.InputError: --intent logo.png: not text (it holds NUL bytes)
      fix: give a UTF-8 text file that says what the change is for (a task, a pull request's description)
"""

from __future__ import annotations

import sys
from pathlib import Path

from review_gate.errors import InputError, UsageError
from review_gate.text.escape import sanitize

MAX_BYTES = 64 * 1024  # an intent is a description, not a document: this is 16 pages of text
WHAT = "a UTF-8 text file that says what the change is for (a task, a pull request's description)"
TOO_BIG = ("shorten it to what a reviewer needs (the task, its acceptance criteria); at most "
           f"{MAX_BYTES:,} bytes")


def read(given: str) -> str | None:
    """The intent in file ``given`` (``-``: standard input) for ``--intent``; None when it says
    nothing (empty or blank). A missing, unreadable, binary or oversized file is an InputError
    naming it (exit 2)."""
    name = f"--intent {sanitize(given)}"
    if given == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        path = Path(given)
        if not path.exists():
            raise InputError(f"{name}: no such file", fix=f"give {WHAT}, or - for standard input")
        if not path.is_file():
            raise InputError(f"{name}: not a file", fix=f"give {WHAT}")
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_BYTES + 1)
        except OSError as exc:
            raise InputError(f"{name}: cannot read it ({exc.strerror or exc})", fix=f"give a readable file: {WHAT}"
                             ) from exc
    if len(data) > MAX_BYTES:
        raise InputError(f"{name}: larger than {MAX_BYTES:,} bytes", fix=TOO_BIG)
    return decode(data, name) or None


def decode(data: bytes, name: str) -> str:
    """``data`` as text with ``\\n`` line ends; binary (a NUL byte, not UTF-8) is refused."""
    if b"\x00" in data:
        raise InputError(f"{name}: not text (it holds NUL bytes)", fix=f"give {WHAT}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text (byte {exc.start})", fix=f"give {WHAT}") from exc
    return normal(text)


def normal(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check(value: object, name: str = "intent") -> str | None:
    """An intent a caller passes as text (the API, the MCP server): a string within MAX_BYTES
    and without NUL characters, or None; a blank one is None."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{name}: not text ({type(value).__name__} given)",
                         fix=f"give {name} as a string: what the change is for")
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        raise UsageError(f"{name}: {size:,} bytes, more than {MAX_BYTES:,}", fix=TOO_BIG)
    if "\x00" in value:
        raise UsageError(f"{name}: holds a NUL character", fix=f"give {name} as text")
    return normal(value) if value.strip() else None


def clip(text: str, limit: int = MAX_BYTES) -> str:
    """``text`` within ``limit`` UTF-8 bytes, cut at a character (and said so): for intents made
    from several parts (a pull request's body, a session's prompts) that may run long."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    note = "\n[... cut: the rest is longer than an intent may be]"
    kept = data[:limit - len(note.encode())].decode("utf-8", "ignore")
    return kept + note


__all__ = ["MAX_BYTES", "check", "clip", "decode", "read"]
