"""The published JSON Schemas: generated from the models, checked in, and true of real output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from review_gate.models import schema_export
from review_gate.models.schema_export import main, render, schemas
from tests.conftest import GitRepo, make_diff

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "schemas"
BUILTIN_CONFIG = ROOT / "config"
CONFIG_SCHEMAS = {
    "review-rules.json": "review-rules.schema.json",
    "review-domains.json": "review-domains.schema.json",
    "review-agents.json": "review-agents.schema.json",
    "review-composition.json": "review-composition.schema.json",
    "review-gate.json": "review-gate.schema.json",
}
REGENERATE = "schemas/ is stale: regenerate it with `python -m review_gate.models.schema_export`"
STAGE_SCHEMAS = ("facts.schema.json", "classification.schema.json", "manifest.schema.json", "gap-log.schema.json",
                 "agent-result.schema.json")
HOST_SCHEMAS = ("host-task.schema.json", "host-answered.schema.json")


def load_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return schema


def errors(schema_name: str, instance: Any) -> list[str]:
    validator = Draft202012Validator(load_schema(schema_name))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(instance)]


# --- the checked-in files ----------------------------------------------------------------------


def test_every_schema_is_published() -> None:
    assert sorted(schemas()) == sorted([*CONFIG_SCHEMAS.values(), "report.schema.json", *STAGE_SCHEMAS,
                                        *HOST_SCHEMAS])
    on_disk = sorted(p.name for p in SCHEMA_DIR.glob("*.json"))
    assert on_disk == sorted(schemas()), REGENERATE


@pytest.mark.parametrize("name", sorted(schemas()))
def test_checked_in_schema_equals_the_generated_one(name: str) -> None:
    path = SCHEMA_DIR / name
    assert path.is_file(), f"{path} is missing; {REGENERATE}"
    assert path.read_text(encoding="utf-8") == render(schemas()[name]), f"{name}: {REGENERATE}"


def test_the_agents_schema_describes_every_agent_kind() -> None:
    """Its description once left llm agents out, though the schema takes them."""
    schema = load_schema("review-agents.schema.json")
    kinds = schema["properties"]["agents"]["items"]["discriminator"]["mapping"]
    assert sorted(kinds) == ["command", "llm", "pattern"]
    for kind in kinds:
        assert f"{kind} agents" in schema["description"]


@pytest.mark.parametrize("name", sorted(schemas()))
def test_schema_is_a_valid_draft_2020_12_schema_with_id_and_title(name: str) -> None:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith(f"/schemas/{name}")
    assert schema["title"]
    lists = ("gap-log.schema.json", "manifest.schema.json")  # as plan and the report print them
    assert schema["type"] == ("array" if name in lists else "object")


def test_rendering_is_sorted_indented_and_ends_with_a_newline() -> None:
    text = render({"b": 1, "a": {"d": 2, "c": 3}})
    assert text == '{\n  "a": {\n    "c": 3,\n    "d": 2\n  },\n  "b": 1\n}\n'


def test_check_passes_on_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_check_lists_stale_and_missing_files_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "schemas"
    shutil.copytree(SCHEMA_DIR, target)
    (target / "review-rules.schema.json").write_text("{}\n", encoding="utf-8")
    (target / "report.schema.json").unlink()

    assert main(["--check", "--dir", str(target)]) == 1
    err = capsys.readouterr().err
    assert f"stale: {target / 'review-rules.schema.json'}" in err
    assert f"stale: {target / 'report.schema.json'}" in err
    assert "review-domains.schema.json" not in err
    assert "python -m review_gate.models.schema_export" in err
    assert (target / "review-rules.schema.json").read_text(encoding="utf-8") == "{}\n"
    assert not (target / "report.schema.json").exists()


def test_export_writes_every_schema_and_then_checks_clean(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out"
    assert main(["--dir", str(target)]) == 0
    assert sorted(p.name for p in target.iterdir()) == sorted(schemas())
    for name, schema in schemas().items():
        assert (target / name).read_bytes() == render(schema).encode("utf-8")
    assert main(["--check", "--dir", str(target)]) == 0
    assert main(["--dir", str(target)]) == 0
    assert "all up to date" in capsys.readouterr().out


def test_default_directory_is_the_top_level_schemas_folder() -> None:
    assert schema_export.SCHEMA_DIR == SCHEMA_DIR


def test_runs_as_a_module() -> None:
    result = subprocess.run([sys.executable, "-m", "review_gate.models.schema_export", "--check"],
                            capture_output=True, text=True, check=False, cwd=ROOT)
    assert result.returncode == 0, result.stderr


# --- config files against their schemas --------------------------------------------------------


@pytest.mark.parametrize(("config_name", "schema_name"), sorted(CONFIG_SCHEMAS.items()))
def test_builtin_config_file_validates_against_its_schema(config_name: str, schema_name: str) -> None:
    data = json.loads((BUILTIN_CONFIG / config_name).read_text(encoding="utf-8"))
    assert errors(schema_name, data) == []


def test_config_schema_rejects_what_the_loader_rejects() -> None:
    rules = json.loads((BUILTIN_CONFIG / "review-rules.json").read_text(encoding="utf-8"))
    rules["rules"][0]["severity"] = "high"
    rules["rules"][1]["colour"] = "red"
    assert len(errors("review-rules.schema.json", rules)) == 2
    agents = {"version": 1, "agents": [{"id": "x", "name": "X", "description": "d", "kind": "llm"}]}
    assert errors("review-agents.schema.json", agents)
    assert errors("review-gate.schema.json", {"version": 2})


def test_a_config_file_may_name_its_schema() -> None:
    data = json.loads((BUILTIN_CONFIG / "review-gate.json").read_text(encoding="utf-8"))
    data["$schema"] = "https://example.invalid/schemas/review-gate.schema.json"
    assert errors("review-gate.schema.json", data) == []


# --- real reports against report.schema.json ---------------------------------------------------


def test_report_without_findings_validates(cli) -> None:
    result = cli("--diff", "-", "--format", "json", stdin=make_diff("app.py", ["x = 1"]).encode())
    assert result.code == 0, result.err
    report = result.json()
    assert report["findings"] == []
    assert errors("report.schema.json", report) == []


def test_report_of_an_empty_change_validates(cli, repo: GitRepo) -> None:
    result = cli("--offline", "--format", "json")  # a clean working tree: nothing to review
    assert result.code == 0, result.err
    report = result.json()
    assert report["coverage"]["nothing_to_review"] is True
    assert errors("report.schema.json", report) == []


def test_report_with_findings_validates(cli) -> None:
    diff = (make_diff("deploy/key.pem", ["-----BEGIN RSA PRIVATE KEY-----", "MIIE"])
            + make_diff("app.py", ["x = 1  # TODO tidy", "requests.get(url, verify=False)"]))
    result = cli("--diff", "-", "--format", "json", stdin=diff.encode())
    report = result.json()
    assert result.code == 1, result.err
    assert report["decision"] == "fail"
    assert {f["rule_id"] for f in report["findings"]} >= {"sec-private-key-01", "hyg-todo-01",
                                                          "sec-tls-verify-01"}
    assert errors("report.schema.json", report) == []


def test_report_with_a_failed_agent_validates(cli, tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(BUILTIN_CONFIG, config)
    agents = json.loads((config / "review-agents.json").read_text(encoding="utf-8"))
    agents["agents"].append({
        "id": "broken-linter", "name": "Broken linter", "kind": "command",
        "description": "A command agent that always fails.", "retries": 0,
        "command": [sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(1)"],
    })
    (config / "review-agents.json").write_text(json.dumps(agents), encoding="utf-8")
    composition = json.loads((config / "review-composition.json").read_text(encoding="utf-8"))
    composition["policies"][0]["dispatch"].append("broken-linter")
    (config / "review-composition.json").write_text(json.dumps(composition), encoding="utf-8")

    result = cli("--diff", "-", "--format", "json", "--config", str(config),
                 stdin=make_diff("app.py", ["x = 1  # TODO tidy"]).encode())
    report = result.json()
    assert result.code == 3, result.err
    assert report["decision"] == "incomplete"
    failed = [a for a in report["agents"] if a["id"] == "broken-linter"]
    assert failed and failed[0]["status"] == "failed"
    assert "boom" in failed[0]["error"]
    assert report["findings"], "the agents that worked still report"
    assert errors("report.schema.json", report) == []


def test_report_schema_rejects_a_broken_report(cli) -> None:
    result = cli("--diff", "-", "--format", "json", stdin=make_diff("app.py", ["x = 1"]).encode())
    report = result.json()
    report["decision"] = "maybe"
    del report["metrics"]
    assert len(errors("report.schema.json", report)) == 2


# --- plan --format json -------------------------------------------------------------------------

RENAME_DIFF = """\
diff --git a/old.py b/new.py
similarity index 90%
rename from old.py
rename to new.py
--- a/old.py
+++ b/new.py
@@ -1,2 +1,2 @@
-x = 1
+x = 2
 y = 3
