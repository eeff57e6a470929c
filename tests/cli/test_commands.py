"""plan, explain and agents list through the CLI."""

from __future__ import annotations

import argparse

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

    from review_gate.surfaces.cli.main import COMMANDS, HANDLERS

    assert set(HANDLERS) == set(COMMANDS)
    for name, module in HANDLERS.items():
        assert callable(getattr(import_module(f"review_gate.surfaces.commands.{module}"), f"{name}_command"))


def test_explain_names_the_agents_plan_dispatches_for_that_file_alone(cli) -> None:
    """explain and compose share one rule: for a change of one file, the agents explain says a
    file triggers are those plan dispatches by policies that do not depend on the whole change."""
    from review_gate.config import load_config

    conditional = {p.id for p in load_config(None).composition.policies if p.trigger.type in ("risk", "pr_type")}
    for path in ("src/app.py", "Dockerfile", "db/migrations/0002_drop.sql", "docs/guide.md", "weird.xyz",
                 ".github/workflows/ci.yml", "package.json"):
        explained = cli("explain", path).out.splitlines()[-1].removeprefix("  agents: ").split(", ")
        plan = cli("plan", "--diff", "-", "--format", "json", stdin=make_diff(path, ["x = 1"]).encode()).json()
        planned = {e["agent"] for e in plan["manifest"] if set(e["policies"]) - conditional}
        assert set(explained) - {"none"} == planned, path


def test_plan_counts_one_file_in_the_singular(cli) -> None:
    result = cli("plan", "--offline", "--diff", "-", stdin=make_diff("app.py", ["x = 1"]).encode())
    assert result.code == 0, result.err
    assert "1 file, +1 -0" in result.out and "1 files" not in result.out


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_a_command_parsed_alone_takes_the_arguments_it_takes_among_all() -> None:
    # a run builds only its own command's parser (issue 23: building all 30 cost every command
    # 13-21 ms); the table of builders must give each command exactly the parser it has among all
    from review_gate.surfaces.cli.parser import COMMANDS, build_parser

    every = _commands(build_parser())
    assert list(every) == list(COMMANDS)
    for name in COMMANDS:
        alone = _commands(build_parser(name))
        assert name in alone and len(alone) <= 6  # its builder's commands only (the run state's: six)
        assert alone[name].format_help() == every[name].format_help()


def test_the_first_argument_picks_the_parser_and_options_before_a_command_still_get_the_hint(cli) -> None:
    assert cli("plan", "--no-such-flag").code == 2
    late = cli("--offline", "plan")  # the options went to the default command, run
    assert late.code == 2 and "name the command first" in late.err
    assert "plan" in cli("--help").out and "rule" in cli("--help").out
