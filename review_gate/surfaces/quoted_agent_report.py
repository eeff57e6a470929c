"""The agent format with the flagged lines quoted, for the callers that know the change.

A format reads a finished report and nothing else, and a report carries no source lines. An
llm or command agent's message seldom quotes the line it flags, so the callers that hold the
change (``run --format agent``, the hooks, the MCP server) read those lines again from the
reviewed side of the change, only for the findings that can be shown, and hand them to
``outputs.agent``. Quoting is a help, never a condition: a line that cannot be read (a file
gone since, a binary, an unreadable diff) is simply not quoted.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from review_gate.change import blobs
from review_gate.change.diff_parser import parse_diff
from review_gate.config.locations import builtin_dir
from review_gate.errors import ReviewGateError
from review_gate.judging import secret_quotes
from review_gate.models import ReviewReport, Rule
from review_gate.outputs import agent
from review_gate.pipeline.normalize import DiffRequest

MAX_PLACES = 200  # more findings than this never fit in an agent report
MAX_FILE_BYTES = 4_000_000
MAX_FILES = 50


def render(report: ReviewReport, request: DiffRequest | None, max_chars: int = agent.MAX_CHARS,
           notes: Sequence[str] = (), rules: Sequence[Rule] = ()) -> str:
    """``outputs.agent.render`` with the lines of ``request``'s change that the findings flag, each
    secret in them masked as in the findings' words (``judging.secret_quotes``): by the redacting
    ``rules`` of the run's configuration and the built-in ones."""
    shown = report.findings[:MAX_PLACES]
    places = [(f.file, f.line) for f in shown if f.file is not None and f.line is not None]
    lines = changed_lines(request, places) if request is not None and places else {}
    if lines:
        patterns = secret_quotes.of_patterns([*_builtin_secrets(), *secret_quotes.redacting(rules).sources])
        lines = {place: secret_quotes.mask_text(text, patterns) for place, text in lines.items()}
    return agent.render(report, max_chars, lines=lines, notes=notes)


@functools.cache
def _builtin_secrets() -> tuple[str, ...]:
    """The built-in redacting rules' patterns, read from the shipped rules file alone (a quoted line
    is rare: the whole configuration is not loaded for it)."""
    data = json.loads((builtin_dir("config") / "review-rules.json").read_text(encoding="utf-8"))
    return tuple(r["pattern"] for r in data.get("rules", []) if r.get("redact") and r.get("pattern"))


def changed_lines(request: DiffRequest, places: Iterable[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """The text of each (path, line) on the new side of the change ``request`` names, where it can
    be read: the file on disk (working tree), the index (staged), the head commit (a range, a
    push), or the diff's own added lines (a diff file or standard input)."""
    wanted: dict[str, set[int]] = {}
    for path, line in places:
        if path in wanted or len(wanted) < MAX_FILES:
            wanted.setdefault(path, set()).add(line)
    if not wanted:
        return {}
    if request.mode in ("stdin", "file"):
        return _from_diff(request, wanted)
    if request.repo_root is None:
        return {}
    root = Path(request.repo_root)
    found: dict[tuple[str, int], str] = {}
    for path, numbers in wanted.items():
        data = _new_side(root, request, path)
        if data is None:
            continue
        text = data.decode("utf-8", "replace").splitlines()
        found.update({(path, n): text[n - 1] for n in numbers if 0 < n <= len(text)})
    return found


def _new_side(root: Path, request: DiffRequest, path: str) -> bytes | None:
    try:
        if request.mode == "worktree":
            target = (root / path).resolve()
            target.relative_to(root.resolve())  # a path that leads out of the repository is not read
            if not target.is_file() or target.stat().st_size > MAX_FILE_BYTES:
                return None
            return target.read_bytes()
        revision = "" if request.mode == "staged" else (request.head or "HEAD")  # ":path" is the index
        data = blobs.file_at(root, revision, path)
    except (OSError, ValueError, ReviewGateError):
        return None
    return data if data is not None and len(data) <= MAX_FILE_BYTES else None


def _from_diff(request: DiffRequest, wanted: dict[str, set[int]]) -> dict[tuple[str, int], str]:
    try:
        data = request.stdin_data if request.mode == "stdin" else Path(str(request.path)).read_bytes()
    except OSError:
        return {}
    try:
        changes = parse_diff(data or b"")
    except ReviewGateError:
        return {}
    found: dict[tuple[str, int], str] = {}
    for change in changes:
        numbers = wanted.get(change.path)
        if not numbers:
            continue
        for hunk in change.hunks:
            found.update({(change.path, ln.number): ln.text for ln in hunk.lines if ln.added and ln.number in numbers})
    return found
