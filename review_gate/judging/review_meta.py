"""The ``@@@REVIEW_META`` block (DESIGN §7): a review's verdict and counts, ahead of its Markdown.

    @@@REVIEW_META
    verdict: PASS | FAIL
    issues_total: <int>
    issues_critical: <int>
    missing_inputs: <int>
    @@@
    <the full Markdown review>

One parser serves ``review-gate meta check`` and command agents with ``output: review_meta``.
It is strict, because a workflow advances on the verdict and a malformed block must stop it:

- the block opens the text: its first non-blank line is exactly ``@@@REVIEW_META`` (a byte
  order mark and spaces around the markers are tolerated, a preamble or a code fence is not);
- a line that is exactly ``@@@`` closes it; everything after that line is the review body;
- inside, blank lines are skipped and every other line is ``field: value``; the four fields
  above are required, each once; other fields are allowed (the format may grow) but not twice;
- ``verdict`` is ``PASS`` or ``FAIL``, in capitals; the counts are whole numbers, 0 or more,
  and ``issues_critical`` is at most ``issues_total``.

Example:
    >>> parse_meta("@@@REVIEW_META\\nverdict: PASS\\nissues_total: 0\\nissues_critical: 0\\n"
    ...            "missing_inputs: 0\\n@@@\\nLooks good.\\n").summary_line()
    'REVIEW: PASS | issues=0 (critical=0) | missing_inputs=0'
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from review_gate.errors import MetaError
from review_gate.models.base import Frozen
from review_gate.models.report import summary_line
from review_gate.text.escape import sanitize

OPEN = "@@@REVIEW_META"
CLOSE = "@@@"
COUNTS = ("issues_total", "issues_critical", "missing_inputs")
REQUIRED = ("verdict", *COUNTS)

_FIELD = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)\s*:\s?(.*)")
_COUNT = re.compile(r"[0-9]+")
MAX_DIGITS = 18


class ReviewMeta(Frozen):
    verdict: Literal["PASS", "FAIL"]
    issues_total: int = Field(ge=0)
    issues_critical: int = Field(ge=0)
    missing_inputs: int = Field(ge=0)
    body: str = Field(description="Everything after the closing @@@ line: the review for people.")

    def summary_line(self) -> str:
        return summary_line(self.verdict, self.issues_total, self.issues_critical, self.missing_inputs)


def _show(text: str, width: int = 40) -> str:
    text = text.strip()
    return "'" + sanitize(text if len(text) <= width else text[:width] + "…") + "'"


def parse_meta(text: str) -> ReviewMeta:
    """Read the block that opens ``text``; raise MetaError naming the first problem found."""
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None:
        raise MetaError("no @@@REVIEW_META block: the text is empty")
    if lines[start].strip() != OPEN:
        later = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == OPEN), None)
        if later is None:
            raise MetaError(f"no @@@REVIEW_META block: line {start + 1} is {_show(lines[start])}")
        raise MetaError(f"the @@@REVIEW_META block must open the text, but it starts on line {later + 1} "
                        f"after {_show(lines[start])} on line {start + 1}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == CLOSE), None)
    if end is None:
        raise MetaError(f"unterminated @@@REVIEW_META block: no @@@ line closes the block opened on line "
                        f"{start + 1}")
    values: dict[str, tuple[str, int]] = {}
    for number in range(start + 1, end):
        line = lines[number].strip()
        if not line:
            continue
        match = _FIELD.fullmatch(line)
        if match is None:
            raise MetaError(f"line {number + 1}: expected 'field: value', found {_show(line)}")
        name, value = match.group(1), match.group(2).strip()
        if name in values:
            raise MetaError(f"line {number + 1}: {name} is given twice (first on line {values[name][1]})")
        values[name] = (value, number + 1)
    missing = [name for name in REQUIRED if name not in values]
    if missing:
        unknown = [name for name in values if name not in REQUIRED]
        hint = f" (found unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)})" if unknown else ""
        raise MetaError(f"required field{'s' if len(missing) > 1 else ''} missing from the block: "
                        f"{', '.join(missing)}{hint}")
    verdict, where = values["verdict"]
    if verdict not in ("PASS", "FAIL"):
        raise MetaError(f"line {where}: verdict is {_show(verdict)}; it must be PASS or FAIL")
    total, critical, missing_inputs = (_count(name, *values[name]) for name in COUNTS)
    if critical > total:
        raise MetaError(f"issues_critical ({critical}) is more than issues_total ({total}); "
                        "critical issues are counted in the total")
    return ReviewMeta(verdict="PASS" if verdict == "PASS" else "FAIL", issues_total=total,
                      issues_critical=critical, missing_inputs=missing_inputs, body="".join(lines[end + 1:]))


def _count(name: str, value: str, line: int) -> int:
    if _COUNT.fullmatch(value):
        if len(value.lstrip("0")) > MAX_DIGITS:
            raise MetaError(f"line {line}: {name} has more than {MAX_DIGITS} digits; that is not a count")
        return int(value)
    if value.startswith("-") and _COUNT.fullmatch(value[1:]):
        raise MetaError(f"line {line}: {name} is {value}; counts cannot be negative")
    if not value:
        raise MetaError(f"line {line}: {name} is empty; give a whole number, 0 or more")
    raise MetaError(f"line {line}: {name} is {_show(value)}, not a whole number")


__all__ = ["ReviewMeta", "parse_meta"]
