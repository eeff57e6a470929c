"""What every format says of the reviewers that did not review all of a change, and of the
findings an agent dropped for being about a file outside every reviewer's scope: the words
are written once, here; each format escapes them at its own sink (they quote agents' errors,
paths and messages, which are untrusted).

    >>> from review_gate.models import Absent
    >>> absent_line(Absent(agent="finance-sme", status="skipped", reason="ANTHROPIC_API_KEY is not set",
    ...                    counted="agents_skipped", required=False))
    'finance-sme (optional) did not run: ANTHROPIC_API_KEY is not set [agents_skipped]'
"""

from __future__ import annotations

from collections.abc import Sequence

from review_gate.models import SEVERITY_RANK, Absent, DroppedFinding, ReviewReport
from review_gate.models.report import absences

STATES = {"skipped": "did not run", "failed": "failed", "timed_out": "timed out"}


def absent_agents(report: ReviewReport) -> list[Absent]:
    """The report's agents that did not review all they were given (from its agents, so that a
    report made by hand or read back says the same)."""
    return absences(report.agents)


def absent_line(absent: Absent, names: Sequence[str] = ()) -> str:
    """One agent that did not review all it was given (or ``names``, several alike), why, and
    the metric it counts in."""
    weight = "required" if absent.required else "optional"
    state = STATES.get(absent.status, "did not review everything")
    counted = f"{absent.counted}; fails open: on_failure is fail_open" if absent.fails_open else absent.counted
    return f"{', '.join(names) or absent.agent} ({weight}) {state}: {absent.reason} [{counted}]"


def absent_lines(absents: Sequence[Absent]) -> list[str]:
    """``absent_line`` of each, agents alike in all but their name on one line (four reviewers
    without the key they need are one line, not four)."""
    groups: dict[tuple[object, ...], list[Absent]] = {}
    for absent in absents:
        groups.setdefault((absent.status, absent.reason, absent.counted, absent.required, absent.fails_open),
                          []).append(absent)
    return [absent_line(alike[0], [a.agent for a in alike]) for alike in groups.values()]


OFF_BY = {"offline": "--offline: they need the network", "config": "disabled in the configuration, enabled: false"}


def off_line(report: ReviewReport) -> str | None:
    """The agents turned off by the person (``--offline``) or the configuration (``enabled:
    false``), grouped by which: a choice, never counted as a reviewer that did not review.

    >>> from review_gate.models import AgentResult
    >>> def off(i: str, why: str) -> AgentResult:
    ...     return AgentResult(id=i, kind="llm", status="skipped", attempts=0, duration_s=0, files=[], error=why,
    ...                        disabled=True)
    >>> off_line(ReviewReport.model_construct(agents=[off("a", "off: needs the network; --offline"),
    ...                                               off("b", "disabled in review-agents.json")]))
    'turned off (not counted): a (--offline: they need the network); b (disabled in the configuration, enabled: false)'
    """
    groups: dict[str, list[str]] = {}
    for agent in report.agents:
        if agent.disabled:
            groups.setdefault("offline" if "--offline" in (agent.error or "") else "config", []).append(agent.id)
    if not groups:
        return None
    return "turned off (not counted): " + "; ".join(f"{', '.join(ids)} ({OFF_BY[by]})" for by, ids in groups.items())


def dropped(report: ReviewReport) -> list[tuple[str, DroppedFinding]]:
    """(agent, finding) of every finding dropped as outside every reviewer's scope, critical first."""
    found = [(agent.id, d) for agent in report.agents for d in agent.out_of_scope_findings]
    return sorted(found, key=lambda item: SEVERITY_RANK[item[1].severity])


def dropped_line(agent: str, finding: DroppedFinding) -> str:
    return (f"{agent} dropped a {finding.severity} finding about {finding.file}, outside the scope of every "
            f"reviewer of its request: {finding.message}")


def hosted(report: ReviewReport) -> list[str]:
    """The agents the coding agent's host answered for (``reviewed_by``), in report order."""
    return [a.id for a in report.agents if a.reviewed_by is not None]


def host_line(report: ReviewReport) -> str | None:
    """Said in every format when the host answered for some reviewers: who reviewed, and what
    that review is worth (untrusted: agent ids)."""
    names = hosted(report)
    if not names:
        return None
    return (f"reviewed by: host sub-agent ({', '.join(names)}): a self-review by the reviewed coding agent's own "
            "host, not by the reviewers' providers; its findings add to the others' and never lower them")


def fails_open_note(report: ReviewReport) -> str | None:
    """Said when the gate passes over reviewers that failed: the configuration chose it."""
    if report.exit_code != 0:
        return None
    found = absent_agents(report)
    if any(a.fails_open for a in found):
        return "Reviewers that fail open (on_failure: fail_open in review-agents.json) failed: the gate lets it pass."
    if any(a.counted == "agents_failed" for a in found):
        return ("Reviewers that were run failed, and the gate conditions of review-gate.json let it pass "
                "(the built-in gate makes agents_failed > 0 incomplete).")
    return None
