"""The read-only tools an llm reviewer may call: ``read_file``, ``grep`` and ``list_files``, as the
model is told of them (``DEFINITIONS``) and what each answers (``TOOLS``), over the files of the
reviewed revision (``tool_files.Files``).

A call's answer is at most MAX_ANSWER_BYTES; a search stops at GREP_SECONDS or GREP_BYTES and says
its answer is partial. A tool refuses with ``Refused`` (the reason is what the model hears).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from review_gate.llm.providers.common import ToolDef
from review_gate.llm.tool_files import MAX_PATH, Files, Refused, clean_path

if TYPE_CHECKING:
    from review_gate.text.globs import Globs

TOOL_NAMES = ("read_file", "grep", "list_files")

MAX_ANSWER_BYTES = 24_000  # one call's answer

MAX_LINE_CHARS = 1_000  # a line read_file shows; longer ones are cut

MAX_GREP_LINE = 300  # a line grep shows

MAX_MATCHES = 60  # lines grep shows

MAX_LISTED = 400  # paths list_files shows

MAX_PATTERN = 1_000

MAX_GLOBS = 20

GREP_SECONDS = 3.0  # a search stops after this long, saying so

GREP_BYTES = 64_000_000  # ... or after reading this much

BINARY_PROBE = 8_192  # a NUL in the first bytes makes a file binary (git's own test)

_CHECK_EVERY = 64  # files between two looks at the stop flag and the clock


def _string(schema: dict[str, Any] | None = None, **bounds: Any) -> dict[str, Any]:
    return {"type": "string", **bounds, **(schema or {})}


DEFINITIONS = {
    "read_file": ToolDef(
        "read_file",
        "Read a file of the repository at the reviewed revision, with line numbers. start_line and end_line "
        "(1-based, inclusive; null for the start or the end) choose a part; a long answer is cut, saying "
        "where to go on. Private files, symbolic links and files over 1 MB are refused.",
        {"type": "object", "additionalProperties": False, "required": ["path", "start_line", "end_line"],
         "properties": {"path": _string(maxLength=MAX_PATH, description="Path relative to the repository root."),
                        "start_line": {"type": ["integer", "null"], "minimum": 1},
                        "end_line": {"type": ["integer", "null"], "minimum": 1}}}),
    "grep": ToolDef(
        "grep",
        "Search the repository's files at the reviewed revision for an RE2 regular expression, line by line "
        "(^ and $ match at each line). Answers path:line: text for each matching line, at most 60. paths: "
        "gitignore-style globs limiting the search (e.g. [\"src/**/*.py\"]), null for every file.",
        {"type": "object", "additionalProperties": False, "required": ["pattern", "paths"],
         "properties": {"pattern": _string(minLength=1, maxLength=MAX_PATTERN),
                        "paths": {"type": ["array", "null"], "maxItems": MAX_GLOBS,
                                  "items": _string(minLength=1, maxLength=200)}}}),
    "list_files": ToolDef(
        "list_files",
        "List the repository's files at the reviewed revision that a gitignore-style glob selects "
        "(\"*.py\" at any depth, \"src/**\" under src/, \"**\" every file), sorted, at most 400.",
        {"type": "object", "additionalProperties": False, "required": ["glob"],
         "properties": {"glob": _string(minLength=1, maxLength=200)}}),
}


@dataclass
class Answer:
    """What a tool found: the text for the model, and the file it read (widening the agent's
    scope: a finding about a file the agent read is its own)."""

    header: str
    body: str
    read: str | None = None


def _lines(data: bytes) -> list[str]:
    """The file's lines as git counts them (``\\n`` ends a line; a ``\\r`` before it is dropped)."""
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:limit] + " …"


