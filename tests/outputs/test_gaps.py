"""Gaps in the configuration appear in every output format, each in that format's idiom."""

from __future__ import annotations

import json
from typing import Any

import pytest

from review_gate.models import Gap, ReviewReport
from review_gate.outputs import FORMATS, renderer
from review_gate.outputs.markdown import text as md
from tests.outputs.conftest import GAPS, make_report
from tests.outputs.test_github import commands


def gap_ids_in(fmt: str, out: str) -> list[str]:
    """The ids of the gaps a rendered report shows, read back in the format's own terms."""
    by_subject = {(g.kind, g.subject): g.id for g in GAPS}
    if fmt == "json":
        return [Gap.model_validate(g).id for g in json.loads(out)["gaps"]]
    if fmt == "sarif":
        [invocation] = json.loads(out)["runs"][0]["invocations"]
        return [n["properties"]["gapId"] for n in invocation.get("toolConfigurationNotifications", [])]
    if fmt == "gitlab":
        return [i["fingerprint"].removeprefix("review-gate-gap-") for i in json.loads(out)
                if i["check_name"].startswith("review-gate/gap/")]
    if fmt == "rdjsonl":
        items = [json.loads(line) for line in out.splitlines()]
        return [by_subject[(i["code"]["value"].removeprefix("review-gate/gap/"), i["message"].split(": ")[1])]
                for i in items if i["code"]["value"].startswith("review-gate/gap/")]
    if fmt == "github":
        return [props["title"].split()[2] for kind, props, _ in commands(out)
                if props.get("title", "").startswith("review-gate gap ")]
    if fmt in ("markdown", "meta"):
        return [g.id for g in GAPS if f"- **{md(g.kind)}** {md(g.subject)}: " in out]
    if fmt == "agent":
        return [g.id for g in GAPS if f"- gap {g.kind}: {g.subject} — " in out]
    assert fmt == "text"
    return [line.split()[1] for line in out.splitlines() if line.startswith("gap ")]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_shows_every_gap(fmt: str, report: ReviewReport) -> None:
    assert gap_ids_in(fmt, renderer(fmt)(report)) == [g.id for g in GAPS]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_report_without_gaps_shows_none(fmt: str) -> None:
    assert gap_ids_in(fmt, renderer(fmt)(make_report(gaps=[]))) == []


def test_sarif_gaps_are_configuration_notifications_not_results(report: ReviewReport) -> None:
    run: dict[str, Any] = json.loads(renderer("sarif")(report))["runs"][0]
    assert not [r for r in run["results"] if r["ruleId"].startswith("review-gate/gap/")]
    descriptors = run["tool"]["driver"]["notifications"]
    notes = run["invocations"][0]["toolConfigurationNotifications"]
    assert [d["id"] for d in descriptors] == [f"review-gate/gap/{g.kind}" for g in GAPS]
    for note, gap in zip(notes, GAPS, strict=True):
        assert note["level"] == "note"
        assert descriptors[note["descriptor"]["index"]]["id"] == note["descriptor"]["id"]
        assert note["properties"]["subject"] == gap.subject
    assert notes[0]["properties"]["patch"]["operations"][0]["path"] == "/domains/-"
    assert notes[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "vendor/big.min.js"


def test_github_gaps_are_notices_after_the_findings_within_the_cap() -> None:
    many = [Gap(kind="unclassified_file", subject=f"**/*.x{n}", reason=f"{n}", suggestion="add a domain")
            for n in range(12)]
    found = commands(renderer("github")(make_report(gaps=many)))
    gaps = [p["title"] for kind, p, _ in found if p.get("title", "").startswith("review-gate gap")]
    assert len(gaps) == 9 - 2  # ten notices: two info findings first, the note about the rest last
    kind, _, note = found[-1]
    assert kind == "notice" and note.startswith("5 more gaps are not annotated (5 gaps)")


def test_gitlab_gap_issues_keep_their_fingerprint_from_run_to_run(report: ReviewReport) -> None:
    issues = [i for i in json.loads(renderer("gitlab")(report)) if i["check_name"].startswith("review-gate/gap/")]
    assert [i["fingerprint"] for i in issues] == [f"review-gate-gap-{g.id}" for g in GAPS]
    assert {i["severity"] for i in issues} == {"info"}
    assert [i["location"]["path"] for i in issues] == [".", ".", "vendor/big.min.js"]
