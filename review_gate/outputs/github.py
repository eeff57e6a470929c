"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

    ::error file=app/http.py,line=12,endLine=14,title=major · sec-tls-verify-01 · security-patterns::TLS ...

critical and major findings are ``error`` annotations, warnings ``warning``, info ``notice``;
the most severe come first. Gaps in the configuration follow as ``notice`` annotations titled
``review-gate gap ID · KIND``, in the notice places the findings leave. A finding with no file
is an annotation with no file. Data is escaped as the runner expects: ``%``, CR and LF in the
message, and also ``:`` and ``,`` in properties, so no finding or gap can end its command early
or print a command of its own.

GitHub shows at most 10 error, 10 warning and 10 notice annotations per step (and 50 per job):
past that it drops them silently. So at most 10 of each kind are printed, and when some are left
out a last ``::notice::`` (which itself takes one of the 10 notice places) says how many. The
Markdown report that ``run`` appends to ``$GITHUB_STEP_SUMMARY`` lists every finding and gap.

Plain lines follow: each agent that did not review all of the change (it failed, timed out,
did not run, left files unreviewed or dropped a critical finding) and why, each finding an
agent dropped as outside every reviewer's scope, then the summary line, last. Untrusted text in
them cannot start a command (see ``plain``).
"""

from __future__ import annotations

from review_gate.models import SEVERITIES, SEVERITY_RANK, Finding, Gap, ReviewReport
from review_gate.outputs import markdown
from review_gate.outputs.reviewers import absent_agents, absent_line, dropped, dropped_line, host_line, off_line
from review_gate.outputs.summary import summary_line
from review_gate.text.escape import sanitize

LEVELS = {"critical": "error", "major": "error", "warning": "warning", "info": "notice"}
PER_KIND = 10  # annotations of each kind GitHub shows for one step
SUMMARY_LIMIT = 1024 * 1024  # bytes GitHub accepts in one step's summary


def data(value: str) -> str:
    """A workflow command's message: % CR LF percent-encoded, other control characters (and lone
    surrogates, which cannot be written as UTF-8) made visible."""
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return sanitize(value)


def prop(value: str) -> str:
    """A workflow command's property value: as ``data``, and ``:`` ``,`` encoded too."""
    return data(value).replace(":", "%3A").replace(",", "%2C")


def plain(value: str) -> str:
    """Untrusted text on a line that must stay plain: one line, and no ``::`` or ``##[`` command in it."""
    return sanitize(value).replace("::", ":\u200b:").replace("##[", "#\u200b#[")


def annotation(finding: Finding) -> str:
    props = []
    if finding.file is not None:
        props.append(f"file={prop(finding.file)}")
        if finding.line:
            props.append(f"line={finding.line}")
            if finding.end_line and finding.end_line > finding.line:
                props.append(f"endLine={finding.end_line}")
    props.append(f"title={prop(f'{finding.severity} · {finding.rule_id or finding.category} · {finding.agent}')}")
    message = finding.message
    if finding.recommendation:
        message += f"\nFix: {finding.recommendation}"
    if finding.also_reported_by:
        message += f"\nAlso reported by: {', '.join(finding.also_reported_by)}"
    return f"::{LEVELS[finding.severity]} {','.join(props)}::{data(message)}"


def waived_annotation(finding: Finding) -> str:
    """A finding the change waives with its own inline comment: a notice on its line, so the
    reviewer of the pull request sees the waiver where it is."""
    props = [f"file={prop(finding.file or '')}", *([f"line={finding.line}"] if finding.line else [])]
    props.append(f"title={prop(f'waived in this change · {finding.rule_id or finding.category}')}")
    waiver = finding.inline_waiver
    why = waiver.said() if waiver is not None else (finding.waived or "")
    return f"::notice {','.join(props)}::{data(f'{finding.message}{chr(10)}Waived in this change: {why}')}"


def accepted_annotation(finding: Finding) -> str:
    """A finding a person accepted or a baseline lists: a notice on its line with who and why, so
    the reviewer of the pull request sees what is waived there and by whom."""
    props = [f"file={prop(finding.file or '')}", *([f"line={finding.line}"] if finding.line else [])]
    props.append(f"title={prop(f'waived · {finding.rule_id or finding.category}')}")
    why = finding.waived or "waived"
    return f"::notice {','.join(props)}::{data(f'{finding.message}{chr(10)}Waived: {why}')}"


def gap_annotation(gap: Gap) -> str:
    """A gap as a notice: the configuration's business, with no line of code to point at."""
    message = f"{gap.subject}: {gap.reason}\nFix: {gap.suggestion}"
    if gap.patch is not None:
        message += f"\nPatch of {gap.patch.file}: review-gate gaps --apply {gap.id}"
    return f"::notice title={prop(f'review-gate gap {gap.id} · {gap.kind}')}::{data(message)}"


def render(report: ReviewReport) -> str:
    ordered = sorted(report.findings, key=lambda f: SEVERITY_RANK[f.severity])
    # Findings first, most severe first; then the gaps, as notices, in whatever notice places remain.
    items: list[tuple[str, str, str]] = [(LEVELS[f.severity], f.severity, annotation(f)) for f in ordered]
    items += [("notice", "waived", waived_annotation(f)) for f in report.waived_in_change]
    items += [("notice", "gap", gap_annotation(g)) for g in report.gaps]
    # last: a long baseline must not crowd the change's own waivers and the gaps out of the notices
    items += [("notice", "waived", accepted_annotation(f)) for f in report.waived_by_people if f.file]
    wanted = {kind: sum(1 for k, _, _ in items if k == kind) for kind in ("error", "warning", "notice")}
    overflow = any(n > PER_KIND for n in wanted.values())
    # The notice about what was left out is itself a notice: keep a place for it.
    caps = {"error": PER_KIND, "warning": PER_KIND, "notice": PER_KIND - 1 if overflow else PER_KIND}
    printed = {kind: 0 for kind in caps}
    left_out = {label: 0 for label in (*SEVERITIES, "waived", "gap")}
    lines = []
    for kind, label, line in items:
        if printed[kind] < caps[kind]:
            printed[kind] += 1
            lines.append(line)
        else:
            left_out[label] += 1
    missing = sum(left_out.values())
    if missing:
        parts = ", ".join(f"{n} {label}{'s' if label == 'gap' and n > 1 else ''}"
                          for label, n in left_out.items() if n)
        gaps_out = left_out["gap"]
        noun = "gaps" if gaps_out == missing else "findings and gaps" if gaps_out else "findings"
        note = (f"{missing} more {noun} are not annotated ({parts}): GitHub shows at most {PER_KIND} error, "
                f"{PER_KIND} warning and {PER_KIND} notice annotations per step. The job summary and the JSON "
                "report list them all.")
        lines.append(f"::notice title=review-gate::{data(note)}")
    if (host := host_line(report)) is not None:
        lines.append(f"review-gate: {plain(host)}")
    lines += [f"review-gate: agent {plain(absent_line(absent))}" for absent in absent_agents(report)]
    if off := off_line(report):
        lines.append(f"review-gate: {plain(off)}")
    lines += [f"review-gate: {plain(dropped_line(agent, d))}" for agent, d in dropped(report)]
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def step_summary(report: ReviewReport, budget: int = SUMMARY_LIMIT) -> str:
    """The Markdown report for ``$GITHUB_STEP_SUMMARY``, at most ``budget`` UTF-8 bytes."""
    return markdown.render(report, limit=budget, size=lambda text: len(text.encode("utf-8")))