"""


def test_plan_json_lists_each_file_change(cli) -> None:
    diff = RENAME_DIFF + make_diff("app.py", ["import os", "print(os.sep)"])
    result = cli("plan", "--diff", "-", "--format", "json", stdin=diff.encode())
    assert result.code == 0, result.err
    files = result.json()["facts"]["files"]
    for entry in files:
        assert {"path", "old_path", "status", "added", "removed"} <= set(entry)
        assert "hunks" not in entry
    by_path = {f["path"]: f for f in files}
    assert {k: by_path["new.py"][k] for k in ("path", "old_path", "status", "added", "removed")} == {
        "path": "new.py", "old_path": "old.py", "status": "renamed", "added": 1, "removed": 1}
    assert {k: by_path["app.py"][k] for k in ("path", "old_path", "status", "added", "removed")} == {
        "path": "app.py", "old_path": None, "status": "added", "added": 2, "removed": 0}


# --- what the stages hand each other (issue 22: checked boundaries) -----------------------------


def test_plan_json_is_true_to_the_stage_schemas(cli, repo: GitRepo) -> None:
    """A real plan of a real range: facts, classification, manifest and gaps each validate."""
    repo.write("app.py", "import os\nprint(os.sep)  # TODO\n")
    repo.write(".github/workflows/ci.yml", "on: push\njobs: {}\n")
    repo.write("notes.xyz", "unclassified\n")
    repo.commit("change")
    result = cli("plan", "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    assert result.code == 0, result.err
    plan = result.json()
    assert plan["gaps"], "a file no domain claims makes a gap"
    assert errors("facts.schema.json", plan["facts"]) == []
    assert errors("classification.schema.json", plan["classification"]) == []
    assert errors("manifest.schema.json", plan["manifest"]) == []  # as printed: a trial found a wrapper wanted
    assert errors("gap-log.schema.json", plan["gaps"]) == []


def test_the_facts_schema_holds_hunks_and_refuses_a_bogus_file() -> None:
    from review_gate.change.diff_parser import parse_diff
    from review_gate.models import PRFacts

    facts = PRFacts(source="x", files=parse_diff(make_diff("a.py", ["x = 1"]).encode())).model_dump(mode="json")
    assert facts["files"][0]["hunks"][0]["lines"] == [{"number": 1, "text": "x = 1", "added": True}]
    assert errors("facts.schema.json", facts) == []
    facts["files"][0].update(status="bogus", added=-5, path=123)
    assert sorted(errors("facts.schema.json", facts)) == [
        "files/0/added: -5 is less than the minimum of 0", "files/0/path: 123 is not of type 'string'",
        "files/0/status: 'bogus' is not one of ['added', 'modified', 'deleted', 'renamed', 'copied', 'binary']"]


def test_each_agent_of_a_report_is_true_to_the_agent_result_schema(cli) -> None:
    result = cli("--diff", "-", "--format", "json", stdin=make_diff("app.py", ["x = 1  # TODO"]).encode())
    agents = result.json()["agents"]
    assert agents and all(errors("agent-result.schema.json", agent) == [] for agent in agents)
