"""Issue drafts for deferred debt (``review-gate debt --format markdown|json``, ``--drafts DIR``).

Each item becomes a title and a Markdown body, ready for ``gh issue create --title T
--body-file F``. Messages, paths, rule ids and recommendations come from agents and from the
change under review: the body escapes them as the Markdown report does (``markdown.text``: no
HTML, no mentions, no links or images, no Markdown construct), and the title, which an issue
tracker shows as plain text, has its control characters made visible, its mentions broken
and its length bounded. The body starts with a hidden marker naming the fingerprint, so that an
issue opened for an item can be found again (``review-gate-debt:<fingerprint>``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from review_gate.models import DebtItem
from review_gate.outputs.markdown import text
from review_gate.text.escape import json_safe, sanitize

TITLE_CHARS = 120
MARKER = "review-gate-debt:"
_SPACE = re.compile(r"\s+")
_NOT_HEX = re.compile(r"[^0-9a-f]")


def marker(item: DebtItem) -> str:
    """The hidden line an issue body starts with: its fingerprint, hex digits only."""
    return f"<!-- {MARKER}{_NOT_HEX.sub('', item.fingerprint)} -->"


def location(item: DebtItem) -> str:
    if item.file is None:
        return "no file"
    return item.file + (f":{item.line}" if item.line else "")


def title(item: DebtItem) -> str:
    """One line of plain text: ``Tech debt (warning): <message> in <file:line>``, bounded."""
    where = "" if item.file is None else f" in {location(item)}"
    line = sanitize(_SPACE.sub(" ", f"Tech debt ({item.severity}): {item.message}{where}").strip())
    if len(line) > TITLE_CHARS:
        line = line[:TITLE_CHARS - 1].rstrip() + "…"
    return line.replace("@", "@\u200d")  # a mention in a title still notifies on some trackers


def body(item: DebtItem) -> str:
    rows = [("Severity", item.severity), ("Where", text(location(item))), ("Rule", text(item.rule_id or "none")),
            ("Category", text(item.category)), ("Agent", text(item.agent)),
            ("First seen", f"{item.first_seen[:10]} (run {text(item.first_run)})"),
            ("Last seen", f"{item.last_seen[:10]} (run {text(item.last_run)}), reported by {item.runs} "
                          f"run{'s' if item.runs != 1 else ''}"),
            ("Fingerprint", f"`{_NOT_HEX.sub('', item.fingerprint)}`")]
    lines = [marker(item),
             "A finding review-gate's gate let through (it passed with warnings), deferred as tech debt. "
             "review-gate marks the item resolved once a later review no longer reports it.", "",
             "| | |", "|---|---|", *(f"| {name} | {value} |" for name, value in rows), "",
             f"**Finding:** {text(item.message)}"]
    if item.recommendation:
        lines += ["", f"**Recommendation:** {text(item.recommendation)}"]
    if item.status != "open":
        lines += ["", f"**{item.status.capitalize()}:** {text(item.resolution or item.status)}"]
    return "\n".join(lines) + "\n"


def render_markdown(items: Sequence[DebtItem]) -> str:
    """Every item's draft: its title as a heading (escaped), then its body."""
    if not items:
        return "No deferred debt.\n"
    return "\n---\n\n".join(f"## {text(title(item))}\n\n{body(item)}" for item in items)


def render_json(items: Sequence[DebtItem]) -> str:
    data = {"schema_version": 1,
            "items": [{**item.model_dump(mode="json"), "title": title(item), "body": body(item)} for item in items]}
    return json_safe(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


__all__ = ["body", "location", "marker", "render_json", "render_markdown", "title"]
