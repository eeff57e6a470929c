"""`review-gate rule ID` and `explain RULE_ID`: a rule described from the configuration in use,
with examples the rule's own pattern is checked against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from review_gate.config import rulebook
from review_gate.config.load import load_config
from tests.conftest import GitRepo

BUILTIN = load_config(None)


def test_rule_describes_everything_a_reader_needs(cli: Any, repo: GitRepo) -> None:
    result = cli("rule", "sec-tls-verify-01")
    assert result.code == 0, result.err
    out = result.out
    for expected in ("TLS verification disabled", "severity major", "security-patterns", "detection:",
                     "recommendation:", "pattern:", "flags:", "near miss:", "client.py: r = requests.get(url, "
                     "verify=False)", "code-security (domain: python", "noqa:S501",
                     "# review-gate: ignore[sec-tls-verify-01]"):
        assert expected in out, expected
    # where it does not judge (a trial: verify=False in tests/ never flagged, and nothing said why)
    assert "path classes:   docs skip, example warning, fixture skip" in out and "test skip" in out
    secrets = next(r.id for r in BUILTIN.rules.rules if r.category == "secrets" and r.pattern)
    assert "test skip" not in cli("rule", secrets).out  # no default for secrets: a credential is one anywhere


def test_rule_as_json(cli: Any, repo: GitRepo) -> None:
    result = cli("rule", "sec-tls-verify-01", "--format", "json")
    data = json.loads(result.out)
    assert data["id"] == "sec-tls-verify-01" and data["agent_kind"] == "pattern"
    assert {"kind": "fires", "path": "client.py", "line": "r = requests.get(url, verify=False)",
            "flagged": True} in data["examples"]
    assert any(e["kind"] == "near_miss" and e["flagged"] is False for e in data["examples"])
    assert "code-security" in [p["id"] for p in data["policies"]] and "python" in data["domains"]


def test_an_unknown_rule_is_exit_2_with_the_closest_ids(cli: Any, repo: GitRepo) -> None:
    result = cli("rule", "sec-tls-verify-1")
    assert result.code == 2 and "closest: sec-tls-verify-01" in result.err and "Traceback" not in result.err
    typo = cli("rule", "sec-tls-verfy-01")  # a trial: also offered sec-jwt-verify-off-01 and sec-aws-key-01
    assert typo.code == 2 and typo.err.rstrip().endswith("(closest: sec-tls-verify-01)"), typo.err
    nothing_close = cli("rule", "NOSUCH")
    assert nothing_close.code == 2 and "closest" not in nothing_close.err, nothing_close.err
    assert "`review-gate rule` lists them" in nothing_close.err


def test_explain_takes_a_rule_id_and_paths_alike(cli: Any, repo: GitRepo) -> None:
    result = cli("explain", "hyg-bare-except-01", "app.py")
    assert result.code == 0
    assert "hyg-bare-except-01: Bare except" in result.out
    assert "app.py\n  domains: python" in result.out


def test_a_changed_pattern_says_its_example_no_longer_holds(cli: Any, repo: GitRepo) -> None:
    rules = json.loads((Path(__file__).parents[2] / "config" / "review-rules.json").read_text(encoding="utf-8"))
    for rule in rules["rules"]:
        if rule["id"] == "sec-py-eval-01":
            rule["pattern"] = r"\bexec\("
    repo.write(".review-gate/review-rules.json", json.dumps(rules))
    out = cli("rule", "sec-py-eval-01").out
    assert "[the pattern no longer agrees]" in out


@pytest.mark.parametrize("rule", [r for r in BUILTIN.rules.rules if r.examples is not None], ids=lambda r: r.id)
def test_every_built_in_example_holds(rule: Any) -> None:
    """Each example a rule flags is flagged and each near miss is not, by the rule's own pattern and paths."""
    card = rulebook.card(BUILTIN, rule)
    assert card.examples
    for example in card.examples:
        assert example.holds is example.expected, example


def test_the_pattern_rules_have_examples_unless_they_are_secrets() -> None:
    """A secret rule shows no literal example: the configuration would carry a secret."""
    lacking = [r.id for r in BUILTIN.rules.rules
               if r.pattern and r.enabled and r.examples is None and r.category != "secrets" and not r.redact]
    assert len(lacking) <= 3, lacking  # those whose only samples span several lines


def test_rule_without_an_id_lists_every_rule(cli: Any, repo: GitRepo) -> None:
    """A trial: nothing listed the rule ids but the whole `config show` (196 KB)."""
    result = cli("rule")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert len(lines) == len(BUILTIN.rules.rules) + 1
    assert any(line.startswith("sec-tls-verify-01 ") and "major" in line for line in lines)
    rows = json.loads(cli("rule", "--format", "json").out)
    assert {r["id"] for r in rows} == {r.id for r in BUILTIN.rules.rules}
