"""The building agent as the gap detector: ``run --add-agent ID[:GLOB] --gap-reason TEXT``, the
API's ``add_agents`` and the MCP ``review`` tool's ``add_agents`` (docs/gaps.md)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from review_gate import api
from review_gate.errors import UsageError
from tests.conftest import GitRepo, make_diff

DIFF = make_diff("app.py", ["x = eval(input())"]) + make_diff("notes.txt", ["eval is fine here"])
BASE_RULE = {"id": "base-01", "name": "never", "severity": "warning", "agent": "base", "category": "style",
             "description": "matches nothing", "detection": "-", "recommendation": "-",
             "pattern": "NEVER-MATCHES-ANYTHING"}
SEC_RULE = {"id": "no-eval", "name": "eval", "severity": "warning", "agent": "sec", "category": "security",
            "description": "eval", "detection": "eval(", "recommendation": "no", "pattern": r"eval\("}


def config(tmp_path: Path) -> Path:
    """``base`` reviews every change; ``sec`` only vendored code (so not this change); ``broken``
    (required, always fails) and ``off`` (disabled) no policy dispatches."""
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    agents = [
        {"id": "base", "name": "base", "description": "baseline", "kind": "pattern"},
        {"id": "sec", "name": "sec", "description": "finds eval calls", "kind": "pattern"},
        {"id": "broken", "name": "broken", "description": "always fails", "kind": "command",
         "command": [sys.executable, "-P", "-c", "import sys; sys.exit(1)"], "timeout_s": 20, "retries": 0},
        {"id": "off", "name": "off", "description": "disabled", "kind": "pattern", "enabled": False},
    ]
    files = {
        "review-agents.json": {"version": 1, "agents": agents},
        "review-composition.json": {"version": 1, "policies": [
            {"id": "baseline", "description": "every change", "trigger": {"type": "always"}, "dispatch": ["base"]},
            {"id": "vendored", "description": "vendored code", "trigger": {"type": "paths", "paths": ["vendor/**"]},
             "dispatch": ["sec"]}]},
        "review-rules.json": {"version": 1, "rules": [BASE_RULE, SEC_RULE]},
    }
    for name, data in files.items():
        (cfg / name).write_text(json.dumps(data, indent=2), encoding="utf-8")
    return cfg


def run(cli: Any, cfg: Path, *extra: str) -> tuple[Any, dict[str, Any]]:
    result = cli("--config", str(cfg), "--diff", "-", "--format", "json", *extra, stdin=DIFF.encode())
    assert result.out, result.err
    return result, result.json()


def agent(report: dict[str, Any], agent_id: str) -> dict[str, Any]:
    return next(a for a in report["agents"] if a["id"] == agent_id)


def recorded_runs() -> int:
    db = Path.home() / ".cache" / "review-gate" / "state.db"  # where a run outside a repository records
    if not db.exists():
        return 0
    import sqlite3

    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM review_runs").fetchone()[0])


def test_an_added_agent_reviews_the_change_and_is_logged_as_a_gap(cli: Any, tmp_path: Path) -> None:
    result, report = run(cli, config(tmp_path), "--add-agent", "sec", "--gap-reason", "it evaluates user input")
    assert result.code == 0, result.err  # a warning: pass_with_warnings
    sec = agent(report, "sec")
    assert (sec["status"], sec["files"]) == ("completed", ["app.py", "notes.txt"])
    assert [(f["rule_id"], f["file"]) for f in report["findings"]] == [("no-eval", "app.py")]
    assert next(e for e in report["manifest"] if e["agent"] == "sec")["policies"] == ["added"]
    [gap] = [g for g in report["gaps"] if g["kind"] == "agent_addition"]
    assert (gap["subject"], gap["reason"]) == ("sec", "it evaluates user input")
    [operation] = gap["patch"]["operations"]
    assert gap["patch"]["file"] == "review-composition.json" and operation["path"] == "/policies/-"
    policy = operation["value"]
    assert policy["trigger"] == {"type": "paths", "paths": ["app.py", "notes.txt"]} and policy["dispatch"] == ["sec"]
    assert json.loads(gap["suggestion"].split('"policies": ', 1)[1]) == policy


def test_the_permanent_policy_proposed_is_the_globs_the_paths_share(cli: Any, tmp_path: Path) -> None:
    """It hard-coded this change's nine file paths as a permanent policy."""
    nine = "".join(make_diff(f"deploy/k8s/svc{n}.yaml", ["kind: Service"]) for n in range(8))
    result = cli("--diff", "-", "--no-state", "--offline", "--config", str(config(tmp_path)), "--format", "json",
                 "--add-agent", "sec", "--gap-reason", "it feeds the deploy job",
                 stdin=(nine + make_diff("app.py", ["x = 1"])).encode())
    assert result.code in (0, 1), result.err
    [gap] = [g for g in result.json()["gaps"] if g["kind"] == "agent_addition"]
    assert gap["patch"]["operations"][0]["value"]["trigger"]["paths"] == ["app.py", "deploy/**/*.yaml"]


