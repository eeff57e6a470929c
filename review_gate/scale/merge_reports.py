"""``review-gate merge``: the reports of the N shards of one run, as one report and one decision.

Shards of one run planned the same change with the same configuration: their reports carry the
same classification, manifest and gaps, and each its share of the files. Merging takes the
union of their findings (deduplicated as aggregate does), merges each agent's results (its
files, tokens and cost summed; a failure in any shard is the agent's failure) and decides the
gate again over the whole, with the configuration the shards used. Reports of another change
or configuration, a shard given twice or one missing are refused (exit 2): a merge of part of
a run must never pass for the whole.

Coverage is checked, not taken from the reports' word: the shares are computed again from the
assignment inputs every report records (each file of the change and its size) and N, and each
shard must have reviewed exactly its own share, every agent of the run's manifest with exactly
its files there (``coverage``). A shard relabelled as another, two shards that overlap, or a
file no shard covers is refused, and nothing is written.

What merge cannot know: a report is unauthenticated input. Whoever can write the files merged
can write any findings (or none) and any files "reviewed" in a consistent way; merge checks
that the reports agree with each other and with the assignment, not that the reviews happened.
Merge only the artifacts of one workflow run, made by jobs the change under review cannot alter
(docs/sweeps-and-batches.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from review_gate.change.input_files import MIB, read_path
from review_gate.errors import InputError
from review_gate.models import (
    SEVERITIES,
    SEVERITY_RANK,
    AgentResult,
    AgentStatus,
    Coverage,
    DroppedFinding,
    Finding,
    Metrics,
    ReviewConfig,
    ReviewReport,
    Usage,
)
from review_gate.models.report import absence_counts, absences, bounded_notes
from review_gate.pipeline.aggregate import decide, dedupe, exit_code, waived_inline
from review_gate.state.freshness import config_sha
from review_gate.text.escape import sanitize

MAX_REPORT_BYTES = 256 * MIB  # a shard's JSON report
_FIX = "merge the JSON reports (--format json) of one run's shards, `review-gate run --shard K/N`, all N of them"
_USABLE = ("completed", "cached")
MAX_DROPPED = 20  # AgentResult.out_of_scope_findings holds at most this many
_STATUS_ORDER: tuple[AgentStatus, ...] = ("failed", "timed_out", "skipped", "completed", "cached")


def read(path: Path) -> ReviewReport:
    data = read_path(path, limit=MAX_REPORT_BYTES, name=f"the report {sanitize(str(path))}", fix=_FIX)
    try:
        return ReviewReport.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(str(p) for p in first["loc"])
        raise InputError(f"{path} is not a review-gate JSON report ({where}: {first['msg']})", fix=_FIX) from exc


def check(reports: Sequence[tuple[str, ReviewReport]], config: ReviewConfig) -> None:
    """Refuse anything but the N shards of one run, each once, made with ``config``."""
    if not reports:
        raise InputError("no report to merge", fix=_FIX)
    first_name, first = reports[0]
    for name, report in reports:
        if report.shard is None:
            raise InputError(f"{name} is not the report of a shard (it has no shard field)", fix=_FIX)
    assert first.shard is not None
    for name, report in reports[1:]:
        assert report.shard is not None
        if report.shard.change_sha != first.shard.change_sha:
            raise InputError(f"{name} reviews another change than {first_name}", fix=_FIX)
        if report.shard.config_sha != first.shard.config_sha:
            raise InputError(f"{name} was made with another configuration than {first_name}", fix=_FIX)
        if report.shard.count != first.shard.count:
            raise InputError(f"{name} is a shard of {report.shard.count}, {first_name} of {first.shard.count}",
                             fix=_FIX)
        if report.coverage.filter_mode != first.coverage.filter_mode:
            raise InputError(f"{name} used filter mode {report.coverage.filter_mode}, {first_name} "
                             f"{first.coverage.filter_mode}", fix="run every shard with the same --filter-mode")
    if first.shard.config_sha != config_sha(config):
        raise InputError(f"the shards were made with another configuration than the one merge loaded "
                         f"({config.directory or 'the built-in one'})",
                         fix="give merge the --config DIR the shards ran with")
    seen: dict[int, str] = {}
    for name, report in reports:
        assert report.shard is not None
        if report.shard.index in seen:
            raise InputError(f"{name} and {seen[report.shard.index]} are both shard "
                             f"{report.shard.index}/{report.shard.count}", fix=_FIX)
        seen[report.shard.index] = name
    lacking = [str(k) for k in range(1, first.shard.count + 1) if k not in seen]
    if lacking:
        raise InputError(f"shard{'s' if len(lacking) > 1 else ''} {', '.join(lacking)} of {first.shard.count} "
                         "missing: the merged report would not cover the whole change", fix=_FIX)
    coverage(reports)


def coverage(reports: Sequence[tuple[str, ReviewReport]]) -> None:
    """Each shard reviewed exactly its own share, as computed again from the recorded assignment
    inputs and N; the run's manifest is the same in every report, and each of its agents has, in
    each shard, exactly its files of that share (so no file is left out, and none is twice)."""
    from review_gate.pipeline.shards import assign_sizes

    first_name, first = reports[0]
    assert first.shard is not None
    sizes = first.shard.sizes
    changed = {f.path for f in first.classification.files}
    if not sizes and changed:
        raise InputError(f"{first_name} does not record how its shard was assigned (made by an older review-gate)",
                         fix="run every shard again with this review-gate, then merge their reports")
    if not changed <= set(sizes):
        raise InputError(f"{first_name} records an assignment that leaves out changed files "
                         f"({', '.join(sorted(changed - set(sizes))[:3])})", fix=_FIX)
    shares = assign_sizes(sizes, first.shard.count)
    for name, report in reports:
        assert report.shard is not None
        if report.shard.sizes != sizes:
            raise InputError(f"{name} records another assignment of the change than {first_name}", fix=_FIX)
        if report.manifest != first.manifest:
            raise InputError(f"{name} was planned with another manifest than {first_name}", fix=_FIX)
        own = shares[report.shard.index - 1]
        if report.shard.files != own:
            raise InputError(f"{name} says it is shard {report.shard.index}/{report.shard.count}, but the files it "
                             f"reviewed are not that shard's share of the change ({_listed(report.shard.files, own)})",
                             fix=_FIX)
        mine = set(own)
        results = {a.id: a for a in report.agents}
        for entry in first.manifest:
            expected = sorted(set(entry.files) & mine)
            if not expected:
                continue
            result = results.get(entry.agent)
            if result is None or sorted(result.files) != expected:
                got = sorted(result.files) if result is not None else []
                raise InputError(f"{name} (shard {report.shard.index}/{report.shard.count}) does not show agent "
                                 f"{entry.agent} reviewing exactly its files of that share ({_listed(got, expected)})",
                                 fix=_FIX)
            if set(result.unreviewed) - mine:
                raise InputError(f"{name} lists files of another shard as unreviewed by {entry.agent}", fix=_FIX)


def _listed(got: Sequence[str], expected: Sequence[str]) -> str:
    """What differs between the files a report names and the files it should, briefly."""
    extra, missing = sorted(set(got) - set(expected)), sorted(set(expected) - set(got))
    parts = []
    if extra:
        parts.append("not its own: " + ", ".join(sanitize(p) for p in extra[:3]) + (" ..." if len(extra) > 3 else ""))
    if missing:
        parts.append("left out: " + ", ".join(sanitize(p) for p in missing[:3]) + (" ..." if len(missing) > 3
                                                                                   else ""))
    return "; ".join(parts) or "another order"


def merge(reports: Sequence[tuple[str, ReviewReport]], config: ReviewConfig, *, run_id: str, tool_version: str,
          fail_on: str | None = None) -> ReviewReport:
    """One report over the whole change, decided again (``reports``: (name, report) of each shard)."""
    check(reports, config)
    parts = [report for _, report in sorted(reports, key=lambda item: item[1].shard.index if item[1].shard else 0)]
    first = parts[0]
    agents = _agents(parts, [e.agent for e in first.manifest])
    waived = _unique(f for r in parts for f in r.waived)
    gone = {f.fingerprint for f in waived}
    findings = sorted(dedupe([f for f in _unique(f for r in parts for f in r.findings) if f.fingerprint not in gone]),
                      key=lambda f: (SEVERITY_RANK[f.severity], f.file or "", f.line or 0, f.rule_id or "", f.message))
    changed = [f.path for f in first.classification.files]
    left_out = {p for r in parts for p in r.coverage.unreviewed}
    unreviewed = [p for p in changed if p in left_out]
    unread = list({u.path: u for r in parts for u in r.coverage.not_inspected}.values())
    counts = {s: sum(1 for f in findings if f.severity == s) for s in SEVERITIES}
    missing = sum(1 for a in agents if a.missing_input) + sum(1 for u in unread if u.counted)
    metrics = Metrics(**counts, total=len(findings), missing_inputs=missing, unreviewed_files=len(unreviewed),
                      **absence_counts(agents), waived_inline=waived_inline(waived),
                      risk_score=first.classification.risk_score)
    decision = decide(metrics, config.settings.gate.conditions)
    covered = any(a.status in _USABLE and a.files for a in agents)
    if changed and not covered and decision in ("pass", "pass_with_warnings"):
        decision = "incomplete"
    order = {rule.id: n for n, rule in enumerate(config.rules.rules)}
    rules = sorted({rule.id: rule for r in parts for rule in r.rules}.values(), key=lambda r: order.get(r.id, 0))
    return first.model_copy(update={
        "tool_version": tool_version, "run_id": run_id, "decision": decision,
        "exit_code": exit_code(decision, fail_on or config.settings.gate.fail_on), "metrics": metrics,
        "findings": findings, "waived": waived, "rules": rules, "agents": agents, "did_not_review": absences(agents),
        "coverage": Coverage(files_changed=len(changed),
                             files_reviewed=len(changed) - len({*unreviewed, *(u.path for u in unread)}),
                             unreviewed=unreviewed, not_inspected=unread,
                             findings_filtered=sum(r.coverage.findings_filtered for r in parts),
                             filter_mode=first.coverage.filter_mode, nothing_to_review=not changed,
                             files_left_out=first.coverage.files_left_out),
        "usage": sum((a.usage for a in agents), Usage()).rounded(), "shard": None})


def _unique(findings: object) -> list[Finding]:
    out: dict[str, Finding] = {}
    for finding in findings:  # type: ignore[attr-defined]
        out.setdefault(finding.fingerprint, finding)
    return list(out.values())


def _agents(parts: list[ReviewReport], order: list[str]) -> list[AgentResult]:
    """Each agent's results over every shard it ran in, in manifest order."""
    by_id: dict[str, list[AgentResult]] = {}
    for report in parts:
        for result in report.agents:
            by_id.setdefault(result.id, []).append(result)
    ids = [a for a in order if a in by_id] + [a for a in by_id if a not in order]
    return [_agent(by_id[a]) for a in ids]


