"""``--format text``: by default the concise layout of ``outputs.concise`` (a line a finding, its
fix under it); with ``--verbose`` the long one of this module: findings grouped by severity,
what did not count and why, the agents, the coverage, the gaps, the decision.

On a terminal, long lines wrap with a hanging indent (a finding's continuation lines stay under
its text, never at column 0) and tables fit the width without cutting an agent id. Elsewhere
(a file, a pipe, a CI log) every item is one line, so it can be searched with grep.

Each finding shows a short id (a prefix of its fingerprint) that ``review-gate accept ID`` takes.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from rich.console import Console, RenderableType
from rich.segment import Segment, Segments
from rich.table import Table
from rich.text import Text

from review_gate.models import SEVERITIES, AgentResult, Finding, NotInspected, ReviewReport
from review_gate.outputs.ids import short_ids, waived_kinds
from review_gate.outputs.reviewers import (
    absent_agents,
    absent_lines,
    dropped,
    dropped_line,
    fails_open_note,
    host_line,
    off_line,
)
from review_gate.outputs.summary import summary_line
from review_gate.text.escape import sanitize

STYLES = {"critical": "bold red", "major": "red", "warning": "yellow", "info": "cyan"}
DECISION_STYLES = {"pass": "bold green", "pass_with_warnings": "bold yellow", "needs_fixes": "bold red",
                   "fail": "bold white on red", "incomplete": "bold magenta"}
STATUS_STYLES = {"completed": "green", "cached": "green", "skipped": "dim", "failed": "red",
                 "timed_out": "red"}
MAX_GAPS = 10
MAX_UNREVIEWED = 10
WORD = 20  # characters a line cut at a word may lose before the width


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def render(report: ReviewReport, *, verbose: bool = False) -> str:
    """Plain text, for ``--output FILE``: no colour, every item on one line."""
    buffer = io.StringIO()
    show(report, Console(file=buffer, force_terminal=False, no_color=True, highlight=False, emoji=False,
                         markup=False, soft_wrap=True, width=120), verbose=verbose)
    return buffer.getvalue()


def show(report: ReviewReport, console: Console, *, verbose: bool = False) -> None:
    if not verbose:
        from review_gate.outputs import concise

        concise.show(report, console)
        return
    out = Writer(console)
    c = report.classification
    cov = report.coverage
    out.line(Text(f"review-gate {report.tool_version} · {sanitize(report.source)}", style="bold"))
    out.line(Text(f"{plural(cov.files_changed, 'file')} changed · risk {c.risk_score} ({c.risk_level}) "
                  f"· type {c.pr_type}"))
    out.hanging(0, Text("domains: "), Text(sanitize(", ".join(c.domains)) or "none"))
    note = cov.left_out_note("Nothing to review: the diff changes no file.")
    if note is not None:
        out.line(Text(note, style="dim"))
    ids = short_ids(f.fingerprint for f in [*report.findings, *report.waived])
    rules = {r.id: r for r in report.rules}
    for severity in SEVERITIES:
        group = [f for f in report.findings if f.severity == severity]
        if group:
            out.blank()
            out.line(Text(f"{severity.upper()} ({len(group)})", style=STYLES[severity]))
            for finding in group:
                _finding(out, finding, ids[finding.fingerprint])
                rule = rules.pop(finding.rule_id or "", None)
                if rule is not None:  # its description, under its first finding only
                    out.hanging(6, Text("why: ", style="dim"), Text(sanitize(rule.description), style="dim"))
    if report.waived:
        out.blank()
        out.line(Text(f"WAIVED ({len(report.waived)}): reported, not counted", style="dim"))
        for finding in report.waived:
            _finding(out, finding, ids[finding.fingerprint], waived=True)
    out.blank()
    _agents(out, report.agents, _found(report))
    did_not_review(out, report)
    _coverage(out, report)
    out.blank()
    decision = Text("decision: ")
    decision.append(report.decision, style=DECISION_STYLES[report.decision])
    out.line(decision)
    out.line(Text(summary_line(report)))


class Writer:
    """Lines for one console: wrapped with a hanging indent on a terminal, whole elsewhere."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.wraps = not console.soft_wrap

    def blank(self) -> None:
        self.console.print()

    def line(self, text: Text) -> None:
        self.console.print(text)

    def hanging(self, indent: int, label: Text, body: Text) -> None:
        if self.wraps:
            print_hanging(self.console, indent, label, body)
        else:
            self.console.print(Text(" " * indent) + label + body)

    def trimmed(self, renderable: RenderableType) -> None:
        print_trimmed(self.console, renderable)

    def cut(self, text: Text) -> None:
        """One line: on a terminal cut at its width with an ellipsis (never wrapped into the next
        line mid-expression); elsewhere whole."""
        if not self.wraps:
            self.console.print(text)
            return
        if text.cell_len > self.console.width:
            text = cut_at_word(text, self.console.width)
        self.console.print(text, no_wrap=True, overflow="ellipsis", crop=True)


