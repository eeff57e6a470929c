"""plan, explain and agents list through the CLI."""

from __future__ import annotations

from tests.conftest import GitRepo, make_diff


def test_plan_text_lists_agents_with_their_policies_and_gaps(cli) -> None:
    diff = make_diff("src/app.py", ["x = 1"]) + make_diff("Dockerfile", ["FROM python:3.12"]) \
        + make_diff("notes.xyz", ["hello"])
    result = cli("plan", "--diff", "-", stdin=diff.encode())
    assert result.code == 0
    assert "3 files, +3 -0" in result.out
    assert "infra-patterns" in result.out and "policies: infrastructure" in result.out
    assert "gap [unclassified_file] 1 changed file(s) match no domain: notes.xyz" in result.out


def test_plan_runs_no_agent(cli, repo: GitRepo, tmp_path) -> None:
    marker = tmp_path / "ran"
    config = tmp_path / "cfg"
    config.mkdir()
    (config / "review-agents.json").write_text(
        '{"version": 1, "agents": [{"id": "probe", "name": "p", "description": "d", "kind": "command", '
        f'"command": ["touch", "{marker}"]}}]}}')
    (config / "review-composition.json").write_text(
        '{"version": 1, "policies": [{"id": "all", "description": "d", "trigger": {"type": "always"}, '
        '"dispatch": ["probe"]}]}')
    (config / "review-rules.json").write_text('{"version": 1, "rules": []}')
    repo.write("a.py", "x = 1\n")
    plan = cli("plan", "--config", str(config), "--format", "json")
    assert plan.code == 0, plan.err
    assert [e["agent"] for e in plan.json()["manifest"]] == ["probe"]
    assert not marker.exists()
    cli("--config", str(config))
    assert marker.exists()


def test_explain_shows_conditional_policies(cli) -> None:
    out = cli("explain", "db/migrations/0002_drop.sql", "docs/guide.md").out
    assert "db/migrations/0002_drop.sql\n  domains: sql" in out
    assert "policy migrations (domain, priority 80): fires -> migration-patterns" in out
    assert "when the change's risk score is at least 75" in out
    assert "docs/guide.md\n  domains: docs" in out
    assert "agents: build-reviewer, hygiene-patterns, secrets-scanner" in out


def test_explain_unclassified(cli) -> None:
    assert "domains: none (unclassified)" in cli("explain", "weird.xyz").out


def test_agents_list_text(cli) -> None:
    result = cli("agents", "list")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].split()[:4] == ["id", "kind", "state", "required"]
    secrets = next(line for line in lines if line.startswith("secrets-scanner"))
    assert "pattern" in secrets and "enabled" in secrets and "baseline" in secrets


def test_help_and_version(cli) -> None:
    version = cli("--version")
    assert (version.code, version.out.split()[0]) == (0, "review-gate")
    assert "exit codes" in cli("--help").out
    assert cli("no-such-command-or-flag", "--nope").code == 2


def test_plan_and_run_never_review_the_run_state(cli, repo: GitRepo) -> None:
    repo.write("a.py", "x = 1\n")
    assert cli("--format", "json", "--output", "/dev/null").code == 0  # creates .review-gate/state.db
    assert (repo.root / ".review-gate" / "state.db").exists()
    planned = {f["path"] for f in cli("plan", "--format", "json").json()["facts"]["files"]}
    assert planned == {"a.py"}


def test_every_command_has_a_handler() -> None:
    from importlib import import_module

    from review_gate.cli import COMMANDS, HANDLERS

    assert set(HANDLERS) == set(COMMANDS)
    for name, module in HANDLERS.items():
        assert callable(getattr(import_module(f"review_gate.commands.{module}"), f"{name}_command"))
