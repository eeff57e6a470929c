"""``--format text``: findings grouped by severity with file:line, the decision, agent statuses."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from review_gate.console import make_console, sanitize
from review_gate.models import AgentResult, ReviewReport
from review_gate.outputs.summary import summary_line

STYLES = {"critical": "bold red", "major": "red", "warning": "yellow", "info": "cyan"}
DECISION_STYLES = {"pass": "bold green", "pass_with_warnings": "bold yellow", "needs_fixes": "bold red",
                   "fail": "bold white on red", "incomplete": "bold magenta"}
STATUS_STYLES = {"completed": "green", "cached": "green", "skipped": "dim", "failed": "red",
                 "timed_out": "red"}


def render(report: ReviewReport) -> str:
    """Plain text, for ``--output FILE``."""
    buffer = io.StringIO()
    show(report, make_console(buffer, interactive=False, width=120))
    return buffer.getvalue()


def show(report: ReviewReport, console: Console) -> None:
    console.print(Text(f"review-gate {report.tool_version} · {sanitize(report.source)}", style="bold"))
    c = report.classification
    console.print(Text(f"{report.coverage.files_changed} files changed · risk {c.risk_score} ({c.risk_level}) "
                       f"· type {c.pr_type} · domains: {sanitize(', '.join(c.domains)) or 'none'}"))
    if report.coverage.nothing_to_review:
        console.print(Text("Nothing to review: the diff changes no file.", style="dim"))
    for severity in ("critical", "major", "warning", "info"):
        group = [f for f in report.findings if f.severity == severity]
        if not group:
            continue
        console.print()
        console.print(Text(f"{severity.upper()} ({len(group)})", style=STYLES[severity]))
        for f in group:
            where = sanitize(f.file or "(no file)") + (f":{f.line}" if f.line else "")
            line = Text("  ")
            line.append(where, style="bold")
            line.append(f"  [{sanitize(f.rule_id or f.category)}] ", style="dim")
            line.append(sanitize(f.message))
            also = f", also {', '.join(f.also_reported_by)}" if f.also_reported_by else ""
            line.append(f"  ({sanitize(f.agent + also)})", style="dim")
            console.print(line)
            if f.recommendation:
                console.print(Text("      fix: " + sanitize(f.recommendation), style="dim"))
    console.print()
    table = Table(title=None, show_edge=False, pad_edge=False, box=None)
    for column in ("agent", "kind", "status", "attempts", "time", "files", "findings", "note"):
        table.add_column(column)
    for a in report.agents:
        table.add_row(sanitize(a.id), sanitize(a.kind), Text(a.status, style=STATUS_STYLES.get(a.status, "")),
                      str(a.attempts), f"{a.duration_s:.2f}s", str(len(a.files)), str(len(a.findings)),
                      Text(sanitize(a.error or _note(a)), style="dim"))
    if report.agents:
        console.print(table)
    else:
        console.print(Text("No agent was dispatched.", style="dim"))
    cov = report.coverage
    console.print(Text(f"coverage: {cov.files_reviewed}/{cov.files_changed} files reviewed"
                       + (f", {cov.findings_filtered} findings outside the changed lines ({cov.filter_mode})"
                          if cov.findings_filtered else "")))
    if report.waived:
        console.print(Text(waived_line(report), style="dim"))
    usage = report.usage
    if usage.tokens_in or usage.tokens_out or usage.cost_usd:
        cached = f" ({usage.cached_tokens_in} cached)" if usage.cached_tokens_in else ""
        reasoning = f" ({usage.reasoning_tokens} reasoning)" if usage.reasoning_tokens else ""
        console.print(Text(f"model usage: {usage.tokens_in} tokens in{cached}, {usage.tokens_out} out{reasoning}, "
                           f"${usage.cost_usd:.4f}", style="dim"))
    if cov.unreviewed:
        shown = ", ".join(sanitize(p) for p in cov.unreviewed[:10])
        more = f" and {len(cov.unreviewed) - 10} more" if len(cov.unreviewed) > 10 else ""
        console.print(Text(f"unreviewed: {shown}{more}", style="yellow"))
    for gap in report.gaps[:10]:
        console.print(Text(f"gap: {sanitize(gap.reason)}", style="dim"))
    if len(report.gaps) > 10:
        console.print(Text(f"gap: … and {len(report.gaps) - 10} more (see --format json)", style="dim"))
    console.print()
    decision = Text("decision: ")
    decision.append(report.decision, style=DECISION_STYLES[report.decision])
    console.print(decision)
    console.print(Text(summary_line(report)))


def waived_line(report: ReviewReport) -> str:
    """How many findings did not count, and why: baselined, or accepted by a person."""
    baselined = sum(1 for f in report.waived if f.waived == "baselined")
    accepted = len(report.waived) - baselined
    parts = [f"{n} {why}" for n, why in ((baselined, "baselined"), (accepted, "accepted")) if n]
    total = len(report.waived)
    return f"waived: {total} finding{'' if total == 1 else 's'} not counted ({', '.join(parts)})"


def _note(agent: AgentResult) -> str:
    """The note column of an agent without an error: optional, and whether its answer was repaired."""
    parts = [] if agent.required else ["optional"]
    if agent.dropped_findings:
        parts.append(f"{agent.dropped_findings} malformed finding(s) dropped")
    elif agent.notes:
        parts.append("answer repaired (notes in the JSON report)")
    return "; ".join(parts)
