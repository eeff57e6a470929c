"""Agent kind ``pattern``: the RE2 patterns of its rules over added lines. Offline, linear time.

All added lines of the scope are joined into one text; an RE2 set finds in one pass which rules
occur at all, and only those rules are scanned for positions (RE2 calls, not bytes, are what
cost). Match offsets map back to (file, line) through a sorted table of line starts.
"""

from __future__ import annotations

from bisect import bisect_right

import anyio.to_thread

from review_gate.agents.base import AgentOutput, AgentSpec, AgentTask
from review_gate.globs import Globs
from review_gate.models import RawFinding, Rule
from review_gate.patterns import compile_pattern, pattern_set

needs_network = False

_SNIPPET = 80


async def review(spec: AgentSpec, task: AgentTask) -> AgentOutput:
    return await anyio.to_thread.run_sync(scan, task, abandon_on_cancel=True)


def _snippet(text: str, redact: bool) -> str:
    text = text.strip()
    if redact:
        return (text[:4] + "…(redacted)") if len(text) > 4 else "…(redacted)"
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 1] + "…"


def scan(task: AgentTask) -> AgentOutput:
    rules = [r for r in task.rules if r.pattern]
    if not rules:
        return AgentOutput(findings=[])
    chunks: list[bytes] = []
    starts: list[int] = []
    where: list[tuple[int, int]] = []  # (file index, line number)
    offset = 0
    for index, change in enumerate(task.files):
        for hunk in change.hunks:
            for line in hunk.lines:
                if line.added:
                    data = line.text.encode("utf-8", "surrogateescape")
                    starts.append(offset)
                    where.append((index, line.number))
                    chunks.append(data)
                    offset += len(data) + 1
    if not chunks:
        return AgentOutput(findings=[])
    text = b"\n".join(chunks)
    present = pattern_set([r.pattern for r in rules if r.pattern]).Match(text) or []
    paths = [f.path for f in task.files]
    findings: list[RawFinding] = []
    for rule_index in sorted(present):
        rule = rules[rule_index]
        allowed = _allowed_files(rule, paths)
        seen: set[int] = set()
        for match in compile_pattern(rule.pattern).finditer(text):
            line_index = bisect_right(starts, match.start()) - 1
            file_index, number = where[line_index]
            if line_index in seen or (allowed is not None and file_index not in allowed):
                continue
            seen.add(line_index)
            matched = match.group(0).decode("utf-8", "replace").split("\n", 1)[0]
            findings.append(_finding(rule, paths[file_index], number, matched))
    return AgentOutput(findings=findings)


def _allowed_files(rule: Rule, paths: list[str]) -> set[int] | None:
    if not rule.paths and not rule.exclude_paths:
        return None
    include = Globs(rule.paths) if rule.paths else None
    exclude = Globs(rule.exclude_paths) if rule.exclude_paths else None
    return {
        i for i, p in enumerate(paths)
        if (include is None or include.match(p)) and (exclude is None or not exclude.match(p))
    }


def _finding(rule: Rule, path: str, number: int, matched: str) -> RawFinding:
    return RawFinding(
        severity=rule.severity, rule_id=rule.id, category=rule.category, file=path, line=number,
        end_line=number, message=f"{rule.name}: {_snippet(matched, rule.redact)}",
        recommendation=rule.recommendation, confidence=rule.confidence,
    )