def test_a_glob_scopes_the_added_agent(cli: Any, tmp_path: Path) -> None:
    _, report = run(cli, config(tmp_path), "--add-agent", "sec:*.py", "--gap-reason", "python evaluates input")
    assert agent(report, "sec")["files"] == ["app.py"]
    [gap] = [g for g in report["gaps"] if g["kind"] == "agent_addition"]
    assert gap["patch"]["operations"][0]["value"]["trigger"] == {"type": "paths", "paths": ["*.py"]}


def test_an_agent_already_on_those_files_is_no_gap_and_a_second_scope_extends_the_first(cli: Any,
                                                                                        tmp_path: Path) -> None:
    _, report = run(cli, config(tmp_path), "--add-agent", "base", "--gap-reason", "already there",
                    "--add-agent", "sec:*.py", "--gap-reason", "python",
                    "--add-agent", "sec:*.txt", "--gap-reason", "text")
    assert next(e for e in report["manifest"] if e["agent"] == "base")["policies"] == ["baseline"]
    assert agent(report, "sec")["files"] == ["app.py", "notes.txt"]
    gaps = [(g["subject"], g["reason"], g["patch"]["operations"][0]["value"]["trigger"]["paths"])
            for g in report["gaps"] if g["kind"] == "agent_addition"]
    assert gaps == [("sec", "python", ["*.py"]), ("sec", "text", ["*.txt"])]


def test_its_patch_makes_the_addition_permanent(cli: Any, tmp_path: Path) -> None:
    cfg = config(tmp_path)
    run(cli, cfg, "--add-agent", "sec:*.py", "--gap-reason", "python evaluates input")
    [gap] = [g for g in cli("gaps", "--format", "json", "--config", str(cfg)).json()["gaps"]
             if g["kind"] == "agent_addition"]
    applied = cli("gaps", "--apply", gap["id"], "--yes", "--config", str(cfg))
    assert applied.code == 0, applied.err
    assert cli("config", "validate", "--config", str(cfg)).code == 0
    _, report = run(cli, cfg)  # no --add-agent now
    assert next(e for e in report["manifest"] if e["agent"] == "sec")["policies"] == ["sec-added"]
    assert agent(report, "sec")["files"] == ["app.py"]
    assert not [g for g in report["gaps"] if g["kind"] == "agent_addition"]


def test_a_required_added_agent_that_fails_makes_the_run_incomplete(cli: Any, tmp_path: Path) -> None:
    result, report = run(cli, config(tmp_path), "--add-agent", "broken", "--gap-reason", "needs a second look")
    assert result.code == 3
    assert report["decision"] == "incomplete" and report["metrics"]["missing_inputs"] == 1
    assert agent(report, "broken")["status"] == "failed"


