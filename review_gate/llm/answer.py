"""Reading a model's answer into findings, tolerantly: the JSON may come fenced in Markdown,
after a sentence of prose, with trailing commas or as a bare list. What it says must still fit
the findings schema; when it does not, ``UnusableAnswer`` carries a message the model can act on."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from pydantic import ValidationError

from review_gate.llm.schema import FINDING_PROPERTIES, findings_schema
from review_gate.models import RawFinding


class UnusableAnswer(Exception):
    """The answer is not findings JSON matching the schema; the message says why."""


_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(findings_schema(strict=False))


def extract_json(text: str) -> Any:
    """The first JSON value in ``text``: a fenced block, or from the first ``{`` or ``[`` on."""
    text = text.removeprefix("\ufeff").strip()
    if not text:
        raise UnusableAnswer("the answer is empty; expected a JSON object {\"findings\": [...]}")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    last_error = "no JSON object or list found"
    for candidate in candidates:
        starts = [i for i in (candidate.find("{"), candidate.find("[")) if i >= 0]
        if not starts:
            continue
        body = candidate[min(starts):]
        for attempt in (body, _TRAILING_COMMA.sub(r"\1", body)):
            try:
                value, _end = decoder.raw_decode(attempt)
                return value
            except json.JSONDecodeError as exc:
                last_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    raise UnusableAnswer(f"the answer is not valid JSON ({last_error})")


def parse_answer(answer: str | dict[str, Any] | list[Any]) -> list[RawFinding]:
    """Findings from an answer: text to search for JSON, or JSON already decoded (a tool call)."""
    data = extract_json(answer) if isinstance(answer, str) else answer
    if isinstance(data, list):
        data = {"findings": data}
    if isinstance(data, dict) and isinstance(data.get("findings"), list):
        # Tolerate what the schema does not use: keys around the list, unknown keys of a finding.
        data = {"findings": [{k: v for k, v in item.items() if k in FINDING_PROPERTIES}
                             if isinstance(item, dict) else item for item in data["findings"]]}
    errors = sorted(_validator().iter_errors(data),
                    key=lambda e: (len(e.absolute_path), e.validator != "required", str(list(e.absolute_path))))
    if errors:
        first = errors[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path) or "the answer"
        where = where.lstrip(".")
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        raise UnusableAnswer(f"{where}: {first.message[:300]}{more}")
    findings = []
    for index, item in enumerate(data["findings"]):
        try:
            findings.append(RawFinding.model_validate(item))
        except ValidationError as exc:  # the schema should have caught it; keep the message useful
            raise UnusableAnswer(f"findings[{index}]: {exc.errors()[0]['msg']}") from exc
    return findings
