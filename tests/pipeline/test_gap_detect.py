"""Stage 4 on its own (the deterministic part): what the configuration missed, one line a gap."""

from __future__ import annotations

from review_gate.config import load_config
from review_gate.models import AgentsFile, CompositionFile, Domain, DomainsFile, PatternAgent, Policy, Trigger
from review_gate.pipeline.classify import classify
from review_gate.pipeline.compose import compose
from review_gate.pipeline.gap_detect import missed
from tests.pipeline.test_classify_compose import facts

PY = Domain(id="python", description="py", paths=["*.py"], risk_weight=3)


def config_with(policies: list[Policy], agents: tuple[str, ...] = ("a", "b")):  # type: ignore[no-untyped-def]
    base = load_config(None)
    return base.model_copy(update={
        "domains": DomainsFile(domains=[PY]),
        "agents": AgentsFile(agents=[PatternAgent(id=a, name=a, description=a, kind="pattern") for a in agents]),
        "composition": CompositionFile(policies=policies)})


def gaps_for(config, *paths: str):  # type: ignore[no-untyped-def]
    classification = classify(facts(*paths), config.domains.domains)
    return missed(classification, compose(classification, config.composition.policies), config)


def test_a_domain_is_routed_when_always_policies_dispatch_every_agent() -> None:
    every = Policy(id="all", description="all", trigger=Trigger(type="always"), dispatch=["a", "b"])
    assert [g.kind for g in gaps_for(config_with([every]), "app.py")] == []


def test_a_domain_no_policy_names_is_a_gap_while_an_agent_is_left_out() -> None:
    some = Policy(id="some", description="some", trigger=Trigger(type="always"), dispatch=["a"])
    gaps = gaps_for(config_with([some]), "app.py")
    assert [(g.kind, g.subject) for g in gaps] == [("domain_without_policy", "python")]


def test_files_named_like_configuration_are_one_gap() -> None:
    every = Policy(id="all", description="all", trigger=Trigger(type="always"), dispatch=["a", "b"])
    gaps = gaps_for(config_with([every]), "x/review-rules.json", "x/review-gate.json", "y/review-agents.json")
    [gap] = [g for g in gaps if g.kind == "config_changed"]
    assert "x/review-rules.json" in gap.files and "y/review-agents.json" in gap.files and "(3 files)" in gap.reason


GO = Domain(id="go", description="go", paths=["*.go"], risk_weight=3)


def patched(config, gap):  # type: ignore[no-untyped-def]
    """``config`` with ``gap``'s patch applied, as `review-gate gaps --apply` applies it."""
    import jsonpatch

    from review_gate.models import ReviewConfig

    field = ReviewConfig.FILES[gap.patch.file].field
    data = getattr(config, field).model_dump(mode="json", by_alias=True, exclude_none=True)
    model = ReviewConfig.FILES[gap.patch.file].model
    return config.model_copy(update={field: model.model_validate(jsonpatch.apply_patch(data, gap.patch.as_json()))})


def test_an_unrouted_domain_gets_a_policy_with_the_broadest_domain_reviewer() -> None:
    always = Policy(id="all", description="all", trigger=Trigger(type="always"), dispatch=["a"])
    code = Policy(id="code", description="code", trigger=Trigger(type="domain", domains=["python"]), dispatch=["b"])
    config = config_with([always, code]).model_copy(update={"domains": DomainsFile(domains=[PY, GO])})
    [gap] = gaps_for(config, "main.go")
    assert (gap.kind, gap.subject) == ("domain_without_policy", "go")
    assert gap.patch is not None and gap.patch.file == "review-composition.json"
    assert gap.patch.as_json() == [{"op": "add", "path": "/policies/-", "value": {
        "id": "go-review", "description": "Review changes in go", "trigger": {"type": "domain", "domains": ["go"]},
        "dispatch": ["b"], "priority": 50}}]
    assert '"dispatch": ["b"]' in gap.suggestion
    assert gaps_for(patched(config, gap), "main.go") == []


def test_an_unrouted_domain_with_no_domain_policy_to_copy_has_no_patch() -> None:
    some = Policy(id="some", description="some", trigger=Trigger(type="always"), dispatch=["a"])
    [gap] = gaps_for(config_with([some]), "app.py")
    assert gap.patch is None and '"dispatch": ["<agent id>"]' in gap.suggestion


def test_an_unclassified_extension_is_claimed_literally_and_its_patch_closes_the_gap() -> None:
    from review_gate.text.globs import Globs

    every = Policy(id="all", description="all", trigger=Trigger(type="always"), dispatch=["a", "b"])
    config = config_with([every])
    [gap] = gaps_for(config, "data/table.t[x]t")
    assert (gap.kind, gap.subject) == ("unclassified_file", "**/*.t\\[x\\]t")
    assert Globs([gap.subject]).match("data/table.t[x]t") and not Globs([gap.subject]).match("data/table.txt")
    assert gap.patch is not None and gap.patch.operations[0].value == {
        "id": "t-x-t", "description": "t[x]t files", "paths": ["**/*.t\\[x\\]t"], "risk_weight": 2}
    assert gaps_for(patched(config, gap), "data/table.t[x]t") == []


def test_a_domain_id_in_use_is_not_reused() -> None:
    every = Policy(id="all", description="all", trigger=Trigger(type="always"), dispatch=["a", "b"])
    taken = Domain(id="xyz", description="something else", paths=["*.other"], risk_weight=1)
    config = config_with([every]).model_copy(update={"domains": DomainsFile(domains=[PY, taken])})
    [gap] = gaps_for(config, "notes.xyz")
    assert gap.patch is not None and gap.patch.operations[0].value["id"] == "xyz-2"  # type: ignore[index]