def cut_at_word(text: Text, width: int) -> Text:
    """``text`` cut to ``width`` cells with an ellipsis, after its last whole word when that drops
    a word's length at most (a title cut mid-word reads as another word); a long token (code, a
    path, an escaped payload) is cut at the width, so that as much of it as fits is shown."""
    out = text.copy()
    plain = text.plain
    if len(plain) == text.cell_len:  # one cell a character: positions are columns
        space = plain.rfind(" ", 0, width)
        if space > 0 and width - space <= WORD:
            out.truncate(space)
            out.rstrip()
            out.append("…")
            return out
    out.truncate(width, overflow="ellipsis")
    return out


def print_hanging(console: Console, indent: int, label: Text, body: Text) -> None:
    """``label`` at column ``indent``, then ``body``; a wrapped body continues under itself."""
    grid = Table.grid()
    cells: list[Text | str] = []
    if indent:
        grid.add_column(width=indent, no_wrap=True)
        cells.append("")
    if label.plain:
        grid.add_column(no_wrap=True)
        cells.append(label)
    grid.add_column(ratio=1, overflow="fold")
    grid.add_row(*cells, body)
    print_trimmed(console, grid)


def print_trimmed(console: Console, renderable: RenderableType) -> None:
    """Print without the spaces rich pads lines with (a copied line ends where its text does)."""
    lines = console.render_lines(renderable, console.options, pad=False)
    console.print(Segments([s for line in lines for s in (*_rstrip(line), Segment.line())]), end="")


def _rstrip(line: list[Segment]) -> list[Segment]:
    kept = list(line)
    while kept and not kept[-1].text.strip():
        kept.pop()
    if kept:
        last = kept[-1]
        kept[-1] = Segment(last.text.rstrip(), last.style, last.control)
    return kept


def _location(finding: Finding) -> str:
    where = sanitize(finding.file or "(no file)")
    if finding.line:
        where += f":{finding.line}"
        if finding.end_line and finding.end_line > finding.line:
            where += f"-{finding.end_line}"
    return where


def _finding(out: Writer, finding: Finding, short: str, *, waived: bool = False) -> None:
    where = _location(finding)
    label = Text(where + "  ", style="bold")
    if out.wraps and len(where) > out.console.width // 3:  # a long path: the message goes below it
        out.hanging(2, label, Text(""))
        out.hanging(6, Text(""), Text(sanitize(finding.message)))
    else:
        out.hanging(2, label, Text(sanitize(finding.message)))
    agents = ", ".join(sanitize(a) for a in [finding.agent, *finding.also_reported_by])
    meta = f"id {short} · {sanitize(finding.rule_id or finding.category)} · {agents}"
    if waived:
        meta += f" · {sanitize(finding.waived or 'waived')}"
    out.hanging(6, Text(""), Text(meta, style="dim"))
    if finding.recommendation and not waived:
        out.hanging(6, Text("fix: "), Text(sanitize(finding.recommendation)))  # normal intensity: what to do


