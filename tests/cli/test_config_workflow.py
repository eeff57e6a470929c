"""The config-only workflow, end to end: init, add a domain, a rule, a policy and agents by
editing JSON, validate, explain, plan, and see the new agents dispatched on the next run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.conftest import GitRepo

FINANCE_CHECK = """
import json, os, sys
diff = sys.stdin.read()
files = json.loads(os.environ["REVIEW_GATE_FILES"])
findings = []
for path in files:
    if "round(" in diff:
        findings.append({"severity": "major", "message": "rounding money with round()",
                         "rule_id": "fin-ledger-02", "file": path, "line": 1})
print(json.dumps({"findings": findings}))
"""


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def test_add_domain_rule_policy_and_agents_by_editing_json(cli, repo: GitRepo) -> None:
    assert cli("init", "--full").code == 0
    config = repo.root / ".review-gate"
    assert sorted(p.name for p in config.iterdir()) == [
        ".gitignore", "loop", "review-agents.json", "review-composition.json", "review-domains.json",
        "review-gate.json", "review-rules.json"]
    (config / "finance_check.py").write_text(FINANCE_CHECK)

    edit(config / "review-domains.json", lambda d: d["domains"].append({
        "id": "payments", "description": "Money movement", "paths": ["billing/**"], "risk_weight": 9}))
    edit(config / "review-agents.json", lambda d: d["agents"].extend([
        {"id": "finance-reviewer", "name": "Finance reviewer", "kind": "pattern",
         "description": "Money arithmetic rules"},
        {"id": "ledger-check", "name": "Ledger check", "kind": "command", "cwd": "config",
         "description": "A team script that checks ledger code",
         "command": [sys.executable, "finance_check.py"], "timeout_s": 20},
    ]))
    edit(config / "review-rules.json", lambda d: d["rules"].append({
        "id": "fin-float-01", "name": "float() on money", "severity": "critical", "agent": "finance-reviewer",
        "category": "financial-arithmetic", "description": "Binary floats round money wrongly.",
        "detection": "float( applied to an amount", "recommendation": "Use decimal.Decimal.",
        "pattern": r"float\(\s*amount", "paths": ["billing/**"]}))
    edit(config / "review-composition.json", lambda d: d["policies"].append({
        "id": "payments", "description": "Money code gets the finance reviewers",
        "trigger": {"type": "domain", "domains": ["payments"]},
        "dispatch": ["finance-reviewer", "ledger-check"], "priority": 95}))

    validated = cli("config", "validate")
    assert validated.code == 0, validated.err
    assert str(config) in validated.out

    explained = cli("explain", "billing/invoice.py").out
    assert "domains: python, finance, payments" in explained  # the built-in finance domain claims billing/ too
    assert "policy payments (domain, priority 95): fires -> finance-reviewer, ledger-check" in explained

    repo.write("billing/invoice.py", "total = float(amount) * 1.2\nfee = round(total, 2)\n")
    plan = cli("plan", "--format", "json").json()
    scoped = {e["agent"]: e for e in plan["manifest"]}
    assert scoped["finance-reviewer"]["files"] == ["billing/invoice.py"]
    assert scoped["finance-reviewer"]["policies"] == ["payments"]

    listed = cli("agents", "list", "--format", "json").json()
    assert {a["id"] for a in listed["agents"]} >= {"finance-reviewer", "ledger-check"}

    run = cli("--format", "json")
    report = run.json()
    statuses = {a["id"]: a["status"] for a in report["agents"]}
    assert statuses["finance-reviewer"] == statuses["ledger-check"] == "completed"
    rules = {f["rule_id"]: f for f in report["findings"]}
    assert rules["fin-float-01"]["file"] == "billing/invoice.py"
    assert rules["fin-float-01"]["line"] == 1
    assert rules["fin-ledger-02"]["agent"] == "ledger-check"
    assert report["decision"] == "fail"
    assert run.code == 1


def test_a_broken_edit_is_caught_before_any_agent_runs(cli, repo: GitRepo) -> None:
    cli("init", "--full")
    config = repo.root / ".review-gate"
    edit(config / "review-composition.json", lambda d: d["policies"].append({
        "id": "typo", "description": "x", "trigger": {"type": "domain", "domains": ["pyhton"]},
        "dispatch": ["secrets-scanner"], "priority": 10}))
    repo.write("a.py", "x = 1\n")
    result = cli()
    assert result.code == 2
    assert "review-composition.json" in result.err
    assert "unknown domain 'pyhton'" in result.err
    assert "agent " not in result.err  # no agent ran
