"""Every stage checks what it receives and returns against its model (issue 22, checked
boundaries): a model built with model_construct or changed with model_copy(update=...) is
validated at the next stage, and an invalid one is refused with a clear error, never a crash
further on. The models a parse builds with model_construct are checked as normalize returns them."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from review_gate.config import load_config
from review_gate.errors import UsageError
from review_gate.models import AgentManifest, FileChange, ManifestEntry, PRClassification, PRFacts
from review_gate.pipeline import boundary
from review_gate.pipeline.classify import classify
from review_gate.pipeline.compose import compose
from review_gate.pipeline.normalize import DiffRequest, normalize
from review_gate.pipeline.runner import plan

BOGUS = FileChange.model_construct(path=123, old_path=None, status="bogus", added=-5, removed=0)


def test_a_bogus_file_change_is_refused_by_classify_not_crashed_on() -> None:
    facts = PRFacts(source="api", files=[BOGUS])  # pydantic does not look inside an instance
    with pytest.raises(UsageError) as caught:
        classify(facts, load_config(None).domains.domains)
    message = str(caught.value)
    assert "stage classify: PRFacts is not valid: files.0.path: Input should be a valid string (got 123)" in message
    assert "(and 2 more)" in message  # status and added too


def test_the_runner_refuses_it_too() -> None:
    config = load_config(None)
    with pytest.raises(UsageError, match="PRFacts is not valid"):
        anyio.run(lambda: plan(PRFacts(source="api", files=[BOGUS]), config))


def test_a_field_changed_by_model_copy_is_checked() -> None:
    good = FileChange(path="a.py", old_path=None, status="added", added=1, removed=0)
    facts = PRFacts(source="api", files=[good.model_copy(update={"status": "bogus"})])
    with pytest.raises(UsageError, match=r"files\.0\.status"):
        classify(facts, [])


def test_an_invalid_classification_is_refused_by_compose() -> None:
    classification = PRClassification.model_construct(files=[], domains=[], unclassified=[], risk_score=900,
                                                      risk_level="apocalyptic", pr_type="feature")
    with pytest.raises(UsageError, match="stage compose: PRClassification is not valid: risk_score"):
        compose(classification, [])


def test_an_invalid_manifest_entry_is_refused() -> None:
    entry = ManifestEntry.model_construct(agent=7, files="a.py", policies=[], priority=0)
    with pytest.raises(UsageError, match=r"AgentManifest is not valid: entries\.0\.agent"):
        boundary.checked("dispatch", AgentManifest(entries=[entry]))


def test_what_normalize_builds_without_checks_is_checked_on_the_way_out() -> None:
    diff = b"--- a/x.py\n+++ b/x.py\n@@ -1 +1,2 @@\n a\n+b\n"
    facts = anyio.run(normalize, DiffRequest(mode="stdin", stdin_data=diff))
    assert boundary._seen[id(facts)]() is facts  # checked as it left the stage
    assert all(boundary._seen[id(f)]() is f for f in facts.files)


def test_valid_models_pass_as_the_same_objects() -> None:
    facts = PRFacts(source="api", files=[FileChange(path="a.py", old_path=None, status="added", added=1,
                                                    removed=0)])
    assert boundary.checked("classify", facts) is facts


def test_the_checks_can_be_measured_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/speed.py measures plan with and without them."""
    monkeypatch.setenv("REVIEW_GATE_UNCHECKED", "1")
    facts: Any = PRFacts(source="api", files=[BOGUS])
    assert boundary.checked("classify", facts) is facts