def _agent(results: list[AgentResult]) -> AgentResult:
    first = results[0]
    status = min((r.status for r in results), key=_STATUS_ORDER.index)
    usage = sum((r.usage for r in results), Usage()).rounded()
    errors = list(dict.fromkeys(r.error for r in results if r.error))
    return first.model_copy(update={
        "status": status, "attempts": max(r.attempts for r in results),
        "duration_s": max(r.duration_s for r in results),
        "files": sorted({p for r in results for p in r.files}),
        "error": "; ".join(errors) if errors else None, **usage.model_dump(),
        "unreviewed": sorted({p for r in results for p in r.unreviewed}),
        "out_of_scope": sum(r.out_of_scope for r in results),
        "out_of_scope_findings": _dropped(results),
        "dropped_findings": sum(r.dropped_findings for r in results),
        "notes": bounded_notes([n for r in results for n in r.notes]),
        "tool_calls": [c for r in results for c in r.tool_calls]})


def _dropped(results: list[AgentResult]) -> list[DroppedFinding]:
    """The shards' dropped findings, the critical ones first, within the model's bound."""
    found = [d for r in results for d in r.out_of_scope_findings]
    return sorted(found, key=lambda d: SEVERITY_RANK[d.severity])[:MAX_DROPPED]


__all__ = ["check", "coverage", "merge", "read"]
