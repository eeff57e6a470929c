"""Seed 004's agents in the built-in configuration: finance-sme for money code, design-auditor for
user interfaces (with its dimension mapping), routed by the finance and ui domains; and the
registry's capabilities."""

from __future__ import annotations

import json
from typing import Any

import pytest

from review_gate.config import load_config
from review_gate.models import LlmAgent
from review_gate.state.freshness import agent_sha
from tests.conftest import GitRepo


def agents_of(explained: str, path: str) -> list[str]:
    block = explained.split(path + "\n", 1)[1]
    line = next(line for line in block.splitlines() if line.strip().startswith("agents:"))
    return line.split(":", 1)[1].strip().split(", ")


@pytest.fixture(autouse=True)
def no_model_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_built_in_configuration_validates(cli: Any) -> None:
    result = cli("config", "validate")
    assert result.code == 0, result.err
    assert "14 agents" in result.out


@pytest.mark.parametrize("path", ["src/billing/invoice.py", "app/payments/refund.ts", "ledger/entries.go",
                                  "shop/currency_convert.py"])
def test_money_code_routes_to_finance_sme(cli: Any, path: str) -> None:
    explained = cli("explain", path).out
    assert "finance" in explained.split(path + "\n", 1)[1].splitlines()[0]
    assert "policy llm-finance-review (domain, priority 70): fires -> finance-sme" in explained
    assert "finance-sme" in agents_of(explained, path)
    assert "design-auditor" not in agents_of(explained, path)


@pytest.mark.parametrize("path", ["web/components/Button.tsx", "src/App.vue", "static/site.scss",
                                  "templates/index.html"])
def test_ui_code_routes_to_design_auditor(cli: Any, path: str) -> None:
    explained = cli("explain", path).out
    assert "policy llm-ui-review (domain, priority 55): fires -> design-auditor" in explained
    assert "design-auditor" in agents_of(explained, path)
    assert "finance-sme" not in agents_of(explained, path)


@pytest.mark.parametrize("path", ["docs/billing.md", "web/components/Button.test.tsx", "app/models.py"])
def test_docs_tests_and_other_code_get_neither(cli: Any, path: str) -> None:
    agents = agents_of(cli("explain", path).out, path)
    assert "finance-sme" not in agents and "design-auditor" not in agents


def test_design_auditor_maps_fifteen_dimensions_and_finance_sme_has_its_rules() -> None:
    config = load_config(None)
    auditor = config.agent("design-auditor")
    assert isinstance(auditor, LlmAgent) and auditor.dimensions is not None
    assert len(auditor.dimensions.names) == 15
    severity = auditor.dimensions.severity
    assert (severity.fail, severity.warn, severity.pass_) == ("major", "warning", None)
    assert auditor.dimensions.escalate is not None
    assert (auditor.dimensions.escalate.failed_at_least, auditor.dimensions.escalate.to) == (3, "critical")
    assert {r.category for r in config.rules_for("design-auditor")} == set(auditor.dimensions.names)
    # the seed's eight checks, and its example rule fin-bigjs-01 (JavaScript's form of fin-decimal-01)
    assert len(config.rules_for("finance-sme")) == 9
    assert {"fin-decimal-01", "fin-bigjs-01"} <= {r.id for r in config.rules_for("finance-sme")}
    assert "br-type-safety-01" in {r.id for r in config.rules_for("build-reviewer")}
    for agent_id in ("finance-sme", "design-auditor"):
        spec = config.agent(agent_id)
        assert isinstance(spec, LlmAgent) and spec.required is False and spec.capabilities


def test_agents_list_shows_capabilities_and_the_seed_agents_off_without_a_key(cli: Any) -> None:
    listed = {a["id"]: a for a in cli("agents", "list", "--format", "json").json()["agents"]}
    assert listed["finance-sme"]["capabilities"] == ["money-arithmetic", "rounding", "currency", "tax", "ledgers"]
    assert "accessibility" in listed["design-auditor"]["capabilities"]
    assert listed["design-auditor"]["state"] == "off: ANTHROPIC_API_KEY not set"
    assert listed["design-auditor"]["rules"] == 15


def test_capabilities_do_not_change_an_agents_sha() -> None:
    """They describe the agent; they change nothing it answers, so its cached pairs stay fresh."""
    config = load_config(None)
    spec = config.agent("security-patterns")
    assert spec is not None and spec.capabilities
    bare = config.model_copy(update={"agents": config.agents.model_copy(update={"agents": [
        a.model_copy(update={"capabilities": []}) if a.id == "security-patterns" else a
        for a in config.agents.agents]})})
    assert agent_sha(bare, "security-patterns") == agent_sha(config, "security-patterns")


def test_the_default_offline_run_is_not_made_incomplete_by_the_seed_agents(cli: Any, repo: GitRepo) -> None:
    repo.write("README.md", "# shop\n")
    repo.commit("init")
    repo.write("src/billing/invoice.py", "def total(lines):\n    return sum(line.amount for line in lines)\n")
    repo.write("web/components/Button.tsx", "export const Button = () => <button>Pay</button>;\n")
    result = cli("--format", "json")
    report = result.json()
    agents = {a["id"]: a for a in report["agents"]}
    for agent_id in ("finance-sme", "design-auditor"):
        assert agents[agent_id]["status"] == "skipped" and agents[agent_id]["required"] is False
    # Not incomplete: they are optional and did not run (no key). Not a plain pass either (issue
    # 20): a change routed to finance-sme that finance-sme did not read passes with a warning.
    assert (report["decision"], result.code) == ("pass_with_warnings", 0), json.dumps(report["agents"])
    assert report["metrics"]["agents_skipped"] >= 2
