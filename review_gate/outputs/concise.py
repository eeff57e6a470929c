"""The text format's default layout: one line a finding, its fix under it, a few lines of the rest.

    app/http.py:7:27: major sec-tls-verify-01 [07b3bb] TLS verification disabled: r = requests.get(…)
      fix: Keep verification on; to trust a private CA, pass its bundle (verify='/path/ca.pem', …).
      why: review-gate rule sec-tls-verify-01 (any rule id above)

Findings are grouped by the line they are on (the group of the most severe first): a second rule
on the same line is merged under the first (``+ warning hyg-except-pass-01 …``), without quoting
the line again. Under the first finding, once, the command that describes any rule (``why:``);
``--verbose`` puts each rule's one-line description under its first finding. On
a terminal a finding's line is cut at the width (the fix wraps under itself); elsewhere every
line is whole, for grep. ``--verbose`` gives the long layout (``outputs.text``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from review_gate.models import SEVERITIES, SEVERITY_RANK, AgentResult, Finding, ReviewReport
from review_gate.outputs.ids import finding_name, short_ids
from review_gate.outputs.reviewers import STATES, absent_agents
from review_gate.outputs.summary import summary_line
from review_gate.outputs.text import (
    DECISION_STYLES,
    STYLES,
    Writer,
    clip,
    coverage_line,
    did_not_review,
    not_inspected,
    plural,
    usage_line,
    waived_line,
)
from review_gate.text.escape import sanitize

MAX_GAPS = 5


def show(report: ReviewReport, console: Console) -> None:
    out = Writer(console)
    c = report.classification
    cov = report.coverage
    out.line(Text(f"review-gate {report.tool_version} · {sanitize(report.source)}", style="bold"))
    domains = sanitize(", ".join(c.domains)) or "none"
    out.hanging(0, Text(""), Text(f"{plural(cov.files_changed, 'file')} changed · risk {c.risk_score} "
                                  f"({c.risk_level}) · type {c.pr_type} · domains: {domains}", style="dim"))
    note = cov.left_out_note("Nothing to review: the diff changes no file.")
    if note is not None:
        out.line(Text(note, style="dim"))
    ids = short_ids(f.fingerprint for f in [*report.findings, *report.waived])
    rules = {r.id for r in report.rules}
    described: set[str | None] = set()
    if report.findings:
        out.blank()
    for group in _by_line(report.findings):
        for index, finding in enumerate(group):
            _finding(out, finding, ids[finding.fingerprint], merged=index > 0,
                     quoted=_quote(group[0]) if index else None)
            if not described and finding.rule_id in rules:
                # once, under the first finding: where every rule's description and examples are
                described.add(finding.rule_id)
                out.hanging(4 if index else 2, Text(""),
                            Text(f"why: review-gate rule {sanitize(finding.rule_id)} (any rule id above)", style="dim"))
    _in_change(out, report, ids)
    out.blank()
    _rest(out, report)
    decision = Text("decision: ")
    decision.append(report.decision, style=DECISION_STYLES[report.decision])
    decision.append(f" · {_counts(report)}")
    out.line(decision)
    out.line(Text(summary_line(report)))


def _by_line(findings: Sequence[Finding]) -> list[list[Finding]]:
    """The findings in groups of one (file, line), the group of the most severe first; inside a
    group, the most severe first (the report's order, which is by severity)."""
    groups: dict[tuple[str | None, int | None], list[Finding]] = {}
    for finding in findings:
        groups.setdefault((finding.file, finding.line), []).append(finding)
    return sorted(groups.values(), key=lambda g: (min(SEVERITY_RANK[f.severity] for f in g), g[0].file or "",
                                                  g[0].line or 0))


def location(finding: Finding) -> str:
    where = sanitize(finding.file or "(no file)")
    if finding.line:
        where += f":{finding.line}"
        if finding.column:
            where += f":{finding.column}"
    return where


def _quote(finding: Finding) -> str | None:
    """The code a pattern finding's message quotes after its rule name (``Name: code``)."""
    _, colon, quoted = finding.message.partition(": ")
    return quoted if colon else None


def _finding(out: Writer, finding: Finding, short: str, *, merged: bool, quoted: str | None) -> None:
    message = finding.message
    if quoted and message.endswith(": " + quoted):
        message = message[: -len(quoted) - 2]  # the line was quoted once already, above
    head = Text("  + " if merged else location(finding) + ": ", style="bold")
    head.append(finding.severity, style=STYLES[finding.severity])
    head.append(f" {sanitize(finding_name(finding))} [{short}] ")
    tail = Text()
    if finding.also_reported_by:
        tail.append(f" (also {', '.join(sanitize(a) for a in finding.also_reported_by)})", style="dim")
    if finding.inline_waiver is not None and finding.inline_waiver.ignored:
        tail.append(f" (its inline waiver is not honoured: {sanitize(finding.inline_waiver.ignored)})", style="dim")
    own = _quote(finding)
    if out.wraps and own and head.cell_len + len(message) + tail.cell_len > out.console.width \
            and message.endswith(": " + own):
        # too wide for the terminal: the quoted code goes (file:line:col leads to it), the problem stays
        message = message[: -len(own) - 2]
    if out.wraps and head.cell_len + len(message) + tail.cell_len > out.console.width:
        # still too wide (a long path, a long rule id): the message on lines of its own, never cut away
        head.rstrip()
        out.cut(head + tail)
        out.hanging(4 if merged else 2, Text(""), Text(sanitize(message)))
    else:
        head.append(sanitize(message))
        out.cut(head + tail)
    if finding.recommendation:
        out.hanging(4 if merged else 2, Text("fix: "), Text(sanitize(finding.recommendation)))


def _in_change(out: Writer, report: ReviewReport, ids: dict[str, str]) -> None:
    """What the change waives itself: each with its reason, for the person who reviews it."""
    waived = report.waived_in_change
    if not waived:
        return
    out.blank()
    out.line(Text(f"Waived in this change ({len(waived)}): check each reason", style="yellow"))
    for finding in waived:
        waiver = finding.inline_waiver
        head = Text(f"{location(finding)}: ", style="bold")
        head.append(f"{sanitize(finding_name(finding))} [{ids[finding.fingerprint]}] ")
        reason = Text(sanitize(waiver.reason if waiver is not None else finding.waived or ""), style="yellow")
        if out.wraps and head.cell_len + reason.cell_len > out.console.width:
            head.rstrip()
            out.cut(head)  # the reason is what this list is for: on lines of its own, whole
            out.hanging(2, Text("why: "), reason)
        else:
            out.cut(head + reason)


def _rest(out: Writer, report: ReviewReport) -> None:
    """The agents in one line (those that did not complete named, with why), coverage, what did
    not count, gaps in one line each."""
    done = [a for a in report.agents if a.status in ("completed", "cached")]
    missing = absent_agents(report)
    absent = {a.agent for a in missing}
    agents = f"{len(done)} ran"
    noted = [(a, why) for a in done if a.id not in absent and (why := _repaired(a))]
    if noted:
        agents += "; " + "; ".join(f"{sanitize(a.id)} {a.status} ({sanitize(why)})" for a, why in noted)
    if absent:
        by_agent = {a.agent: STATES.get(a.status, "did not review everything") for a in missing}
        states = Counter(by_agent.values())
        agents += "; " + ", ".join(f"{n} {state}" for state, n in states.items()) + " (below)"
    out.hanging(0, Text("agents: ", style="dim"), Text(agents, style="dim"))
    did_not_review(out, report)
    cov = report.coverage
    text = coverage_line(report)
    if cov.findings_filtered:
        text += (f", {plural(cov.findings_filtered, 'finding')} off the changed lines not counted (filter mode "
                 f"{cov.filter_mode}; --filter-mode nofilter counts them)")
    if cov.unreviewed:
        text += f"; unreviewed: {', '.join(sanitize(p) for p in cov.unreviewed[:5])}"
        text += f" and {len(cov.unreviewed) - 5} more" if len(cov.unreviewed) > 5 else ""
    out.hanging(0, Text(""), Text(text, style="yellow" if cov.unreviewed else ""))
    not_inspected(out, cov.not_inspected)
    used = usage_line(report)
    if used is not None:
        out.line(Text(used, style="dim"))
    if report.waived:
        out.line(Text(waived_line(report) + ("; --verbose lists them" if len(report.waived) > len(
            report.waived_in_change) else ""), style="dim"))
    for gap in report.gaps[:MAX_GAPS]:
        out.hanging(0, Text(f"gap {gap.id} [{gap.kind}] ", style="dim"),
                    Text(f"{sanitize(clip(gap.subject, 120))}: {sanitize(gap.reason)}", style="dim"))
    if len(report.gaps) > MAX_GAPS:
        out.line(Text(f"gap: … and {len(report.gaps) - MAX_GAPS} more (review-gate gaps, or --verbose)", style="dim"))
    out.line(Text("the long layout, with each rule's description: --verbose", style="dim"))


def _repaired(agent: AgentResult) -> str:
    """What was wrong with a completed agent's answer, as the long layout's note says it."""
    if agent.dropped_findings:
        return f"{plural(agent.dropped_findings, 'malformed finding')} dropped"
    return "answer repaired (notes in the JSON report)" if agent.notes else ""


def _counts(report: ReviewReport) -> str:
    m = report.metrics
    parts = [f"{getattr(m, s)} {s}" for s in SEVERITIES if getattr(m, s)]
    if m.waived_inline:
        parts.append(f"{m.waived_inline} waived in this change")
    return ", ".join(parts) or "no findings"
