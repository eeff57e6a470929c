"""A fixed report for the output formats, with every case a format must handle, and golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from review_gate.models import (
    AgentResult,
    ConfigPatch,
    Coverage,
    FileDomains,
    Finding,
    Gap,
    ManifestEntry,
    Metrics,
    PatchOperation,
    PRClassification,
    ReviewReport,
    RuleInfo,
)
from review_gate.models.report import absence_counts, absences

GOLDEN = Path(__file__).parent / "golden"


def _finding(n: int, **fields: object) -> Finding:
    base: dict[str, object] = {
        "fingerprint": f"{n:032x}", "agent": "security-patterns", "rule_id": None, "severity": "major",
        "category": "general", "file": "app/main.py", "line": n, "end_line": n, "message": f"finding {n}",
        "recommendation": None, "confidence": None,
    }
    base.update(fields)
    return Finding.model_validate(base)


FINDINGS = [
    _finding(1, severity="critical", rule_id="sec-private-key-01", category="secrets", file="keys/deploy.pem",
             line=1, end_line=1, agent="secrets-scanner", message="Private key committed: ----…(redacted)",
             recommendation="Remove the key, rotate it.", confidence=0.99),
    _finding(2, severity="major", rule_id="sec-tls-verify-01", category="transport-security", file="app/http.py",
             line=12, end_line=14, message="TLS verification disabled: verify=False",
             recommendation="Keep verification on.", confidence=0.9, also_reported_by=["llm-security"]),
    _finding(3, severity="major", rule_id=None, category="injection", file="web/ui.ts", line=40, end_line=40,
             agent="review-bot",
             message="<script>alert(1)</script> | breaks | tables @octocat\nsecond line 100% done, a:b",
             recommendation="Escape `<b>` & friends.", confidence=None),
    _finding(4, severity="warning", rule_id="hyg-except-pass-01", category="error-handling",
             file="dir with space/odd,name:1.py", line=7, end_line=8, agent="hygiene-patterns",
             message="Exception swallowed: except Exception:\r\n    pass", recommendation=None, confidence=0.7),
    _finding(5, severity="info", rule_id="hyg-todo-01", category="maintainability", file="README.md", line=3,
             end_line=3, agent="hygiene-patterns", message="TODO or FIXME in new code: TODO", confidence=0.6),
    _finding(6, severity="info", rule_id=None, category="general", file=None, line=None, end_line=None,
             agent="review-bot", message="The change has no tests."),
]

RULES = [
    RuleInfo(id="sec-private-key-01", name="Private key committed", agent="secrets-scanner", severity="critical",
             category="secrets", description="A private key in the repository is readable by everyone.",
             detection="A PEM private key header.", recommendation="Remove the key, rotate it."),
    RuleInfo(id="sec-tls-verify-01", name="TLS verification disabled", agent="security-patterns", severity="major",
             category="transport-security", description="Turning off verification exposes traffic.",
             detection="verify=False and friends.", recommendation="Keep verification on."),
    RuleInfo(id="hyg-except-pass-01", name="Exception swallowed", agent="hygiene-patterns", severity="warning",
             category="error-handling", description="A swallowed exception hides failures.",
             detection="except Exception: pass", recommendation="Log or re-raise."),
    RuleInfo(id="hyg-todo-01", name="TODO or FIXME in new code", agent="hygiene-patterns", severity="info",
             category="maintainability", description="Work left undone.", detection="TODO, FIXME",
             recommendation="Do it or open an issue."),
]

AGENTS = [
    AgentResult(id="secrets-scanner", kind="pattern", status="completed", attempts=1, duration_s=0.01,
                files=["keys/deploy.pem", "app/http.py", "web/ui.ts", "README.md"]),
    AgentResult(id="security-patterns", kind="pattern", status="completed", attempts=1, duration_s=0.02,
                files=["app/http.py", "web/ui.ts"]),
    AgentResult(id="hygiene-patterns", kind="pattern", status="completed", attempts=1, duration_s=0.01,
                files=["keys/deploy.pem", "app/http.py", "web/ui.ts", "README.md"]),
    AgentResult(id="review-bot", kind="command", status="completed", attempts=2, duration_s=3.5,
                files=["web/ui.ts"], tokens_in=1200, tokens_out=300, cost_usd=0.0123),
    AgentResult(id="llm-security", kind="command", status="timed_out", attempts=1, duration_s=30.0,
                files=["app/http.py", "vendor/big.min.js"], error="no usable answer within its 30 s deadline"),
    AgentResult(id="style-bot", kind="command", status="failed", required=False, attempts=1, duration_s=0.2,
                files=["web/ui.ts"], error="style-bot exited 1: <b>boom</b> | @channel"),
]


GAPS = [
    Gap(kind="unclassified_file", subject="**/*.xyz", reason="1 changed file(s) match no domain: notes.xyz",
        suggestion='add to review-domains.json "domains": {"id": "xyz", "description": "xyz files", '
                   '"paths": ["**/*.xyz"], "risk_weight": 2}',
        patch=ConfigPatch(file="review-domains.json", operations=[PatchOperation(
            op="add", path="/domains/-",
            value={"id": "xyz", "description": "xyz files", "paths": ["**/*.xyz"], "risk_weight": 2})])),
    Gap(kind="agent_addition", subject="llm-security",
        reason="touches the <b>login</b> flow | @octocat `code` 100%",
        suggestion='add to review-composition.json "policies": {"id": "llm-security-added"}',
        patch=ConfigPatch(file="review-composition.json", operations=[PatchOperation(
            op="add", path="/policies/-",
            value={"id": "llm-security-added", "description": "Send these files to llm-security",
                   "trigger": {"type": "paths", "paths": ["app/http.py"]}, "dispatch": ["llm-security"],
                   "priority": 50})])),
    Gap(kind="uncovered_file", subject="vendor/big.min.js", reason="no policy dispatches any agent for this file",
        suggestion='add a policy with trigger {"type": "always"} to review-composition.json'),
]


def make_report(findings: list[Finding] | None = None, *, decision: str = "fail",
                gaps: list[Gap] | None = None) -> ReviewReport:
    """The fixed report: every finding and gap by default; ``findings`` alone, with ``gaps`` only
    when given, otherwise."""
    chosen = FINDINGS if findings is None else findings
    chosen_gaps = (GAPS if findings is None else []) if gaps is None else gaps
    counts = {s: sum(1 for f in chosen if f.severity == s) for s in ("critical", "major", "warning", "info")}
    return ReviewReport(
        tool_version="0.1.0", run_id="20261125T120000Z-abcdef12", decision=decision,  # type: ignore[arg-type]
        exit_code={"fail": 1, "needs_fixes": 1, "incomplete": 3}.get(decision, 0),
        metrics=Metrics(**counts, total=len(chosen), missing_inputs=1, unreviewed_files=1, risk_score=58,
                        **absence_counts(AGENTS)),
        findings=chosen, rules=RULES, agents=AGENTS, did_not_review=absences(AGENTS),
        classification=PRClassification(
            files=[FileDomains(path=p, domains=d) for p, d in (
                ("keys/deploy.pem", ["secrets-prone"]), ("app/http.py", ["python"]), ("web/ui.ts", ["javascript"]),
                ("README.md", ["docs"]), ("vendor/big.min.js", ["javascript"]))],
            domains=["docs", "javascript", "python", "secrets-prone"], unclassified=[], risk_score=58,
            risk_level="high", pr_type="feature"),
        manifest=[ManifestEntry(agent=a.id, files=a.files, policies=["baseline"], priority=100) for a in AGENTS],
        gaps=chosen_gaps,
        coverage=Coverage(files_changed=5, files_reviewed=4, unreviewed=["vendor/big.min.js"], findings_filtered=2,
                          filter_mode="added", nothing_to_review=False),
        source="working tree against 0123456789ab",
    )


@pytest.fixture
def report() -> ReviewReport:
    return make_report()


@pytest.fixture
def findings_report() -> ReviewReport:
    """The fixed report without its gaps: for tests that count what findings become."""
    return make_report(FINDINGS)


def check_golden(name: str, text: str) -> None:
    """Compare with tests/outputs/golden/NAME; REVIEW_GATE_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if os.environ.get("REVIEW_GATE_UPDATE_GOLDEN") == "1" or not path.exists():
        with path.open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if os.environ.get("REVIEW_GATE_UPDATE_GOLDEN") != "1":
            pytest.fail(f"golden file {path} did not exist; wrote it, check it and commit it")
    with path.open(encoding="utf-8", newline="") as handle:
        expected = handle.read()
    assert text == expected, (
        f"{name} differs from its golden file; if the change is intended, rerun with REVIEW_GATE_UPDATE_GOLDEN=1")
