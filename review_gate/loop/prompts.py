"""The values the prompt templates are filled with: the task, the Standards, the plan, the
feedback, the findings of the last review and the history of earlier NO_GO feedback.

Findings come from agents, and everything here goes to a coding agent and into Markdown files a
person reads: control characters are escaped, and each finding stays on its own lines.
"""

from __future__ import annotations

from typing import Any

from review_gate.models import SEVERITY_RANK
from review_gate.text.escape import sanitize

NO_TASK = "(no task description was given: the change in the working tree is the task)"
MAX_FINDINGS = 100


def section(title: str, body: str | None) -> str:
    """A ``## title`` section, or nothing when ``body`` is empty."""
    return f"## {title}\n\n{body.strip()}" if body and body.strip() else ""


def ordered(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Most severe first (critical, major, ...), then by file and line."""
    return sorted(findings, key=lambda f: (SEVERITY_RANK.get(str(f.get("severity")), 99), str(f.get("file") or ""),
                                           f.get("line") or 0))


def where(finding: dict[str, Any]) -> str:
    file = finding.get("file") or "(whole change)"
    return f"{file}:{finding['line']}" if finding.get("line") else str(file)


def finding_lines(findings: list[dict[str, Any]]) -> list[str]:
    """One numbered entry per finding: severity, file:line, message, rule, then its fix."""
    lines = []
    shown = ordered(findings)
    for number, f in enumerate(shown[:MAX_FINDINGS], 1):
        rule = f" (rule {sanitize(str(f['rule_id']))})" if f.get("rule_id") else ""
        lines.append(f"{number}. **{f.get('severity')}** `{sanitize(where(f))}`: "
                     f"{_one_line(str(f.get('message', '')))}{rule}")
        if f.get("recommendation"):
            lines.append(f"   Fix: {_one_line(str(f['recommendation']))}")
    if len(shown) > MAX_FINDINGS:
        lines.append(f"... and {len(shown) - MAX_FINDINGS} more findings (see the review file)")
    return lines


def findings_section(record: dict[str, Any], review_file: str) -> str:
    findings = record.get("findings") or []
    if not findings:
        return ""
    head = f"{record.get('summary', '')} (run {record.get('run_id', '?')}; the whole review: {review_file})"
    return section("Findings to fix", head + "\n\n" + "\n".join(finding_lines(findings)))


def history_section(decisions: list[dict[str, Any]]) -> str:
    """Earlier NO_GO decisions and their feedback, oldest first."""
    entries = [f"### Iteration {d.get('iteration')}: NO_GO\n\n{d.get('feedback', '').strip()}"
               for d in decisions if d.get("decision") == "NO_GO"]
    return section("Earlier reviews that said NO_GO", "\n\n".join(entries))


def feedback_text(record: dict[str, Any], given: str | None, verdict: str, *, person: bool = False,
                  reviewed: str | None = None, criteria: bool | str | None = None) -> str:
    """The decision record's feedback: who decided (a person over the review, when ``person``),
    what a person or an approver said, then the review's gist: its summary line, and on NO_GO
    its findings. "All criteria met" only when the llm reviewers judged the task's acceptance
    criteria met (``criteria``) and the gate passed the change."""
    parts = [given.strip()] if given and given.strip() else []
    summary = str(record.get("summary", ""))
    if person:
        over = f" over the review's {reviewed}" if reviewed else ""
        parts.insert(0, f"A person decided {verdict}{over}.")
        parts.append(f"The review: {summary}" if summary else "")
    elif verdict == "GO":
        judged = ("All criteria met." if criteria is True else "The gate passed the change; its reviewers judged "
                  "the task's acceptance criteria not met." if criteria is False else "The gate passed the change.")
        parts.append(f"{judged} {summary}".strip())
    else:
        parts.append(summary)
    if verdict != "GO":
        findings = ordered(record.get("findings") or [])
        parts += [f"- {f.get('severity')} {sanitize(where(f))}: {_one_line(str(f.get('message', '')))}"
                  + (f" Fix: {_one_line(str(f['recommendation']))}" if f.get("recommendation") else "")
                  for f in findings[:20]]
    return "\n".join(p for p in parts if p)


def _one_line(text: str) -> str:
    return " ".join(sanitize(text).split())