def _line_number(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise Refused(f"{name} must be a whole number from 1, or null")
    return value


def read_file(files: Files, arguments: Mapping[str, Any], stop: threading.Event) -> Answer:
    path = clean_path(arguments.get("path"))
    start = _line_number(arguments.get("start_line"), "start_line") or 1
    end = _line_number(arguments.get("end_line"), "end_line")
    if end is not None and end < start:
        raise Refused("end_line is before start_line")
    data = files.content(path, files.entry(path))
    if b"\0" in data[:BINARY_PROBE]:
        raise Refused(f"{path} is a binary file: not shown")
    lines = _lines(data)
    if start > max(len(lines), 1):
        raise Refused(f"{path} has {len(lines)} lines")
    last = min(end or len(lines), len(lines))
    out: list[str] = []
    size = 0
    shown = start - 1
    for number in range(start, last + 1):
        row = f"{number:>6}  {_cut(lines[number - 1], MAX_LINE_CHARS)}"
        size += len(row.encode("utf-8", "surrogatepass")) + 1
        if size > MAX_ANSWER_BYTES and out:
            break
        out.append(row)
        shown = number
    header = f"read_file {path} ({files.revision.describe()}): lines {start}-{shown} of {len(lines)}"
    if shown < last:
        header += f"; cut at {MAX_ANSWER_BYTES} bytes: call read_file again with start_line {shown + 1}"
    return Answer(header, "\n".join(out), read=path)


def _globs(value: Any) -> Globs | None:
    from review_gate.text.globs import GlobError, Globs

    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise Refused("paths must be a non-empty list of glob strings, or null")
    if len(value) > MAX_GLOBS:
        raise Refused(f"paths may hold at most {MAX_GLOBS} globs")
    try:
        return Globs(value)
    except GlobError as exc:
        raise Refused(f"bad glob in paths: {exc}") from None


def grep(files: Files, arguments: Mapping[str, Any], stop: threading.Event) -> Answer:
    from review_gate.text.regex import PatternError, compile_pattern

    pattern = arguments.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise Refused("pattern must be a non-empty string (RE2 syntax)")
    if len(pattern) > MAX_PATTERN:
        raise Refused(f"the pattern is longer than {MAX_PATTERN} characters")
    try:
        regex = compile_pattern(pattern)
    except PatternError as exc:
        raise Refused(f"bad RE2 pattern: {exc}") from None
    only = _globs(arguments.get("paths"))
    paths = sorted(p for p, e in files.entries.items() if e.kind == "file" and (only is None or only.match(p)))
    found: list[str] = []
    skipped = scanned = searched = 0
    ends = time.monotonic() + GREP_SECONDS
    partial = ""
    for count, (path, data) in enumerate(files.contents(paths, stop)):
        if count % _CHECK_EVERY == 0 and time.monotonic() > ends:
            partial = f"stopped after {GREP_SECONDS:g} s"
            break
        if data is None or b"\0" in data[:BINARY_PROBE]:
            skipped += 1
            continue
        searched += 1
        scanned += len(data)
        found += _matching_lines(regex, path, data, MAX_MATCHES + 1 - len(found))
        if len(found) > MAX_MATCHES:
            partial = f"more than {MAX_MATCHES} matching lines: narrow the pattern or the paths"
            break
        if scanned > GREP_BYTES:
            partial = f"stopped after {GREP_BYTES} bytes"
            break
    header = (f"grep {pattern!r} ({files.revision.describe()}): {min(len(found), MAX_MATCHES)} matching "
              f"line(s) in {searched} file(s) searched")
    if skipped:
        header += f"; {skipped} binary, linked or over-size file(s) skipped"
    if partial:
        header += f"; partial: {partial}"
    return Answer(header, "\n".join(found[:MAX_MATCHES]) or "(no match)")


def _matching_lines(regex: Any, path: str, data: bytes, room: int) -> list[str]:
    """``path:line: text`` of the first ``room`` lines of ``data`` the pattern matches."""
    out: list[str] = []
    pos, line, counted = 0, 1, 0
    while len(out) < room and pos <= len(data):
        match = regex.search(data, pos)
        if match is None:
            break
        start = match.start()
        if start == len(data) and (not data or data.endswith(b"\n")):
            break  # an empty match after the last line: no line is there
        line += data.count(b"\n", counted, start)
        counted = start
        begin = data.rfind(b"\n", 0, start) + 1
        stop = data.find(b"\n", start)
        stop = len(data) if stop < 0 else stop
        text = data[begin:stop].decode("utf-8", "replace").rstrip("\r")
        out.append(f"{path}:{line}: {_cut(text.rstrip(), MAX_GREP_LINE)}")
        pos = stop + 1
    return out


def list_files(files: Files, arguments: Mapping[str, Any], stop: threading.Event) -> Answer:
    from review_gate.text.globs import GlobError, Globs

    glob = arguments.get("glob")
    if not isinstance(glob, str) or not glob.strip():
        raise Refused("glob must be a non-empty string (gitignore style)")
    try:
        selected = Globs([glob])
    except GlobError as exc:
        raise Refused(f"bad glob: {exc}") from None
    paths = sorted(p for p in files.entries if selected.match(p))
    rows = []
    for path in paths[:MAX_LISTED]:
        kind = files.kind(path)
        rows.append(path + {"file": "", "link": "  (symbolic link, not followed)",
                            "submodule": "  (submodule)"}[kind])
    header = f"list_files {glob!r} ({files.revision.describe()}): {len(paths)} path(s)"
    if len(paths) > MAX_LISTED:
        header += f", the first {MAX_LISTED} shown: narrow the glob"
    return Answer(header, "\n".join(rows) or "(none)")


TOOLS: dict[str, Callable[[Files, dict[str, Any], threading.Event], Answer]] = {
    "read_file": read_file, "grep": grep, "list_files": list_files,
}