@pytest.mark.parametrize(("args", "message"), [
    (["--add-agent", "sec"], "--add-agent sec: no --gap-reason after it"),
    (["--add-agent", "sec", "--gap-reason", " "], "--add-agent sec: its --gap-reason is empty"),
    (["--gap-reason", "why", "--add-agent", "sec"], "--gap-reason why: give it right after the --add-agent"),
    (["--add-agent", "sec", "--gap-reason", "a", "--gap-reason", "b"], "--gap-reason b: give it right after"),
    (["--add-agent", "secc", "--gap-reason", "why"], "added agent 'secc' is not in the registry"),
    (["--add-agent", "off", "--gap-reason", "why"], "added agent 'off' is disabled"),
    (["--add-agent", "sec:", "--gap-reason", "why"], "give an agent id, or ID:GLOB"),
    (["--add-agent", "sec:vendor/**", "--gap-reason", "why"], "matches none of the 2 changed files"),
    (["--add-agent", "sec", "--gap-reason", "x" * 2001], "the reason has 2,001 characters, more than 2,000"),
])
def test_usage_errors_exit_2_and_record_nothing(cli: Any, tmp_path: Path, args: list[str], message: str) -> None:
    result = cli("--config", str(config(tmp_path)), "--diff", "-", *args, stdin=DIFF.encode())
    assert result.code == 2
    assert message in result.err and "Traceback" not in result.err
    assert recorded_runs() == 0


def test_an_unknown_agent_names_the_close_ids(cli: Any, tmp_path: Path) -> None:
    result = cli("--config", str(config(tmp_path)), "--diff", "-", "--add-agent", "brokn", "--gap-reason", "why",
                 stdin=DIFF.encode())
    assert result.code == 2
    assert "'brokn' is not in the registry" in result.err
    assert "did you mean broken?" in result.err and "the agents are: base, broken, off, sec" in result.err


def test_the_api_takes_added_agents(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    report = api.review(diff=DIFF.encode(), config=cfg, state=False, add_agents=[("sec:*.py", "evaluates input")])
    assert next(a for a in report.agents if a.id == "sec").files == ["app.py"]
    [gap] = [g for g in report.gaps if g.kind == "agent_addition"]
    assert gap.subject == "sec" and gap.reason == "evaluates input" and gap.patch is not None
    with pytest.raises(UsageError, match="added agent 'nobody' is not in the registry"):
        api.review(diff=DIFF.encode(), config=cfg, state=False, add_agents=[("nobody", "why")])
    with pytest.raises(UsageError, match="has no reason"):
        api.review(diff=DIFF.encode(), config=cfg, state=False, add_agents=[("sec", "")])


def test_the_mcp_review_tool_takes_added_agents(repo: GitRepo, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    cfg = config(tmp_path)
    repo.write("app.py", "x = eval(input())\n")
    params = StdioServerParameters(command=sys.executable, args=["-m", "review_gate", "mcp", "--config", str(cfg)],
                                   env=dict(os.environ), cwd=str(repo.root))

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert tools["review"].input_schema["properties"]["add_agents"]["description"]
                done = await client.call_tool("review", {
                    "config": str(cfg), "format": "json",
                    "add_agents": [{"agent": "sec", "reason": "evaluates user input"}]})
                assert not done.is_error, done.content
                out: dict[str, Any] = done.structured_content or {}
                assert [f["rule_id"] for f in out["findings"]] == ["no-eval"]
                gaps = json.loads(out["report"])["gaps"]
                assert [(g["subject"], g["reason"]) for g in gaps if g["kind"] == "agent_addition"] == [
                    ("sec", "evaluates user input")]
                refused = await client.call_tool("review", {
                    "config": str(cfg), "add_agents": [{"agent": "secc", "reason": "x"}]})
                assert refused.is_error and "did you mean sec?" in str(refused.content)

    anyio.run(main)