def _found(report: ReviewReport) -> dict[str, int]:
    """Agent id -> the findings the report lists for it (counted or waived, its own or shared
    after dedupe). Counted from the report, not from each result's own findings: those are not
    kept in the stored JSON, so a report read back (`show`, `batch collect`) would say 0."""
    found: dict[str, int] = {}
    for finding in [*report.findings, *report.waived]:
        for agent in dict.fromkeys([finding.agent, *finding.also_reported_by]):
            found[agent] = found.get(agent, 0) + 1
    return found


def _agents(out: Writer, agents: Sequence[AgentResult], found: Mapping[str, int]) -> None:
    if not agents:
        out.line(Text("No agent was dispatched.", style="dim"))
        return
    narrow = out.wraps and out.console.width < 100
    retried = any(a.attempts > 1 for a in agents)
    table = Table(box=None, pad_edge=False, show_edge=False)
    longest = max(len(sanitize(a.id)) for a in agents)
    table.add_column("agent", no_wrap=True, min_width=longest)  # an id people copy is never cut
    if not narrow:
        table.add_column("kind", no_wrap=True)
    table.add_column("status", no_wrap=True)
    if retried:
        table.add_column("tries", no_wrap=True, justify="right")
    for column in ("time", "found") if narrow else ("time", "files", "found"):
        table.add_column(column, no_wrap=True, justify="right")
    table.add_column("note", ratio=1, overflow="fold")
    for a in agents:
        note = a.error or _note(a)
        if a.unreviewed:
            note = (note + "; " if note else "") + f"did not review {plural(len(a.unreviewed), 'file')}"
        cells: list[Text | str] = [sanitize(a.id)]
        if not narrow:
            cells.append(sanitize(a.kind))
        # turned off by the person or the configuration: a choice, not a reviewer that did not run
        cells.append(Text("off", style="dim") if a.disabled else Text(a.status, style=STATUS_STYLES.get(a.status, "")))
        if retried:
            cells.append(str(a.attempts))
        cells.append(f"{a.duration_s:.2f}s")
        if not narrow:
            cells.append(str(len(a.files)))
        cells += [str(found.get(a.id, 0)), Text(sanitize(note), style="dim")]
        table.add_row(*cells)
    out.trimmed(table)
    if narrow:  # said once, under the table
        out.hanging(0, Text(""), Text(f"(at {out.console.width} columns the kind and files columns are left out; "
                                      "widen the terminal or see --format json)", style="dim"))


def did_not_review(out: Writer, report: ReviewReport) -> None:
    """The agents that did not review all they were given and why, the findings dropped as
    outside every reviewer's scope, and why the gate passes over them when it does; and who
    reviewed, when the coding agent's host answered for some reviewers."""
    host = host_line(report)
    if host is not None:
        out.line(Text(sanitize(host), style="yellow"))
    for line in absent_lines(absent_agents(report)):
        out.hanging(0, Text("did not review: ", style="yellow"), Text(sanitize(line), style="yellow"))
    for agent, finding in dropped(report):
        style = "red" if finding.severity == "critical" else "yellow"
        out.hanging(0, Text("dropped: ", style=style), Text(sanitize(dropped_line(agent, finding)), style=style))
    note = fails_open_note(report)
    if note is not None:
        out.line(Text(note, style="yellow"))
    off = off_line(report)
    if off is not None:
        out.hanging(0, Text(""), Text(sanitize(off), style="dim"))


def _note(agent: AgentResult) -> str:
    """The note of an agent without an error: optional, and whether its answer was repaired."""
    parts = [] if agent.required else ["optional"]
    if agent.dropped_findings:
        parts.append(f"{plural(agent.dropped_findings, 'malformed finding')} dropped")
    elif agent.notes:
        parts.append("answer repaired (notes in the JSON report)")
    return "; ".join(parts)


