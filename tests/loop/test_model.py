"""The pure parts of the loop: transitions, settings, seed 002's update_review, quality checks,
templates."""

from __future__ import annotations

import itertools

import pytest

from review_gate.errors import MetaError, UsageError
from review_gate.judging.review_meta import parse_meta
from review_gate.loop import templates
from review_gate.loop.log import checks
from review_gate.loop.model import after_approval, phases_from
from review_gate.loop.settings import effective, parse_approver
from review_gate.loop.verdict import update_review
from review_gate.models.loop import LoopSettings

REVIEW = ("@@@REVIEW_META\nverdict: FAIL\nissues_total: 2\nissues_critical: 1\nmissing_inputs: 0\n"
          "reviewer: review-gate\n@@@\n## Review\n\nTwo findings.\n")


def test_transitions_follow_seed_002() -> None:
    chain = [("plan", "prompt"), ("plan", "response"), ("generate", "prompt"), ("generate", "response"),
             ("review", "prompt"), ("review", "response")]
    for here, there in itertools.pairwise(chain):
        assert after_approval(*here) == there  # type: ignore[arg-type]
    assert after_approval("review", "response", "GO") == ("complete", None)
    assert after_approval("review", "response", "NO_GO") == ("revise", "prompt")
    assert after_approval("revise", "prompt") == ("revise", "response")
    assert after_approval("revise", "response") == ("review", "prompt")
    with pytest.raises(ValueError, match="verdict"):
        after_approval("review", "response")
    assert phases_from("plan") == ("plan", "generate", "review", "revise")
    assert phases_from("generate") == ("generate", "review", "revise")
    assert phases_from("review") == ("review", "revise")


# seed 002's table: feedback, verdict, overwrite -> the use case
@pytest.mark.parametrize(("feedback", "verdict", "overwrite", "expected_verdict", "body"), [
    (None, "PASS", False, "PASS", "## Review\n\nTwo findings.\n"),
    (None, "FAIL", False, "FAIL", "## Review\n\nTwo findings.\n"),
    ("Fine by me.", None, False, "FAIL", "## Review\n\nTwo findings.\n\n## Feedback\n\nFine by me.\n"),
    ("Fine by me.", "PASS", False, "PASS", "## Review\n\nTwo findings.\n\n## Feedback\n\nFine by me.\n"),
    ("Not yet.", "FAIL", False, "FAIL", "## Review\n\nTwo findings.\n\n## Feedback\n\nNot yet.\n"),
    ("Only this.", "PASS", True, "PASS", "Only this.\n"),
    ("Only this.", "FAIL", True, "FAIL", "Only this.\n"),
])
def test_update_review_covers_the_seven_cases(feedback: str | None, verdict: str | None, overwrite: bool,
                                              expected_verdict: str, body: str) -> None:
    updated = update_review(REVIEW, feedback, verdict, overwrite)  # type: ignore[arg-type]
    meta = parse_meta(updated)
    assert meta.verdict == expected_verdict and meta.body == body
    assert (meta.issues_total, meta.issues_critical, meta.missing_inputs) == (2, 1, 0)  # counts kept
    assert "reviewer: review-gate" in updated  # other fields kept


def test_update_review_refuses_what_it_cannot_do() -> None:
    with pytest.raises(UsageError, match="--feedback"):
        update_review(REVIEW, None, "PASS", overwrite=True)
    with pytest.raises(MetaError, match="no @@@REVIEW_META block"):
        update_review("just text\n", verdict="PASS")


def test_update_review_keeps_a_review_with_no_body() -> None:
    bare = "@@@REVIEW_META\nverdict: PASS\nissues_total: 0\nissues_critical: 0\nmissing_inputs: 0\n@@@"
    assert parse_meta(update_review(bare, "note", None)).body == "## Feedback\n\nnote\n"


def test_flags_override_the_config() -> None:
    base = LoopSettings.model_validate({"mode": "interactive", "phases": {
        "review": {"approver": {"prompt": "skip", "response": "manual"}}}})
    chosen = effective(base, coder="dev", max_iterations=5, mode="automated",
                       approvers=["review.response=checker", "plan=manual"])
    s = chosen.settings
    assert (s.mode, s.max_iterations) == ("automated", 5)
    assert [s.phases.ai(p) for p in ("plan", "generate", "review", "revise")] == ["dev", "dev", "review-gate", "dev"]
    assert s.phases.review.approver_for("prompt") == "skip"
    assert s.phases.review.approver_for("response") == "checker"
    assert s.phases.plan.approver_for("prompt") == s.phases.plan.approver_for("response") == "manual"
    assert chosen.said_by("review.approver.response") == "--approver review.response=checker"
    assert chosen.said_by("generate.approver.prompt") == "review-gate.json /loop/phases/generate/approver/prompt"


def test_settings_defaults_and_review_ai() -> None:
    s = LoopSettings()
    assert (s.mode, s.max_iterations) == ("interactive", 3)
    assert s.phases.ai("generate") == "manual" and s.phases.ai("review") == "review-gate"
    assert s.phases.generate.approver_for("response") == "skip" and s.phases.generate.max_retries == 3
    with pytest.raises(ValueError, match="the review phase's AI is the gate itself"):
        LoopSettings.model_validate({"phases": {"review": {"ai": "some-llm"}}})
    with pytest.raises(UsageError, match="PHASE"):
        parse_approver("review.verdict=skip")
    with pytest.raises(UsageError):
        parse_approver("review")


def test_quality_checks_come_from_finding_categories() -> None:
    mapping = {"security_review_passed": ["secrets"], "test_coverage_adequate": ["testing"],
               "acceptance_criteria_met": ["*"]}
    assert checks([], mapping) == dict.fromkeys(mapping, True)
    minor = [{"severity": "warning", "category": "secrets"}]
    assert checks(minor, mapping) == dict.fromkeys(mapping, True)  # below major: no check fails
    severe = [{"severity": "critical", "category": "secrets"}]
    assert checks(severe, mapping) == {"security_review_passed": False, "test_coverage_adequate": True,
                                       "acceptance_criteria_met": False}


def test_templates_render_and_every_built_in_one_checks() -> None:
    templates.check(None)
    text = templates.render("# {{task_id}}\n\n{{standards}}\n\n\n{{ feedback }}\n\nEnd.\n",
                            {"task_id": "t", "standards": "", "feedback": "## Feedback\n\nmore"})
    assert text == "# t\n\n## Feedback\n\nmore\n\nEnd.\n"
