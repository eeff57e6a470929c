"""Stages 2-4 are pure functions over models: domains, risk, PR type, policies, gaps."""

from __future__ import annotations

from review_gate.change.diff_parser import parse_diff
from review_gate.config import load_config
from review_gate.models import Commit, Domain, FileChange, Policy, PRFacts, Trigger
from review_gate.pipeline.classify import classify, risk_level
from review_gate.pipeline.compose import compose
from review_gate.pipeline.gap_detect import missed
from tests.conftest import make_diff

PY = Domain(id="python", description="py", paths=["*.py"], risk_weight=3)
SQL = Domain(id="sql", description="sql", paths=["*.sql", "**/migrations/**"], risk_weight=8)
DOCS = Domain(id="docs", description="docs", paths=["*.md", "docs/**"], risk_weight=0, pr_type="docs")


def facts(*paths: str, lines: int = 1, commits: list[str] | None = None) -> PRFacts:
    diff = "".join(make_diff(p, [f"line {i}" for i in range(lines)]) for p in paths)
    return PRFacts(source="test", files=parse_diff(diff.encode()),
                   commits=[Commit(sha="0" * 40, author="a", subject=s) for s in commits or []])


def policy(pid: str, trigger: Trigger, dispatch: list[str], priority: int = 50) -> Policy:
    return Policy(id=pid, description=pid, trigger=trigger, dispatch=dispatch, priority=priority)


def test_files_map_to_every_matching_domain() -> None:
    result = classify(facts("app/db/migrations/0001_init.py", "README.md", "Makefile"), [PY, SQL, DOCS])
    assert [f.domains for f in result.files] == [["python", "sql"], ["docs"], []]
    assert result.domains == ["docs", "python", "sql"]
    assert result.unclassified == ["Makefile"]


def test_risk_grows_with_size_and_domain_weight() -> None:
    small_docs = classify(facts("README.md"), [DOCS]).risk_score
    big_sql = classify(facts(*(f"db/migrations/{i}.sql" for i in range(30)), lines=200), [SQL]).risk_score
    assert small_docs < 10
    assert big_sql >= 75
    assert classify(facts(*(f"db/migrations/{i}.sql" for i in range(30)), lines=200), [SQL]).risk_level == "critical"
    assert [risk_level(s) for s in (0, 24, 25, 49, 50, 74, 75, 100)] == [
        "low", "low", "medium", "medium", "high", "high", "critical", "critical"]


def test_pr_type_from_domains_then_commits() -> None:
    assert classify(facts("README.md", "docs/a.md"), [DOCS]).pr_type == "docs"
    assert classify(facts("a.py", "README.md", commits=["fix(api): null check"]), [PY, DOCS]).pr_type == "fix"
    assert classify(facts("a.py", "b.py"), [PY]).pr_type == "feature"  # mostly new files
    change = FileChange(path="a.py", old_path="a.py", status="modified", added=1, removed=1)
    modified = PRFacts(source="t", files=[change])
    assert classify(modified, [PY]).pr_type == "mixed"


def test_compose_unions_scopes_and_keeps_policy_provenance() -> None:
    classification = classify(facts("app.py", "db/migrations/1.sql", "README.md"), [PY, SQL, DOCS])
    manifest = compose(classification, [
        policy("base", Trigger(type="always"), ["linter"], 100),
        policy("py", Trigger(type="domain", domains=["python"]), ["security"], 80),
        policy("db", Trigger(type="domain", domains=["sql"]), ["security", "dba"], 70),
        policy("paths", Trigger(type="paths", paths=["docs/**", "*.md"]), ["writer"], 10),
        policy("risky", Trigger(type="risk", min_risk=101 - 1), ["expensive"], 60),
        policy("deps", Trigger(type="pr_type", pr_types=["deps"]), ["deps"], 60),
    ])
    entries = {e.agent: e for e in manifest.entries}
    assert set(entries) == {"linter", "security", "dba", "writer"}
    assert entries["security"].files == ["app.py", "db/migrations/1.sql"]
    assert entries["security"].policies == ["py", "db"]
    assert entries["security"].priority == 80
    assert entries["writer"].files == ["README.md"]
    assert [e.agent for e in manifest.entries] == ["linter", "security", "dba", "writer"]


def test_compose_is_deterministic() -> None:
    config = load_config(None)
    classification = classify(facts("a.py", "b.ts", "Dockerfile", "go.mod"), config.domains.domains)
    first = compose(classification, config.composition.policies)
    again = compose(classification, list(reversed(config.composition.policies)))
    assert first == again


def test_gaps_name_unclassified_files_unrouted_domains_and_unknown_agents() -> None:
    config = load_config(None)
    extra = Domain(id="terraform-modules", description="x", paths=["modules/**"], risk_weight=5)
    domains = [*config.domains.domains, extra]
    classification = classify(facts("weird.xyz", "other.xyz", "modules/main.rs"), domains)
    manifest = compose(classification, [*config.composition.policies,
                                        policy("ghost", Trigger(type="always"), ["no-such-agent"])])
    gaps = missed(classification, manifest, config)
    kinds = {(g.kind, g.subject) for g in gaps}
    assert ("unclassified_file", "**/*.xyz") in kinds
    assert ("domain_without_policy", "terraform-modules") in kinds
    assert ("unknown_agent", "no-such-agent") in kinds
    unclassified = next(g for g in gaps if g.kind == "unclassified_file")
    assert "2 changed file(s)" in unclassified.reason
    assert '"paths": ["**/*.xyz"]' in unclassified.suggestion


def test_a_file_no_policy_covers_is_a_gap() -> None:
    config = load_config(None)
    classification = classify(facts("a.py"), config.domains.domains)
    manifest = compose(classification, [policy("docs-only", Trigger(type="paths", paths=["*.md"]), ["x"])])
    gaps = missed(classification, manifest, config)
    assert ("uncovered_file", "a.py") in {(g.kind, g.subject) for g in gaps}


def test_a_change_to_the_review_configuration_is_a_gap() -> None:
    config = load_config(None)
    classification = classify(facts(".review-gate/review-rules.json", "a.py"), config.domains.domains)
    gaps = missed(classification, compose(classification, config.composition.policies), config)
    assert [g.subject for g in gaps if g.kind == "config_changed"] == [".review-gate/review-rules.json"]


def test_the_built_in_languages_each_have_a_domain_reviewed_for_security() -> None:
    """C, C++, Rust, Ruby, PHP, C#, Kotlin and Swift files are code: the security rules read them."""
    config = load_config(None)
    files = {"src/io.c": "c", "include/io.h": "c", "src/view.cpp": "cpp", "src/view.hpp": "cpp", "os/view.mm": "cpp",
             "src/main.rs": "rust", "app/user.rb": "ruby", "Rakefile": "ruby", "web/index.php": "php",
             "App/Program.cs": "csharp", "app/Main.kt": "kotlin", "scripts/tasks.kts": "kotlin",
             "Sources/App.swift": "swift"}
    classified = classify(facts(*files), config.domains.domains)
    assert {f.path: f.domains for f in classified.files} == {path: [domain] for path, domain in files.items()}
    manifest = compose(classified, config.composition.policies)
    security = next(e for e in manifest.entries if e.agent == "security-patterns")
    assert sorted(security.files) == sorted(files)