def not_inspected(out: Writer, items: Sequence[NotInspected]) -> None:
    """Each file no agent was shown, why, and how to have it reviewed; what is only listed shares
    its hint (which setting would count it) once."""
    for item in items[:MAX_UNREVIEWED]:
        style = "yellow" if item.counted else "dim"
        weight = "counts against the gate" if item.counted else "listed only"
        fix = f" — fix: {item.fix}" if item.counted and item.fix else ""
        out.hanging(0, Text(f"not inspected ({weight}): ", style=style), Text(sanitize(item.reason + fix), style=style))
    if len(items) > MAX_UNREVIEWED:
        out.line(Text(f"not inspected: … and {len(items) - MAX_UNREVIEWED} more (see --format json)", style="dim"))
    for hint in dict.fromkeys(i.fix for i in items if not i.counted and i.fix):
        out.hanging(0, Text("note: ", style="dim"), Text(sanitize(hint), style="dim"))


def coverage_line(report: ReviewReport) -> str:
    """``coverage: 2/2 files reviewed``, and by whom when optional agents routed to the change did
    not review (the count is the required agents'): "2/2 reviewed" under three failed LLM
    reviewers read as if they had reviewed them."""
    cov = report.coverage
    text = f"coverage: {cov.files_reviewed}/{plural(cov.files_changed, 'file')} reviewed"
    if any(not a.required for a in report.did_not_review):  # "did not review" names them, just above
        text += " by required agents"
    return text


def _coverage(out: Writer, report: ReviewReport) -> None:
    cov = report.coverage
    text = coverage_line(report)
    if cov.findings_filtered:
        text += (f", {plural(cov.findings_filtered, 'finding')} outside the changed lines not counted "
                 f"({cov.filter_mode})")
    out.line(Text(text))
    if report.waived:
        out.line(Text(waived_line(report), style="dim"))
    used = usage_line(report)
    if used is not None:
        out.line(Text(used, style="dim"))
    if cov.unreviewed:
        shown = ", ".join(sanitize(p) for p in cov.unreviewed[:MAX_UNREVIEWED])
        more = f" and {len(cov.unreviewed) - MAX_UNREVIEWED} more" if len(cov.unreviewed) > MAX_UNREVIEWED else ""
        out.hanging(0, Text("unreviewed: ", style="yellow"), Text(shown + more, style="yellow"))
    not_inspected(out, cov.not_inspected)
    for gap in report.gaps[:MAX_GAPS]:
        # the id is what `review-gate gaps --apply ID` takes once the run is recorded
        out.hanging(0, Text(f"gap {gap.id} [{gap.kind}] ", style="dim"),
                    Text(f"{sanitize(clip(gap.subject, 200))}: {sanitize(gap.reason)}", style="dim"))
        if len(gap.files) > 1:  # the files it counts, the long layout's alone
            out.hanging(4, Text(""), Text(sanitize(", ".join(gap.files)), style="dim"))
    if len(report.gaps) > MAX_GAPS:
        out.line(Text(f"gap: … and {len(report.gaps) - MAX_GAPS} more (see --format json)", style="dim"))


def usage_line(report: ReviewReport) -> str | None:
    """The model tokens and cost of the run, when it spent any."""
    usage = report.usage
    if not (usage.tokens_in or usage.tokens_out or usage.cost_usd):
        return None
    cached = f" ({usage.cached_tokens_in} cached)" if usage.cached_tokens_in else ""
    reasoning = f" ({usage.reasoning_tokens} reasoning)" if usage.reasoning_tokens else ""
    return f"model usage: {usage.tokens_in} tokens in{cached}, {usage.tokens_out} out{reasoning}, {usage.cost_text()}"


def clip(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[:limit - 1] + "…"


def waived_line(report: ReviewReport) -> str:
    """How many findings did not count, and why: baselined, accepted by a person (or the team),
    pre-existing, or waived by an inline comment (the change's own, or one the base has)."""
    parts = [f"{n} {why}" for n, why in waived_kinds(report.waived)]
    total = len(report.waived)
    return f"waived: {plural(total, 'finding')} not counted ({', '.join(parts)})"
