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
    assert "x/review-rules.json" in gap.reason and "y/review-agents.json" in gap.reason
