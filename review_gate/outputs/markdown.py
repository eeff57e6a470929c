"""``--format markdown``: the report as one pull-request comment, in the style of Danger.

The decision and the summary line come first, then a table of counts, the findings grouped by
severity, the agents that failed or timed out, the unreviewed files, tokens and cost, and a
footer with the tool version and the run id.

Text from diffs and agents (messages, paths, rule ids, errors, recommendations) is untrusted: it
is escaped so that it cannot inject HTML, break a table, mention people or teams, or start a
Markdown construct (heading, quote, list, link, image, emphasis, code, math) — see ``text``.

GitHub refuses a comment longer than 65,536 characters. When the whole report is longer, the
least severe findings are left out first (info, then warning, major, and critical last) and the
comment says how many of each; ``render(report, limit=...)`` sets another budget, and ``size``
another way to measure it (the job summary counts UTF-8 bytes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from review_gate.models import SEVERITIES, SEVERITY_RANK, AgentResult, Finding, Gap, ReviewReport, Usage
from review_gate.outputs.ids import short_ids
from review_gate.outputs.reviewers import (
    STATES,
    absent_agents,
    dropped,
    dropped_line,
    fails_open_note,
    host_line,
    off_line,
)
from review_gate.outputs.summary import DECISION_LABELS, summary_line
from review_gate.text.escape import sanitize

COMMENT_LIMIT = 65_536
TITLES = {"critical": "Critical", "major": "Major", "warning": "Warning", "info": "Info"}
DECISIONS = {
    "fail": "Critical findings were reported.",
    "incomplete": "A reviewer that was run failed, or a required one produced nothing usable: the review is "
                  "incomplete and the gate fails closed.",
    "needs_fixes": "Major findings need fixing.",
    "pass_with_warnings": "Nothing blocking was found, but there are warnings or reviewers that did not run.",
    "pass": "Nothing blocking was found.",
}
OPEN_GROUP = 10  # a group with more findings than this is collapsed (critical ones never are)
MAX_LISTED = 50  # unreviewed files listed before "and N more"
MAX_FIELD = 2000  # characters of one untrusted field shown; the JSON report has them whole
HEADER = "<!-- review-gate report -->"

_BREAK = re.compile(r"\r\n|[\r\n\u2028\u2029]")
_INLINE = re.compile(r"[\\`*_~\[\]|<>&@$]")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "@\u200d"}
_BACKTICKS = re.compile(r"`+")
_BLOCK_START = re.compile(r"[#+-]|[0-9]{1,9}[.)](?=\s|$)")


def text(value: str, *, limit: int = MAX_FIELD) -> str:
    """Untrusted text as inline Markdown that renders as the same characters and does nothing else.

    & < > become entities (no HTML); \\ ` * _ ~ [ ] | $ are backslash-escaped (no emphasis, code,
    links, images, math, and no cell boundary in a table); a zero-width joiner after every @ keeps
    GitHub from mentioning anyone; line breaks become <br>, other control characters visible escapes;
    a leading # + - or "1." is escaped so the text never starts a heading, a list or a rule.
    """
    value = value.strip()
    if len(value) > limit:
        value = value[:limit].rstrip() + "…"
    parts = [_INLINE.sub(_escape_char, sanitize(part).replace("\t", " ")) for part in _BREAK.split(value)]
    joined = "<br>".join(parts)
    start = _BLOCK_START.match(joined)
    if start:
        end = start.end()
        joined = joined[:end - 1] + "\\" + joined[end - 1:]
    return joined


def code(value: str, *, limit: int = MAX_FIELD) -> str:
    """Untrusted text as an inline code span in a table cell, showing the same characters.

    Inside a code span Markdown reads no emphasis, link, HTML or entity, and a backslash escapes
    nothing (so ``text``'s escapes would show as ``\\#``): only what can end the span or the cell
    needs care. The fence is one backtick more than the longest run inside (padded with a space
    when the text starts or ends with a backtick or a space); a ``|`` is ``\\|``, which the table
    reads before the span (GFM), so it shows as ``|``; line breaks and control characters become
    visible escapes (``sanitize``); a zero-width joiner after every @ still keeps GitHub from
    mentioning anyone. Empty text is no span at all.

    >>> code("# noqa: S501 [x] `y`")
    '`` # noqa: S501 [x] `y` ``'
    """
    value = value.strip()
    if len(value) > limit:
        value = value[:limit].rstrip() + "…"
    value = sanitize(value.replace("\t", " ")).replace("|", "\\|").replace("@", "@\u200d")
    if not value:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(value)), default=0) + 1)
    pad = " " if value[0] in "` " or value[-1] in "` " else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _ENTITIES.get(char, "\\" + char)


def location(finding: Finding) -> str:
    if finding.file is None:
        return "*no file*"
    where = finding.file
    if finding.line:
        where += f":{finding.line}"
        if finding.end_line and finding.end_line > finding.line:
            where += f"-{finding.end_line}"
    return text(where, limit=500)


def _number(value: int) -> str:
    return f"{value:,}"


def render(report: ReviewReport, limit: int | None = COMMENT_LIMIT, *,
           size: Callable[[str], int] = len) -> str:
    """The comment; with ``limit``, no longer than that as measured by ``size``."""
    ordered = sorted(report.findings, key=lambda f: SEVERITY_RANK[f.severity])
    full = _compose(report, ordered, len(ordered))
    if limit is None or size(full) <= limit:
        return full
    best: str | None = None
    low, high = 0, len(ordered) - 1
    while low <= high:  # the most findings, most severe first, that fit
        middle = (low + high) // 2
        candidate = _compose(report, ordered, middle)
        if size(candidate) <= limit:
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    return best if best is not None else _cut(_compose(report, ordered, 0), limit, size)


def _cut(whole: str, limit: int, size: Callable[[str], int]) -> str:
    """Last resort when even the report without findings is too long (thousands of agents)."""
    note = "\n\n**The report was cut here to fit the size limit; the JSON report (`--format json`) has it all.**\n"
    budget = limit - size(note)
    kept = whole
    while kept and size(kept) > budget:
        kept = kept[: max(0, min(len(kept) - 1, budget))]
        kept = kept[: kept.rfind("\n") + 1] if "\n" in kept else ""
    return kept.rstrip("\n") + note


def _compose(report: ReviewReport, ordered: Sequence[Finding], shown: int) -> str:
    ids = short_ids(f.fingerprint for f in [*report.findings, *report.waived])
    kept = ordered[:shown]
    left_out: dict[str, int] = {s: 0 for s in SEVERITIES}
    for finding in ordered[shown:]:
        left_out[finding.severity] += 1
    out: list[str] = [HEADER]
    out += _head(report)
    out += _omitted(left_out)
    out += _in_change(report.waived_in_change, ids)
    for severity in SEVERITIES:
        group = [f for f in kept if f.severity == severity]
        out += _group(severity, group, left_out[severity], ids)
    out += _waived([f for f in report.waived if f not in report.waived_in_change], ids)
    out += _agents(report)
    out += _dropped(report)
    out += _unreviewed(report)
    out += _not_inspected(report)
    out += _gaps(report)
    out += _usage(report.agents)
    out += _footer(report)
    return "\n".join(out) + "\n"


def _head(report: ReviewReport) -> list[str]:
    m = report.metrics
    c = report.classification
    cov = report.coverage
    gate = "The gate lets the change through" if report.exit_code == 0 else "The gate stops the change"
    lines = [f"## review-gate: {DECISION_LABELS[report.decision]}", "",
             f"**{DECISIONS[report.decision]}** {gate} (exit code {report.exit_code}).", "",
             f"`{summary_line(report)}`", ""]
    note = cov.left_out_note("Nothing to review: the diff changes no file.")
    if note is not None:
        lines += [note, ""]
    lines += ["| critical | major | warning | info | total | missing inputs | unreviewed files | agents failed "
              "| agents skipped | risk |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
              "| " + " | ".join(_number(n) for n in (m.critical, m.major, m.warning, m.info, m.total,
                                                     m.missing_inputs, m.unreviewed_files, m.agents_failed,
                                                     m.agents_skipped))
              + f" | {m.risk_score} ({c.risk_level}) |", ""]
    domains = ", ".join(text(d, limit=100) for d in c.domains) or "none"
    facts = (f"{cov.files_reviewed} of {cov.files_changed} changed files reviewed · type {c.pr_type} "
             f"· domains: {domains}")
    if cov.findings_filtered:
        facts += (f" · {cov.findings_filtered} findings off the changed lines not counted "
                  f"(filter mode {cov.filter_mode}; `--filter-mode nofilter` counts them)")
    return [*lines, facts, ""]


def _omitted(left_out: dict[str, int]) -> list[str]:
    total = sum(left_out.values())
    if not total:
        return []
    parts = ", ".join(f"{_number(n)} {s}" for s, n in left_out.items() if n)
    return [f"**{_number(total)} findings are not shown** to keep this comment under GitHub's size limit "
            f"({parts}); the JSON report (`--format json`) has them all.", ""]


def _group(severity: str, group: list[Finding], left_out: int, ids: dict[str, str]) -> list[str]:
    if not group and not left_out:
        return []
    count = len(group) + left_out
    heading = f"### {TITLES[severity]} ({_number(count)})"
    if left_out:
        heading += f", {_number(len(group))} shown"
    lines = [heading, ""]
    if not group:
        return [*lines, f"All {_number(left_out)} left out for size.", ""]
    table = ["| location | id | rule | message | agent |", "|---|---|---|---|---|"]
    for f in group:
        agent = text(f.agent, limit=200)
        if f.also_reported_by:
            agent += ", also " + ", ".join(text(a, limit=200) for a in f.also_reported_by)
        table.append(f"| {location(f)} | `{ids[f.fingerprint]}` | {text(f.rule_id or f.category, limit=200)} "
                     f"| {text(f.message)} | {agent} |")
    if len(group) > OPEN_GROUP and severity != "critical":
        lines += ["<details>", f"<summary>Show {_number(len(group))} {severity} findings</summary>", "",
                  *table, "", "</details>", ""]
    else:
        lines += [*table, ""]
    fixes = [f for f in group if f.recommendation and f.recommendation.strip()]
    if fixes:
        lines += ["<details>", f"<summary>Recommendations ({_number(len(fixes))})</summary>", ""]
        lines += [f"- **{location(f)}**: {text(f.recommendation or '')}" for f in fixes]
        lines += ["", "</details>", ""]
    return lines


def _in_change(waived: Sequence[Finding], ids: dict[str, str]) -> list[str]:
    """The findings the change waives itself, with its inline comments: never folded away, since
    the person who reviews the change decides whether those waivers stand."""
    if not waived:
        return []
    lines = [f"### Waived in this change ({_number(len(waived))}): by comments the change adds", "",
             "Each waiver below is part of the change under review: check that its reason holds.", "",
             "| location | id | rule | message | reason | comment |", "|---|---|---|---|---|---|"]
    lines += [f"| {location(f)} | `{ids[f.fingerprint]}` | {text(f.rule_id or f.category, limit=200)} "
              f"| {text(f.message)} | {text(f.inline_waiver.reason if f.inline_waiver else '', limit=500)} "
              f"| {code(f.inline_waiver.comment if f.inline_waiver else '', limit=200)} |" for f in waived]
    return [*lines, ""]


def _waived(waived: Sequence[Finding], ids: dict[str, str]) -> list[str]:
    if not waived:
        return []
    lines = [f"### Waived ({_number(len(waived))}): reported, not counted", "",
             "| location | id | rule | message | why |", "|---|---|---|---|---|"]
    lines += [f"| {location(f)} | `{ids[f.fingerprint]}` | {text(f.rule_id or f.category, limit=200)} "
              f"| {text(f.message)} | {text(f.waived or 'waived', limit=500)} |" for f in waived]
    if len(waived) > OPEN_GROUP:
        return [lines[0], "", "<details>", f"<summary>Show {_number(len(waived))} waived findings</summary>", "",
                *lines[2:], "", "</details>", ""]
    return [*lines, ""]


def _agents(report: ReviewReport) -> list[str]:
    absent = absent_agents(report)
    off = disabled_line(report)
    host = host_line(report)
    said = [f"**{text(host, limit=1000)}**", ""] if host else []
    if not absent:
        return [*said, off, ""] if off else said
    lines = [f"### Agents that did not review ({len(absent)})", "",
             "| agent | status | required | counts in | why |", "|---|---|---|---|---|"]
    for a in absent:
        counted = a.counted + (" (fails open)" if a.fails_open else "")
        lines.append(f"| {text(a.agent, limit=200)} | {STATES.get(a.status, 'did not review everything')} "
                     f"| {'yes' if a.required else 'no'} | {counted} | {text(a.reason, limit=500)} |")
    note = fails_open_note(report)
    return [*said, *lines, "", *([note, ""] if note else []), *([off, ""] if off else [])]


def disabled_line(report: ReviewReport) -> str | None:
    """The agents turned off (``--offline``, ``enabled: false``): named, never counted."""
    line = off_line(report)
    return None if line is None else f"{text(line[0].upper() + line[1:], limit=2000)}."


def _dropped(report: ReviewReport) -> list[str]:
    found = dropped(report)
    if not found:
        return []
    lines = [f"### Findings dropped: outside every reviewer's scope ({len(found)})", "",
             "Not counted; a critical one makes its agent's review incomplete.", ""]
    return [*lines, *(f"- **{d.severity}** {text(dropped_line(agent, d))}" for agent, d in found), ""]


def _gaps(report: ReviewReport) -> list[str]:
    gaps = report.gaps
    if not gaps:
        return []
    items = [_gap(g) for g in gaps[:MAX_LISTED]]
    if len(gaps) > MAX_LISTED:
        items.append(f"- … and {_number(len(gaps) - MAX_LISTED)} more (the JSON report has them all)")
    lines = [f"### Gaps in the configuration ({_number(len(gaps))})", "",
             "What the configuration did not cover or cannot vouch for, and the change that would close it. A gap "
             "with a patch is applied with `review-gate gaps --apply ID` once the run is recorded; the JSON report "
             "has each patch.", ""]
    if len(gaps) > OPEN_GROUP:
        return [*lines, "<details>", f"<summary>Show {_number(len(gaps))} gaps</summary>", "", *items, "",
                "</details>", ""]
    return [*lines, *items, ""]


def _gap(gap: Gap) -> str:
    line = (f"- **{text(gap.kind, limit=100)}** {text(gap.subject, limit=300)}: {text(gap.reason, limit=500)} "
            f"— fix: {text(gap.suggestion, limit=500)}")
    if gap.patch is not None:
        line += f" (patch of {text(gap.patch.file, limit=100)}: `review-gate gaps --apply {gap.id}`)"
    return line


def _unreviewed(report: ReviewReport) -> list[str]:
    files = report.coverage.unreviewed
    if not files:
        return []
    lines = [f"### Unreviewed files ({_number(len(files))})", "",
             "No agent that finished covered these changed files:", ""]
    items = _listed([f"- {text(p, limit=500)}" for p in files[:MAX_LISTED]], len(files))
    if len(files) > OPEN_GROUP:
        return [*lines, "<details>", f"<summary>Show {_number(len(files))} files</summary>", "",
                *items, "", "</details>", ""]
    return [*lines, *items, ""]


def _not_inspected(report: ReviewReport) -> list[str]:
    items = report.coverage.not_inspected
    if not items:
        return []
    lines = [f"### Not inspected ({_number(len(items))})", "",
             "No agent was shown the new content of these files:", ""]
    shown = _listed([f"- {text(u.reason, limit=500)}"
                     + (f" (**counts against the gate**). Fix: {text(u.fix, limit=500)}" if u.counted else "")
                     for u in items[:MAX_LISTED]], len(items))
    hints = dict.fromkeys(u.fix for u in items if not u.counted and u.fix)
    return [*lines, *shown, "", *(f"Note: {text(h, limit=500)}\n" for h in hints)]


def _listed(items: list[str], total: int) -> list[str]:
    """The first MAX_LISTED items of ``total``, and a line for the rest."""
    return items if total <= MAX_LISTED else [*items, f"- … and {_number(total - MAX_LISTED)} more"]


def _cost(usage: Usage) -> str:
    return usage.cost_text().replace("$", "\\$")  # a bare $ starts math in GitHub's Markdown


def _usage(agents: Sequence[AgentResult]) -> list[str]:
    used = [a for a in agents if a.tokens_in or a.tokens_out or a.cost_usd]
    if not used:
        return []
    total = sum((a.usage for a in agents), Usage())
    lines = ["### Tokens and cost", "",
             f"{_number(total.tokens_in)} tokens in, {_number(total.tokens_out)} tokens out, cost "
             f"{_cost(total)}.", "",
             "| agent | tokens in | tokens out | cost |", "|---|---:|---:|---:|"]
    lines += [f"| {text(a.id, limit=200)} | {_number(a.tokens_in)} | {_number(a.tokens_out)} "
              f"| {_cost(a.usage)} |" for a in used]
    return [*lines, ""]


def _footer(report: ReviewReport) -> list[str]:
    return ["---", "", f"<sub>review-gate {text(report.tool_version, limit=50)} · run "
            f"{text(report.run_id, limit=100)} · {text(report.source, limit=300)}</sub>"]
